// Conformance tests across NICs: tagged messages, put chains, atomics and
// counters at the target. Included by conformance_suite.h only.
#pragma once

#include "tests/conformance/conformance_fixture.h"

namespace nicq::conformance {

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

// Atomics from every rank land in one buffer in each of several epochs,
// each contribution distinct per rank, epoch and element: one lost, doubled
// or replaced by another rank's (a transport handing two initiators one
// staging buffer) changes some element's sum. Epoch 0 is rank 1's alone, so
// a transport that corrupts its buffer pool completing one op fails the
// epochs after it, where all ranks' atomics are in flight together.
TEST_P(TriggeredOpConformance, ConvergingAtomicsEveryEpoch) {
  const std::size_t n = 3, epochs = 5, len = 4;
  ASSERT_TRUE(MakeWorld(n));
  if (!B(0).Caps().SupportsAtomic(AtomicOp::kSum, AtomicType::kInt64))
    GTEST_SKIP() << B(0).Name() << " has no int64 sum atomics";
  CounterId arrivals = Counter(0);
  std::vector<std::int64_t> acc(len, 0);
  MemRegion mr;
  ASSERT_TRUE(B(0).RegisterMemory(acc.data(), acc.size() * 8, arrivals, &mr).ok());
  auto takes_part = [](std::size_t r, std::size_t e) { return e > 0 || r == 1; };
  // contrib[r][e]: rank r's operand in epoch e (empty: no part in it).
  std::vector<std::vector<std::vector<std::int64_t>>> contrib(n);
  std::vector<CounterId> trig(n), comp(n);
  for (std::size_t r = 0; r < n; ++r) {
    trig[r] = Counter(r);
    comp[r] = Counter(r);
    contrib[r].resize(epochs);
    std::vector<TriggeredOp> ops;
    for (std::size_t e = 0; e < epochs; ++e) {
      if (!takes_part(r, e)) continue;
      for (std::size_t i = 0; i < len; ++i)
        contrib[r][e].push_back(std::int64_t(1) << (r * 20 + e * 3 + (i % 3)));
      TriggeredOp op;
      op.kind = OpKind::kAtomic;
      op.aop = AtomicOp::kSum;
      op.atype = AtomicType::kInt64;
      op.trigger = trig[r];
      op.threshold = ops.size() + 1;
      op.peer = 0;
      op.local_buf = contrib[r][e].data();
      op.bytes = len * 8;
      op.remote_addr = mr.remote_addr;
      op.remote_key = mr.key;
      op.target_counter = arrivals;
      op.completion = comp[r];
      ops.push_back(op);
    }
    Post(r, ops);
  }
  Quiet();
  EXPECT_EQ(B(0).ReadCounter(arrivals), 0u);
  std::vector<std::int64_t> want(len, 0);
  std::vector<std::uint64_t> done(n, 0);
  std::uint64_t landed = 0;
  for (std::size_t e = 0; e < epochs; ++e) {
    for (std::size_t r = 0; r < n; ++r) {
      if (!takes_part(r, e)) continue;
      Bump(r, trig[r]);
      ++done[r];
      ++landed;
      for (std::size_t i = 0; i < len; ++i) want[i] += contrib[r][e][i];
    }
    ASSERT_TRUE(Drive([&] {
      for (std::size_t r = 0; r < n; ++r)
        if (B(r).ReadCounter(comp[r]) < done[r]) return false;
      return B(0).ReadCounter(arrivals) == landed;
    })) << "epoch "
        << e;
    ASSERT_EQ(acc, want) << "epoch " << e;
  }
  for (std::size_t r = 0; r < n; ++r) EXPECT_EQ(B(r).ReadErrors(comp[r]), 0u);
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

}  // namespace nicq::conformance
