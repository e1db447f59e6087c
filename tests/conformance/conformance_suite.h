// The triggered-op contract (docs/triggered-semantics.md) as one gtest
// suite, run unchanged against every backend.
//
// Include this header in exactly one .cc of a test binary and instantiate:
//
//   #include "tests/conformance/conformance_suite.h"
//   namespace nicq::conformance {
//   BackendUnderTest MyBackend() { return {"native_sockets", MakeMyWorld, {
//       {"EqualThresholdsFireInPostingOrder", "why it cannot pass"}}}; }
//   INSTANTIATE_TEST_SUITE_P(Native, TriggeredOpConformance,
//                            ::testing::Values(MyBackend()), ParamName);
//   }
//
// link: nicq_prov_common (BackendSelector) + the backend's layers + gtest.
// Every test is written in the rhythm: post, assert nothing happened, bump
// the counter, assert completion (and the data).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "providers/common/backend_selector.h"
#include "tests/conformance/conformance_world.h"

namespace nicq::conformance {

using offload::AtomicOp;
using offload::AtomicType;
using offload::kNoCounter;
using offload::MemRegion;
using offload::OpKind;
using offload::TriggeredOp;

// Records the order in which host ops ran.
struct HostLog {
  std::vector<int> order;
  struct Entry {
    HostLog* log;
    int id;
  };
  std::vector<Entry> entries;
  explicit HostLog(int n) {
    order.reserve(n);
    for (int i = 0; i < n; ++i) entries.push_back({this, i});
  }
  static void Run(void* arg) {
    auto* e = static_cast<Entry*>(arg);
    e->log->order.push_back(e->id);
  }
};

// Exclusions for tests added to the suite after a backend's instantiation
// was written, as observed when the test was added; the backend's owner
// moves them into its own exclusion list (or fixes the backend) and deletes
// them here.
inline const std::map<std::string, std::map<std::string, std::string>>& PendingExclusions() {
  static const std::map<std::string, std::map<std::string, std::string>> m = {
      {"native_sockets",
       {{"TruncatedReceiveFailsAndStopsChain",
         "observed: no error reaches the completion counter of a triggered receive that a longer "
         "send truncates (sockets); to be confirmed by the native backend's owner"}}},
  };
  return m;
}

class TriggeredOpConformance : public ::testing::TestWithParam<BackendUnderTest> {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string test = info->name();
    test = test.substr(0, test.find('/'));
    auto it = GetParam().exclusions.find(test);
    if (it != GetParam().exclusions.end()) GTEST_SKIP() << "excluded: " << it->second;
    auto pending = PendingExclusions().find(GetParam().name);
    if (pending != PendingExclusions().end()) {
      auto p = pending->second.find(test);
      if (p != pending->second.end()) GTEST_SKIP() << "excluded (pending): " << p->second;
    }
  }
  // Builds the world; returns false (test skipped) when the factory cannot.
  bool MakeWorld(std::size_t ranks, std::size_t slot_limit = 0) {
    world_ = GetParam().make(WorldOptions{ranks, slot_limit});
    return world_ != nullptr;
  }
  OffloadBackend& B(std::size_t r) { return world_->backend(r); }
  CounterId Counter(std::size_t r) {
    CounterId c = kNoCounter;
    Status s = B(r).AllocCounters(1, &c);
    EXPECT_TRUE(s.ok()) << s.message();
    return c;
  }
  bool Drive(const std::function<bool()>& pred) { return DriveUntil(*world_, pred); }
  void Quiet() { DriveQuietly(*world_, GetParam().quiet_rounds); }
  void Bump(std::size_t r, CounterId c, std::uint64_t v = 1) {
    Status s = B(r).AddCounter(c, v);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  static TriggeredOp CounterAdd(CounterId trig, std::uint64_t thr, CounterId target,
                                std::uint64_t value, CounterId comp) {
    TriggeredOp op;
    op.kind = OpKind::kCounterAdd;
    op.trigger = trig;
    op.threshold = thr;
    op.target_counter = target;
    op.value = value;
    op.completion = comp;
    return op;
  }
  static TriggeredOp Host(CounterId trig, std::uint64_t thr, HostLog::Entry* e,
                          CounterId comp = kNoCounter) {
    TriggeredOp op;
    op.kind = OpKind::kHost;
    op.trigger = trig;
    op.threshold = thr;
    op.host_fn = &HostLog::Run;
    op.host_arg = e;
    op.completion = comp;
    return op;
  }
  void Post(std::size_t r, const std::vector<TriggeredOp>& ops) {
    Status s = B(r).Post(ops);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  std::unique_ptr<BackendWorld> world_;
};

TEST_P(TriggeredOpConformance, CountersStartAtZeroAndGrow) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId c = Counter(0);
  EXPECT_EQ(B(0).ReadCounter(c), 0u);
  EXPECT_EQ(B(0).ReadErrors(c), 0u);
  Bump(0, c, 5);
  Bump(0, c, 2);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(c) == 7; }));
  Status s = B(0).WaitCounter(c, 7, -1);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_P(TriggeredOpConformance, PostNothingHappensUntilCounterBumped) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), target = Counter(0), comp = Counter(0);
  std::vector<TriggeredOp> ops = {CounterAdd(trig, 1, target, 7, comp)};
  Post(0, ops);
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(target), 0u);
  EXPECT_EQ(B(0).ReadCounter(comp), 0u);
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 1; }));
  EXPECT_EQ(B(0).ReadCounter(target), 7u);
}

TEST_P(TriggeredOpConformance, CompletionIncrementIsAdded) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), target = Counter(0), comp = Counter(0);
  std::vector<TriggeredOp> ops = {CounterAdd(trig, 2, target, 1, comp)};
  ops[0].completion_inc = 5;
  Post(0, ops);
  Bump(0, trig);
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(comp), 0u) << "fired below its threshold";
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 5; }));
}

TEST_P(TriggeredOpConformance, OpsFireInThresholdOrder) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), comp = Counter(0);
  HostLog log(3);
  // Posted out of threshold order: 3, 1, 2.
  std::vector<TriggeredOp> ops = {Host(trig, 3, &log.entries[2], comp),
                                  Host(trig, 1, &log.entries[0], comp),
                                  Host(trig, 2, &log.entries[1], comp)};
  Post(0, ops);
  Quiet();
  EXPECT_TRUE(log.order.empty());
  Bump(0, trig, 3);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 3; }));
  EXPECT_EQ(log.order, (std::vector<int>{0, 1, 2}));
}

TEST_P(TriggeredOpConformance, EqualThresholdsFireInPostingOrder) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), comp = Counter(0);
  HostLog log(5);
  std::vector<TriggeredOp> batch = {Host(trig, 1, &log.entries[0], comp),
                                    Host(trig, 1, &log.entries[1], comp),
                                    Host(trig, 1, &log.entries[2], comp)};
  Post(0, batch);
  Post(0, {Host(trig, 1, &log.entries[3], comp)});
  Post(0, {Host(trig, 1, &log.entries[4], comp)});
  Quiet();
  EXPECT_TRUE(log.order.empty());
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 5; }));
  EXPECT_EQ(log.order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST_P(TriggeredOpConformance, AlreadyReachedThresholdFiresAtOnce) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), target = Counter(0), comp = Counter(0);
  Bump(0, trig, 5);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(trig) == 5; }));
  Post(0, {CounterAdd(trig, 3, target, 2, comp)});
  Post(0, {CounterAdd(kNoCounter, 0, target, 1, comp)});  // no trigger: at once
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 2; }));
  EXPECT_EQ(B(0).ReadCounter(target), 3u);
}

TEST_P(TriggeredOpConformance, CounterSetOp) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), target = Counter(0), comp = Counter(0);
  Bump(0, target, 9);
  TriggeredOp set = CounterAdd(trig, 1, target, 4, comp);
  set.kind = OpKind::kCounterSet;
  Post(0, {set});
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(target), 9u);
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 1; }));
  EXPECT_EQ(B(0).ReadCounter(target), 4u);
}

TEST_P(TriggeredOpConformance, RepostedOpsFireOncePerEpoch) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), target = Counter(0), comp = Counter(0);
  // The same descriptor storage re-armed each epoch with threshold base + k*delta,
  // after the previous epoch completed (descriptors stay valid until completion).
  std::vector<TriggeredOp> ops = {CounterAdd(trig, 0, target, 1, comp)};
  for (std::uint64_t k = 0; k < 4; ++k) {
    ops[0].threshold = 1 + k;
    Post(0, ops);
    Quiet();
    EXPECT_EQ(B(0).ReadCounter(comp), k);
    Bump(0, trig);
    ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == k + 1; }));
    EXPECT_EQ(B(0).ReadCounter(target), k + 1);
  }
}

TEST_P(TriggeredOpConformance, HostStepRunsWhenTriggered) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), comp = Counter(0);
  HostLog log(1);
  Post(0, {Host(trig, 1, &log.entries[0], comp)});
  Quiet();
  EXPECT_TRUE(log.order.empty());
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 1; }));
  EXPECT_EQ(log.order, (std::vector<int>{0}));
}

TEST_P(TriggeredOpConformance, TaggedSendRecvTriggered) {
  ASSERT_TRUE(MakeWorld(2));
  CounterId trig = Counter(0), scomp = Counter(0), rcomp = Counter(1);
  std::vector<std::uint64_t> src(64), dst(64, 0);
  std::iota(src.begin(), src.end(), 1000);
  TriggeredOp recv;
  recv.kind = OpKind::kRecv;
  recv.peer = 0;
  recv.tag = 42;
  recv.local_rbuf = dst.data();
  recv.bytes = dst.size() * 8;
  recv.completion = rcomp;
  Post(1, {recv});
  TriggeredOp send;
  send.kind = OpKind::kSend;
  send.trigger = trig;
  send.threshold = 1;
  send.peer = 1;
  send.tag = 42;
  send.local_buf = src.data();
  send.bytes = src.size() * 8;
  send.completion = scomp;
  Post(0, {send});
  Quiet();
  EXPECT_EQ(B(1).ReadCounter(rcomp), 0u);
  EXPECT_EQ(dst[0], 0u);
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(1).ReadCounter(rcomp) == 1 && B(0).ReadCounter(scomp) == 1; }));
  EXPECT_EQ(dst, src);
}

// Rank 0's put lands at rank 1 and bumps its arrival counter, which triggers
// rank 1's put back: a chain across two NICs that needs no host on rank 1.
TEST_P(TriggeredOpConformance, PutChainAcrossTwoNics) {
  ASSERT_TRUE(MakeWorld(2));
  CounterId trig = Counter(0), comp0 = Counter(0), arr0 = Counter(0);
  CounterId arr1 = Counter(1), comp1 = Counter(1);
  std::vector<std::int64_t> a(32), b(32, 0), back(32, 0);
  std::iota(a.begin(), a.end(), 7);
  MemRegion mr0, mr1;
  ASSERT_TRUE(B(0).RegisterMemory(back.data(), back.size() * 8, arr0, &mr0).ok());
  ASSERT_TRUE(B(1).RegisterMemory(b.data(), b.size() * 8, arr1, &mr1).ok());
  TriggeredOp pong;
  pong.kind = OpKind::kPut;
  pong.trigger = arr1;
  pong.threshold = 1;
  pong.peer = 0;
  pong.local_buf = b.data();
  pong.bytes = b.size() * 8;
  pong.remote_addr = mr0.remote_addr;
  pong.remote_key = mr0.key;
  pong.target_counter = arr0;
  pong.completion = comp1;
  Post(1, {pong});
  TriggeredOp ping = pong;
  ping.trigger = trig;
  ping.peer = 1;
  ping.local_buf = a.data();
  ping.remote_addr = mr1.remote_addr;
  ping.remote_key = mr1.key;
  ping.target_counter = arr1;
  ping.completion = comp0;
  Post(0, {ping});
  Quiet();
  EXPECT_EQ(B(1).ReadCounter(arr1), 0u);
  EXPECT_EQ(b[0], 0);
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(arr0) == 1 && B(1).ReadCounter(comp1) == 1; }));
  EXPECT_EQ(b, a);
  EXPECT_EQ(back, a);
  EXPECT_EQ(B(0).ReadCounter(comp0), 1u);
  ASSERT_TRUE(B(0).DeregisterMemory(&mr0).ok());
  ASSERT_TRUE(B(1).DeregisterMemory(&mr1).ok());
}

TEST_P(TriggeredOpConformance, AtomicSumWithRemoteCounter) {
  const std::size_t n = 3;
  ASSERT_TRUE(MakeWorld(n));
  if (!B(0).Caps().SupportsAtomic(AtomicOp::kSum, AtomicType::kInt64))
    GTEST_SKIP() << B(0).Name() << " has no int64 sum atomics";
  CounterId arrivals = Counter(0);
  std::vector<std::int64_t> acc(4, 100);
  MemRegion mr;
  ASSERT_TRUE(B(0).RegisterMemory(acc.data(), acc.size() * 8, arrivals, &mr).ok());
  std::vector<std::vector<std::int64_t>> contrib(n);
  std::vector<CounterId> trig(n), comp(n);
  for (std::size_t r = 0; r < n; ++r) {
    contrib[r] = {static_cast<std::int64_t>(r + 1), 10, -3, 1000};
    trig[r] = Counter(r);
    comp[r] = Counter(r);
    TriggeredOp op;
    op.kind = OpKind::kAtomic;
    op.aop = AtomicOp::kSum;
    op.atype = AtomicType::kInt64;
    op.trigger = trig[r];
    op.threshold = 1;
    op.peer = 0;
    op.local_buf = contrib[r].data();
    op.bytes = 4 * 8;
    op.remote_addr = mr.remote_addr;
    op.remote_key = mr.key;
    op.target_counter = arrivals;
    op.completion = comp[r];
    Post(r, {op});
  }
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(arrivals), 0u);
  for (std::size_t r = 0; r < n; ++r) Bump(r, trig[r]);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(arrivals) == n; }));
  EXPECT_EQ(acc, (std::vector<std::int64_t>{100 + 6, 130, 91, 3100}));
  ASSERT_TRUE(Drive([&] { return B(n - 1).ReadCounter(comp[n - 1]) == 1; }));
  ASSERT_TRUE(B(0).DeregisterMemory(&mr).ok());
}

TEST_P(TriggeredOpConformance, RemoteCounterAddTriggersPeerOp) {
  ASSERT_TRUE(MakeWorld(2));
  CounterId trig = Counter(0), comp0 = Counter(0);
  CounterId ready = Counter(1), target1 = Counter(1), comp1 = Counter(1);
  Post(1, {CounterAdd(ready, 3, target1, 1, comp1)});
  TriggeredOp token;
  token.kind = OpKind::kRemoteCounterAdd;
  token.trigger = trig;
  token.threshold = 1;
  token.peer = 1;
  token.target_counter = ready;
  token.value = 3;
  token.completion = comp0;
  Post(0, {token});
  Quiet();
  EXPECT_EQ(B(1).ReadCounter(ready), 0u);
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(1).ReadCounter(comp1) == 1; }));
  EXPECT_EQ(B(1).ReadCounter(ready), 3u);
  EXPECT_EQ(B(1).ReadCounter(target1), 1u);
}

TEST_P(TriggeredOpConformance, CancelRemovesUnfiredOps) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), other = Counter(0), target = Counter(0), comp = Counter(0);
  const std::size_t base = B(0).SlotsInUse();
  Post(0, {CounterAdd(trig, 1, target, 1, comp), CounterAdd(other, 1, target, 10, comp)});
  ASSERT_TRUE(B(0).Cancel(trig).ok());
  Bump(0, trig);
  Bump(0, other);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 1; }));
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(target), 10u) << "the cancelled op fired";
  EXPECT_EQ(B(0).ReadCounter(comp), 1u);
  ASSERT_TRUE(Drive([&] { return B(0).SlotsInUse() == base; }));
}

TEST_P(TriggeredOpConformance, FlushCompletesInFlightAndFiresNothingMore) {
  ASSERT_TRUE(MakeWorld(2));
  CounterId never = Counter(0), comp = Counter(0), arr = Counter(1), target = Counter(0);
  std::vector<std::int64_t> src(16, 5), dst(16, 0);
  MemRegion mr;
  ASSERT_TRUE(B(1).RegisterMemory(dst.data(), dst.size() * 8, arr, &mr).ok());
  TriggeredOp put;
  put.kind = OpKind::kPut;
  put.peer = 1;
  put.local_buf = src.data();
  put.bytes = src.size() * 8;
  put.remote_addr = mr.remote_addr;
  put.remote_key = mr.key;
  put.completion = comp;
  Post(0, {put, CounterAdd(never, 1, target, 1, comp)});
  ASSERT_TRUE(B(0).Flush().ok());
  EXPECT_EQ(B(0).ReadCounter(comp), 1u) << "Flush returned before the in-flight put completed";
  Bump(0, never);
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(target), 0u) << "an op fired after Flush";
  ASSERT_TRUE(Drive([&] { return B(1).ReadCounter(arr) == 1; }));
  EXPECT_EQ(dst, src);
}

// A put with a bad key fails: the error lands on its completion counter's
// error value, the success value does not move, and the op chained on it
// never fires; WaitCounter reports the error.
TEST_P(TriggeredOpConformance, ErrorStopsChainAndIsReported) {
  ASSERT_TRUE(MakeWorld(2));
  CounterId trig = Counter(0), comp = Counter(0), next = Counter(0), arr = Counter(1);
  std::vector<std::int64_t> src(8, 1), dst(8, 0);
  MemRegion mr;
  ASSERT_TRUE(B(1).RegisterMemory(dst.data(), dst.size() * 8, arr, &mr).ok());
  TriggeredOp bad;
  bad.kind = OpKind::kPut;
  bad.trigger = trig;
  bad.threshold = 1;
  bad.peer = 1;
  bad.local_buf = src.data();
  bad.bytes = src.size() * 8;
  bad.remote_addr = mr.remote_addr;
  bad.remote_key = mr.key ^ 0x5a5a5a5aULL;  // no such key at the target
  bad.completion = comp;
  Post(0, {bad, CounterAdd(comp, 1, next, 1, next)});
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(0).ReadErrors(comp) >= 1; }));
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(comp), 0u);
  EXPECT_EQ(B(0).ReadCounter(next), 0u) << "an op gated on a failed op fired";
  EXPECT_EQ(dst[0], 0);
  Status s = B(0).WaitCounter(comp, 1, 1000);
  EXPECT_FALSE(s.ok());
  ASSERT_TRUE(B(0).Cancel(comp).ok());
}

// The same clause with a local failure every transport reports: a receive
// shorter than the matching send fails (as MPI_ERR_TRUNCATE).
TEST_P(TriggeredOpConformance, TruncatedReceiveFailsAndStopsChain) {
  ASSERT_TRUE(MakeWorld(2));
  CounterId trig = Counter(0), scomp = Counter(0), rcomp = Counter(1), next = Counter(1);
  std::vector<std::uint64_t> src(16, 7), dst(4, 0);
  TriggeredOp recv;
  recv.kind = OpKind::kRecv;
  recv.peer = 0;
  recv.tag = 9;
  recv.local_rbuf = dst.data();
  recv.bytes = dst.size() * 8;
  recv.completion = rcomp;
  Post(1, {recv, CounterAdd(rcomp, 1, next, 1, next)});
  TriggeredOp send;
  send.kind = OpKind::kSend;
  send.trigger = trig;
  send.threshold = 1;
  send.peer = 1;
  send.tag = 9;
  send.local_buf = src.data();
  send.bytes = src.size() * 8;
  send.completion = scomp;
  Post(0, {send});
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(1).ReadErrors(rcomp) >= 1; }));
  Quiet();
  EXPECT_EQ(B(1).ReadCounter(rcomp), 0u);
  EXPECT_EQ(B(1).ReadCounter(next), 0u) << "an op gated on a failed receive fired";
  EXPECT_FALSE(B(1).WaitCounter(rcomp, 1, 1000).ok());
  ASSERT_TRUE(B(1).Cancel(rcomp).ok());
}

TEST_P(TriggeredOpConformance, SlotsReturnAfterCompletion) {
  ASSERT_TRUE(MakeWorld(1));
  CounterId trig = Counter(0), target = Counter(0), comp = Counter(0);
  const std::size_t base = B(0).SlotsInUse();
  Post(0, {CounterAdd(trig, 1, target, 1, comp), CounterAdd(trig, 2, target, 1, comp)});
  if (B(0).Caps().native_triggers || B(0).Caps().max_trigger_slots != 0) {
    EXPECT_EQ(B(0).SlotsInUse(), base + 2);
  }
  Bump(0, trig, 2);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 2; }));
  ASSERT_TRUE(Drive([&] { return B(0).SlotsInUse() == base; }));
}

// Slot exhaustion: a batch that does not fit is refused whole (kAgain) and
// leaves nothing behind; the selector then places the plan on the next backend.
TEST_P(TriggeredOpConformance, SlotExhaustionRefusesWholeBatchAndFallsBack) {
  if (!MakeWorld(2, 4)) GTEST_SKIP() << "backend cannot limit trigger slots";
  CounterId trig = Counter(0), target = Counter(0), comp = Counter(0);
  std::vector<TriggeredOp> three(3, CounterAdd(trig, 1, target, 1, comp));
  Post(0, three);
  const std::size_t used = B(0).SlotsInUse();
  std::vector<TriggeredOp> two(2, CounterAdd(trig, 1, target, 1, comp));
  Status s = B(0).Post(two);
  EXPECT_EQ(s.code(), Code::kAgain) << s.message();
  EXPECT_EQ(B(0).SlotsInUse(), used) << "a refused batch left ops behind";
  EXPECT_EQ(B(0).FreeSlots(), 1u);

  offload::BackendSelector selector({&B(0), &B(1)});
  std::size_t where = 99;
  ASSERT_TRUE(selector.Choose("two_ops", two, 2, &where).ok());
  EXPECT_EQ(where, 1u);
  ASSERT_EQ(selector.Decisions().size(), 1u);
  EXPECT_NE(selector.Decisions()[0].refused.find(B(0).Name()), std::string::npos);
  EXPECT_EQ(selector.Usage()[0].refusals, 1u);
  EXPECT_EQ(selector.Usage()[1].plans, 1u);

  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 3; }));
  EXPECT_EQ(B(0).ReadCounter(target), 3u);
}

TEST_P(TriggeredOpConformance, CheckOpsRefusesUnsupportedAtomic) {
  ASSERT_TRUE(MakeWorld(1));
  const auto& caps = B(0).Caps();
  TriggeredOp op;
  op.kind = OpKind::kAtomic;
  op.peer = 0;
  op.bytes = 8;
  bool found = false;
  for (int a = 0; a <= static_cast<int>(AtomicOp::kReplace) && !found; ++a)
    for (int t = 0; t <= static_cast<int>(AtomicType::kDouble) && !found; ++t)
      if (!caps.SupportsAtomic(AtomicOp(a), AtomicType(t))) {
        op.aop = AtomicOp(a);
        op.atype = AtomicType(t);
        found = true;
      }
  if (!found) GTEST_SKIP() << "supports every atomic op and type";
  std::vector<TriggeredOp> ops = {op};
  EXPECT_EQ(B(0).CheckOps(ops).code(), Code::kUnsupportedOperation);
}

}  // namespace nicq::conformance
