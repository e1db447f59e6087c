// Allreduce plans run on the simulator with their data checked: 64 and
// 1,000 ranks, several epochs, odd sizes, faults, counter rebasing, and
// reporting of stuck or failed plans; and the match of plans across ranks
// (exports, resolution, bounds of a put into a peer's buffer).
#include <gtest/gtest.h>

#include "offload/algorithms/select.h"
#include "offload/match.h"
#include "offload/tool/sim_driver.h"
#include "providers/common/backend_registry.h"
#include "providers/common/backend_selector.h"

namespace nicq::offload {
namespace {

void RunAndCheck(const SimRunConfig& cfg, int epochs) {
  AllreduceSim sim;
  Status s = sim.Setup(cfg);
  ASSERT_TRUE(s.ok()) << s.message();
  for (int e = 0; e < epochs; ++e) {
    EpochResult r;
    s = sim.RunEpoch(static_cast<std::uint64_t>(e), &r);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(r.data_ok) << cfg.algo << " P=" << cfg.ranks << " epoch " << e << ": " << r.mismatch
                           << " " << cfg.faults.Describe();
    EXPECT_GT(r.elapsed, 0u);
  }
}

SimRunConfig Config(const char* algo, int ranks, std::size_t count = 3) {
  SimRunConfig c;
  c.algo = algo;
  c.ranks = ranks;
  c.count = count;
  c.depth = 2;
  return c;
}

TEST(AllreducePlan, RecursiveDoubling64Ranks) {
  RunAndCheck(Config("recursive_doubling", 64), 3);
}
TEST(AllreducePlan, NicTree64Ranks) {
  RunAndCheck(Config("nic_tree", 64), 3);
}
TEST(AllreducePlan, RecursiveDoubling1000Ranks) {
  RunAndCheck(Config("recursive_doubling", 1000, 1), 2);
}
TEST(AllreducePlan, NicTree1000Ranks) {
  RunAndCheck(Config("nic_tree", 1000, 1), 2);
}

TEST(AllreducePlan, EverySmallSizeAndRadix) {
  for (int p = 1; p <= 13; ++p) {
    RunAndCheck(Config("recursive_doubling", p), 2);
    for (int radix : {1, 2, 3}) {
      SimRunConfig c = Config("nic_tree", p);
      c.radix = radix;
      RunAndCheck(c, 2);
    }
  }
}

TEST(AllreducePlan, DoublesAndLargerVectors) {
  SimRunConfig c = Config("recursive_doubling", 12, 1000);
  c.type = AtomicType::kDouble;
  RunAndCheck(c, 2);
  c.algo = "nic_tree";
  RunAndCheck(c, 2);
}

TEST(AllreducePlan, SurvivesDelayReorderAndDrops) {
  for (std::uint64_t seed : {1, 2, 3}) {
    SimRunConfig c = Config("nic_tree", 40);
    c.faults.seed = seed;
    c.faults.delay_permille = 300;
    c.faults.delay_max_ns = 5000;
    c.faults.reorder_max_ns = 3000;
    c.faults.drop_permille = 50;
    RunAndCheck(c, 3);
    c.algo = "recursive_doubling";
    RunAndCheck(c, 3);
  }
}

TEST(AllreducePlan, DeadNicIsReportedWithTheSeed) {
  SimRunConfig c = Config("nic_tree", 16);
  c.faults.seed = 77;
  c.faults.dead_nic = 5;
  AllreduceSim sim;
  ASSERT_TRUE(sim.Setup(c).ok());
  EpochResult r;
  Status s = sim.RunEpoch(0, &r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("did not complete"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("seed=77"), std::string::npos) << s.message();
}

TEST(AllreducePlan, RebasesCountersBeforeTheyWrap) {
  SimRunConfig c = Config("recursive_doubling", 8, 2);
  AllreduceSim sim;
  ASSERT_TRUE(sim.Setup(c).ok());
  for (int r = 0; r < 8; ++r) sim.backend(r).SetMaxCounterValue(20);
  for (std::uint64_t e = 0; e < 30; ++e) {
    EpochResult res;
    Status s = sim.RunEpoch(e, &res);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(res.data_ok) << "epoch " << e << ": " << res.mismatch;
    for (const auto& ctr : sim.plan(0).counters()) {
      ASSERT_LE(sim.backend(0).ReadCounter(ctr.id), 20u) << ctr.name << " epoch " << e;
    }
  }
  EXPECT_GE(sim.plan(0).rebases(), 3u);  // max delta 2 for rank 0: every ~8 epochs
}

// The same with counters that really are narrow (the simulator records an
// overflow as an error): a plan that rebases never overflows one.
TEST(AllreducePlan, NarrowSimulatedCountersNeverOverflow) {
  SimRunConfig c = Config("recursive_doubling", 6, 1);
  c.params.counter_bits = 4;  // 15 at most
  AllreduceSim sim;
  ASSERT_TRUE(sim.Setup(c).ok());
  EXPECT_EQ(sim.backend(0).Caps().max_counter_value, 15u);
  for (std::uint64_t e = 0; e < 25; ++e) {
    EpochResult res;
    Status s = sim.RunEpoch(e, &res);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_TRUE(res.data_ok) << "epoch " << e << ": " << res.mismatch;
  }
  for (int r = 0; r < 6; ++r) EXPECT_EQ(sim.fw().Stats(r).errors, 0u) << "rank " << r;
  EXPECT_GT(sim.plan(0).rebases(), 0u);
}

TEST(AllreducePlan, ArmRefusesToRewriteARunningEpoch) {
  SimRunConfig c = Config("recursive_doubling", 2, 1);
  c.depth = 1;
  AllreduceSim sim;
  ASSERT_TRUE(sim.Setup(c).ok());
  ASSERT_TRUE(sim.plan(0).Start().ok());
  Status s = sim.plan(0).ArmNext();
  EXPECT_EQ(s.code(), Code::kAgain) << s.message();
  // Rank 1 never started: waiting reports a stuck plan instead of hanging.
  s = sim.plan(0).Wait();
  EXPECT_EQ(s.code(), Code::kPending);
  EXPECT_NE(s.message().find("nothing left to simulate"), std::string::npos) << s.message();
}

TEST(AllreducePlan, TooFewSlotsFallsBackThroughTheSelector) {
  auto world = sim::SimWorld::Make(fwsim::LogGP{}, 2);
  sim::SimBackend small(world, 0), big(world, 1);
  small.SetSlotLimit(4);
  Schedule s("needs_ten");
  for (int i = 0; i < 10; ++i) s.Nop({});
  std::unique_ptr<TriggerPlan> plan;
  ASSERT_TRUE(Lower(s, &plan).ok());
  BackendSelector sel({&small, &big});
  std::size_t where = 0;
  ASSERT_TRUE(sel.Choose(plan->name(), plan->ops(), plan->slots_needed(), &where).ok());
  EXPECT_EQ(where, 1u);
  EXPECT_NE(sel.Decisions()[0].refused.find("needs 10 trigger slots, 4 free"), std::string::npos)
      << sel.Decisions()[0].refused;
  ASSERT_TRUE(plan->Bind(sel.at(where)).ok());
  ASSERT_TRUE(plan->Start().ok());
  ASSERT_TRUE(plan->Wait().ok());
  EXPECT_NE(sel.Describe().find("sim plans=1 ops=10 refusals=0"), std::string::npos)
      << sel.Describe();
}

// A put that would land outside the peer's exposed buffer is refused at
// Resolve: past its end, and before its start (a negative displacement
// reaches the plan as a huge unsigned offset, which must not wrap around
// the bounds check).
TEST(PlanResolve, RefusesAPutOutsideThePeersBuffer) {
  auto world = sim::SimWorld::Make(fwsim::LogGP{}, 2);
  sim::SimBackend b0(world, 0), b1(world, 1);
  std::vector<std::int64_t> src(4), dst(4, 0);
  Schedule rs("recv");
  const PlanCounter data = rs.AddCounter("data", 1);
  rs.ExposeBuffer("recv buffer", dst.data(), 4 * 8, data);
  rs.WaitOn(rs.Nop({}), data);
  std::unique_ptr<TriggerPlan> recv;
  ASSERT_TRUE(Lower(rs, &recv).ok());
  ASSERT_TRUE(recv->Bind(&b1).ok());
  const std::uint64_t offsets[] = {8, ~std::uint64_t{0} - 7, 0};
  for (std::uint64_t offset : offsets) {
    Schedule ss("send");
    const StepId put = ss.Put(src.data(), 4 * 8, RemoteBuffer{1, 0, offset}, {});
    (void)put;
    std::unique_ptr<TriggerPlan> send;
    ASSERT_TRUE(Lower(ss, &send).ok());
    ASSERT_TRUE(send->Bind(&b0).ok());
    const PlanExports e[2] = {send->Exports(), recv->Exports()};
    Status st = send->Resolve([&](PeerId p) { return &e[p]; });
    if (offset == 0) {
      EXPECT_TRUE(st.ok()) << st.message();
    } else {
      EXPECT_EQ(st.code(), Code::kMatch) << "offset " << offset;
      EXPECT_NE(st.message().find("overrun"), std::string::npos) << st.message();
    }
  }
}

// MatchPlan over an in-process "allgather": each rank's call hands in its
// words; the exchange completes when the last rank has contributed.
TEST(PlanMatch, ExchangesExportsAndResolvesEveryRank) {
  const int p = 6;
  auto world = sim::SimWorld::Make(fwsim::LogGP{}, p);
  std::vector<std::unique_ptr<sim::SimBackend>> backends;
  std::vector<std::unique_ptr<TriggerPlan>> plans(p);
  std::vector<std::int64_t> send(p), recv(p);
  for (int r = 0; r < p; ++r) {
    backends.push_back(std::make_unique<sim::SimBackend>(world, r));
    AllreduceArgs a;
    a.rank = r;
    a.size = p;
    a.count = 1;
    a.type = AtomicType::kInt64;
    a.sendbuf = &send[r];
    a.recvbuf = &recv[r];
    a.radix = 2;
    Schedule s("tree");
    ASSERT_TRUE(BuildAllreduce("nic_tree", a, &s).ok());
    ASSERT_TRUE(Lower(s, &plans[r]).ok());
    ASSERT_TRUE(plans[r]->Bind(backends[r].get()).ok());
  }
  // Two passes of a fake collective: gather everyone's words, then resolve.
  std::vector<std::vector<std::uint64_t>> table(p);
  for (int r = 0; r < p; ++r) {
    auto gather_only = [&](const std::vector<std::uint64_t>& mine,
                           std::vector<std::vector<std::uint64_t>>* all) {
      table[r] = mine;
      all->assign(p, {});
      return Status::Ok();
    };
    EXPECT_EQ(MatchPlan(*plans[r], gather_only).code(), Code::kMatch)
        << "resolving before peers published must fail";
  }
  for (int r = 0; r < p; ++r) {
    Status s = MatchPlan(*plans[r], [&](const std::vector<std::uint64_t>&,
                                        std::vector<std::vector<std::uint64_t>>* all) {
      *all = table;
      return Status::Ok();
    });
    ASSERT_TRUE(s.ok()) << s.message();
  }
  for (int r = 0; r < p; ++r) send[r] = 10 * (r + 1);
  for (int r = 0; r < p; ++r) ASSERT_TRUE(plans[r]->Start().ok());
  world->fw().RunUntilIdle();
  for (int r = 0; r < p; ++r) {
    ASSERT_TRUE(plans[r]->Test()) << r;
    EXPECT_EQ(recv[r], 210) << r;
  }
}

TEST(AllreduceSelect, ScoresByCapabilitiesAndSize) {
  auto world = sim::SimWorld::Make(fwsim::LogGP{}, 1);
  sim::SimBackend b(world, 0);
  EXPECT_EQ(PickAllreduce(b.Caps(), 64, 8, AtomicType::kDouble, AtomicOp::kSum), "nic_tree");
  EXPECT_EQ(PickAllreduce(b.Caps(), 64, 1 << 20, AtomicType::kDouble, AtomicOp::kSum),
            "recursive_doubling");
  EXPECT_EQ(PickAllreduce(b.Caps(), 64, 8, AtomicType::kDouble, AtomicOp::kBand),
            "recursive_doubling");
  Capabilities none;
  EXPECT_EQ(PickAllreduce(none, 64, 8, AtomicType::kInt64, AtomicOp::kSum), "recursive_doubling");
  Schedule s("x");
  EXPECT_EQ(BuildAllreduce("ring", AllreduceArgs{}, &s).code(), Code::kArg);
}

TEST(BackendRegistry, CreatesSimAndListsNamesOnError) {
  RegisterSimBackend();
  std::unique_ptr<OffloadBackend> b;
  BackendOptions o;
  ASSERT_TRUE(CreateBackend("sim", o, &b).ok());
  EXPECT_STREQ(b->Name(), "sim");
  Status s = CreateBackend("nonexistent", o, &b);
  EXPECT_EQ(s.code(), Code::kArg);
  EXPECT_NE(s.message().find("sim"), std::string::npos) << s.message();
  o.world_size = 4;
  EXPECT_EQ(CreateBackend("sim", o, &b).code(), Code::kUnsupportedOperation);
  auto world = sim::SimWorld::Make(fwsim::LogGP{}, 4);
  o.context = &world;
  o.rank = 3;
  o.slot_budget = 7;
  ASSERT_TRUE(CreateBackend("sim", o, &b).ok());
  EXPECT_EQ(b->FreeSlots(), 7u);
  bool listed = false;
  for (const BackendInfo& i : RegisteredBackends()) listed |= i.name == "sim";
  EXPECT_TRUE(listed);
}

}  // namespace
}  // namespace nicq::offload
