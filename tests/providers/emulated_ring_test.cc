// Host counter adds through the threads' rings while the emulator's agent
// runs (providers/ofi_emulated/host_add_ring.h): the add is stored and
// published, the agent applies it and fires what it reached; a thread
// without a ring, or with a full one, adds the read-modify-write way and
// no add is lost. Run under ThreadSanitizer with the thread tests (label
// tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "backend_factory.h"
#include "providers/ofi_emulated/emulated_backend.h"

namespace nicq::ofi {
namespace {

using offload::CounterId;
using offload::OpKind;
using offload::TriggeredOp;

std::unique_ptr<EmulatedBackend> MakeWithAgent(const char* provider, int host_add_fence = -1,
                                               std::size_t num_counters = 64) {
  EmulatedConfig c;
  c.provider = provider;
  c.progress_thread = 1;
  c.num_counters = num_counters;
  c.num_ops = 4096;
  c.host_add_fence = host_add_fence;
  return test::MakeEmulatedSelfWired(c);
}

// kOps local counter adds gated on `trigger` at thresholds 1..kOps, each
// adding 1 to `target` and completing on `done`.
std::vector<TriggeredOp> Chain(CounterId trigger, CounterId target, CounterId done, int n) {
  std::vector<TriggeredOp> ops(n);
  for (int i = 0; i < n; ++i) {
    ops[i].kind = OpKind::kCounterAdd;
    ops[i].trigger = trigger;
    ops[i].threshold = std::uint64_t(i + 1);
    ops[i].target_counter = target;
    ops[i].value = 1;
    ops[i].completion = done;
  }
  return ops;
}

struct RingCase {
  const char* provider;
  int host_add_fence;  // EmulatedConfig::host_add_fence
};

class EmulatedRing : public ::testing::TestWithParam<RingCase> {};

// Every add of the one host thread goes through its ring: the ring's count
// moves by one per add, the read-modify-write path is never taken, and the
// agent applies each add and fires the op it reached.
TEST_P(EmulatedRing, HostAddsGoThroughTheRingAndTheAgentAppliesThem) {
  auto b = MakeWithAgent(GetParam().provider, GetParam().host_add_fence);
  ASSERT_TRUE(b);
  CounterId ids[3];
  ASSERT_TRUE(b->AllocCounters(3, ids).ok());
  const CounterId trigger = ids[0], target = ids[1], done = ids[2];
  constexpr int kAdds = 200;  // fewer than a ring's cells
  const std::vector<TriggeredOp> ops = Chain(trigger, target, done, kAdds);
  ASSERT_TRUE(b->Post(ops).ok());
  ASSERT_TRUE(b->progress_thread_running());
  const std::uint64_t ring0 = b->ring_adds_for_test(), rmw0 = b->rmw_adds_for_test();
  for (int i = 0; i < kAdds; ++i) {
    ASSERT_TRUE(b->AddCounter(trigger, 1).ok());
    // Now and then with the agent given time to nap, so that adds also
    // meet an agent that announced its sleep and must be woken.
    if (i % 50 == 49) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(b->ring_adds_for_test() - ring0, std::uint64_t(kAdds));
  EXPECT_EQ(b->rmw_adds_for_test(), rmw0);
  Status s = b->WaitCounter(done, kAdds, 30000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(b->ReadCounter(trigger), std::uint64_t(kAdds));
  EXPECT_EQ(b->ReadCounter(target), std::uint64_t(kAdds));
}

// More adding threads than rings: each thread that claimed a ring adds
// through it, the others the read-modify-write way, and every add lands.
TEST_P(EmulatedRing, ThreadsBeyondTheRingsAddTheOtherWayAndNoAddIsLost) {
  auto b = MakeWithAgent(GetParam().provider, GetParam().host_add_fence);
  ASSERT_TRUE(b);
  CounterId c;
  ASSERT_TRUE(b->AllocCounters(1, &c).ok());
  constexpr int kThreads = 6, kAddsEach = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kAddsEach; ++i) EXPECT_TRUE(b->AddCounter(c, 1).ok());
    });
  for (std::thread& t : threads) t.join();
  const std::uint64_t total = std::uint64_t(kThreads) * kAddsEach;
  Status s = b->WaitCounter(c, total, 30000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(b->ReadCounter(c), total);
  // Four rings (EmulatedBackend::kHostRings): four threads' adds, no more.
  EXPECT_EQ(b->ring_adds_for_test(), 4u * kAddsEach);
  EXPECT_EQ(b->rmw_adds_for_test(), total - 4u * kAddsEach);
}

// Parks the agent inside its next provider call (its CQ read).
class AgentParker final : public EmulatedBackend::ProviderCallObserver {
 public:
  explicit AgentParker(std::thread::id host) : host_(host) {}
  void Enter() override {
    if (std::this_thread::get_id() == host_ || !park_.load()) return;
    parked_.store(true);
    while (park_.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  void Leave() override {}
  void Park() { park_.store(true); }
  // Parks b's agent: watches its provider calls, then wakes it with an add
  // to `wake`, and waits (~10 s at most) until it is held inside its CQ read.
  bool ParkAgentOf(EmulatedBackend* b, CounterId wake) {
    Park();
    b->SetProviderCallObserverForTest(this);
    if (!b->AddCounter(wake, 1).ok()) return false;
    for (int i = 0; i < 40000 && !parked(); ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(250));
    return parked();
  }
  void Release() { park_.store(false); }
  bool parked() const { return parked_.load(); }

 private:
  std::thread::id host_;
  std::atomic<bool> park_{false}, parked_{false};
};

// With the agent held, the thread's ring fills; the adds beyond it take
// the read-modify-write way, and once the agent runs again every add has
// landed and fired its op.
TEST(EmulatedRingShm, AFullRingFallsBackAndNoAddIsLost) {
  auto b = MakeWithAgent("shm");
  ASSERT_TRUE(b);
  CounterId ids[3];
  ASSERT_TRUE(b->AllocCounters(3, ids).ok());
  const CounterId trigger = ids[0], target = ids[1], done = ids[2];
  constexpr int kAdds = 300;  // more than a ring's 256 cells
  ASSERT_TRUE(b->Post(Chain(trigger, target, done, kAdds)).ok());
  AgentParker parker(std::this_thread::get_id());
  ASSERT_TRUE(parker.ParkAgentOf(b.get(), trigger)) << "the agent never made a provider call";
  for (int i = 1; i < kAdds; ++i) ASSERT_TRUE(b->AddCounter(trigger, 1).ok());
  EXPECT_GT(b->rmw_adds_for_test(), 0u) << "the full ring took every add";
  EXPECT_GE(b->ring_adds_for_test(), 255u);
  EXPECT_EQ(b->ring_adds_for_test() + b->rmw_adds_for_test(), std::uint64_t(kAdds));
  parker.Release();
  Status s = b->WaitCounter(done, kAdds, 30000);
  b->SetProviderCallObserverForTest(nullptr);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(b->ReadCounter(trigger), std::uint64_t(kAdds));
  EXPECT_EQ(b->ReadCounter(target), std::uint64_t(kAdds));
}

// Thread T's add to counter c sits in T's ring while the agent is held;
// another thread frees c and allocates again, which hands c's id back
// (most recently freed first, value zeroed). The free must wait for the
// agent to apply T's add, or the add lands on the new owner, which then
// starts at 1 instead of 0.
TEST(EmulatedRingShm, AFreeWaitsForEveryThreadsRingSoNoAddLandsOnTheNextOwner) {
  auto b = MakeWithAgent("shm");
  ASSERT_TRUE(b);
  CounterId ids[2];
  ASSERT_TRUE(b->AllocCounters(2, ids).ok());
  const CounterId wake = ids[0], c = ids[1];
  AgentParker parker(std::this_thread::get_id());
  ASSERT_TRUE(parker.ParkAgentOf(b.get(), wake)) << "the agent never made a provider call";

  // T stays alive past its add: its ReadCounter waits until the agent has
  // applied the adds T's ring holds to that id, so T reads the new owner's
  // counter after its own add landed wherever it lands.
  const std::uint64_t ring_adds = b->ring_adds_for_test();
  std::atomic<bool> added{false}, read_now{false};
  CounterId next = offload::kNoCounter;
  std::uint64_t next_value_seen_by_t = ~std::uint64_t(0);
  std::thread adder([&] {
    EXPECT_TRUE(b->AddCounter(c, 1).ok());
    added.store(true);
    while (!read_now.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    next_value_seen_by_t = b->ReadCounter(next);
  });
  while (!added.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  ASSERT_EQ(b->ring_adds_for_test(), ring_adds + 1) << "T's add did not go through its ring";

  std::atomic<bool> reallocated{false};
  std::thread owner([&] {
    b->FreeCounter(c);
    EXPECT_TRUE(b->AllocCounters(1, &next).ok());
    reallocated.store(true);
  });
  // The free cannot finish while the agent is held and T's add is pending.
  for (int i = 0; i < 20 && !reallocated.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(reallocated.load()) << "the free returned with an add to c still in a ring";
  parker.Release();
  owner.join();
  read_now.store(true);
  adder.join();
  b->SetProviderCallObserverForTest(nullptr);
  ASSERT_EQ(next, c) << "the allocator did not hand c's id back";
  EXPECT_EQ(next_value_seen_by_t, 0u) << "T's add to the freed counter landed on its next owner";
  EXPECT_EQ(b->ReadCounter(next), 0u);
  EXPECT_EQ(b->ReadCounter(wake), 1u);
}

// A thread's read of a counter waits only for its own adds to that very
// counter: with the agent held and an add to `a` in the thread's ring, a
// read of `b` (the same id mod 64, so the ring's mask names it) returns
// at once with b's value.
TEST(EmulatedRingShm, AReadWaitsOnlyForAnAddToThatCounterNotOneSharingItsMaskBit) {
  auto b = MakeWithAgent("shm", -1, 128);
  ASSERT_TRUE(b);
  CounterId ids[66];
  ASSERT_TRUE(b->AllocCounters(66, ids).ok());
  const CounterId wake = ids[0];
  CounterId a = offload::kNoCounter, other = offload::kNoCounter;
  for (int i = 1; i < 66 && other == offload::kNoCounter; ++i)
    for (int j = 1; j < i; ++j)
      if (ids[i] % 64 == ids[j] % 64) {
        a = ids[j];
        other = ids[i];
        break;
      }
  ASSERT_NE(other, offload::kNoCounter) << "no two counters share an id mod 64";
  AgentParker parker(std::this_thread::get_id());
  ASSERT_TRUE(parker.ParkAgentOf(b.get(), wake)) << "the agent never made a provider call";

  // The reads run on their own thread, so that a wrong wait shows as a
  // read not returned while the agent is held, not as a hung test.
  std::atomic<bool> read_done{false};
  std::uint64_t other_value = ~std::uint64_t(0);
  const std::uint64_t ring_adds = b->ring_adds_for_test();
  std::thread reader([&] {
    EXPECT_TRUE(b->AddCounter(a, 5).ok());
    other_value = b->ReadCounter(other);
    read_done.store(true);
  });
  for (int i = 0; i < 20000 && !read_done.load(); ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  const bool returned_while_held = read_done.load();
  EXPECT_EQ(b->ring_adds_for_test(), ring_adds + 1) << "the add to a did not go through a ring";
  parker.Release();
  reader.join();
  b->SetProviderCallObserverForTest(nullptr);
  EXPECT_TRUE(returned_while_held)
      << "the read of counter " << other << " waited for the agent to take an add to " << a;
  EXPECT_EQ(other_value, 0u);
  Status s = b->WaitCounter(a, 5, 30000);
  EXPECT_TRUE(s.ok()) << s.message();
}

INSTANTIATE_TEST_SUITE_P(Providers, EmulatedRing,
                         ::testing::Values(RingCase{"shm", -1}, RingCase{"shm", 0},
                                           RingCase{"tcp;ofi_rxm", -1}, RingCase{"tcp;ofi_rxm", 0}),
                         [](const auto& info) {
                           return std::string(info.param.provider[0] == 's' ? "shm" : "tcp_rxm") +
                                  (info.param.host_add_fence == 0 ? "_seq_cst" : "_membarrier");
                         });

}  // namespace
}  // namespace nicq::ofi
