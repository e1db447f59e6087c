// The three forms of every collective over the host schedule engine, the
// per-communicator collective state (shadow comm on the collective
// context, sequence numbers), and the RequestOps of collective requests.
#include "coll/coll.h"

#include <memory>
#include <mutex>
#include <unordered_map>

#include "coll/algorithms.h"
#include "coll/hier_async.h"
#include "coll/hier_node.h"
#include "coll/node_persistent.h"
#include "coll/select.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

constexpr int kClassShift = 22;
constexpr std::uint32_t kSeqMask = (1u << kClassShift) - 1;
constexpr std::uint32_t kCollContextOffset = 1;  // comm.h: context_id+1 collectives

struct CommState {
  Comm shadow;
  std::uint64_t serial = 0;  // the user communicator's Comm::serial
  std::uint32_t seq[4] = {0, 0, 0, 0};
};

struct States {
  std::mutex mu;
  std::unordered_map<const Comm*, std::unique_ptr<CommState>> map;
};
States& St() {
  static auto* s = new States();
  return *s;
}

// The state for comm, rebuilt when the Comm object at this address is a
// different communicator than last time (freed and reallocated: its
// serial differs even where its context id and shape are the same again).
CommState& StateOf(Comm* comm) {
  States& s = St();
  auto& slot = s.map[comm];
  if (!slot || slot->serial != comm->serial.value ||
      slot->shadow.context_id != comm->context_id + kCollContextOffset ||
      slot->shadow.size != comm->size || slot->shadow.rank != comm->rank ||
      slot->shadow.world_ranks != comm->world_ranks ||
      slot->shadow.remote_world_ranks != comm->remote_world_ranks ||
      slot->shadow.local_comm != comm->local_comm) {
    slot = std::make_unique<CommState>();
    slot->serial = comm->serial.value;
    slot->shadow = *comm;
    slot->shadow.context_id = comm->context_id + kCollContextOffset;
    slot->shadow.api_data = nullptr;
    slot->shadow.rt_map_checked = false;
  }
  return *slot;
}

}  // namespace

const char* KindName(Kind k) {
  static const char* const names[] = {
      "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
      "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter",
      "reduce_scatter_block", "scan", "exscan",
      // neighborhood collectives
      "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
      "neighbor_alltoallw"};
  static_assert(sizeof names / sizeof names[0] == std::size_t(kLastKind) + 1);
  return names[static_cast<int>(k)];
}

Comm* ShadowOf(Comm* comm) {
  std::lock_guard<std::mutex> lock(St().mu);
  return &StateOf(comm).shadow;
}

Comm* LocalShadowOf(Comm* comm) {
  if (!comm->inter) return nullptr;
  std::lock_guard<std::mutex> lock(St().mu);
  return &StateOf(comm->local_comm).shadow;
}

namespace {
int DrawTag(CommState& s, int cls) {
  const std::uint32_t seq = s.seq[cls]++ & kSeqMask;
  return static_cast<int>((std::uint32_t(cls) << kClassShift) | seq);
}
}  // namespace

int NextTag(Comm* comm, int cls) {
  std::lock_guard<std::mutex> lock(St().mu);
  return DrawTag(StateOf(comm), cls);
}

Comm* ShadowAndTag(Comm* comm, int cls, int* tag) {
  std::lock_guard<std::mutex> lock(St().mu);
  CommState& s = StateOf(comm);
  *tag = DrawTag(s, cls);
  return &s.shadow;
}

// ---- blocking and nonblocking --------------------------------------------------

namespace {

// Called by the API when the slot is released: the schedule already went
// back to the pool when the collective finished.
Status NbFree(Request*) {
  return Status::Ok();
}
Status CollCancel(Request*) {
  return Error(Code::kRequest, "collective requests cannot be cancelled (MPI 4.1 7.12, 7.13)");
}
const RequestOps kNbOps = {nullptr, &NbFree, &CollCancel, nullptr};

}  // namespace

Status RunBlocking(const Args& a) {
  if (IsNeighborKind(a.kind) && NeighborDirectFits(a)) return RunNeighborDirect(a);
  Status node;
  if (TryNodeCollective(a, &node)) return node;
  if (TryHierarchicalNode(a, &node)) return node;
  if (AllreduceDirectFits(a)) return RunAllreduceDirect(a);
  Schedule* s = AcquireSchedule();
  Status st = Build(a, s);
  if (!st.ok()) {
    ReleaseSchedule(s);
    return st;
  }
  s->release_on_done = true;
  Request req;
  req.kind = ReqKind::kColl;
  NICQ_RETURN_IF_ERROR(
      s->Launch(ShadowOf(a.comm), NextTag(a.comm, 2), &req, LocalShadowOf(a.comm)));
  Activate(s, /*async=*/false);
  return WaitRequest(&req);
}

Status StartNonblocking(const Args& a, Request* req) {
  req->kind = ReqKind::kColl;
  req->comm = a.comm;
  req->ops = &kNbOps;
  req->engine = nullptr;
  req->done.store(false, std::memory_order_relaxed);
  if (Status node; TryNodeNonblocking(a, req, &node)) return node;
  if (Status hier; HierRun::StartNonblocking(a, req, &hier)) return hier;
  Schedule* s = AcquireSchedule();
  Status st = Build(a, s);
  if (!st.ok()) {
    ReleaseSchedule(s);
    return st;
  }
  s->release_on_done = true;
  req->kind = ReqKind::kColl;
  req->comm = a.comm;
  req->ops = &kNbOps;
  req->engine = nullptr;  // the schedule goes back to the pool by itself
  req->done.store(false, std::memory_order_relaxed);
  NICQ_RETURN_IF_ERROR(s->Launch(ShadowOf(a.comm), NextTag(a.comm, 0), req, LocalShadowOf(a.comm)));
  Activate(s);
  return Status::Ok();
}

}  // namespace nicq::coll
