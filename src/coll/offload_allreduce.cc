#include "coll/offload_allreduce.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/offload_agree.h"
#include "core/config.h"
#include "core/lockfree_push.h"
#include "core/log.h"
#include "core/progress_hooks.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "mpi.h"
#include "offload/algorithms/allreduce.h"
#include "offload/algorithms/select.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::coll {

using offload::AtomicOp;
using offload::AtomicType;

bool NicAtomicType(int handle, AtomicType* t) {
  switch (handle) {
    // Fortran's named types have the layout of the C type beside them
    // (include/mpi.h), so they combine on the NIC the same way.
    case MPI_DOUBLE:
    case MPI_DOUBLE_PRECISION:
    case MPI_REAL8:
      *t = AtomicType::kDouble;
      return true;
    case MPI_FLOAT:
    case MPI_REAL:
    case MPI_REAL4:
      *t = AtomicType::kFloat;
      return true;
    case MPI_INT8_T:
    case MPI_SIGNED_CHAR:
    case MPI_INTEGER1:
      *t = AtomicType::kInt8;
      return true;
    case MPI_UINT8_T:
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
      *t = AtomicType::kUint8;
      return true;
    case MPI_INT16_T:
    case MPI_SHORT:
    case MPI_INTEGER2:
      *t = AtomicType::kInt16;
      return true;
    case MPI_UINT16_T:
    case MPI_UNSIGNED_SHORT:
      *t = AtomicType::kUint16;
      return true;
    case MPI_INT32_T:
    case MPI_INT:
    case MPI_INTEGER:
    case MPI_INTEGER4:
    case MPI_LOGICAL:  // only the logical ops apply, as on an int
      *t = AtomicType::kInt32;
      return true;
    case MPI_UINT32_T:
    case MPI_UNSIGNED:
      *t = AtomicType::kUint32;
      return true;
    case MPI_INT64_T:
    case MPI_LONG_LONG:
    case MPI_INTEGER8:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
      *t = AtomicType::kInt64;
      return true;
    case MPI_UINT64_T:
    case MPI_UNSIGNED_LONG_LONG:
      *t = AtomicType::kUint64;
      return true;
    case MPI_LONG:
      *t = sizeof(long) == 8 ? AtomicType::kInt64 : AtomicType::kInt32;
      return true;
    case MPI_UNSIGNED_LONG:
      *t = sizeof(long) == 8 ? AtomicType::kUint64 : AtomicType::kUint32;
      return true;
    default:
      return false;
  }
}

bool NicAtomicOp(int handle, AtomicOp* o) {
  switch (handle) {
    case MPI_SUM:
      *o = AtomicOp::kSum;
      return true;
    case MPI_PROD:
      *o = AtomicOp::kProd;
      return true;
    case MPI_MIN:
      *o = AtomicOp::kMin;
      return true;
    case MPI_MAX:
      *o = AtomicOp::kMax;
      return true;
    case MPI_LAND:
      *o = AtomicOp::kLand;
      return true;
    case MPI_LOR:
      *o = AtomicOp::kLor;
      return true;
    case MPI_LXOR:
      *o = AtomicOp::kLxor;
      return true;
    case MPI_BAND:
      *o = AtomicOp::kBand;
      return true;
    case MPI_BOR:
      *o = AtomicOp::kBor;
      return true;
    case MPI_BXOR:
      *o = AtomicOp::kBxor;
      return true;
    default:
      return false;
  }
}

// nic_tree (offload/algorithms/allreduce_nic_tree.cc) with the initial
// copy (not in place) as a put to this rank's own exposed buffer.
Status BuildNicTree(const NicTreeArgs& a, offload::Schedule* s) {
  offload::AllreduceArgs t;
  t.rank = a.rank;
  t.size = a.size;
  t.peers = a.world_ranks;
  t.recvbuf = a.recvbuf;
  t.sendbuf = a.sendbuf == kInPlace ? a.recvbuf : a.sendbuf;
  t.count = a.bytes / offload::AtomicTypeSize(a.type);
  t.type = a.type;
  t.op = a.op;
  t.radix = a.radix;
  t.reduce = a.reduce;
  t.copy_by_put = true;
  return offload::BuildAllreduceNicTree(t, s);
}

namespace {

// A start only pushes its plan onto `pending` (a lock-free stack), so it
// never waits for a progress pass or for a sleeper, which holds mu across
// its sleep; a pass moves them into `active` under mu.
struct Watch {
  std::mutex mu;
  std::vector<OffloadedPlan*> active;
  std::atomic<OffloadedPlan*> pending{nullptr};
  // Started plans not done yet (in active or pending), read without mu:
  // PollOffloaded runs on every progress pass (schedule.cc's hook) and
  // most programs never offload.
  std::atomic<std::size_t> n_active{0};
  // Live plans: `active` keeps room for each, so a start never allocates.
  std::size_t plans = 0;
};
Watch& W() {
  static auto* w = new Watch();
  return *w;
}

// Under W().mu: the starts pushed since the last pass join `active`
// (which keeps room for every live plan).
void DrainPending(Watch& w) {
  OffloadedPlan* op = w.pending.exchange(nullptr, std::memory_order_acquire);
  for (; op != nullptr; op = op->watch_next()) w.active.push_back(op);
}

}  // namespace

Status OffloadedPlan::Create(const Args& a, std::unique_ptr<OffloadedPlan>* out) {
  out->reset();
  AtomicType type;
  AtomicOp op;
  if ((a.kind != Kind::kAllreduce && a.kind != Kind::kReduce) || a.comm->size < 2 ||
      !NicAtomicType(a.rtype->handle, &type) || !NicAtomicOp(a.op, &op) || a.rcount <= 0)
    return Status::Ok();
  // A communicator smaller than world (split, create, a dup of a part)
  // uses the context MPI_Init made on every rank; making it here would be
  // a collective step over world that only these ranks take. Plans name
  // their peers by world rank, so any group works.
  if (a.comm->size != rt::WorldSize() && !rt::OffloadContextDecided()) return Status::Ok();
  std::string want = a.algo;
  if (want.empty() || want == "auto") want = config::GetString("NICQ_ALLREDUCE_ALGO");
  const bool forced = want == "nic_tree";
  if (!forced && !want.empty() && want != "auto") return Status::Ok();
  // Every rank gets here alike; without MPI_Init (unit tests) the context
  // is created collectively over world on first use (comm has all of
  // world's ranks), but only where a native backend is expected: an
  // emulated context (and its progress thread) would not be used for this
  // plan anyway.
  if (!rt::Backend() && !forced && !rt::NicBackendExpected()) return Status::Ok();
  // No context (none opens here, or NICQ_OFFLOAD=none) is no reason to
  // fail: the host engine runs it. Every rank has the same context (it is
  // agreed in MPI_Init), and the exchange below makes it one verdict anyway.
  offload::OffloadBackend* be = rt::EnsureOffloadContext().ok() ? rt::Backend() : nullptr;
  const std::size_t bytes = std::size_t(a.rcount) * offload::AtomicTypeSize(type);
  bool ok = be != nullptr && (forced || rt::NicFiresOps()) &&
            offload::PickAllreduce(be->Caps(), a.comm->size, bytes, type, op) == "nic_tree";
  if (forced && be) ok = be->Caps().remote_counters && be->Caps().SupportsAtomic(op, type);
  // A parent with two children or more takes converging atomics.
  if (ok && a.comm->size > 2 && be->Caps().converging_atomics_lose_updates) {
    NICQ_LOG(kInfo, kColl,
             "persistent allreduce: NIC plan not used (the backend's remote atomics lose updates "
             "when several land in one buffer at once); host schedule");
    ok = false;
  }
  auto self = std::make_unique<OffloadedPlan>();
  if (ok) {
    Status st = self->BuildPlan(a, be, type, op, bytes);
    if (!st.ok()) {
      NICQ_LOG(kInfo, kColl, "persistent allreduce: NIC plan not used (%s); host schedule",
               st.message().c_str());
      self->plan_.reset();
    }
  }
  bool resolved = false;
  std::string why;
  NICQ_RETURN_IF_ERROR(ExchangeAndResolve(a.comm, self->plan_.get(), &resolved, &why));
  if (!resolved) {
    if (self->plan_)
      NICQ_LOG(kInfo, kColl,
               "persistent allreduce: NIC plan not used (%s); host "
               "schedule",
               why.c_str());
    return Status::Ok();  // host engine on every rank
  }
  offload::MaybeDumpPlan(*self->plan_, a.comm->rank);
  self->CountWatched();
  *out = std::move(self);
  return Status::Ok();
}

Status OffloadedPlan::BuildPlan(const Args& a, offload::OffloadBackend* be, AtomicType type,
                                AtomicOp op, std::size_t bytes) {
  const bool in_place = a.sendbuf == kInPlace || a.sendbuf == a.recvbuf;
  const bool reduce = a.kind == Kind::kReduce;
  offload::Schedule s(
      std::string(reduce ? "reduce" : "allreduce") +
      (in_place ? " nic_tree (coll, in place)" : " nic_tree (coll, put-to-self copy)"));
  NicTreeArgs t;
  const int p = a.comm->size;
  // A reduce's tree is rooted at its root: tree rank t is comm rank
  // (t + root) mod p.
  const int root = reduce ? a.root : 0;
  tree_world_.resize(std::size_t(p));
  for (int r = 0; r < p; ++r) tree_world_[std::size_t(r)] = a.comm->world_ranks[(r + root) % p];
  t.rank = (a.comm->rank - root + p) % p;
  t.size = p;
  t.world_ranks = tree_world_.data();
  t.reduce = reduce;
  t.sendbuf = a.sendbuf;
  t.recvbuf = a.recvbuf;
  t.bytes = bytes;
  t.type = type;
  t.op = op;
  NICQ_RETURN_IF_ERROR(BuildNicTree(t, &s));
  NICQ_RETURN_IF_ERROR(offload::Lower(s, &plan_));
  // Two epochs in flight (the queue arms the next before the previous is
  // done) must fit the backend's trigger slots whole, or Start would wait
  // for slots that only its own plan holds.
  constexpr std::size_t kEpochsInFlight = 2;
  const std::size_t slots = be->Caps().max_trigger_slots;
  if (slots != 0 && kEpochsInFlight * plan_->slots_needed() > slots)
    return Error(Code::kUnsupportedOperation,
                 "trigger slots: the plan needs " +
                     std::to_string(kEpochsInFlight * plan_->slots_needed()) + ", the " +
                     std::string(be->Name()) + " backend has " + std::to_string(slots));
  return plan_->Bind(be, kPlanDepth);  // refuses ops the backend cannot run (CheckOps)
}

OffloadedPlan::~OffloadedPlan() {
  if (held_op_ != 0) dtype::ReleaseOp(held_op_);
  if (!watched_) return;
  std::lock_guard<std::mutex> lock(W().mu);
  --W().plans;
}

std::unique_ptr<OffloadedPlan> OffloadedPlan::Adopt(std::unique_ptr<offload::TriggerPlan> plan) {
  auto self = std::make_unique<OffloadedPlan>();
  self->plan_ = std::move(plan);
  self->CountWatched();
  return self;
}

void OffloadedPlan::HoldOp(int op) {
  dtype::RetainOp(op);
  if (held_op_ != 0) dtype::ReleaseOp(held_op_);
  held_op_ = op;
}

void OffloadedPlan::CountWatched() {
  {
    std::lock_guard<std::mutex> lock(W().mu);
    W().active.reserve(++W().plans);
  }
  watched_ = true;
  progress::RegisterSleeper(&SleepOnOffloaded);
}

Status OffloadedPlan::Start(Request* owner) {
  owner_ = owner;
  // The resident case inline: the epoch is armed, the start is its add.
  Status st = plan_->ArmNext();
  if (st.ok()) [[likely]] {
    st = StartArmed();
  } else if (st.code() == Code::kAgain) {
    st = StartNow();
  }
  NICQ_RETURN_IF_ERROR(st);
  WatchOffloaded(this);
  return Status::Ok();
}

Status OffloadedPlan::StartNow() {
  Status st = plan_->ArmNext();
  for (rt::Backoff b; st.code() == Code::kAgain;) {  // previous epoch's ops still draining
    NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
    st = plan_->ArmNext();
  }
  NICQ_RETURN_IF_ERROR(st);
  return StartArmed();
}

Status OffloadedPlan::StartArmed() {
  return plan_->backend()->AddCounter(plan_->start_counter(), 1);
}

void WatchOffloaded(OffloadedPlan* op) {
  EnsureHook();
  // Not in active or pending: its request was inactive, and only a pass
  // that saw it done drops it.
  Watch& w = W();
  LockFreePush(w.pending, op,
               [](OffloadedPlan* n, OffloadedPlan* next) { n->set_watch_next(next); });
  w.n_active.fetch_add(1, std::memory_order_release);
}

// The progress sleeper: the oldest started plan's done counter. The watch
// lock is held across the sleep so that no request is freed under it;
// PollOffloaded skips meanwhile (starts do not wait: see Watch).
bool SleepOnOffloaded(int timeout_ms) {
  Watch& w = W();
  if (w.n_active.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(w.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  DrainPending(w);
  if (w.active.empty()) return false;
  offload::TriggerPlan& plan = w.active.front()->plan();
  (void)plan.backend()->WaitCounter(plan.done_counter(), plan.done_target(), timeout_ms);
  return true;
}

bool PollOffloaded() {
  Watch& w = W();
  if (w.n_active.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(w.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  DrainPending(w);
  bool any = false;
  for (std::size_t i = 0; i < w.active.size();) {
    OffloadedPlan* op = w.active[i];
    // Software parts. Where an agent fires the ops, only while the epoch is
    // not done: a wait for an epoch the agent finished reads one counter.
    offload::OffloadBackend* be = op->plan().backend();
    if (be->Fires() != offload::Firing::kAgentThread || !op->plan().Test()) be->Progress();
    if (!op->plan().Poll()) {  // done: the plan re-arms its window here (or its agent did)
      ++i;
      continue;
    }
    Request* owner = op->owner();
    owner->status = RequestStatus{};
    owner->status.source = rt::kAnySource;
    owner->status.tag = rt::kAnyTag;
    w.active[i] = w.active.back();
    w.active.pop_back();
    w.n_active.fetch_sub(1, std::memory_order_release);
    owner->MarkDone();
    any = true;
  }
  return any;
}

}  // namespace nicq::coll
