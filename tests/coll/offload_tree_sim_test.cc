// The offloaded persistent allreduce plan of src/coll (BuildNicTree, the
// plan MPI_Allreduce_init builds on a native backend) on the NIC simulator
// with 64 and 1,000 ranks in one process: every rank's schedule lowered
// and bound to its simulated NIC, exports resolved in memory (what init's
// exchange does), then several epochs with changing inputs, each started
// as MPI_Start does (contribution copied into recvbuf, start counter
// bumped) and data-checked on every rank.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "coll/offload_allreduce.h"
#include "firmware-sim/loggp.h"
#include "offload/trigger_plan.h"
#include "providers/sim/sim_backend.h"

namespace nicq::coll {
namespace {

using offload::AtomicOp;
using offload::AtomicType;

class NicTreeSim : public ::testing::TestWithParam<int> {};

TEST_P(NicTreeSim, EpochsDataChecked) {
  const int p = GetParam();
  const std::size_t n = 8;  // doubles per rank
  fwsim::LogGP params;
  ASSERT_TRUE(fwsim::PresetLogGP("slingshot", &params).ok());
  auto world = sim::SimWorld::Make(params, std::size_t(p), fwsim::FaultPlan{});
  std::vector<std::unique_ptr<sim::SimBackend>> be;
  std::vector<std::unique_ptr<offload::TriggerPlan>> plans(p);
  std::vector<int> world_ranks(p);
  for (int r = 0; r < p; ++r) world_ranks[r] = r;
  std::vector<std::vector<double>> send(p, std::vector<double>(n)), recv = send;
  for (int r = 0; r < p; ++r) {
    be.push_back(std::make_unique<sim::SimBackend>(world, std::uint32_t(r)));
    NicTreeArgs a;
    a.rank = r;
    a.size = p;
    a.world_ranks = world_ranks.data();
    a.sendbuf = send[r].data();
    a.recvbuf = recv[r].data();
    a.bytes = n * sizeof(double);
    a.type = AtomicType::kDouble;
    a.op = AtomicOp::kSum;
    offload::Schedule s("coll nic_tree");
    ASSERT_TRUE(BuildNicTree(a, &s).ok());
    Status st = offload::Lower(s, &plans[r]);
    ASSERT_TRUE(st.ok()) << st.message();
    st = plans[r]->Bind(be[r].get(), 2);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  std::vector<offload::PlanExports> ex(p);
  for (int r = 0; r < p; ++r) ex[r] = plans[r]->Exports();
  for (int r = 0; r < p; ++r) {
    Status st = plans[r]->Resolve([&](offload::PeerId peer) -> const offload::PlanExports* {
      return peer >= 0 && peer < p ? &ex[peer] : nullptr;
    });
    ASSERT_TRUE(st.ok()) << st.message();
  }
  fwsim::World& w = world->fw();
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int r = 0; r < p; ++r)
      for (std::size_t i = 0; i < n; ++i) send[r][i] = double(r) + 3.0 * epoch + double(i);
    for (int r = 0; r < p; ++r) {
      std::memcpy(recv[r].data(), send[r].data(), n * sizeof(double));  // as MPI_Start does
      Status st = plans[r]->Start();
      ASSERT_TRUE(st.ok()) << st.message();
    }
    w.RunUntilIdle();
    for (int r = 0; r < p; ++r) {
      ASSERT_TRUE(plans[r]->Test()) << "rank " << r << " epoch " << epoch << " not complete";
      for (std::size_t i = 0; i < n; ++i) {
        const double want = p * (p - 1) / 2.0 + p * (3.0 * epoch + double(i));
        ASSERT_EQ(recv[r][i], want) << "rank " << r << " epoch " << epoch << " [" << i << "]";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, NicTreeSim, ::testing::Values(64, 1000));

}  // namespace
}  // namespace nicq::coll
