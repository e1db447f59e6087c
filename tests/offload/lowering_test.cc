// Plan IR and lowering: which counter each step triggers on, thresholds as
// sums of input increments, per-epoch thresholds, fan-outs, validation and dumps.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "offload/trigger_plan.h"
#include "providers/sim/sim_backend.h"

namespace nicq::offload {
namespace {

std::unique_ptr<TriggerPlan> LowerOk(Schedule& s) {
  std::unique_ptr<TriggerPlan> p;
  Status st = Lower(s, &p);
  EXPECT_TRUE(st.ok()) << st.message();
  return p;
}

int x_, y_;  // buffers for steps that never run

TEST(Lowering, ChainTriggersOnInputCompletion) {
  Schedule s("chain");
  const StepId a = s.Recv(1, &x_, 4, 7, {});
  const StepId b = s.Send(1, &x_, 4, 8, {a});
  auto p = LowerOk(s);
  ASSERT_EQ(p->num_ops(), 2u);
  const auto& ops = p->ops();
  EXPECT_EQ(ops[a].trigger, 0u);  // start counter
  EXPECT_EQ(p->counters()[0].role, CounterRole::kStart);
  EXPECT_EQ(p->base(a), 1u);
  EXPECT_EQ(p->delta(a), 1u);
  EXPECT_EQ(ops[b].trigger, ops[a].completion);
  EXPECT_EQ(p->counters()[ops[a].completion].role, CounterRole::kCompletion);
  EXPECT_EQ(ops[b].completion, 1u);  // the sink feeds done
  EXPECT_EQ(p->counters()[1].delta, 1u);
}

TEST(Lowering, JoinThresholdIsTheSumOfInputIncrements) {
  Schedule s("join");
  const StepId a = s.Recv(1, &x_, 4, 1, {});
  const StepId b = s.Recv(2, &y_, 4, 2, {});
  s.SetCompletionIncrement(a, 3);
  const StepId c = s.Reduce(AtomicOp::kSum, AtomicType::kInt32, &x_, &y_, 4, {a, b});
  auto p = LowerOk(s);
  const auto& ops = p->ops();
  EXPECT_EQ(ops[a].completion, ops[c].trigger);
  EXPECT_EQ(ops[b].completion, ops[c].trigger);
  EXPECT_EQ(ops[a].completion_inc, 3u);
  EXPECT_EQ(p->counters()[ops[c].trigger].role, CounterRole::kJoin);
  EXPECT_EQ(p->base(c), 4u);
  EXPECT_EQ(p->delta(c), 4u);
  EXPECT_EQ(ops[c].kind, OpKind::kHost);
}

TEST(Lowering, FanOutWhenConsumersTriggerOnDifferentCounters) {
  Schedule s("fanout");
  const StepId a = s.Recv(1, &x_, 4, 1, {});
  const StepId b = s.Send(1, &x_, 4, 2, {a});  // single input: a's own counter
  const StepId c = s.Recv(2, &y_, 4, 3, {});
  const StepId d = s.Send(2, &y_, 4, 4, {a, c});  // join of a and c
  auto p = LowerOk(s);
  ASSERT_EQ(p->num_ops(), 5u);  // 4 steps + 1 fan-out
  const auto& ops = p->ops();
  const TriggeredOp& fan = ops[4];
  EXPECT_EQ(p->step_of(4), static_cast<std::size_t>(-1));
  EXPECT_EQ(fan.kind, OpKind::kCounterAdd);
  EXPECT_EQ(fan.trigger, ops[a].completion);
  EXPECT_EQ(ops[b].trigger, ops[a].completion);
  EXPECT_EQ(fan.target_counter, ops[d].trigger);
  EXPECT_EQ(ops[c].completion, ops[d].trigger);
  EXPECT_EQ(p->base(d), 2u);
  // Both sinks (b and d) feed done.
  EXPECT_EQ(p->counters()[1].delta, 2u);
}

TEST(Lowering, NamedCounterCountsRemoteAndLocalInputs) {
  Schedule s("named");
  const PlanCounter up = s.AddCounter("up", 2);  // two peers add per epoch
  const BufferId buf = s.ExposeBuffer("acc", &x_, 4, up);
  const StepId copy = s.Copy(&x_, &y_, 4, {});
  const StepId at =
      s.Atomic(AtomicOp::kSum, AtomicType::kInt32, &x_, 4, RemoteBuffer{0, buf, 0}, {copy});
  s.WaitOn(at, up);
  auto p = LowerOk(s);
  const auto& ops = p->ops();
  EXPECT_EQ(p->counters()[ops[at].trigger].role, CounterRole::kNamed);
  EXPECT_EQ(ops[copy].completion, ops[at].trigger);
  EXPECT_EQ(p->base(at), 3u);
}

// A Nop's zero add goes to the counter its completion bumps, never to the
// done counter: an add to done would chain done's triggers (a queue's wait)
// to the Nop's trigger, a counter-op cycle through the queue's gate.
TEST(Lowering, NopAddsOnlyToItsOwnCompletionCounter) {
  constexpr std::uint32_t kDone =
      1;  // the plan's done counter, as in ChainTriggersOnInputCompletion
  Schedule s("nop");
  const StepId ready = s.Nop({});
  const StepId send = s.Send(1, &x_, 4, 1, {ready});
  const StepId leaf = s.Nop({send});
  auto p = LowerOk(s);
  const auto& ops = p->ops();
  EXPECT_EQ(ops[ready].kind, OpKind::kCounterAdd);
  EXPECT_EQ(ops[ready].value, 0u);
  EXPECT_EQ(ops[ready].target_counter, ops[ready].completion);
  EXPECT_NE(ops[ready].target_counter, kDone);
  EXPECT_EQ(ops[send].trigger, ops[ready].completion);
  // A leaf completes into done; its zero add goes there too.
  EXPECT_EQ(ops[leaf].completion, kDone);
  EXPECT_EQ(ops[leaf].target_counter, kDone);
}

TEST(Lowering, ThresholdsPerEpochAreComputedInPlace) {
  auto world = sim::SimWorld::Make(fwsim::LogGP{}, 1);
  sim::SimBackend backend(world, 0);
  Schedule s("epochs");
  const StepId a = s.Nop({});
  const StepId b = s.Nop({});
  const StepId c = s.Nop({a, b});
  auto p = LowerOk(s);
  ASSERT_TRUE(p->Bind(&backend, 2).ok());
  for (std::uint64_t k = 0; k < 5; ++k) {
    ASSERT_TRUE(p->Start().ok());
    const auto ops = p->bound_ops(k);
    EXPECT_EQ(ops[a].threshold, 1 + k);
    EXPECT_EQ(ops[c].threshold, 2 + 2 * k);
    ASSERT_TRUE(p->Wait().ok());
    EXPECT_EQ(backend.ReadCounter(p->done_counter()), k + 1);
  }
  // Counters were allocated on the backend and are the ones ops use.
  EXPECT_EQ(p->bound_ops(0)[a].trigger, p->start_counter());
}

TEST(Lowering, ValidationNamesTheStepAndTheProblem) {
  std::unique_ptr<TriggerPlan> p;
  {
    Schedule s("fwd");
    s.Nop({});
    s.Nop({1});  // itself
    Status st = Lower(s, &p);
    EXPECT_EQ(st.code(), Code::kArg);
    EXPECT_NE(st.message().find("step 1"), std::string::npos) << st.message();
  }
  {
    Schedule s("mismatch");
    const PlanCounter c = s.AddCounter("c", 1);
    const StepId a = s.Nop({});
    const StepId b = s.Nop({});
    s.WaitOn(s.Nop({a}), c);
    s.WaitOn(s.Nop({b}), c);
    Status st = Lower(s, &p);
    EXPECT_NE(st.message().find("same inputs"), std::string::npos) << st.message();
  }
  {
    Schedule s("size");
    s.Reduce(AtomicOp::kSum, AtomicType::kInt64, &x_, &y_, 12, {});
    EXPECT_FALSE(Lower(s, &p).ok());
  }
  {
    Schedule s("starved");
    const PlanCounter c = s.AddCounter("nobody adds", 0);
    s.WaitOn(s.Nop({}), c);
    Status st = Lower(s, &p);
    EXPECT_NE(st.message().find("nothing increments"), std::string::npos) << st.message();
  }
}

TEST(Lowering, DumpsShowOpsCountersAndEdges) {
  Schedule s("dumped");
  const StepId a = s.Recv(3, &x_, 4, 9, {});
  s.SetLabel(a, "round 0 recv");
  s.Send(3, &x_, 4, 9, {a});
  auto p = LowerOk(s);
  const std::string text = p->DumpText();
  EXPECT_NE(text.find("plan dumped: 2 ops"), std::string::npos) << text;
  EXPECT_NE(text.find("op0 recv peer=3 tag=9 bytes=4 [round 0 recv] when c0 >= 1+k*1"),
            std::string::npos)
      << text;
  const std::string dot = p->DumpDot();
  EXPECT_EQ(dot.rfind("digraph \"dumped\"", 0), 0u);
  EXPECT_NE(dot.find("c0 -> op0"), std::string::npos) << dot;
  EXPECT_NE(dot.find("op0 -> c2"), std::string::npos) << dot;
}

TEST(Lowering, PlanDumpEnvironmentWritesTheFile) {
  const std::string path = ::testing::TempDir() + "/nicq_plan_dump.txt";
  std::remove(path.c_str());
  setenv("NICQ_PLAN_DUMP", "text", 1);
  setenv("NICQ_PLAN_DUMP_FILE", path.c_str(), 1);
  Schedule s("from_env");
  s.Nop({});
  auto p = LowerOk(s);
  MaybeDumpPlan(*p, 5);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_NE(ss.str().find("# rank 5\nplan from_env"), std::string::npos) << ss.str();
}

TEST(Lowering, ExportsRoundTrip) {
  PlanExports e;
  e.counters = {4, 9};
  e.buffers = {{0x1000, 77, 64, 4}};
  const auto w = e.Serialize();
  PlanExports back;
  ASSERT_TRUE(PlanExports::Deserialize(w.data(), w.size(), &back).ok());
  EXPECT_EQ(back.counters, e.counters);
  ASSERT_EQ(back.buffers.size(), 1u);
  EXPECT_EQ(back.buffers[0].key, 77u);
  EXPECT_FALSE(PlanExports::Deserialize(w.data(), w.size() - 1, &back).ok());
}

}  // namespace
}  // namespace nicq::offload
