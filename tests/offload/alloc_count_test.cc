// The hot path allocates nothing: 1,000 postings (TriggerPlan::Start: in-place
// thresholds + one Post) of lowered allreduce plans on the sim backend, and
// the simulation that fires them, with every malloc in the process counted.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>

#include "offload/tool/sim_driver.h"

extern "C" void* __libc_malloc(std::size_t);
extern "C" void* __libc_calloc(std::size_t, std::size_t);
extern "C" void* __libc_realloc(void*, std::size_t);
extern "C" void* __libc_memalign(std::size_t, std::size_t);

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocs{0};
inline void Count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

// Interpose the C allocator: operator new and std containers end up here.
extern "C" void* malloc(std::size_t n) {
  Count();
  return __libc_malloc(n);
}
extern "C" void* calloc(std::size_t n, std::size_t m) {
  Count();
  return __libc_calloc(n, m);
}
extern "C" void* realloc(void* p, std::size_t n) {
  Count();
  return __libc_realloc(p, n);
}
extern "C" void* aligned_alloc(std::size_t a, std::size_t n) {
  Count();
  return __libc_memalign(a, n);
}
extern "C" int posix_memalign(void** out, std::size_t a, std::size_t n) {
  Count();
  *out = __libc_memalign(a, n);
  return *out ? 0 : 12;
}

namespace nicq::offload {
namespace {

class AllocCount : public ::testing::TestWithParam<const char*> {};

TEST_P(AllocCount, RepeatedPostingAllocatesNothing) {
  SimRunConfig cfg;
  cfg.algo = GetParam();
  cfg.ranks = 8;
  cfg.count = 4;
  cfg.depth = 2;
  cfg.check = false;  // inputs stay as they are; posting and firing are what we measure
  AllreduceSim sim;
  ASSERT_TRUE(sim.Setup(cfg).ok());
  // Warm-up: the simulator's pools grow to their high-water mark once.
  for (std::uint64_t e = 0; e < 3; ++e) {
    EpochResult r;
    ASSERT_TRUE(sim.RunEpoch(e, &r).ok());
  }
  long post_allocs = 0, fire_allocs = 0;
  for (int i = 0; i < 1000; ++i) {
    g_allocs = 0;
    g_counting = true;
    bool ok = true;
    for (int r = 0; r < cfg.ranks; ++r) ok &= sim.plan(r).Start().ok();
    g_counting = false;
    ASSERT_TRUE(ok);
    post_allocs += g_allocs;
    g_allocs = 0;
    g_counting = true;
    sim.fw().RunUntilIdle();
    g_counting = false;
    fire_allocs += g_allocs;
    for (int r = 0; r < cfg.ranks; ++r)
      ASSERT_TRUE(sim.plan(r).Test()) << "rank " << r << " iter " << i;
  }
  EXPECT_EQ(post_allocs, 0) << "allocations while posting 1000 epochs of " << GetParam();
  EXPECT_EQ(fire_allocs, 0) << "allocations while the simulator fired 1000 epochs";
}

INSTANTIATE_TEST_SUITE_P(Plans, AllocCount, ::testing::Values("recursive_doubling", "nic_tree"));

}  // namespace
}  // namespace nicq::offload
