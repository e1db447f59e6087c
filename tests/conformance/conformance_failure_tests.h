// Conformance tests of cancel, flush, errors, trigger slots and fallback.
// Included by conformance_suite.h only.
#pragma once

#include "tests/conformance/conformance_fixture.h"

namespace nicq::conformance {

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

// Cancel withdraws unfired data ops too: a put and a remote counter add on
// the cancelled counter never move data, while a put on another counter
// still does; their trigger slots come back.
TEST_P(TriggeredOpConformance, CancelRemovesUnfiredDataOps) {
  ASSERT_TRUE(MakeWorld(2));
  CounterId trig = Counter(0), other = Counter(0), comp = Counter(0);
  CounterId arr = Counter(1), bell = Counter(1);
  std::vector<std::int64_t> src(8, 3), dst(8, 0);
  MemRegion mr;
  ASSERT_TRUE(B(1).RegisterMemory(dst.data(), dst.size() * 8, arr, &mr).ok());
  const std::size_t base = B(0).SlotsInUse();
  TriggeredOp put;
  put.kind = OpKind::kPut;
  put.trigger = trig;
  put.threshold = 1;
  put.peer = 1;
  put.local_buf = src.data();
  put.bytes = src.size() * 8;
  put.remote_addr = mr.remote_addr;
  put.remote_key = mr.key;
  put.completion = comp;
  TriggeredOp add;
  add.kind = OpKind::kRemoteCounterAdd;
  add.trigger = trig;
  add.threshold = 1;
  add.peer = 1;
  add.target_counter = bell;
  add.value = 1;
  add.completion = comp;
  TriggeredOp kept = put;
  kept.trigger = other;
  kept.completion = comp;
  Post(0, {put, add, kept});
  ASSERT_TRUE(B(0).Cancel(trig).ok());
  Bump(0, trig);
  Bump(0, other);
  ASSERT_TRUE(Drive([&] { return B(0).ReadCounter(comp) == 1 && B(1).ReadCounter(arr) == 1; }));
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(comp), 1u) << "a cancelled data op completed";
  EXPECT_EQ(B(1).ReadCounter(arr), 1u) << "a cancelled put landed";
  EXPECT_EQ(B(1).ReadCounter(bell), 0u) << "a cancelled remote counter add landed";
  EXPECT_EQ(dst, src);
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

// The failure's class reaches the program (a queued receive's MPI_ERROR):
// a truncation is kTruncate, and a counter nothing failed on reads kOk.
TEST_P(TriggeredOpConformance, TruncatedReceiveReportsItsClass) {
  ASSERT_TRUE(MakeWorld(2));
  CounterId trig = Counter(0), scomp = Counter(0), rcomp = Counter(1), clean = Counter(1);
  std::vector<std::uint64_t> src(16, 7), dst(4, 0);
  TriggeredOp recv;
  recv.kind = OpKind::kRecv;
  recv.peer = 0;
  recv.tag = 10;
  recv.local_rbuf = dst.data();
  recv.bytes = dst.size() * 8;
  recv.completion = rcomp;
  Post(1, {recv});
  TriggeredOp send;
  send.kind = OpKind::kSend;
  send.trigger = trig;
  send.threshold = 1;
  send.peer = 1;
  send.tag = 10;
  send.local_buf = src.data();
  send.bytes = src.size() * 8;
  send.completion = scomp;
  Post(0, {send});
  EXPECT_EQ(B(1).ErrorClass(rcomp), Code::kOk);
  Bump(0, trig);
  ASSERT_TRUE(Drive([&] { return B(1).ReadErrors(rcomp) >= 1; }));
  EXPECT_EQ(B(1).ErrorClass(rcomp), Code::kTruncate);
  EXPECT_EQ(B(1).ErrorClass(clean), Code::kOk);
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
