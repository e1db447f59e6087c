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

#include "tests/conformance/conformance_fixture.h"

namespace nicq::conformance {

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

}  // namespace nicq::conformance

// The rest of the suite, by theme.
#include "tests/conformance/conformance_failure_tests.h"
#include "tests/conformance/conformance_remote_tests.h"
