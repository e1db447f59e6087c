// Communicators: World/Self at init, Dup/Split collectively over the parent
// using the runtime's own p2p context (parent id + kRuntimeContextOffset).
//
// Context ids: each process keeps a byte per context slot (id / 4). A new
// communicator takes a slot free on *every* member of the parent, agreed
// in rounds that also serve MPI_Comm_idup (comm_agreement.cc), so ids are
// reused after CommFree.
// Disjoint colors of one split may share a slot: their members differ and
// the source rank is part of every match.
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/log.h"
#include "runtime/runtime.h"
#include "runtime/runtime_state.h"
#include "transport/tag.h"

namespace nicq::rt {

using detail::EngineLock;
using detail::S;

namespace {

constexpr std::size_t kSlots = (std::size_t(transport::kMaxContextId) + 1) / kContextStride;

// Every member contributes `len` bytes; `all` gets them in comm-rank order.
Status ExchangeAll(Comm* comm, const void* mine, std::size_t len, std::vector<std::uint8_t>& all) {
  const int n = comm->size;
  all.assign(std::size_t(n) * len, 0);
  std::memcpy(all.data() + std::size_t(comm->rank) * len, mine, len);
  if (n == 1) return Status::Ok();
  const std::uint32_t ctx = comm->context_id + kRuntimeContextOffset;
  const int tag = int(comm->rt_seq++ & transport::kUserTagMask);
  auto reqs = std::make_unique<Request[]>(2 * std::size_t(n));
  {
    EngineLock lock;
    for (int r = 0; r < n; ++r) {
      if (r == comm->rank) continue;
      NICQ_RETURN_IF_ERROR(S().engine.Irecv(all.data() + std::size_t(r) * len, len,
                                            comm->WorldRank(r), ctx, tag, nullptr, &reqs[r]));
    }
    for (int r = 0; r < n; ++r) {
      if (r == comm->rank) continue;
      NICQ_RETURN_IF_ERROR(S().engine.Isend(mine, len, comm->WorldRank(r), ctx, tag,
                                            SendMode::kStandard, &reqs[n + r]));
    }
  }
  for (int i = 0; i < 2 * n; ++i) {
    if ((i % n) == comm->rank) continue;
    NICQ_RETURN_IF_ERROR(Wait(&reqs[i]));
    if (reqs[i].status.error != 0)
      return Error(Code(reqs[i].status.error),
                   "exchange with rank " + std::to_string(i % n) + " failed");
  }
  return Status::Ok();
}

}  // namespace

namespace detail {

Comm* NewComm(std::uint32_t slot, std::vector<int> world_ranks, int my_world) {
  auto* c = new Comm;
  c->context_id = slot * kContextStride;
  c->size = int(world_ranks.size());
  c->world_ranks = std::move(world_ranks);
  bool identity = c->size == WorldSize();
  for (int r = 0; r < c->size && identity; ++r) identity = c->world_ranks[r] == r;
  if (!identity) {
    c->world_to_rank.assign(WorldSize(), -1);
    for (int r = 0; r < c->size; ++r) c->world_to_rank[c->world_ranks[r]] = r;
  }
  c->rank = c->RankOfWorld(my_world);
  c->rt_map_checked = true;
  {
    EngineLock lock;
    S().ctx_used[slot] = 1;
  }
  return c;
}

Status BuildWorldAndSelf() {
  auto& s = S();
  s.ctx_used.assign(kSlots, 0);
  const int me = s.boot->Rank();
  std::vector<int> all(s.boot->Size());
  std::iota(all.begin(), all.end(), 0);
  s.world = NewComm(0, std::move(all), me);
  s.self = NewComm(1, std::vector<int>{me}, me);
  return Status::Ok();
}

Status FabricBarrier() {
  std::uint8_t token = 1;
  std::vector<std::uint8_t> all;
  return ExchangeAll(S().world, &token, 1, all).WithContext("barrier");
}

void (*g_comm_destroy_hook)(Comm*) = nullptr;

void DestroyComms() {
  for (Comm* c : {S().world, S().self})
    if (c && g_comm_destroy_hook) g_comm_destroy_hook(c);
  delete S().world;
  delete S().self;
  S().world = S().self = nullptr;
}

}  // namespace detail

// The errors of communicator creation carry no context of their own: the
// MPI call that asked (MPI_Comm_dup, MPI_Comm_split, ...) names itself, and
// the internal function names would only confuse its reader.
Status CommSplit(Comm* parent, int color, int key, Comm** out) {
  *out = nullptr;
  if (!S().initialized) return Error(Code::kOther, "CommSplit: runtime not initialized");
  if (!parent) return Error(Code::kComm, "CommSplit: null parent communicator");
  CommAgreement* a = nullptr;
  NICQ_RETURN_IF_ERROR(CommAgreementStart(parent, color, key, &a));
  Backoff bo;
  Status st = Status::Ok();
  while (st.ok() && !CommAgreementPoll(a)) st = ProgressWait(bo);
  if (!st.ok()) {
    // A dead peer: the agreement's requests may still be posted, so it is
    // left behind rather than freed under them.
    return st;
  }
  return CommAgreementFinish(a, out);
}

Status CommCreateFromRanks(Comm* parent, const int* parent_ranks, int n, Comm** out) {
  if (!parent) return Error(Code::kComm, "CommCreateFromRanks: null parent communicator");
  int key = -1;
  for (int i = 0; i < n; ++i) {
    if (parent_ranks[i] < 0 || parent_ranks[i] >= parent->size)
      return Error(Code::kRank, "CommCreateFromRanks: rank " + std::to_string(parent_ranks[i]) +
                                    " is not in the parent (size " + std::to_string(parent->size) +
                                    ")");
    if (parent_ranks[i] == parent->rank) key = i;
  }
  return CommSplit(parent, key < 0 ? -1 : 0, key, out);
}

Status CommDup(Comm* parent, Comm** out) {
  if (!parent) return Error(Code::kComm, "CommDup: null parent communicator");
  return CommSplit(parent, 0, parent->rank, out);
}

namespace {

// The last reference went: the context id may be reused from now on.
void DestroyComm(Comm* comm) {
  CommSetSession(comm, -1);  // the context id may serve a communicator of no session next
  {
    EngineLock lock;
    S().ctx_used[comm->context_id / kContextStride] = 0;
  }
  if (comm->local_comm) CommFree(comm->local_comm).IgnoreError();  // an intercomm's local group
  if (detail::g_comm_destroy_hook) detail::g_comm_destroy_hook(comm);
  delete comm;
}

}  // namespace

void SetCommDestroyHook(void (*hook)(Comm* comm)) {
  detail::g_comm_destroy_hook = hook;
}

Status CommFree(Comm* comm) {
  if (!comm) return Error(Code::kComm, "CommFree: null communicator");
  if (comm == S().world || comm == S().self)
    return Error(Code::kComm, "CommFree: cannot free the world or self communicator");
  NICQ_RETURN_IF_ERROR(DropCommBuffer(comm->context_id));
  CommRelease(comm);
  return Status::Ok();
}

void CommRetain(Comm* comm) {
  if (comm && comm != S().world && comm != S().self)
    comm->refs.n.fetch_add(1, std::memory_order_relaxed);
}

void CommRelease(Comm* comm) {
  if (!comm || comm == S().world || comm == S().self) return;
  if (comm->refs.n.fetch_sub(1, std::memory_order_acq_rel) == 1) DestroyComm(comm);
}

}  // namespace nicq::rt
