// The agreement behind every communicator made from an intracommunicator
// (dup, split, create, idup): a context slot free on every member, reached
// without blocking so that MPI_Comm_idup can leave it to the progress
// engine while the process goes on communicating on the parent.
//
// Rounds over the parent's runtime context, under one tag taken at the
// start (rounds stay apart because messages from one source do not
// overtake each other). Each member sends every other member its used
// slots, as a bitmap, and its vote on the previous round's candidate:
//   round 0: maps only; every member computes the same candidate, the
//            lowest slot free in the union of the maps;
//   round r: a member that still finds the candidate free locally reserves
//            it (marks it used) and votes yes, else votes no; with its
//            fresh map. All yes: the candidate is the slot. Otherwise every
//            member drops its reservation and the next candidate comes from
//            the fresh maps.
// The vote is what makes agreements that overlap in time safe: an idup's
// maps are a snapshot taken when it started, and a communicator created in
// between (by a blocking call, or by another idup) may have taken that
// slot on some member since; that member says no. A reservation keeps any
// agreement that reaches its vote later off the slot. Retries skip a few
// free slots (how many depends on the tag), so that two agreements that
// keep colliding on the same members pick different candidates.
#include <algorithm>
#include <cstring>
#include <memory>
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
constexpr std::uint32_t kNone = std::uint32_t(kSlots);

enum Vote : std::uint8_t { kNoVote = 0, kYes = 1, kNo = 2 };

struct Blob {
  std::int32_t color;
  std::int32_t key;
  std::uint8_t vote;
  std::uint8_t used[kSlots / 8];  // one bit per context slot
};

bool Used(const Blob& b, std::uint32_t slot) {
  return (b.used[slot / 8] >> (slot % 8)) & 1;
}

}  // namespace

struct CommAgreement {
  std::vector<int> world_ranks;  // the parent's members
  int rank = 0;
  int session = -1;       // the parent's, which the new communicator inherits
  std::uint32_t ctx = 0;  // the parent's runtime context
  int tag = 0;
  int round = 0;
  std::uint32_t candidate = kNone;
  bool reserved = false;  // this process marked `candidate` used for this agreement
  std::vector<Blob> all;  // this round's blobs, in parent rank order
  std::unique_ptr<Request[]> reqs;
  bool done = false;
  Status result = Status::Ok();
  std::uint32_t slot = kNone;
  // An intercommunicator parent's duplicate: this agreement runs over both
  // groups (the context id), `local` over the local group (the duplicate's
  // own local communicator); `inter` keeps the parent's groups.
  std::unique_ptr<CommAgreement> local;
  std::unique_ptr<Comm> inter;

  int size() const { return int(world_ranks.size()); }
  Blob& mine() { return all[std::size_t(rank)]; }

  // Fills this member's map (ctx_used is read under the engine lock: the
  // host progress thread may advance another agreement meanwhile).
  void Snapshot() {
    std::memset(mine().used, 0, sizeof mine().used);
    for (std::size_t i = 0; i < kSlots; ++i)
      if (S().ctx_used[i]) mine().used[i / 8] |= std::uint8_t(1u << (i % 8));
  }

  Status PostRound() {
    const int n = size();
    EngineLock lock;
    Snapshot();
    for (int r = 0; r < n; ++r) {
      if (r == rank) continue;
      for (Request* q : {&reqs[std::size_t(r)], &reqs[std::size_t(n + r)]}) {
        q->done.store(false, std::memory_order_relaxed);  // reused between rounds
        q->status = RequestStatus{};
        q->engine = nullptr;
      }
      NICQ_RETURN_IF_ERROR(S().engine.Irecv(&all[std::size_t(r)], sizeof(Blob), world_ranks[r], ctx,
                                            tag, nullptr, &reqs[std::size_t(r)]));
      NICQ_RETURN_IF_ERROR(S().engine.Isend(&mine(), sizeof(Blob), world_ranks[r], ctx, tag,
                                            SendMode::kStandard, &reqs[std::size_t(n + r)]));
    }
    return Status::Ok();
  }

  // The lowest slot free on every member, skipping `skip` free ones.
  std::uint32_t Candidate(int skip) const {
    std::uint32_t first = kNone;
    for (std::uint32_t s = 0; s < kSlots; ++s) {
      bool used = false;
      for (const Blob& b : all) used = used || Used(b, s);
      if (used) continue;
      if (first == kNone) first = s;
      if (skip-- == 0) return s;
    }
    return first;
  }

  void Release() {
    if (!reserved) return;
    EngineLock lock;
    S().ctx_used[candidate] = 0;
    reserved = false;
  }

  // One step after a round completed; false while more rounds follow.
  bool Step() {
    if (round > 0) {
      bool all_yes = true;
      for (const Blob& b : all) all_yes = all_yes && b.vote == kYes;
      if (all_yes) {
        slot = candidate;
        return true;
      }
      Release();
    }
    candidate = Candidate(round == 0 ? 0 : (tag + round) % 4);
    if (candidate == kNone) {
      result = Error(Code::kOther, "no context id is free on every member (" +
                                       std::to_string(kSlots) + " in use)");
      return true;
    }
    Vote v = kYes;
    if (mine().color >= 0) {
      EngineLock lock;
      if (S().ctx_used[candidate]) {
        v = kNo;
      } else {
        S().ctx_used[candidate] = 1;
        reserved = true;
      }
    }
    mine().vote = v;
    ++round;
    result = PostRound();
    return !result.ok();
  }

  bool Poll() {
    if (local && !local->Poll()) return false;
    if (done) return true;
    const int n = size();
    for (int i = 0; i < 2 * n; ++i) {
      if (i % n == rank) continue;
      if (!reqs[std::size_t(i)].IsDone()) return false;
    }
    for (int i = 0; i < 2 * n; ++i) {
      if (i % n == rank || reqs[std::size_t(i)].status.error == 0) continue;
      result =
          Error(Code(reqs[std::size_t(i)].status.error),
                "communicator creation: exchange with rank " + std::to_string(i % n) + " failed");
      Release();
      return done = true;
    }
    done = Step();
    if (done && !result.ok()) Release();
    return done;
  }
};

namespace {

// The agreement over `world_ranks` (this process at `rank`) on runtime
// context `ctx` under `tag`.
Status StartOver(std::vector<int> world_ranks, int rank, std::uint32_t ctx, int tag, int session,
                 int color, int key, std::unique_ptr<CommAgreement>* out) {
  auto a = std::make_unique<CommAgreement>();
  const std::size_t n = world_ranks.size();
  a->world_ranks = std::move(world_ranks);
  a->rank = rank;
  a->session = session;
  a->ctx = ctx;
  a->tag = tag;
  a->all.assign(n, Blob{});
  a->mine().color = color < 0 ? -1 : color;
  a->mine().key = key;
  a->mine().vote = kNoVote;
  a->reqs = std::make_unique<Request[]>(2 * n);
  if (n == 1) {
    // Alone: the vote is this process's own, taken at once.
    a->round = 1;
    EngineLock lock;
    a->Snapshot();
    a->candidate = a->Candidate(0);
    if (a->candidate == kNone)
      return Error(Code::kOther, "no context id is free (" + std::to_string(kSlots) + " in use)");
    if (color >= 0) {
      S().ctx_used[a->candidate] = 1;
      a->reserved = true;
    }
    a->slot = a->candidate;
    a->done = true;
  } else {
    NICQ_RETURN_IF_ERROR(a->PostRound());
  }
  *out = std::move(a);
  return Status::Ok();
}

// The duplicate of an intercommunicator: the union of both groups, the
// group whose first member has the lower world rank first (both groups see
// the same order), agrees on the context id over the intercommunicator's
// runtime context; the local group agrees on the new local communicator.
Status StartInterDup(Comm* parent, std::unique_ptr<CommAgreement>* out) {
  if (!parent->local_comm)
    return Error(Code::kComm, "an intercommunicator without its local group");
  const bool local_first = parent->world_ranks[0] < parent->remote_world_ranks[0];
  const std::vector<int>& first = local_first ? parent->world_ranks : parent->remote_world_ranks;
  const std::vector<int>& second = local_first ? parent->remote_world_ranks : parent->world_ranks;
  std::vector<int> both(first);
  both.insert(both.end(), second.begin(), second.end());
  const int rank = local_first ? parent->rank : int(first.size()) + parent->rank;
  std::unique_ptr<CommAgreement> local;
  Comm* lc = parent->local_comm;
  NICQ_RETURN_IF_ERROR(StartOver(lc->world_ranks, lc->rank, lc->context_id + kRuntimeContextOffset,
                                 int(lc->rt_seq++ & transport::kUserTagMask), lc->session, 0,
                                 lc->rank, &local));
  NICQ_RETURN_IF_ERROR(StartOver(std::move(both), rank, parent->context_id + kRuntimeContextOffset,
                                 int(parent->rt_seq++ & transport::kUserTagMask), parent->session,
                                 0, rank, out));
  (*out)->local = std::move(local);
  (*out)->inter = std::make_unique<Comm>();
  Comm& shape = *(*out)->inter;
  shape.inter = true;
  shape.rank = parent->rank;
  shape.size = parent->size;
  shape.world_ranks = parent->world_ranks;
  shape.world_to_rank = parent->world_to_rank;
  shape.remote_world_ranks = parent->remote_world_ranks;
  shape.remote_world_to_rank = parent->remote_world_to_rank;
  return Status::Ok();
}

// Frees what a failed agreement still holds, unless the engine does.
Status Abandon(CommAgreement* a) {
  for (int i = 0; i < 2 * a->size(); ++i)
    if (i % a->size() != a->rank && !a->reqs[std::size_t(i)].IsDone()) return a->result;
  std::unique_ptr<CommAgreement> own(a);
  return a->result;
}

// The intercommunicator duplicate from its two agreements.
Status FinishInterDup(CommAgreement* a, Comm** out) {
  Comm* lc = nullptr;
  Status ls = CommAgreementFinish(a->local.release(), &lc);
  if (!a->result.ok() || !ls.ok()) {
    if (lc) CommFree(lc).IgnoreError();
    if (a->result.ok()) {
      EngineLock lock;
      S().ctx_used[a->slot] = 0;
      a->result = ls;
    }
    return Abandon(a);
  }
  std::unique_ptr<CommAgreement> own(a);
  auto* c = new Comm(*a->inter);
  c->context_id = a->slot * kContextStride;
  c->local_comm = lc;
  c->rt_map_checked = true;
  CommSetSession(c, a->session);
  *out = c;
  NICQ_LOG(kDebug, kCore, "intercomm duplicated: context %u after %d rounds", c->context_id,
           a->round);
  return Status::Ok();
}

}  // namespace

Status CommAgreementStart(Comm* parent, int color, int key, CommAgreement** out) {
  *out = nullptr;
  if (!parent) return Error(Code::kComm, "communicator creation needs a parent");
  std::unique_ptr<CommAgreement> a;
  if (parent->inter) {
    if (color != 0 || key != parent->rank)
      return Error(Code::kIntern, "an intercommunicator agreement only duplicates");
    NICQ_RETURN_IF_ERROR(StartInterDup(parent, &a));
  } else {
    NICQ_RETURN_IF_ERROR(StartOver(
        parent->world_ranks, parent->rank, parent->context_id + kRuntimeContextOffset,
        int(parent->rt_seq++ & transport::kUserTagMask), parent->session, color, key, &a));
  }
  *out = a.release();
  return Status::Ok();
}

bool CommAgreementPoll(CommAgreement* a) {
  return a->Poll();
}

Status CommAgreementFinish(CommAgreement* a, Comm** out) {
  *out = nullptr;
  if (!a || !a->done)
    return Error(Code::kIntern, "communicator creation finished before its agreement");
  if (a->inter) return FinishInterDup(a, out);
  // A round that failed while being posted may leave requests with the
  // engine: the agreement (their buffers) is then left to them.
  if (!a->result.ok()) return Abandon(a);
  std::unique_ptr<CommAgreement> own(a);
  const int color = a->mine().color;
  if (color < 0) return Status::Ok();
  std::vector<int> members;
  for (int r = 0; r < a->size(); ++r)
    if (a->all[std::size_t(r)].color == color) members.push_back(r);
  std::stable_sort(members.begin(), members.end(), [&](int x, int y) {
    return a->all[std::size_t(x)].key < a->all[std::size_t(y)].key;
  });
  std::vector<int> world;
  for (int r : members) world.push_back(a->world_ranks[std::size_t(r)]);
  *out = detail::NewComm(a->slot, std::move(world), WorldRank());
  CommSetSession(*out, a->session);
  NICQ_LOG(kDebug, kCore, "comm created: color %d, size %d, context %u after %d rounds", color,
           (*out)->size, (*out)->context_id, a->round);
  return Status::Ok();
}

}  // namespace nicq::rt
