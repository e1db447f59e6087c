// The emulator's progress thread racing the application (run under
// ThreadSanitizer by scripts/test.sh, label tsan): counters bumped from the
// app while the thread fires ops, ops posted while others fire, and host
// ops that must run in threshold order whichever thread runs them.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "providers/ofi_emulated/emulated_backend.h"

namespace nicq::ofi {
namespace {

using offload::CounterId;
using offload::OpKind;
using offload::TriggeredOp;

std::unique_ptr<EmulatedBackend> Make(const char* provider) {
  EmulatedConfig c;
  c.provider = provider;
  c.progress_thread = 1;
  c.num_counters = 64;
  c.num_ops = 4096;
  std::unique_ptr<EmulatedBackend> b;
  Status s = EmulatedBackend::Create(c, &b);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!b) return nullptr;
  std::vector<std::uint8_t> a;
  EXPECT_TRUE(b->LocalAddress(a).ok());
  std::vector<std::vector<std::uint8_t>> peers{a};
  EXPECT_TRUE(b->SetPeers(peers).ok());
  return b;
}

struct OrderLog {
  std::atomic<int> next{0};
  int order[256];
};
struct Step {
  OrderLog* log;
  int id;
};
void Record(void* arg) {
  auto* s = static_cast<Step*>(arg);
  s->log->order[s->log->next.fetch_add(1)] = s->id;
}

class EmulatedThread : public ::testing::TestWithParam<const char*> {};

// The thread starts with the backend's first use, not at creation (an
// unused backend, as in every MPI_Init, costs no thread).
TEST_P(EmulatedThread, ThreadStartsOnFirstUseAndIsBound) {
  auto b = Make(GetParam());
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->progress_thread_running());
  CounterId id;
  ASSERT_TRUE(b->AllocCounters(1, &id).ok());
  EXPECT_TRUE(b->progress_thread_running());
}

TEST_P(EmulatedThread, ConcurrentBumpsAndPostsFireEveryOpOnce) {
  auto b = Make(GetParam());
  ASSERT_TRUE(b);
  CounterId ids[3];
  ASSERT_TRUE(b->AllocCounters(3, ids).ok());
  const CounterId t = ids[0], x = ids[1], done = ids[2];
  constexpr int kOps = 400;
  std::vector<TriggeredOp> ops(kOps);
  for (int i = 0; i < kOps; ++i) {
    ops[i].kind = OpKind::kCounterAdd;
    ops[i].trigger = t;
    ops[i].threshold = i + 1;
    ops[i].target_counter = x;
    ops[i].value = 1;
    ops[i].completion = done;
  }
  // One thread posts in chunks while another bumps the trigger.
  std::thread poster([&] {
    for (int i = 0; i < kOps; i += 40) {
      Status s = b->Post(std::span<const TriggeredOp>(ops).subspan(i, 40));
      EXPECT_TRUE(s.ok()) << s.message();
    }
  });
  std::thread bumper([&] {
    for (int i = 0; i < kOps; ++i) EXPECT_TRUE(b->AddCounter(t, 1).ok());
  });
  poster.join();
  bumper.join();
  Status s = b->WaitCounter(done, kOps, 30000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(b->ReadCounter(x), static_cast<std::uint64_t>(kOps));
}

TEST_P(EmulatedThread, HostOpsRunInThresholdOrder) {
  auto b = Make(GetParam());
  ASSERT_TRUE(b);
  CounterId ids[2];
  ASSERT_TRUE(b->AllocCounters(2, ids).ok());
  OrderLog log;
  std::vector<Step> steps(6);
  std::vector<TriggeredOp> ops(6);
  const int thresholds[6] = {5, 1, 3, 3, 2, 4};  // expected order: 1,4,2,3,5,0
  for (int i = 0; i < 6; ++i) {
    steps[i] = {&log, i};
    ops[i].kind = OpKind::kHost;
    ops[i].host_fn = &Record;
    ops[i].host_arg = &steps[i];
    ops[i].trigger = ids[0];
    ops[i].threshold = thresholds[i];
    ops[i].completion = ids[1];
  }
  ASSERT_TRUE(b->Post(ops).ok());
  ASSERT_TRUE(b->AddCounter(ids[0], 5).ok());
  ASSERT_TRUE(b->WaitCounter(ids[1], 6, 30000).ok());
  EXPECT_EQ(std::vector<int>(log.order, log.order + 6), (std::vector<int>{1, 4, 2, 3, 5, 0}));
}

INSTANTIATE_TEST_SUITE_P(Providers, EmulatedThread, ::testing::Values("tcp;ofi_rxm", "shm"),
                         [](const auto& info) {
                           return std::string(info.param[0] == 's' ? "shm" : "tcp_rxm");
                         });

}  // namespace
}  // namespace nicq::ofi
