// TriggerPlan: binding to a backend, the match exchange, and per-epoch replay.
#include "offload/trigger_plan.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/config.h"
#include "offload/reduce_kernel.h"

namespace nicq::offload {

const char* CounterRoleName(CounterRole r) {
  switch (r) {
    case CounterRole::kStart:
      return "start";
    case CounterRole::kDone:
      return "done";
    case CounterRole::kNamed:
      return "named";
    case CounterRole::kCompletion:
      return "completion";
    case CounterRole::kJoin:
      return "join";
  }
  return "?";
}

void HostTask::Run(void* task) {
  auto* t = static_cast<HostTask*>(task);
  switch (t->kind) {
    case StepKind::kReduce:
      ReduceInto(t->aop, t->atype, t->dst, t->src, t->bytes);
      break;
    case StepKind::kCopy:
      if (t->bytes && t->dst != t->src) std::memmove(t->dst, t->src, t->bytes);
      break;
    default:
      t->fn(t->arg);
      break;
  }
}

std::vector<std::uint64_t> PlanExports::Serialize() const {
  std::vector<std::uint64_t> w;
  w.push_back(counters.size());
  for (CounterId c : counters) w.push_back(c);
  w.push_back(buffers.size());
  for (const Buffer& b : buffers) {
    w.insert(w.end(), {b.remote_addr, b.key, b.len, b.arrival});
  }
  return w;
}

Status PlanExports::Deserialize(const std::uint64_t* w, std::size_t n, PlanExports* out) {
  auto bad = [] {
    return Error(Code::kArg, "PlanExports::Deserialize: truncated or corrupt exports");
  };
  std::size_t i = 0;
  if (i >= n) return bad();
  const std::uint64_t nc = w[i++];
  if (nc > n - i) return bad();
  out->counters.clear();
  for (std::uint64_t k = 0; k < nc; ++k) out->counters.push_back(static_cast<CounterId>(w[i++]));
  if (i >= n) return bad();
  const std::uint64_t nb = w[i++];
  if (nb * 4 > n - i) return bad();
  out->buffers.clear();
  for (std::uint64_t k = 0; k < nb; ++k, i += 4) {
    out->buffers.push_back(Buffer{w[i], w[i + 1], w[i + 2], static_cast<CounterId>(w[i + 3])});
  }
  return Status::Ok();
}

TriggerPlan::~TriggerPlan() {
  if (backend_ == nullptr) return;
  if (agent_refills_) backend_->RemoveRefiller(this);  // before the counters go
  for (MemRegion& r : regions_) backend_->DeregisterMemory(&r).IgnoreError();
  for (const PlanCounterInfo& c : counters_) {
    if (c.id != kNoCounter) backend_->FreeCounter(c.id);
  }
}

Status TriggerPlan::Bind(OffloadBackend* backend, std::size_t depth) {
  const std::string ctx = "TriggerPlan::Bind(" + name_ + ", " + backend->Name() + ")";
  if (backend_ != nullptr) return Error(Code::kIntern, ctx + ": already bound");
  if (depth == 0) return Error(Code::kArg, ctx + ": depth 0");
  NICQ_RETURN_IF_ERROR(backend->CheckOps(proto_).WithContext(ctx));
  std::vector<CounterId> ids(counters_.size());
  NICQ_RETURN_IF_ERROR(backend->AllocCounters(ids.size(), ids.data()).WithContext(ctx));
  for (std::size_t i = 0; i < ids.size(); ++i) counters_[i].id = ids[i];
  backend_ = backend;
  depth_ = depth;
  regions_.resize(buffers_.size());
  for (std::size_t b = 0; b < buffers_.size(); ++b) {
    const CounterId arrival =
        buffers_[b].arrival == kNoPlanCounter ? kNoCounter : ids[buffers_[b].arrival];
    NICQ_RETURN_IF_ERROR(
        backend->RegisterMemory(buffers_[b].addr, buffers_[b].len, arrival, &regions_[b])
            .WithContext(ctx));
  }
  live_.resize(depth * proto_.size());
  for (std::size_t d = 0; d < depth; ++d) {
    for (std::size_t i = 0; i < proto_.size(); ++i) {
      TriggeredOp op = proto_[i];
      op.trigger = op.trigger == kNoCounter ? kNoCounter : ids[op.trigger];
      op.completion = op.completion == kNoCounter ? kNoCounter : ids[op.completion];
      if (op.kind == OpKind::kCounterAdd || op.kind == OpKind::kCounterSet) {
        op.target_counter = ids[op.target_counter];
      }
      live_[d * proto_.size() + i] = op;
    }
  }
  // The resident window: epochs armed ahead of the starts. Each plan may
  // hold a 1/kPlansPerBudget share of the slot budget that way (at least 2
  // epochs, at most its descriptor arrays); Refill also leaves half the
  // budget free, so resident epochs of idle plans never starve a start.
  constexpr std::size_t kPlansPerBudget = 32;
  const std::size_t budget = backend->Caps().max_trigger_slots;
  const std::size_t share = budget / (kPlansPerBudget * std::max<std::size_t>(1, proto_.size()));
  window_ =
      budget == 0 ? depth : std::clamp<std::size_t>(share, std::min<std::size_t>(2, depth), depth);
  // Rebase ops only where counters can wrap (a descriptor per counter).
  if (backend->Caps().max_counter_value != ~std::uint64_t{0}) BuildRebaseOps();
  return Status::Ok();
}

PlanExports TriggerPlan::Exports() const {
  PlanExports e;
  for (const PlanCounterInfo& c : counters_) {
    if (c.role == CounterRole::kNamed) e.counters.push_back(c.id);
  }
  for (std::size_t b = 0; b < buffers_.size(); ++b) {
    const CounterId arrival =
        buffers_[b].arrival == kNoPlanCounter ? kNoCounter : counters_[buffers_[b].arrival].id;
    e.buffers.push_back({regions_[b].remote_addr, regions_[b].key, buffers_[b].len, arrival});
  }
  return e;
}

Status TriggerPlan::Resolve(const std::function<const PlanExports*(PeerId)>& exports_of) {
  for (std::size_t i = 0; i < proto_.size(); ++i) {
    const OpRemoteRef& ref = remote_[i];
    if (ref.kind == OpRemoteRef::kNone) continue;
    const std::string ctx = "TriggerPlan::Resolve(" + name_ + "): op '" + labels_[i] + "'";
    const PlanExports* e = exports_of(proto_[i].peer);
    if (e == nullptr)
      return Error(Code::kMatch, ctx + ": no exports from peer " + std::to_string(proto_[i].peer));
    for (std::size_t d = 0; d < depth_; ++d) {
      TriggeredOp& op = live_[d * proto_.size() + i];
      if (ref.kind == OpRemoteRef::kCounter) {
        if (ref.index >= e->counters.size())
          return Error(Code::kMatch, ctx + ": peer has no such counter");
        op.target_counter = e->counters[ref.index];
        continue;
      }
      if (ref.index >= e->buffers.size())
        return Error(Code::kMatch, ctx + ": peer has no such buffer");
      const PlanExports::Buffer& b = e->buffers[ref.index];
      // Written so that no sum wraps: a negative displacement arrives as a
      // huge offset.
      if (ref.offset > b.len || op.bytes > b.len - ref.offset) {
        return Error(Code::kMatch, ctx + ": " + std::to_string(op.bytes) + " bytes at offset " +
                                       std::to_string(ref.offset) +
                                       " overrun the peer's buffer of " + std::to_string(b.len));
      }
      op.remote_addr = b.remote_addr + ref.offset;
      op.remote_key = b.key;
      op.target_counter = b.arrival;
    }
  }
  resolved_ = true;
  // Every remote reference is known: the window goes on the backend now,
  // and from then on the backend's agent keeps it full where it has one.
  NICQ_RETURN_IF_ERROR(Refill());
  if (RefillEnabled(backend_)) agent_refills_ = backend_->AddRefiller(&RefillOnAgent, this);
  return Status::Ok();
}

bool TriggerPlan::Test() const {
  return backend_ != nullptr && backend_->ReadCounter(done_counter()) >= done_target_;
}

bool TriggerPlan::NeedsRebase(std::uint64_t epoch) const {
  // Leave room for one epoch of early increments beyond this one.
  return (epoch - epoch_base_ + 2) * max_delta_ > backend_->Caps().max_counter_value;
}

Status TriggerPlan::Arm(std::uint64_t epoch) {
  if (backend_ == nullptr)
    return Error(Code::kIntern, "TriggerPlan::Arm(" + name_ + "): not bound");
  const std::uint64_t armed = armed_upto_.load(std::memory_order_relaxed);
  if (epoch != armed)
    return Error(Code::kIntern, "TriggerPlan::Arm(" + name_ + "): epoch " + std::to_string(epoch) +
                                    " armed out of order (next is " + std::to_string(armed) + ")");
  if (!ArrayFree(epoch)) {  // the array we are about to rewrite must be finished
    return Error(Code::kAgain, "TriggerPlan::Arm(" + name_ + "): epoch " +
                                   std::to_string(epoch - depth_) + " still running");
  }
  if (NeedsRebase(epoch)) {
    NICQ_RETURN_IF_ERROR(Rebase());
    epoch_base_ = epoch;
  }
  const std::uint64_t rel = epoch - epoch_base_;
  const std::size_t n = proto_.size();
  TriggeredOp* ops = live_.data() + (epoch % depth_) * n;
  for (std::size_t i = 0; i < n; ++i) ops[i].threshold = base_[i] + rel * delta_[i];
  NICQ_RETURN_IF_ERROR(backend_->Post(std::span<const TriggeredOp>(ops, n)));
  armed_upto_.store(epoch + 1, std::memory_order_release);
  return Status::Ok();
}

bool TriggerPlan::ArrayFree(std::uint64_t epoch) const {
  if (epoch < epoch_base_ + depth_) return true;
  const std::uint64_t need = (epoch - depth_ - epoch_base_ + 1) * counters_[1].delta;
  return backend_->ReadCounter(done_counter()) >= need;
}

// Resident window: epochs are armed ahead of their starts, so a start is
// one counter add. An epoch's descriptor array is reused only once the
// epoch depth_ before it completed, and an epoch that would need a rebase
// (narrow counters: the plan must be quiescent) is left to its own start.
// Only where the backend withdraws unfired ops when the plan is freed: an
// epoch armed but never started must not hold NIC entries for good.
bool TriggerPlan::RefillEnabled(const OffloadBackend* backend) {
  static const bool enabled = config::GetInt("NICQ_RESIDENT_PLANS") == 1;
  return enabled && backend != nullptr && backend->Caps().withdraws_unfired_ops;
}

Status TriggerPlan::Refill() {
  if (!RefillEnabled(backend_) || !resolved_) return Status::Ok();
  if (agent_refills_) {
    // The agent keeps the window full. The host steps in only where it ran
    // below half (the agent had no core, or slept through the epochs), so
    // that starts still find their epochs armed; never waiting for the role.
    if (!WindowLow() || !TryTakeArming()) return Status::Ok();
  } else {
    TakeArming();
  }
  const Status st = RefillLocked();
  ReleaseArming();
  return st;
}

Status TriggerPlan::RefillLocked() {
  const std::size_t budget = backend_->Caps().max_trigger_slots;
  for (;;) {
    const std::uint64_t epoch = armed_upto_.load(std::memory_order_relaxed);
    // Checked before Arm: a kAgain from Arm builds a message, and the agent
    // asks on every poll.
    if (epoch >= next_epoch_.load(std::memory_order_acquire) + window_ || NeedsRebase(epoch) ||
        !ArrayFree(epoch) || (budget != 0 && backend_->FreeSlots() < proto_.size() + budget / 2))
      return Status::Ok();
    Status st = Arm(epoch);
    if (st.code() == Code::kAgain) return Status::Ok();  // no slots: later
    NICQ_RETURN_IF_ERROR(st);
  }
}

void TriggerPlan::RefillOnAgent(void* p) {
  auto* plan = static_cast<TriggerPlan*>(p);
  const std::uint64_t armed = plan->armed_upto_.load(std::memory_order_acquire);
  if (armed >= plan->next_epoch_.load(std::memory_order_acquire) + plan->window_)
    return;  // the window is full
  // Nothing to arm until the epoch whose array the next one reuses is done:
  // a counter read first, since taking the role is an exchange on a line
  // next to the starts' epoch count, which a start then waits for.
  // (epoch_base_ moves only in a rebase, which no backend with an agent
  // needs: its counters are 64-bit.)
  if (!plan->ArrayFree(armed)) return;
  if (!plan->TryTakeArming()) return;  // the host's start arms: next poll
  // A failure is left to the start that needs the epoch: it arms the epoch
  // itself and reports it.
  (void)plan->RefillLocked();
  plan->ReleaseArming();
}

void TriggerPlan::TakeArming() {
  for (std::uint32_t round = 0; !TryTakeArming(); ++round) {
    if (round < 64) continue;
    if (round < 1024) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

// No completion counter: one that counted rebases would itself outgrow a
// narrow counter. Rebase() watches the plan's counters reach 0 instead.
void TriggerPlan::BuildRebaseOps() {
  rebase_ops_.clear();
  for (const PlanCounterInfo& c : counters_) {
    TriggeredOp op;
    op.kind = OpKind::kCounterSet;
    op.target_counter = c.id;
    op.value = 0;
    rebase_ops_.push_back(op);
  }
}

Status TriggerPlan::Rebase() {
  if (!Test()) {
    return Error(Code::kAgain, "TriggerPlan::Rebase(" + name_ + "): previous epoch not complete");
  }
  // Built at Bind when the backend's counters can wrap; here only if the
  // limit appeared later (a rare path, not the per-epoch one).
  if (rebase_ops_.empty()) BuildRebaseOps();
  NICQ_RETURN_IF_ERROR(backend_->Post(rebase_ops_));
  // The plan is quiescent, so nothing but these sets moves its counters:
  // wait (spin, yield, then sleep; bounded) until every one reads 0.
  for (std::uint64_t round = 0;; ++round) {
    bool zero = true;
    for (const PlanCounterInfo& c : counters_) zero &= backend_->ReadCounter(c.id) == 0;
    if (zero) break;
    if (backend_->Progress() || round < 64) continue;
    if (round > 200000) {
      return Error(Code::kPending, "TriggerPlan::Rebase(" + name_ + "): counters not reset");
    }
    if (round < 1024) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  done_target_ = 0;
  ++rebases_;
  return Status::Ok();
}

Status TriggerPlan::ArmNext() {
  const std::uint64_t epoch = next_epoch_.load(std::memory_order_relaxed);
  // armed_upto_ is the agent's line (it re-arms an epoch as each one ends):
  // read only when the last look no longer covers this epoch, once per
  // window rather than once per start.
  if (armed_seen_.load(std::memory_order_relaxed) <= epoch) {
    const std::uint64_t armed = armed_upto_.load(std::memory_order_acquire);
    armed_seen_.store(armed, std::memory_order_relaxed);
  }
  if (armed_seen_.load(std::memory_order_relaxed) <= epoch) {  // not resident
    TakeArming();
    const Status st =
        armed_upto_.load(std::memory_order_relaxed) <= epoch ? Arm(epoch) : Status::Ok();
    ReleaseArming();
    NICQ_RETURN_IF_ERROR(st);
  }
  done_target_ = (epoch - epoch_base_ + 1) * counters_[1].delta;
  next_epoch_.store(epoch + 1, std::memory_order_release);
  backend_->ExpectCounter(done_counter(), done_target_);
  return Status::Ok();
}

Status TriggerPlan::Start() {
  NICQ_RETURN_IF_ERROR(ArmNext());
  return backend_->AddCounter(start_counter(), 1);
}

Status TriggerPlan::Wait() {
  if (backend_ == nullptr)
    return Error(Code::kIntern, "TriggerPlan::Wait(" + name_ + "): not bound");
  Status s = backend_->WaitCounter(done_counter(), done_target_, -1);
  if (s.ok()) s = Refill();
  if (s.ok()) return s;
  return s.WithContext("TriggerPlan::Wait(" + name_ + ")");
}

}  // namespace nicq::offload
