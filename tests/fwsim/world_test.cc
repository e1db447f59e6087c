// The simulated NIC: trigger ordering, exact LogGP timing of one message,
// determinism (same seed, same trace) and every kind of injected fault.
#include "firmware-sim/world.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

namespace nicq::fwsim {
namespace {

LogGP Params() {
  LogGP p;
  p.L = 1000 * kPsPerNs;
  p.o = 100 * kPsPerNs;
  p.g = 50 * kPsPerNs;
  p.G = 100;
  p.nic_op = 10 * kPsPerNs;
  p.retry_timeout = 5000 * kPsPerNs;
  p.max_retries = 3;
  return p;
}

std::uint32_t Ctr(World& w, std::uint32_t nic) {
  std::uint32_t c = 0;
  EXPECT_TRUE(w.AllocCounters(nic, 1, &c).ok());
  return c;
}

TEST(FwsimWorld, PutTimingIsExactLogGP) {
  World w(Params(), 2);
  w.EnableTrace(true);
  const std::uint32_t trig = Ctr(w, 0), comp = Ctr(w, 0), arr = Ctr(w, 1);
  std::vector<char> src(1001, 'x'), dst(1001, 0);
  std::uint64_t key = 0;
  ASSERT_TRUE(w.RegisterRegion(1, dst.data(), dst.size(), arr, &key).ok());
  Command put;
  put.kind = CmdKind::kPut;
  put.trigger = trig;
  put.threshold = 1;
  put.completion = comp;
  put.peer = 1;
  put.src = src.data();
  put.bytes = src.size();
  put.remote_addr = reinterpret_cast<std::uintptr_t>(dst.data());
  put.remote_key = key;
  ASSERT_TRUE(w.Post(0, std::span<const Command>(&put, 1)).ok());
  w.RunUntilIdle();
  EXPECT_EQ(w.ReadCounter(1, arr), 0u) << "fired before its trigger";
  ASSERT_TRUE(w.AddCounter(0, trig, 1).ok());
  w.RunUntilIdle();
  EXPECT_EQ(dst, src);
  EXPECT_EQ(w.ReadCounter(1, arr), 1u);
  EXPECT_EQ(w.ReadCounter(0, comp), 1u);
  const LogGP p = Params();
  ASSERT_EQ(w.Trace().size(), 3u);  // execute, arrive, ack
  EXPECT_EQ(w.Trace()[0].type, EventType::kExecute);
  EXPECT_EQ(w.Trace()[0].time, p.nic_op);
  EXPECT_EQ(w.Trace()[1].type, EventType::kArrive);
  EXPECT_EQ(w.Trace()[1].time, p.nic_op + p.o + 1000 * p.G + p.L + p.o);
  EXPECT_EQ(w.Trace()[2].type, EventType::kAck);
  EXPECT_EQ(w.Trace()[2].time, w.Trace()[1].time + p.L);
  EXPECT_EQ(w.Stats(0).messages, 1u);
  EXPECT_EQ(w.Stats(0).bytes, 1001u);
}

TEST(FwsimWorld, InjectionGapSerializesMessagesOfOneNic) {
  World w(Params(), 3);
  w.EnableTrace(true);
  const std::uint32_t r1 = Ctr(w, 1), r2 = Ctr(w, 2);
  Command add;
  add.kind = CmdKind::kRemoteCounterAdd;
  add.value = 1;
  add.peer = 1;
  add.target_counter = r1;
  Command add2 = add;
  add2.peer = 2;
  add2.target_counter = r2;
  const Command both[2] = {add, add2};
  ASSERT_TRUE(w.Post(0, both).ok());
  w.RunUntilIdle();
  std::vector<Time> arrivals;
  for (const TraceRecord& t : w.Trace()) {
    if (t.type == EventType::kArrive) arrivals.push_back(t.time);
  }
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_EQ(arrivals[1] - arrivals[0], Params().g);  // 8-byte messages: gap-bound
}

TEST(FwsimWorld, TriggerListOrderIsThresholdThenPosting) {
  World w(Params(), 1);
  const std::uint32_t trig = Ctr(w, 0), target = Ctr(w, 0);
  // Each op multiplies-then-adds in a way that only the right order yields:
  // set 5 (thr 1), add 2 (thr 2, posted first), add 3 (thr 2, posted second): 10.
  Command set;
  set.kind = CmdKind::kCounterSet;
  set.trigger = trig;
  set.threshold = 1;
  set.target_counter = target;
  set.value = 5;
  Command a2 = set, a3 = set;
  a2.kind = a3.kind = CmdKind::kCounterAdd;
  a2.threshold = a3.threshold = 2;
  a2.value = 2;
  a3.value = 3;
  const Command cmds[3] = {a2, set, a3};
  ASSERT_TRUE(w.Post(0, cmds).ok());
  ASSERT_TRUE(w.AddCounter(0, trig, 2).ok());
  w.RunUntilIdle();
  EXPECT_EQ(w.ReadCounter(0, target), 10u);
}

// A random workload of puts, atomics and counter adds among 8 NICs.
std::uint64_t RunWorkload(const FaultPlan& faults, std::vector<TraceRecord>* trace,
                          std::vector<std::int64_t>* final_mem) {
  World w(Params(), 8, faults);
  w.EnableTrace(trace != nullptr);
  std::vector<std::vector<std::int64_t>> mem(8, std::vector<std::int64_t>(16, 0));
  std::vector<std::uint32_t> arr(8), trig(8);
  std::vector<std::uint64_t> keys(8);
  for (std::uint32_t n = 0; n < 8; ++n) {
    arr[n] = Ctr(w, n);
    trig[n] = Ctr(w, n);
    EXPECT_TRUE(w.RegisterRegion(n, mem[n].data(), 16 * 8, arr[n], &keys[n]).ok());
  }
  static const std::int64_t one[2] = {1, 1};
  Rng pick(99);  // the workload itself is fixed; only faults vary with the seed
  for (int i = 0; i < 400; ++i) {
    const std::uint32_t from = static_cast<std::uint32_t>(pick.Below(8));
    const std::uint32_t to = static_cast<std::uint32_t>(pick.Below(8));
    Command c;
    c.kind = CmdKind::kAtomic;
    c.aop = AluOp::kSum;
    c.atype = AluType::kInt64;
    c.trigger = trig[from];
    c.threshold = pick.Below(3) + 1;
    c.peer = static_cast<std::int32_t>(to);
    c.src = one;
    c.bytes = 16;
    c.remote_addr = reinterpret_cast<std::uintptr_t>(mem[to].data() + pick.Below(8) * 2);
    c.remote_key = keys[to];
    EXPECT_TRUE(w.Post(from, std::span<const Command>(&c, 1)).ok());
  }
  for (std::uint32_t n = 0; n < 8; ++n) EXPECT_TRUE(w.AddCounter(n, trig[n], 3).ok());
  w.RunUntilIdle();
  if (trace) *trace = w.Trace();
  if (final_mem) {
    final_mem->clear();
    for (auto& m : mem) final_mem->insert(final_mem->end(), m.begin(), m.end());
  }
  return w.TraceHash();
}

TEST(FwsimWorld, SameSeedSameTrace) {
  FaultPlan f;
  f.seed = 12345;
  f.delay_permille = 200;
  f.delay_max_ns = 3000;
  f.reorder_max_ns = 2000;
  f.drop_permille = 100;
  std::vector<TraceRecord> t1, t2;
  std::vector<std::int64_t> m1, m2;
  const std::uint64_t h1 = RunWorkload(f, &t1, &m1);
  const std::uint64_t h2 = RunWorkload(f, &t2, &m2);
  EXPECT_EQ(h1, h2) << f.Describe();
  ASSERT_EQ(t1.size(), t2.size());
  for (std::size_t i = 0; i < t1.size(); ++i) {
    ASSERT_EQ(t1[i].time, t2[i].time) << "event " << i << " " << f.Describe();
    ASSERT_EQ(t1[i].nic, t2[i].nic);
    ASSERT_EQ(t1[i].slot, t2[i].slot);
  }
  f.seed = 54321;
  std::vector<std::int64_t> m3;
  EXPECT_NE(RunWorkload(f, nullptr, &m3), h1) << "the seed does not reach the faults";
  // Faults move time, never data: every atomic lands exactly once.
  EXPECT_EQ(m1, m3);
  const std::int64_t total = std::accumulate(m1.begin(), m1.end(), std::int64_t{0});
  EXPECT_EQ(total, 400 * 2);
}

TEST(FwsimWorld, ReorderInterleavesArrivalsAcrossCounters) {
  std::vector<TraceRecord> plain, shuffled;
  RunWorkload(FaultPlan{}, &plain, nullptr);
  FaultPlan f;
  f.seed = 7;
  f.reorder_max_ns = 5000;
  RunWorkload(f, &shuffled, nullptr);
  auto arrival_order = [](const std::vector<TraceRecord>& t) {
    std::vector<std::uint64_t> o;
    for (const TraceRecord& r : t) {
      if (r.type == EventType::kArrive) o.push_back((std::uint64_t{r.nic} << 32) | r.slot);
    }
    return o;
  };
  EXPECT_NE(arrival_order(plain), arrival_order(shuffled)) << f.Describe();
}

TEST(FwsimWorld, DropsAreRetriedThenReportedAsErrors) {
  FaultPlan f;
  f.seed = 3;
  f.drop_permille = 100;  // a message is lost for good with p = 0.1^4: none of 400 here
  std::vector<std::int64_t> mem;
  RunWorkload(f, nullptr, &mem);
  EXPECT_EQ(std::accumulate(mem.begin(), mem.end(), std::int64_t{0}), 800) << f.Describe();

  f.drop_permille = 1000;  // every transmission lost
  World w(Params(), 2, f);
  const std::uint32_t comp = Ctr(w, 0), next = Ctr(w, 0), arr = Ctr(w, 1);
  std::int64_t target = 0, one = 1;
  std::uint64_t key;
  ASSERT_TRUE(w.RegisterRegion(1, &target, 8, arr, &key).ok());
  Command c;
  c.kind = CmdKind::kPut;
  c.peer = 1;
  c.src = &one;
  c.bytes = 8;
  c.remote_addr = reinterpret_cast<std::uintptr_t>(&target);
  c.remote_key = key;
  c.completion = comp;
  Command chained;
  chained.kind = CmdKind::kCounterAdd;
  chained.trigger = comp;
  chained.threshold = 1;
  chained.target_counter = next;
  chained.value = 1;
  const Command cmds[2] = {c, chained};
  ASSERT_TRUE(w.Post(0, cmds).ok());
  w.RunUntilIdle();
  EXPECT_EQ(w.ReadErrors(0, comp), 1u) << f.Describe();
  EXPECT_EQ(w.ReadCounter(0, comp), 0u);
  EXPECT_EQ(w.ReadCounter(0, next), 0u) << "an op chained on a failed one fired";
  EXPECT_EQ(w.Stats(0).retries, Params().max_retries + 1);
  EXPECT_EQ(target, 0);
  EXPECT_EQ(w.SlotsInUse(0), 1u);  // the chained op stays armed until cancelled
  EXPECT_EQ(w.Cancel(0, comp), 1u);
  EXPECT_EQ(w.SlotsInUse(0), 0u);
}

TEST(FwsimWorld, DeadNicFiresNothingAndItsPeersSeeErrors) {
  FaultPlan f;
  f.dead_nic = 1;
  World w(Params(), 2, f);
  const std::uint32_t comp = Ctr(w, 0), c1 = Ctr(w, 1), t1 = Ctr(w, 1);
  Command token;
  token.kind = CmdKind::kRemoteCounterAdd;
  token.peer = 1;
  token.target_counter = c1;
  token.value = 1;
  token.completion = comp;
  ASSERT_TRUE(w.Post(0, std::span<const Command>(&token, 1)).ok());
  Command local;
  local.kind = CmdKind::kCounterAdd;
  local.target_counter = t1;
  local.value = 1;
  ASSERT_TRUE(w.Post(1, std::span<const Command>(&local, 1)).ok());
  w.RunUntilIdle();
  EXPECT_EQ(w.ReadErrors(0, comp), 1u);
  EXPECT_EQ(w.ReadCounter(1, t1), 0u);
}

TEST(FwsimWorld, SlotLimitRefusesWholeBatches) {
  FaultPlan f;
  f.slot_limit = 3;
  World w(Params(), 1, f);
  const std::uint32_t trig = Ctr(w, 0), target = Ctr(w, 0);
  Command c;
  c.kind = CmdKind::kCounterAdd;
  c.trigger = trig;
  c.threshold = 1;
  c.target_counter = target;
  c.value = 1;
  const Command two[2] = {c, c};
  ASSERT_TRUE(w.Post(0, two).ok());
  Status s = w.Post(0, two);
  EXPECT_EQ(s.code(), Code::kAgain);
  EXPECT_NE(s.message().find("1 free"), std::string::npos) << s.message();
  EXPECT_EQ(w.SlotsInUse(0), 2u);
  ASSERT_TRUE(w.AddCounter(0, trig, 1).ok());
  w.RunUntilIdle();
  EXPECT_EQ(w.SlotsInUse(0), 0u);
  EXPECT_EQ(w.ReadCounter(0, target), 2u);
  EXPECT_TRUE(w.Post(0, two).ok());
  EXPECT_EQ(w.Stats(0).slots_high_water, 2u);
}

TEST(FwsimWorld, CounterOverflowIsAnErrorNotAWrap) {
  LogGP p = Params();
  p.counter_bits = 3;
  World w(p, 1);
  const std::uint32_t c = Ctr(w, 0);
  ASSERT_TRUE(w.AddCounter(0, c, 7).ok());
  EXPECT_EQ(w.ReadErrors(0, c), 0u);
  ASSERT_TRUE(w.AddCounter(0, c, 1).ok());
  EXPECT_EQ(w.ReadCounter(0, c), 7u);
  EXPECT_EQ(w.ReadErrors(0, c), 1u);
}

TEST(FwsimWorld, TruncatedReceiveIsAnError) {
  World w(Params(), 2);
  const std::uint32_t sc = Ctr(w, 0), rc = Ctr(w, 1);
  char big[16] = "0123456789abcde", small[4] = {};
  Command recv;
  recv.kind = CmdKind::kRecv;
  recv.peer = 0;
  recv.tag = 5;
  recv.dst = small;
  recv.bytes = sizeof(small);
  recv.completion = rc;
  Command send;
  send.kind = CmdKind::kSend;
  send.peer = 1;
  send.tag = 5;
  send.src = big;
  send.bytes = sizeof(big);
  send.completion = sc;
  ASSERT_TRUE(w.Post(0, std::span<const Command>(&send, 1)).ok());  // unexpected first
  w.RunUntilIdle();
  ASSERT_TRUE(w.Post(1, std::span<const Command>(&recv, 1)).ok());
  w.RunUntilIdle();
  EXPECT_EQ(w.ReadErrors(1, rc), 1u);
  EXPECT_EQ(w.ReadCounter(0, sc), 1u);
  EXPECT_EQ(std::memcmp(small, big, 4), 0);
}

}  // namespace
}  // namespace nicq::fwsim
