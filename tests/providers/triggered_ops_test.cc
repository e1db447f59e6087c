// The triggered-op contract (providers/backend.h) on each ofi backend and
// provider, in one process talking to itself over loopback. Written in the
// rhythm of libfabric's deferred-work tests: post, check nothing happened,
// bump the trigger, check the effect and the completion counter.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "tests/providers/backend_factory.h"

namespace nicq::ofi::test {
namespace {

using offload::AtomicOp;
using offload::AtomicType;
using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

constexpr int kWaitMs = 20000;

#define NICQ_ASSERT_OK(expr)                               \
  do {                                                     \
    ::nicq::Status s_ = (expr);                            \
    ASSERT_TRUE(s_.ok()) << #expr << ": " << s_.message(); \
  } while (0)

class TriggeredOps : public ::testing::TestWithParam<BackendParam> {
 protected:
  void SetUp() override {
    Status s = MakeSelfWired(GetParam(), 0, &b_);
    if (!s.ok() && s.code() == Code::kUnsupportedOperation) GTEST_SKIP() << s.message();
    ASSERT_TRUE(s.ok()) << s.message();
  }
  void TearDown() override {
    if (b_) {
      EXPECT_TRUE(b_->Flush().ok());
    }
  }
  CounterId Counter() {
    CounterId id = kNoCounter;
    Status s = b_->AllocCounters(1, &id);
    EXPECT_TRUE(s.ok()) << s.message();
    return id;
  }
  void Wait(CounterId id, std::uint64_t v) {
    Status s = b_->WaitCounter(id, v, kWaitMs);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  std::unique_ptr<offload::OffloadBackend> b_;
};

TriggeredOp CounterAdd(CounterId trigger, std::uint64_t threshold, CounterId target,
                       std::uint64_t value, CounterId completion = kNoCounter) {
  TriggeredOp op;
  op.kind = OpKind::kCounterAdd;
  op.trigger = trigger;
  op.threshold = threshold;
  op.target_counter = target;
  op.value = value;
  op.completion = completion;
  return op;
}

TEST_P(TriggeredOps, CounterAddFiresAtThreshold) {
  CounterId t = Counter(), x = Counter(), done = Counter();
  std::vector<TriggeredOp> ops{CounterAdd(t, 2, x, 5, done)};
  NICQ_ASSERT_OK(b_->Post(ops));
  NICQ_ASSERT_OK(b_->AddCounter(t, 1));
  b_->Progress();
  EXPECT_EQ(b_->ReadCounter(x), 0u);
  NICQ_ASSERT_OK(b_->AddCounter(t, 1));
  Wait(x, 5);
  Wait(done, 1);
  EXPECT_EQ(b_->ReadCounter(x), 5u);
  EXPECT_EQ(b_->ReadErrors(x), 0u);
}

TEST_P(TriggeredOps, AlreadyReachedFiresAtOnce) {
  CounterId t = Counter(), x = Counter();
  NICQ_ASSERT_OK(b_->AddCounter(t, 7));
  std::vector<TriggeredOp> ops{CounterAdd(t, 3, x, 1), CounterAdd(kNoCounter, 0, x, 10)};
  NICQ_ASSERT_OK(b_->Post(ops));
  Wait(x, 11);
}

TEST_P(TriggeredOps, ChainOfCounterOps) {
  // t -> a -> b -> c: each completion gates the next, no host involvement.
  CounterId t = Counter(), a = Counter(), c1 = Counter(), c2 = Counter();
  std::vector<TriggeredOp> ops{CounterAdd(t, 1, a, 1), CounterAdd(a, 1, c1, 2),
                               CounterAdd(c1, 2, c2, 3)};
  NICQ_ASSERT_OK(b_->Post(ops));
  EXPECT_EQ(b_->ReadCounter(c2), 0u);
  NICQ_ASSERT_OK(b_->AddCounter(t, 1));
  Wait(c2, 3);
}

TEST_P(TriggeredOps, ManyEpochsOnOneCounter) {
  // Plans replay: thresholds base + epoch * delta, posted ahead of time.
  CounterId t = Counter(), x = Counter();
  constexpr int kEpochs = 50;
  std::vector<TriggeredOp> ops;
  for (int e = 1; e <= kEpochs; ++e) ops.push_back(CounterAdd(t, 2 * e, x, 1));
  NICQ_ASSERT_OK(b_->Post(ops));
  for (int e = 1; e <= kEpochs; ++e) {
    NICQ_ASSERT_OK(b_->AddCounter(t, 2));
    Wait(x, e);
  }
  EXPECT_EQ(b_->ReadCounter(x), static_cast<std::uint64_t>(kEpochs));
}

TEST_P(TriggeredOps, PutLandsAndBumpsArrivalCounter) {
  CounterId t = Counter(), arrival = Counter(), done = Counter();
  std::vector<std::uint64_t> src(512), dst(512, 0);
  std::iota(src.begin(), src.end(), 1000);
  offload::MemRegion mr;
  NICQ_ASSERT_OK(b_->RegisterMemory(dst.data(), dst.size() * 8, arrival, &mr));
  TriggeredOp put;
  put.kind = OpKind::kPut;
  put.trigger = t;
  put.threshold = 1;
  put.completion = done;
  put.peer = 0;
  put.local_buf = src.data();
  put.bytes = src.size() * 8;
  put.remote_addr = mr.remote_addr;
  put.remote_key = mr.key;
  put.target_counter = arrival;
  std::vector<TriggeredOp> ops{put};
  NICQ_ASSERT_OK(b_->Post(ops));
  b_->Progress();
  EXPECT_EQ(dst[0], 0u);
  NICQ_ASSERT_OK(b_->AddCounter(t, 1));
  Wait(arrival, 1);
  Wait(done, 1);
  EXPECT_EQ(dst, src);
  NICQ_ASSERT_OK(b_->DeregisterMemory(&mr));
}

TEST_P(TriggeredOps, AtomicSumLands) {
  if (!b_->Caps().SupportsAtomic(AtomicOp::kSum, AtomicType::kInt64)) GTEST_SKIP();
  CounterId t = Counter(), arrival = Counter(), done = Counter();
  std::vector<std::int64_t> src{1, 2, 3, 4}, dst{10, 20, 30, 40};
  offload::MemRegion mr;
  NICQ_ASSERT_OK(b_->RegisterMemory(dst.data(), dst.size() * 8, arrival, &mr));
  TriggeredOp op;
  op.kind = OpKind::kAtomic;
  op.aop = AtomicOp::kSum;
  op.atype = AtomicType::kInt64;
  op.trigger = t;
  op.threshold = 1;
  op.completion = done;
  op.peer = 0;
  op.local_buf = src.data();
  op.bytes = src.size() * 8;
  op.remote_addr = mr.remote_addr;
  op.remote_key = mr.key;
  std::vector<TriggeredOp> ops{op, op};
  ops[1].threshold = 2;
  NICQ_ASSERT_OK(b_->Post(ops));
  NICQ_ASSERT_OK(b_->AddCounter(t, 2));
  Wait(arrival, 2);
  Wait(done, 2);
  EXPECT_EQ(dst, (std::vector<std::int64_t>{12, 24, 36, 48}));
  NICQ_ASSERT_OK(b_->DeregisterMemory(&mr));
}

TEST_P(TriggeredOps, SendRecvChain) {
  // recv posted first; the send fires when t reaches 1; the receive's
  // completion then fires a counter add.
  CounterId t = Counter(), sent = Counter(), got = Counter(), after = Counter();
  std::vector<char> src(4096), dst(4096, 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<char>(i * 7);
  TriggeredOp recv;
  recv.kind = OpKind::kRecv;
  recv.trigger = kNoCounter;
  recv.completion = got;
  recv.peer = 0;
  recv.local_rbuf = dst.data();
  recv.bytes = dst.size();
  recv.tag = 42;
  TriggeredOp send = recv;
  send.kind = OpKind::kSend;
  send.local_rbuf = nullptr;
  send.local_buf = src.data();
  send.trigger = t;
  send.threshold = 1;
  send.completion = sent;
  std::vector<TriggeredOp> ops{recv, send, CounterAdd(got, 1, after, 9)};
  NICQ_ASSERT_OK(b_->Post(ops));
  NICQ_ASSERT_OK(b_->AddCounter(t, 1));
  Wait(after, 9);
  Wait(sent, 1);
  EXPECT_EQ(dst, src);
}

TEST_P(TriggeredOps, RemoteCounterAdd) {
  CounterId t = Counter(), remote = Counter(), done = Counter();
  TriggeredOp op;
  op.kind = OpKind::kRemoteCounterAdd;
  op.trigger = t;
  op.threshold = 1;
  op.peer = 0;
  op.target_counter = remote;
  op.value = 1;
  op.completion = done;
  std::vector<TriggeredOp> ops{op, op};
  ops[1].threshold = 2;
  NICQ_ASSERT_OK(b_->Post(ops));
  NICQ_ASSERT_OK(b_->AddCounter(t, 1));
  Wait(remote, 1);
  NICQ_ASSERT_OK(b_->AddCounter(t, 1));
  Wait(remote, 2);
  Wait(done, 2);
}

TEST_P(TriggeredOps, CancelDropsUnfiredOps) {
  CounterId t = Counter(), x = Counter();
  std::vector<TriggeredOp> ops{CounterAdd(t, 5, x, 1)};
  NICQ_ASSERT_OK(b_->Post(ops));
  Status s = b_->Cancel(t);
  if (s.code() == Code::kUnsupportedOperation) GTEST_SKIP() << s.message();
  ASSERT_TRUE(s.ok()) << s.message();
  NICQ_ASSERT_OK(b_->AddCounter(t, 10));
  b_->Progress();
  EXPECT_EQ(b_->ReadCounter(x), 0u);
}

std::vector<BackendParam> Params() {
  return {
      {"emulated", "tcp;ofi_rxm", 0}, {"emulated", "tcp;ofi_rxm", 1}, {"emulated", "shm", 0},
      {"emulated", "shm", 1},         {"native", "sockets", 0},
  };
}

INSTANTIATE_TEST_SUITE_P(Ofi, TriggeredOps, ::testing::ValuesIn(Params()),
                         [](const auto& info) { return ParamName(info.param); });

}  // namespace
}  // namespace nicq::ofi::test
