// Backend-specific properties the conformance suite does not cover: the
// native slot budget and counter rebasing, and that posting and firing on
// the emulator allocate nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "providers/ofi_emulated/emulated_backend.h"
#include "providers/ofi_native/native_backend.h"

// Counts every heap allocation of this test binary while armed.
static std::atomic<bool> g_armed{false};
static std::atomic<long> g_allocs{0};
void* operator new(std::size_t n) {
  if (g_armed.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// malloc'd by the operator new above: free() is the matching release (GCC
// cannot see the replacement and warns).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

namespace nicq::ofi {
namespace {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

TriggeredOp CounterAdd(CounterId trig, std::uint64_t thr, CounterId target, std::uint64_t v,
                       CounterId comp) {
  TriggeredOp op;
  op.kind = OpKind::kCounterAdd;
  op.trigger = trig;
  op.threshold = thr;
  op.target_counter = target;
  op.value = v;
  op.completion = comp;
  return op;
}

std::unique_ptr<offload::OffloadBackend> SelfWired(std::unique_ptr<offload::OffloadBackend> b) {
  std::vector<std::uint8_t> a;
  EXPECT_TRUE(b->LocalAddress(a).ok());
  std::vector<std::vector<std::uint8_t>> peers{a};
  EXPECT_TRUE(b->SetPeers(peers).ok());
  return b;
}

TEST(NativeBudget, TinyBudgetAnswersAgainAndRecovers) {
  NativeConfig c;
  c.slot_budget = 2;
  c.num_counters = 16;
  std::unique_ptr<NativeBackend> n;
  Status s = NativeBackend::Create(c, &n);
  ASSERT_TRUE(s.ok()) << s.message();
  auto b = SelfWired(std::move(n));
  EXPECT_EQ(b->Caps().max_trigger_slots, 2u);
  CounterId ids[3];
  ASSERT_TRUE(b->AllocCounters(3, ids).ok());
  const CounterId t = ids[0], x = ids[1], done = ids[2];
  std::vector<TriggeredOp> two{CounterAdd(t, 1, x, 1, done), CounterAdd(t, 2, x, 1, done)};
  ASSERT_TRUE(b->Post(two).ok());
  EXPECT_EQ(b->FreeSlots(), 0u);
  std::vector<TriggeredOp> one{CounterAdd(t, 3, x, 1, done)};
  s = b->Post(one);
  EXPECT_EQ(s.code(), Code::kAgain) << s.message();
  EXPECT_NE(s.message().find("NICQ_NATIVE_SLOTS"), std::string::npos);
  EXPECT_EQ(b->SlotsInUse(), 2u) << "a refused batch left something behind";
  ASSERT_TRUE(b->AddCounter(t, 2).ok());
  ASSERT_TRUE(b->WaitCounter(done, 2, 20000).ok());
  // Slots come back once the ops are done: the retry fits.
  s = b->Post(one);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(b->AddCounter(t, 1).ok());
  ASSERT_TRUE(b->WaitCounter(x, 3, 20000).ok());
}

// A native backend whose "hardware" counters hold 16 units, and 3 counters.
void NarrowNative(std::unique_ptr<offload::OffloadBackend>* b, CounterId ids[3]) {
  NativeConfig c;
  c.slot_budget = 8;
  c.num_counters = 16;
  c.counter_limit = 16;
  std::unique_ptr<NativeBackend> n;
  ASSERT_TRUE(NativeBackend::Create(c, &n).ok());
  *b = SelfWired(std::move(n));
  ASSERT_TRUE((*b)->AllocCounters(3, ids).ok());
}

// 60 epochs of 2 cross the 16-unit counter several times; each epoch is
// posted after the previous one completed, so the counter can be rebased
// between them. With early tokens, epoch e+1's increment lands before its
// post (a matched plan's peer started first) and the rebase must keep it.
void RunNarrowEpochs(bool early_tokens) {
  std::unique_ptr<offload::OffloadBackend> b;
  CounterId ids[3];
  ASSERT_NO_FATAL_FAILURE(NarrowNative(&b, ids));
  EXPECT_EQ(b->Caps().max_counter_value, ~std::uint64_t{0});  // plans never reset it
  const CounterId t = ids[0], x = ids[1], done = ids[2];
  std::vector<TriggeredOp> op(1);
  if (early_tokens) {
    ASSERT_TRUE(b->AddCounter(t, 2).ok());
  }
  for (std::uint64_t e = 1; e <= 60; ++e) {
    op[0] = CounterAdd(t, 2 * e, x, 1, done);
    Status s = b->Post(op);
    ASSERT_TRUE(s.ok()) << "epoch " << e << ": " << s.message();
    if (!early_tokens) {
      ASSERT_TRUE(b->AddCounter(t, 2).ok());
    }
    ASSERT_TRUE(b->WaitCounter(done, e, 20000).ok()) << "epoch " << e;
    if (early_tokens) {
      ASSERT_TRUE(b->AddCounter(t, 2).ok());
    }
    EXPECT_EQ(b->ReadCounter(t), 2 * (e + (early_tokens ? 1 : 0)));
    EXPECT_EQ(b->ReadCounter(x), e);
  }
}

TEST(NativeCounters, RebaseKeepsLogicalValuesPastTheHardwareLimit) {
  RunNarrowEpochs(/*early_tokens=*/false);
}

TEST(NativeCounters, EarlyIncrementsSurviveRebase) {
  RunNarrowEpochs(/*early_tokens=*/true);
}

TEST(NativeCounters, ImmediateSetBelowRebasedBaseAndFreeCancels) {
  std::unique_ptr<offload::OffloadBackend> b;
  CounterId ids[3];
  ASSERT_NO_FATAL_FAILURE(NarrowNative(&b, ids));
  const CounterId t = ids[0], x = ids[1], done = ids[2];
  std::vector<TriggeredOp> op(1);
  for (std::uint64_t e = 1; e <= 20; ++e) {  // rebases t past 16
    op[0] = CounterAdd(t, 2 * e, x, 1, done);
    ASSERT_TRUE(b->Post(op).ok());
    ASSERT_TRUE(b->AddCounter(t, 2).ok());
    ASSERT_TRUE(b->WaitCounter(done, e, 20000).ok());
  }
  // A plan's own rebase: set to 0, fired at once.
  op[0] = TriggeredOp{};
  op[0].kind = OpKind::kCounterSet;
  op[0].target_counter = t;
  op[0].value = 0;
  Status s = b->Post(op);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(b->ReadCounter(t), 0u);
  // FreeCounter cancels what is armed on it: the add never lands, even when
  // the counter id is handed out again and grows.
  op[0] = CounterAdd(t, 1, x, 100, kNoCounter);
  ASSERT_TRUE(b->Post(op).ok());
  b->FreeCounter(t);
  CounterId again = kNoCounter;
  ASSERT_TRUE(b->AllocCounters(1, &again).ok());
  ASSERT_TRUE(b->AddCounter(again, 5).ok());
  for (int i = 0; i < 20; ++i) b->Progress();
  EXPECT_EQ(b->ReadCounter(x), 20u);
  // The reused counter still rebases: the cancelled op's record, reclaimed
  // after the reuse, must not leave it looking busy for good.
  for (std::uint64_t e = 1; e <= 20; ++e) {
    op[0] = CounterAdd(again, 5 + 2 * e, x, 1, done);
    Status st = b->Post(op);
    ASSERT_TRUE(st.ok()) << "epoch " << e << " on the reused counter: " << st.message();
    ASSERT_TRUE(b->AddCounter(again, 2).ok());
    ASSERT_TRUE(b->WaitCounter(done, 20 + e, 20000).ok());
  }
  EXPECT_EQ(b->ReadCounter(x), 40u);
}

// A receive gated on the counter fires (it is posted) long before a message
// matches it: a fired op no longer reads its trigger counter, so it must not
// hold the counter's rebase back. 20 epochs of 2 cross the 16-unit counter
// while the receive waits; then the message arrives and lands whole.
TEST(NativeCounters, FiredReceiveDoesNotHoldTheRebaseBack) {
  std::unique_ptr<offload::OffloadBackend> b;
  CounterId ids[3];
  ASSERT_NO_FATAL_FAILURE(NarrowNative(&b, ids));
  const CounterId t = ids[0], x = ids[1], done = ids[2];
  std::uint64_t in[4] = {}, out[4] = {11, 22, 33, 44};
  std::vector<TriggeredOp> op(1);
  op[0].kind = OpKind::kRecv;
  op[0].trigger = t;
  op[0].threshold = 1;
  op[0].completion = x;
  op[0].peer = 0;
  op[0].local_rbuf = in;
  op[0].bytes = sizeof in;
  op[0].tag = 77;
  ASSERT_TRUE(b->Post(op).ok());
  ASSERT_TRUE(b->AddCounter(t, 1).ok());
  for (std::uint64_t e = 1; e <= 20; ++e) {
    op[0] = CounterAdd(t, 1 + 2 * e, done, 1, kNoCounter);
    Status s = b->Post(op);
    ASSERT_TRUE(s.ok()) << "epoch " << e << ": " << s.message();
    ASSERT_TRUE(b->AddCounter(t, 2).ok());
    ASSERT_TRUE(b->WaitCounter(done, e, 20000).ok()) << "epoch " << e;
  }
  EXPECT_EQ(b->ReadCounter(t), 41u);
  EXPECT_EQ(b->ReadCounter(x), 0u) << "the receive completed with no message";
  op[0] = TriggeredOp{};
  op[0].kind = OpKind::kSend;
  op[0].peer = 0;
  op[0].local_buf = out;
  op[0].bytes = sizeof out;
  op[0].tag = 77;
  ASSERT_TRUE(b->Post(op).ok());
  ASSERT_TRUE(b->WaitCounter(x, 1, 20000).ok());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(in[i], out[i]) << "element " << i;
}

// A queue posts its chain far ahead: a threshold beyond the counter's
// 16-unit window while triggers still wait on it is kAgain (the batch posts
// nothing), and fits once the posted chain has fired and the counter
// rebased. A threshold beyond the window with nothing waiting is an error.
TEST(NativeCounters, ThresholdBeyondTheWindowWaitsForTheChain) {
  std::unique_ptr<offload::OffloadBackend> b;
  CounterId ids[3];
  ASSERT_NO_FATAL_FAILURE(NarrowNative(&b, ids));
  const CounterId t = ids[0], x = ids[1], done = ids[2];
  std::vector<TriggeredOp> chain{CounterAdd(t, 6, x, 1, done), CounterAdd(t, 12, x, 1, done)};
  ASSERT_TRUE(b->Post(chain).ok());
  // 12 waits at 12; 20 + 12 would need 20 hardware units.
  std::vector<TriggeredOp> far{CounterAdd(t, 13, x, 1, done), CounterAdd(t, 20, x, 1, done)};
  Status s = b->Post(far);
  EXPECT_EQ(s.code(), Code::kAgain) << s.message();
  EXPECT_EQ(b->SlotsInUse(), 2u) << "a refused batch left something behind";
  ASSERT_TRUE(b->AddCounter(t, 12).ok());
  ASSERT_TRUE(b->WaitCounter(done, 2, 20000).ok());
  s = b->Post(far);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(b->AddCounter(t, 8).ok());
  ASSERT_TRUE(b->WaitCounter(done, 4, 20000).ok());
  EXPECT_EQ(b->ReadCounter(x), 4u);
  EXPECT_EQ(b->ReadCounter(t), 20u);
  std::vector<TriggeredOp> beyond{CounterAdd(t, 20 + 17, x, 1, done)};
  s = b->Post(beyond);
  EXPECT_EQ(s.code(), Code::kUnsupportedOperation) << s.message();
  EXPECT_NE(s.message().find("hardware counter limit"), std::string::npos) << s.message();
}

void Touch(void* arg) {
  static_cast<std::atomic<int>*>(arg)->fetch_add(1);
}

TEST(EmulatedAllocations, PostingAndFiringAllocateNothing) {
  EmulatedConfig c;
  c.provider = "tcp;ofi_rxm";
  c.progress_thread = 0;
  c.num_counters = 16;
  c.num_ops = 64;
  std::unique_ptr<EmulatedBackend> e;
  ASSERT_TRUE(EmulatedBackend::Create(c, &e).ok());
  auto b = SelfWired(std::move(e));
  CounterId ids[3];
  ASSERT_TRUE(b->AllocCounters(3, ids).ok());
  const CounterId t = ids[0], x = ids[1], done = ids[2];
  std::atomic<int> hits{0};
  std::vector<TriggeredOp> epoch(2);
  epoch[1].kind = OpKind::kHost;
  epoch[1].host_fn = &Touch;
  epoch[1].host_arg = &hits;
  epoch[1].completion = done;
  // Warm up once, then count over many epochs.
  constexpr int kEpochs = 200;
  g_allocs = 0;
  for (int i = 0; i <= kEpochs; ++i) {
    if (i == 1) g_armed = true;
    epoch[0] = CounterAdd(t, i + 1, x, 1, done);
    epoch[1].trigger = t;
    epoch[1].threshold = i + 1;
    ASSERT_TRUE(b->Post(epoch).ok());
    ASSERT_TRUE(b->AddCounter(t, 1).ok());
    ASSERT_TRUE(b->WaitCounter(done, 2 * (i + 1), 20000).ok());
  }
  g_armed = false;
  EXPECT_EQ(g_allocs.load(), 0) << "heap allocations while posting and firing";
  EXPECT_EQ(hits.load(), kEpochs + 1);
  EXPECT_EQ(b->ReadCounter(x), static_cast<std::uint64_t>(kEpochs + 1));
}

}  // namespace
}  // namespace nicq::ofi
