// Schedule -> TriggerPlan.
//
// Every step becomes one triggered op gated on one counter:
//  * a step that waits on a named counter triggers on it, and its local
//    inputs complete into that counter;
//  * a step with no inputs triggers on the plan's start counter;
//  * a step with one input triggers on that input's own completion counter;
//  * a step with several inputs triggers on a join counter they all feed.
// A step whose consumers trigger on different counters completes into its
// own counter and fans out with NIC counter-add ops (one per other counter).
// Each counter's per-epoch delta is the sum of what flows into it (plus the
// remote increments declared for named counters), and a step's threshold in
// epoch k is (k + 1) * delta of its trigger counter: base = delta.
#include <algorithm>

#include "offload/trigger_plan.h"

namespace nicq::offload {

class Lowering {
 public:
  static Status Run(Schedule& sched, std::unique_ptr<TriggerPlan>* out);
};

namespace {
constexpr std::uint32_t kStartIdx = 0, kDoneIdx = 1, kNamedBase = 2;
}

Status Lowering::Run(Schedule& sched, std::unique_ptr<TriggerPlan>* out) {
  NICQ_RETURN_IF_ERROR(sched.Validate());
  std::unique_ptr<TriggerPlan> plan(new TriggerPlan());
  plan->name_ = sched.name();
  const auto& steps = sched.steps();
  const std::size_t n = steps.size();

  auto& ctr = plan->counters_;
  ctr.push_back({"start", CounterRole::kStart, 1});
  ctr.push_back({"done", CounterRole::kDone, 0});
  for (const NamedCounter& c : sched.counters()) {
    ctr.push_back({c.name, CounterRole::kNamed, c.remote_per_epoch});
  }
  auto new_counter = [&](std::string name, CounterRole role) {
    ctr.push_back({std::move(name), role, 0});
    return static_cast<std::uint32_t>(ctr.size() - 1);
  };
  auto step_name = [&](std::size_t i) {
    return steps[i].label.empty()
               ? std::string(StepKindName(steps[i].kind)) + " " + std::to_string(i)
               : steps[i].label;
  };

  // 1. Trigger counter of every step.
  std::vector<std::uint32_t> trig(n), comp(n, kNoCounter);
  std::vector<std::vector<StepId>> consumers(n);
  for (std::size_t s = 0; s < n; ++s) {
    for (StepId d : steps[s].deps) consumers[d].push_back(static_cast<StepId>(s));
    if (steps[s].wait_counter != kNoPlanCounter) {
      trig[s] = kNamedBase + steps[s].wait_counter;
    } else if (steps[s].deps.empty()) {
      trig[s] = kStartIdx;
    } else if (steps[s].deps.size() == 1) {
      const StepId d = steps[s].deps[0];
      if (comp[d] == kNoCounter)
        comp[d] = new_counter("after " + step_name(d), CounterRole::kCompletion);
      trig[s] = comp[d];
    } else {
      trig[s] = new_counter("join for " + step_name(s), CounterRole::kJoin);
    }
  }

  // 2. Where each step's completion goes, fan-outs where it must go to several.
  struct FanOut {
    std::uint32_t from, to;
    std::uint64_t value;
    std::size_t step;
  };
  std::vector<std::uint32_t> completion(n);
  std::vector<FanOut> fanouts;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint32_t> targets;
    for (StepId s : consumers[i]) {
      if (std::find(targets.begin(), targets.end(), trig[s]) == targets.end())
        targets.push_back(trig[s]);
    }
    if (targets.empty()) targets.push_back(kDoneIdx);
    const std::uint64_t inc = steps[i].completion_inc;
    if (targets.size() == 1) {
      completion[i] = targets[0];
      ctr[targets[0]].delta += inc;
      continue;
    }
    if (comp[i] == kNoCounter)
      comp[i] = new_counter("after " + step_name(i), CounterRole::kCompletion);
    completion[i] = comp[i];
    ctr[comp[i]].delta += inc;
    for (std::uint32_t t : targets) {
      if (t == comp[i]) continue;
      fanouts.push_back({comp[i], t, 1, i});
      ctr[t].delta += 1;
    }
  }

  // 3. Ops: one per step, then the fan-outs.
  std::size_t host_steps = 0;
  for (const Step& s : steps) {
    host_steps +=
        s.kind == StepKind::kReduce || s.kind == StepKind::kCopy || s.kind == StepKind::kHost;
  }
  plan->host_tasks_.reserve(host_steps);  // addresses handed to ops: never reallocate
  const std::size_t nops = n + fanouts.size();
  plan->proto_.resize(nops);
  plan->base_.resize(nops);
  plan->delta_.resize(nops);
  plan->remote_.resize(nops);
  plan->step_of_.resize(nops);
  plan->labels_.resize(nops);
  for (std::size_t i = 0; i < n; ++i) {
    const Step& s = steps[i];
    TriggeredOp& op = plan->proto_[i];
    op.trigger = trig[i];
    op.completion = completion[i];
    op.completion_inc = s.completion_inc;
    op.peer = s.peer;
    op.local_buf = s.src;
    op.local_rbuf = s.dst;
    op.bytes = s.bytes;
    op.tag = s.tag;
    op.aop = s.aop;
    op.atype = s.atype;
    op.value = s.value;
    OpRemoteRef& ref = plan->remote_[i];
    switch (s.kind) {
      case StepKind::kSend:
        op.kind = OpKind::kSend;
        break;
      case StepKind::kRecv:
        op.kind = OpKind::kRecv;
        break;
      case StepKind::kPut:
      case StepKind::kAtomic:
        op.kind = s.kind == StepKind::kPut ? OpKind::kPut : OpKind::kAtomic;
        op.source_completion = s.kind == StepKind::kPut && s.source_completion;
        ref = {OpRemoteRef::kBuffer, s.rbuf.buffer, s.rbuf.offset};
        break;
      case StepKind::kRemoteCounterAdd:
        op.kind = OpKind::kRemoteCounterAdd;
        op.source_completion = s.source_completion;
        ref = {OpRemoteRef::kCounter, s.rctr.counter, 0};
        break;
      case StepKind::kCounterAdd:
        op.kind = OpKind::kCounterAdd;
        op.target_counter = kNamedBase + s.local_counter;
        ctr[op.target_counter].delta += s.value;
        break;
      case StepKind::kNop:
        // A zero add, the cheapest op a NIC can chain, to the counter its
        // own completion bumps anyway: an add to any other counter (the
        // plan's done counter) would chain that counter's triggers to this
        // one's, and on sockets, which fires a counter's triggers inside
        // the add that reached them, a cycle through a queue's gate (done
        // -> join -> queue counter -> gate -> start -> this op -> done)
        // stalls the chain until the host adds to one of them.
        op.kind = OpKind::kCounterAdd;
        op.target_counter = completion[i] != kNoCounter ? completion[i] : kDoneIdx;
        op.value = 0;
        break;
      case StepKind::kReduce:
      case StepKind::kCopy:
      case StepKind::kHost:
        op.kind = OpKind::kHost;
        plan->host_tasks_.push_back(
            HostTask{s.kind, s.aop, s.atype, s.dst, s.src, s.bytes, s.host_fn, s.host_arg});
        op.host_fn = &HostTask::Run;
        op.host_arg = &plan->host_tasks_.back();
        break;
    }
    plan->step_of_[i] = i;
    plan->labels_[i] = step_name(i);
  }
  for (std::size_t f = 0; f < fanouts.size(); ++f) {
    const FanOut& fo = fanouts[f];
    TriggeredOp& op = plan->proto_[n + f];
    op.kind = OpKind::kCounterAdd;
    op.trigger = fo.from;
    op.target_counter = fo.to;
    op.value = fo.value;
    op.completion = kNoCounter;
    plan->step_of_[n + f] = static_cast<std::size_t>(-1);
    plan->labels_[n + f] = "fan-out of " + step_name(fo.step) + " to " + ctr[fo.to].name;
  }
  // 4. Thresholds: epoch k fires at (k + 1) * delta of the trigger counter.
  for (std::size_t i = 0; i < nops; ++i) {
    const std::uint64_t d = ctr[plan->proto_[i].trigger].delta;
    plan->base_[i] = d;
    plan->delta_[i] = d;
    plan->max_delta_ = std::max(plan->max_delta_, d);
  }
  for (const PlanCounterInfo& c : ctr) plan->max_delta_ = std::max(plan->max_delta_, c.delta);
  // A counter a step triggers on that nothing feeds would never fire.
  for (std::size_t i = 0; i < nops; ++i) {
    if (plan->delta_[i] == 0) {
      return Error(Code::kArg, "Lower(" + plan->name_ + "): op '" + plan->labels_[i] +
                                   "' waits on counter '" + ctr[plan->proto_[i].trigger].name +
                                   "' that nothing increments");
    }
  }
  plan->buffers_ = sched.buffers();
  for (ExposedBuffer& b : plan->buffers_) {
    if (b.arrival != kNoPlanCounter) b.arrival += kNamedBase;
  }
  plan->scratch_ = sched.TakeScratch();
  *out = std::move(plan);
  return Status::Ok();
}

Status Lower(Schedule& schedule, std::unique_ptr<TriggerPlan>* out) {
  return Lowering::Run(schedule, out);
}

}  // namespace nicq::offload
