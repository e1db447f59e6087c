// HierRun (hier_async.h): planning a run's phases, starting them one after
// the other, and the progress hook that moves every started run along.
#include "coll/hier_async.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "coll/node_area.h"
#include "coll/node_reduce.h"
#include "core/config.h"
#include "core/lockfree_push.h"
#include "core/progress_hooks.h"
#include "dtype/datatype.h"
#include "runtime/async_progress.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

// The started runs of this process. The lock is taken by a start (to list
// its run) and by the hook (try-lock: a pass never waits behind a start);
// it also guards the pool of nonblocking runs and each NodeGroup's
// last-phase turn (`last_phase_next`; the turns are drawn from
// `last_phase_calls` in the calls themselves, which MPI keeps from running
// concurrently on one communicator).
struct Runs {
  std::mutex mu;
  std::vector<HierRun*> active;
  // Starts made inside the schedule engine's pass (HierRun::Begin,
  // deferred), linked through HierRun::deferred_next(): that pass holds the
  // engine's lock, which a hook pass holding `mu` may wait for (a phase's
  // schedule is activated under it), so they are handed over without `mu`
  // and the hook adopts them.
  std::atomic<HierRun*> deferred{nullptr};
  std::vector<HierRun*> free_nb;  // nonblocking runs done, kept with their capacity
  std::atomic<int> n{0};
  std::atomic<bool> hooked{false};
};
Runs& R() {
  static Runs* r = new Runs;  // outlives static destruction (hooks may run late)
  return *r;
}

bool Hook(void*) {
  Runs& r = R();
  if (r.n.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(r.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (HierRun* d = r.deferred.exchange(nullptr, std::memory_order_acquire); d != nullptr) {
    const std::size_t first = r.active.size();
    for (; d != nullptr; d = d->deferred_next()) r.active.push_back(d);
    std::reverse(r.active.begin() + std::ptrdiff_t(first), r.active.end());  // in start order
  }
  bool any = false;
  // Again while something moved: a run whose last phase waited for an
  // earlier call's may start it in the same pass.
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t i = 0; i < r.active.size();) {
      if (!r.active[i]->Advance(&moved)) {
        ++i;
        continue;
      }
      r.active[i] = r.active.back();
      r.active.pop_back();
      r.n.fetch_sub(1, std::memory_order_release);
    }
    any |= moved;
  }
  return any;
}

// Registered after the schedule engine's and the area's hooks, so a pass
// sees the phases they completed in it.
bool EnsureHierHook() {
  Runs& r = R();
  if (r.hooked.load(std::memory_order_acquire)) return true;
  EnsureHook();
  if (!NodeSlotCollective::EnsureHook()) return false;
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.hooked.load(std::memory_order_relaxed)) return true;
  if (!progress::RegisterHook(&Hook, nullptr)) return false;
  r.active.reserve(64);
  rt::AddAsyncBusyProbe([] { return R().n.load(std::memory_order_acquire) > 0; });
  r.hooked.store(true, std::memory_order_release);
  return true;
}

// The lane (a reserved op slot of the node's area) of a nonblocking run's
// first (0) or last (1) node phase. These are the slots the area's own
// nonblocking collectives take in turn (node_nonblocking.cc): free here
// because nothing runs a nonblocking collective on the internal node
// communicator itself.
NodeSlotCollective* LaneOf(NodeArea* area, int lane) {
  std::shared_ptr<NodeSlotCollective>& op = area->nb_slots[lane];
  if (!op) op = NodeSlotCollective::ForReservedSlot(area, NodeArea::kOpSlots + lane);
  return op.get();
}

}  // namespace

Status HierRun::CreatePersistent(const Args& a, std::unique_ptr<HierRun>* out) {
  out->reset();
  if (!NodeCollEnabled() || !HierarchicalNodeFits(a) || !EnsureHierHook()) return Status::Ok();
  NodeGroup* ng = nullptr;
  NICQ_RETURN_IF_ERROR(NodeGroupOf(a.comm, &ng));
  GroupsFor(ng, a);
  std::unique_ptr<HierRun> run(new HierRun);
  NICQ_RETURN_IF_ERROR(run->Plan(a, ng, /*persistent=*/true, NextTag(a.comm, 1)));
  DumpHierarchical(a, *ng, run->node_phases_, "", "_init");
  *out = std::move(run);
  return Status::Ok();
}

bool HierRun::StartNonblocking(const Args& a, Request* req, Status* st) {
  if (a.comm->node_group.p == nullptr || !NodeCollEnabled() || !HierarchicalNodeFits(a) ||
      !EnsureHierHook())
    return false;
  auto* ng = static_cast<NodeGroup*>(a.comm->node_group.p);
  GroupsFor(ng, a);
  // Drawn by every rank, as the schedule path would: the calls after this
  // one keep their tags whichever path they take.
  const int tag = NextTag(a.comm, 0);
  HierRun* run = nullptr;
  {
    Runs& r = R();
    std::lock_guard<std::mutex> lock(r.mu);
    if (!r.free_nb.empty()) {
      run = r.free_nb.back();
      r.free_nb.pop_back();
    }
  }
  if (run == nullptr) run = new HierRun;  // kept in the pool once done
  *st = run->Plan(a, ng, /*persistent=*/false, tag);
  static const bool dump = !config::GetString("NICQ_PLAN_DUMP").empty();
  if (dump) DumpHierarchical(a, *ng, run->node_phases_, "i");
  if (st->ok()) {
    const dtype::Type* t = a.kind == Kind::kBcast ? a.stype : a.rtype;
    if (t != nullptr && !t->predefined) {
      // The last node phase binds the type when it starts, after the call.
      run->retained_ = const_cast<dtype::Type*>(t);
      dtype::Retain(run->retained_);
    }
    run->owner_ = req;
    run->on_done_ = nullptr;
    *st = run->Begin(/*deferred=*/false);  // first phases start in call order
    if (st->ok()) return true;
  }
  run->DropUnlaunched();
  Runs& r = R();
  std::lock_guard<std::mutex> lock(r.mu);
  r.free_nb.push_back(run);
  return true;
}

HierRun::~HierRun() {
  // A hook pass may still be leaving the run that completed last.
  { std::lock_guard<std::mutex> lock(R().mu); }
  DropUnlaunched();
  // The slots point into the node's area, which the last reference to the
  // node communicator frees.
  for (Phase& p : phase_) p.slot.reset();
  if (node_ != nullptr) rt::CommRelease(node_);
}

Status HierRun::Plan(const Args& a, NodeGroup* ng, bool persistent, int tag) {
  persistent_ = persistent;
  ng_ = ng;
  for (Phase& p : phase_) p = Phase{};
  ordered_last_ = false;
  copy_bytes_ = 0;
  retained_ = nullptr;
  const NodeGroups& g = ng->groups;
  const bool alone = ng->node == nullptr;
  node_phases_ = alone ? "alone" : "area";
  if (persistent && !alone) {
    node_ = ng->node;
    rt::CommRetain(node_);
  }
  const bool is_root = a.comm->rank == a.root;
  const std::size_t bytes =
      a.rtype != nullptr ? std::size_t(a.rcount) * std::size_t(a.rtype->size) : 0;
  const Args na = NodeArgs(a, *ng);
  Args first = na, last = na;
  bool has_first = false, has_last = false;
  const void* partial = nullptr;  // reduce: what a leader other than the root contributes
  switch (a.kind) {
    case Kind::kBarrier:
      has_first = has_last = !alone;
      break;
    case Kind::kBcast:
      has_last = !alone;
      break;
    case Kind::kReduce:
      if (!alone) {
        has_first = true;
        if (g.leader >= 0 && !is_root) {
          partial_.resize(bytes);
          first.recvbuf = partial_.data();
          partial = first.recvbuf;
        }
      } else if (!is_root) {
        partial = a.sendbuf;
      } else if (a.sendbuf != kInPlace) {
        copy_from_ = a.sendbuf, copy_to_ = a.recvbuf, copy_bytes_ = bytes;
      }
      break;
    default:  // allreduce
      if (!alone) {
        has_first = has_last = true;
        first.kind = Kind::kReduce;
        last.kind = Kind::kBcast;
        last.sendbuf = nullptr;
        last.scount = a.rcount;
        last.stype = a.rtype;
      } else if (a.sendbuf != kInPlace) {
        copy_from_ = a.sendbuf, copy_to_ = a.recvbuf, copy_bytes_ = bytes;
      }
      break;
  }
  if (has_first) NICQ_RETURN_IF_ERROR(PlanNode(first, &phase_[0], 0));
  if (g.leader >= 0) {
    Phase& p = phase_[1];
    p.how = How::kSchedule;
    p.comm = ShadowOf(a.comm);
    p.tag = tag;
    NICQ_RETURN_IF_ERROR(BuildLeadersPhase(a, g, partial, NewSchedule(&p)));
  }
  if (has_last) {
    NICQ_RETURN_IF_ERROR(PlanNode(last, &phase_[2], 1));
    if (!persistent && phase_[2].how == How::kLane) {
      ordered_last_ = true;
      last_turn_ = ng->last_phase_calls++;
    }
  }
  return Status::Ok();
}

// A persistent run owns its schedules (built once, relaunched at each
// start); a nonblocking run's come from the engine's pool and go back by
// themselves once they end.
Schedule* HierRun::NewSchedule(Phase* p) {
  if (persistent_) {
    p->owned = std::make_unique<Schedule>();
    p->sched = p->owned.get();
  } else {
    p->sched = AcquireSchedule();
    p->sched->release_on_done = true;
  }
  return p->sched;
}

Status HierRun::PlanNode(const Args& na, Phase* p, int lane) {
  if (persistent_) {
    // Collective over the node: every node rank gets a slot, or none.
    NICQ_RETURN_IF_ERROR(NodeSlotCollective::Create(na, &p->slot));
    if (p->slot) {
      p->how = How::kSlot;
      return Status::Ok();
    }
  } else if (NodeArea* area = ng_->area ? NodeAreaIfMade(ng_->node) : nullptr;
             area != nullptr && NodeSlotCollective::Fits(na, *area)) {
    p->how = How::kLane;
    p->lane = LaneOf(area, lane);
    p->args = na;
    return Status::Ok();
  }
  // The node's own schedule (no area, or a large message without
  // cross-memory copies): every node rank decides alike.
  node_phases_ = "p2p";
  p->how = How::kSchedule;
  p->comm = ShadowOf(ng_->node);
  p->tag = NextTag(ng_->node, persistent_ ? 1 : 0);
  NICQ_RETURN_IF_ERROR(Build(na, NewSchedule(p)));
  p->sched->EndPhase();
  return Status::Ok();
}

Status HierRun::Start(Request* owner, void (*on_done)(void*), void* on_done_arg, bool deferred) {
  owner_ = owner;
  on_done_ = on_done;
  on_done_arg_ = on_done_arg;
  return Begin(deferred);
}

Status HierRun::Begin(bool deferred) {
  error_ = 0;
  stage_ = 0;
  started_ = false;
  active_.store(true, std::memory_order_release);
  if (copy_bytes_ > 0) std::memcpy(copy_to_, copy_from_, copy_bytes_);
  Runs& r = R();
  if (deferred) {
    LockFreePush(r.deferred, this, [](HierRun* n, HierRun* next) { n->deferred_next_ = next; });
    r.n.fetch_add(1, std::memory_order_release);
    rt::KickAsyncProgress();
    return Status::Ok();
  }
  {
    std::lock_guard<std::mutex> lock(r.mu);
    bool moved = false;
    if (Advance(&moved)) return Status::Ok();
    if (r.active.size() == r.active.capacity()) r.active.reserve(2 * r.active.size());
    r.active.push_back(this);
    r.n.fetch_add(1, std::memory_order_release);
  }
  rt::KickAsyncProgress();
  return Status::Ok();
}

Status HierRun::StartPhase(Phase& p) {
  inner_.done.store(false, std::memory_order_relaxed);
  inner_.status = RequestStatus{};
  inner_.kind = ReqKind::kColl;
  switch (p.how) {
    case How::kSlot:
      return p.slot->Start(&inner_);
    case How::kLane:
      return p.lane->StartOrQueue(p.args, &inner_);
    case How::kSchedule: {
      Schedule* s = p.sched;
      NICQ_RETURN_IF_ERROR(s->Launch(p.comm, p.tag, &inner_));
      // A pooled schedule goes back to the pool by itself once it ends.
      if (!persistent_) p.sched = nullptr;
      Activate(s);
      return Status::Ok();
    }
    case How::kNone:
      break;
  }
  return Status::Ok();
}

bool HierRun::Advance(bool* moved) {
  for (;;) {
    if (started_) {
      if (!inner_.IsDone()) return false;
      if (inner_.status.error != 0 && error_ == 0) error_ = inner_.status.error;
      started_ = false;
      ++stage_;
      *moved = true;
    }
    // After a failure the phases on the area still start, with the data
    // they have: an area's op slot pairs the node ranks' starts by their
    // count, and a rank that skipped one would pair its next call with its
    // mates' previous one. Schedules are skipped.
    while (stage_ < 3 && (phase_[stage_].how == How::kNone ||
                          (error_ != 0 && phase_[stage_].how == How::kSchedule)))
      ++stage_;
    if (stage_ == 3) {
      Finish();
      *moved = true;
      return true;
    }
    if (stage_ == 2 && ordered_last_) {
      if (ng_->last_phase_next != last_turn_) return false;
      ++ng_->last_phase_next;
    }
    if (Status st = StartPhase(phase_[stage_]); !st.ok()) {
      error_ = static_cast<int>(st.code());
      ++stage_;
      continue;
    }
    started_ = true;
    *moved = true;
  }
}

void HierRun::DropUnlaunched() {
  for (Phase& p : phase_) {
    if (p.sched != nullptr && !persistent_) ReleaseSchedule(p.sched);
    p.sched = nullptr;
  }
  if (retained_ != nullptr) dtype::Release(retained_);
  retained_ = nullptr;
}

void HierRun::Finish() {
  if (!persistent_) DropUnlaunched();
  // Read before the run reads as inactive: a start on another thread may
  // then rewrite them.
  Request* owner = owner_;
  void (*on_done)(void*) = on_done_;
  void* on_done_arg = on_done_arg_;
  owner->status = RequestStatus{};
  owner->status.source = rt::kAnySource;
  owner->status.tag = rt::kAnyTag;
  owner->status.error = error_;
  active_.store(false, std::memory_order_release);
  if (on_done != nullptr) on_done(on_done_arg);
  // A nonblocking run goes back to the pool (the caller holds its lock).
  if (!persistent_) R().free_nb.push_back(this);
  owner->MarkDone();
}

}  // namespace nicq::coll
