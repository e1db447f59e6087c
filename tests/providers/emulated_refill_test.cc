// A resident plan on the emulated backend with its agent thread: the agent
// re-arms the window (TriggerPlan::Refill via OffloadBackend::AddRefiller),
// so that a wait for an epoch only reads the done counter, and a start
// that finds its epoch missing arms it while the agent may be arming too.
// Run under ThreadSanitizer by scripts/test.sh (label tsan).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "backend_factory.h"
#include "offload/trigger_plan.h"
#include "providers/ofi_emulated/emulated_backend.h"

namespace nicq::ofi {
namespace {

std::unique_ptr<EmulatedBackend> MakeWithAgent() {
  EmulatedConfig c;
  c.provider = "shm";
  c.progress_thread = 1;
  c.num_counters = 64;
  c.num_ops = 4096;
  return test::MakeEmulatedSelfWired(c);
}

// Polls (~10 s at most) until `done` says so.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 40000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(250));
  return done();
}

// Two host copies in a chain (src -> mid -> dst), run by the agent: each
// epoch's data shows that epoch ran, in order.
struct CopyPlan {
  std::uint64_t src = 0, mid = 0, dst = 0;
  std::unique_ptr<offload::TriggerPlan> plan;

  Status Build(offload::OffloadBackend* backend, std::size_t depth) {
    offload::Schedule s("copy chain");
    const offload::StepId a = s.Copy(&mid, &src, sizeof src, {});
    s.Copy(&dst, &mid, sizeof dst, {a});
    NICQ_RETURN_IF_ERROR(offload::Lower(s, &plan));
    NICQ_RETURN_IF_ERROR(plan->Bind(backend, depth));
    return plan->Resolve([](offload::PeerId) { return nullptr; });  // no remote references
  }
  bool Done() const {
    return plan->backend()->ReadCounter(plan->done_counter()) >= plan->done_target();
  }
};

// The host starts epochs and reads the done counter, and never calls Wait
// or Poll (where it would re-arm itself): the window still moves ahead by
// one epoch per finished epoch, and the starts arm nothing.
TEST(EmulatedRefill, TheAgentReArmsTheWindowWithoutHostCalls) {
  auto b = MakeWithAgent();
  ASSERT_TRUE(b);
  CopyPlan p;
  constexpr std::size_t kDepth = 4;
  Status st = p.Build(b.get(), kDepth);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(b->progress_thread_running());
  ASSERT_TRUE(p.plan->refilled_by_agent());
  const std::uint64_t window = p.plan->resident_window();
  ASSERT_EQ(window, kDepth);  // so epoch e + window waits for epoch e's end
  ASSERT_EQ(p.plan->epochs_armed(), window);
  for (std::uint64_t e = 0; e < 5 * kDepth; ++e) {
    p.src = 1000 + e;
    ASSERT_EQ(p.plan->epochs_armed(), e + window) << "epoch " << e;
    const std::uint64_t posted = b->agent_work_requests_for_test(), by_host = b->WorkRequests();
    st = p.plan->Start();
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_TRUE(Eventually([&] { return p.Done(); })) << "epoch " << e << " never finished";
    EXPECT_EQ(p.dst, 1000 + e) << "epoch " << e;
    ASSERT_TRUE(Eventually([&] { return p.plan->epochs_armed() == e + 1 + window; }))
        << "epoch " << e << ": the agent did not re-arm epoch " << e + window << " (armed "
        << p.plan->epochs_armed() << ")";
    // One epoch's ops posted, by the agent's re-arm; the host posted none.
    EXPECT_EQ(b->agent_work_requests_for_test() - posted, p.plan->num_ops()) << "epoch " << e;
    EXPECT_EQ(b->WorkRequests(), by_host) << "epoch " << e;
  }
}

// Depth 2 and back-to-back epochs: the starts often find their epoch not
// yet re-armed and arm it themselves while the agent's refill runs. Every
// epoch is armed once (the counts add up) and carries its own data.
TEST(EmulatedRefill, StartsAndTheAgentArmEachEpochOnce) {
  auto b = MakeWithAgent();
  ASSERT_TRUE(b);
  CopyPlan p;
  Status st = p.Build(b.get(), 2);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(p.plan->refilled_by_agent());
  constexpr std::uint64_t kEpochs = 3000;
  const std::uint64_t posted = b->WorkRequests() + b->agent_work_requests_for_test();
  for (std::uint64_t e = 0; e < kEpochs; ++e) {
    p.src = 7 * e + 1;
    st = p.plan->Start();
    ASSERT_TRUE(st.ok()) << "epoch " << e << ": " << st.message();
    st = p.plan->Wait();
    ASSERT_TRUE(st.ok()) << "epoch " << e << ": " << st.message();
    ASSERT_EQ(p.dst, 7 * e + 1) << "epoch " << e;
  }
  // Each armed epoch posts the plan's ops once: armed epochs beyond the
  // first window times ops per epoch is every post made.
  EXPECT_TRUE(Eventually([&] { return p.plan->epochs_armed() == kEpochs + 2; }));
  const std::uint64_t armed_since = p.plan->epochs_armed() - 2;
  EXPECT_EQ(b->WorkRequests() + b->agent_work_requests_for_test() - posted,
            armed_since * p.plan->num_ops());
}

}  // namespace
}  // namespace nicq::ofi
