// Host cost of posting one epoch of a lowered plan on the sim backend:
// time spent in TriggerPlan::Arm (thresholds computed in place + one Post),
// reported in ns per op. The simulation itself runs outside the timed part.
//
//   nicq_offload_post_bench [--ranks P] [--algo recursive_doubling|nic_tree] [--iters N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "offload/tool/sim_driver.h"

using namespace nicq;
using namespace nicq::offload;

int main(int argc, char** argv) {
  SimRunConfig cfg;
  cfg.ranks = 64;
  cfg.check = false;
  cfg.depth = 2;
  int iters = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--ranks")
      cfg.ranks = std::atoi(argv[i + 1]);
    else if (a == "--algo")
      cfg.algo = argv[i + 1];
    else if (a == "--iters")
      iters = std::atoi(argv[i + 1]);
  }
  AllreduceSim sim;
  Status s = sim.Setup(cfg);
  if (!s.ok()) {
    std::fprintf(stderr, "setup: %s\n", s.message().c_str());
    return 1;
  }
  TriggerPlan& plan = sim.plan(0);
  double total_ns = 0;
  std::uint64_t ops = 0;
  for (int it = 0; it < iters; ++it) {
    for (int r = 1; r < cfg.ranks; ++r) {
      s = sim.plan(r).Start();
      if (!s.ok()) break;
    }
    const auto t0 = std::chrono::steady_clock::now();
    s = plan.ArmNext();
    const auto t1 = std::chrono::steady_clock::now();
    if (!s.ok()) {
      std::fprintf(stderr, "arm: %s\n", s.message().c_str());
      return 1;
    }
    total_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
    ops += plan.num_ops();
    s = sim.backend(0).AddCounter(plan.start_counter(), 1);  // Start() = ArmNext() + this bump
    if (!s.ok()) return 1;
    sim.fw().RunUntilIdle();
  }
  std::printf("plan %s rank 0 of %d: %zu ops per epoch, %.1f ns per op posted (%d epochs)\n",
              cfg.algo.c_str(), cfg.ranks, plan.num_ops(), total_ns / static_cast<double>(ops),
              iters);
  return 0;
}
