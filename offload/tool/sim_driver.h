// Runs an allreduce plan on P simulated NICs in this process: builds every
// rank's Schedule, lowers and binds it to that rank's sim backend, does the
// match exchange in memory, then runs epochs and checks the data. Shared by
// nicq_sim, the posting benchmark and the plan tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "firmware-sim/world.h"
#include "offload/algorithms/allreduce.h"
#include "offload/trigger_plan.h"
#include "providers/sim/sim_backend.h"

namespace nicq::offload {

struct SimRunConfig {
  std::string algo = "recursive_doubling";  // or "nic_tree"
  int ranks = 4;
  std::size_t count = 1;  // elements per rank
  AtomicType type = AtomicType::kInt64;
  AtomicOp op = AtomicOp::kSum;
  int radix = 4;
  std::size_t depth = 1;  // descriptor arrays per plan
  fwsim::LogGP params;
  fwsim::FaultPlan faults;
  bool check = true;
};

struct EpochResult {
  fwsim::Time elapsed = 0;  // simulated time from start to the last completion
  bool data_ok = true;
  std::string mismatch;  // first wrong element, when !data_ok
};

class AllreduceSim {
 public:
  Status Setup(const SimRunConfig& cfg);
  // Writes epoch inputs, starts every rank's plan, runs the world until idle.
  Status RunEpoch(std::uint64_t epoch, EpochResult* out);

  fwsim::World& fw() { return world_->fw(); }
  TriggerPlan& plan(int rank) { return *plans_[rank]; }
  sim::SimBackend& backend(int rank) { return *backends_[rank]; }
  const SimRunConfig& config() const { return cfg_; }
  std::size_t max_ops_per_rank() const { return max_ops_; }

 private:
  void FillInputs(std::uint64_t epoch);
  bool Check(std::uint64_t epoch, std::string* mismatch) const;

  SimRunConfig cfg_;
  std::shared_ptr<sim::SimWorld> world_;
  std::vector<std::unique_ptr<sim::SimBackend>> backends_;
  std::vector<std::unique_ptr<TriggerPlan>> plans_;
  std::vector<std::int64_t> send_i_, recv_i_;
  std::vector<double> send_d_, recv_d_;
  std::size_t max_ops_ = 0;
};

// "int64" | "double" -> type; false if unknown.
bool ParseSimType(const std::string& s, AtomicType* t);

}  // namespace nicq::offload
