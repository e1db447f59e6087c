// Resident plans (issue 15, item 2): once a plan is resolved its next
// epochs are armed ahead, so a start is one counter add and arms nothing;
// the host re-arms the window when it sees an epoch done (Poll/Wait), and
// the data stays right epoch after epoch. Simulated NICs, many ranks in one
// process.
#include <gtest/gtest.h>

#include "offload/tool/sim_driver.h"

namespace nicq::offload {
namespace {

class ResidentPlan : public ::testing::TestWithParam<const char*> {};

TEST_P(ResidentPlan, StartArmsNothingAndTheWindowRefillsOnCompletion) {
  SimRunConfig cfg;
  cfg.algo = GetParam();
  cfg.ranks = 5;
  cfg.count = 3;
  cfg.depth = 2;
  AllreduceSim sim;
  ASSERT_TRUE(sim.Setup(cfg).ok());
  for (int r = 0; r < cfg.ranks; ++r)
    ASSERT_EQ(sim.plan(r).epochs_armed(), cfg.depth) << "rank " << r << ": window not armed";
  for (std::uint64_t e = 0; e < 40; ++e) {
    std::vector<std::uint64_t> armed(cfg.ranks);
    for (int r = 0; r < cfg.ranks; ++r) armed[r] = sim.plan(r).epochs_armed();
    EpochResult res;
    ASSERT_TRUE(sim.RunEpoch(e, &res).ok()) << "epoch " << e;
    EXPECT_TRUE(res.data_ok) << "epoch " << e << ": " << res.mismatch;
    for (int r = 0; r < cfg.ranks; ++r) {
      EXPECT_EQ(sim.plan(r).epochs_armed(), armed[r])
          << "rank " << r << " epoch " << e << ": the start posted ops";
      ASSERT_TRUE(sim.plan(r).Poll()) << "rank " << r << " epoch " << e;
      EXPECT_EQ(sim.plan(r).epochs_armed(), e + 1 + cfg.depth)
          << "rank " << r << " epoch " << e << ": the window was not refilled";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Plans, ResidentPlan, ::testing::Values("recursive_doubling", "nic_tree"));

}  // namespace
}  // namespace nicq::offload
