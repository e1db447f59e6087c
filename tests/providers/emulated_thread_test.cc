// The emulator's progress thread racing the application (run under
// ThreadSanitizer by scripts/test.sh, label tsan): counters bumped from the
// app while the thread fires ops, ops posted while others fire, and host
// ops that must run in threshold order whichever thread runs them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "backend_factory.h"
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
  return test::MakeEmulatedSelfWired(c);
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

// Counts the threads inside the backend's provider calls. The first call
// after Arm() is held open (the thread parks inside it) until another thread
// enters a call too, or kHoldMs pass: with the calls serialized, no other
// thread can, so an overlap seen here is one the serialization let through.
class OverlapProbe final : public EmulatedBackend::ProviderCallObserver {
 public:
  static constexpr int kHoldMs = 300;
  void Arm() { armed_.store(true); }
  bool parked() const { return parked_.load(); }
  std::thread::id parker() const { return parker_; }
  int max_inside() const { return max_inside_.load(); }

  void Enter() override {
    const int now = inside_.fetch_add(1) + 1;
    for (int m = max_inside_.load(); now > m && !max_inside_.compare_exchange_weak(m, now);) {
    }
    if (!armed_.exchange(false)) return;
    parker_ = std::this_thread::get_id();
    parked_.store(true);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kHoldMs);
    while (inside_.load() < 2 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    parked_.store(false);
  }
  void Leave() override { inside_.fetch_sub(1); }

 private:
  std::atomic<bool> armed_{false}, parked_{false};
  std::atomic<int> inside_{0}, max_inside_{0};
  std::thread::id parker_;
};

// libfabric 1.17 shm loses a tagged match when a receive is posted on one
// thread while another reads the CQ as the message arrives (the queued
// matched receives stalled on it; providers/bench/shm_recv_race.c). The
// backend keeps one thread at a time inside the provider: here the progress
// thread is held inside its CQ read while the application's counter add
// makes a receive ready, which the application thread then issues itself
// (it takes the drainer role); that issue must wait for the read to end.
TEST_P(EmulatedThread, ReceiveIssueWaitsForTheProgressThreadsCqRead) {
  auto b = Make(GetParam());
  ASSERT_TRUE(b);
  CounterId ids[3];
  ASSERT_TRUE(b->AllocCounters(3, ids).ok());  // starts the progress thread
  const CounterId start = ids[0], recv_done = ids[1], send_done = ids[2];
  ASSERT_TRUE(b->progress_thread_running());
  constexpr std::uint64_t kTag = 0x5eed;
  char sent[64], got[64];
  std::memset(sent, 0x5a, sizeof sent);
  std::memset(got, 0, sizeof got);
  TriggeredOp recv;
  recv.kind = OpKind::kRecv;
  recv.trigger = start;
  recv.threshold = 1;
  recv.peer = 0;  // this process (Make gives it itself as its only peer)
  recv.tag = kTag;
  recv.local_rbuf = got;
  recv.bytes = sizeof got;
  recv.completion = recv_done;
  ASSERT_TRUE(b->Post({&recv, 1}).ok());

  OverlapProbe probe;
  b->SetProviderCallObserverForTest(&probe);
  probe.Arm();
  // The progress thread polls the CQ (or naps at most a few ms between
  // polls): it is the one that parks, since this thread makes no call now.
  for (int i = 0; i < 20000 && !probe.parked(); ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  ASSERT_TRUE(probe.parked()) << "the progress thread never read the CQ";
  ASSERT_NE(probe.parker(), std::this_thread::get_id());
  ASSERT_TRUE(b->AddCounter(start, 1).ok());  // the receive is ready: issued here
  EXPECT_EQ(probe.max_inside(), 1)
      << "the receive was posted while the progress thread was inside its CQ read";
  b->SetProviderCallObserverForTest(nullptr);

  // The receive was posted all the same: a send to ourselves completes it.
  TriggeredOp send;
  send.kind = OpKind::kSend;
  send.peer = 0;
  send.tag = kTag;
  send.local_buf = sent;
  send.bytes = sizeof sent;
  send.completion = send_done;
  ASSERT_TRUE(b->Post({&send, 1}).ok());
  Status s = b->WaitCounter(recv_done, 1, 30000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(std::memcmp(got, sent, sizeof got), 0);
}

// On shm (no CQ wait object) an idle progress thread naps up to 1 ms
// between CQ polls, but the hops that finish a started epoch (a peer's
// ready token, its put) land in the CQ, which only a poll reads. While
// ExpectCounter names a counter short of its value the thread yields
// between polls for a while and then naps at the shortest, also once the
// counter moved part of the way; once it is reached the naps grow again.
TEST(EmulatedThreadShm, AnExpectedEpochKeepsTheNapsShortUntilItsCounterIsReached) {
  auto b = Make("shm");
  ASSERT_TRUE(b);
  CounterId done;
  ASSERT_TRUE(b->AllocCounters(1, &done).ok());  // starts the progress thread
  ASSERT_TRUE(b->progress_thread_running());
  // Polls the thread's state until it shows `want` (or gives up after ~2 s).
  auto nap_becomes = [&](int want) {
    for (int i = 0; i < 8000 && b->nap_us_for_test() != want; ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(250));
    return b->nap_us_for_test();
  };
  ASSERT_EQ(nap_becomes(1000), 1000) << "an idle progress thread naps up to 1 ms";
  b->ExpectCounter(done, 2);
  EXPECT_EQ(nap_becomes(50), 50) << "an awaited epoch did not shorten the naps";
  ASSERT_TRUE(b->AddCounter(done, 1).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // many naps of the thread
  EXPECT_EQ(b->nap_us_for_test(), 50) << "the naps grew while the epoch was still short";
  ASSERT_TRUE(b->AddCounter(done, 1).ok());
  EXPECT_EQ(nap_becomes(1000), 1000) << "the naps stayed short after the epoch was done";
  EXPECT_EQ(b->ReadCounter(done), 2u);
}

// While an epoch is awaited, the thread keeps polling (yielding the core
// between polls) for NICQ_EMU_EPOCH_SPIN_US after its last work instead of
// napping, so a peer's hop is read without a wake-up; past that it naps as
// before. Two backends: one spins "for ever" (60 s), one for 1 s.
std::unique_ptr<EmulatedBackend> MakeSpinning(int epoch_spin_us) {
  EmulatedConfig c;
  c.provider = "shm";
  c.progress_thread = 1;
  c.num_counters = 64;
  c.num_ops = 256;
  c.epoch_spin_us = epoch_spin_us;
  std::unique_ptr<EmulatedBackend> b;
  Status s = EmulatedBackend::Create(c, &b);
  EXPECT_TRUE(s.ok()) << s.message();
  return b;
}

// Work for the progress thread itself (a posted counter op it issues, not
// this thread: WaitCounter would issue it here): what opens its spin.
void GiveTheThreadWork(EmulatedBackend* b, CounterId poke) {
  TriggeredOp add;
  add.kind = OpKind::kCounterAdd;
  add.target_counter = poke;
  add.value = 1;
  const std::uint64_t before = b->ReadCounter(poke);
  ASSERT_TRUE(b->Post({&add, 1}).ok());
  for (int i = 0; i < 40000 && b->ReadCounter(poke) == before; ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(250));
  ASSERT_EQ(b->ReadCounter(poke), before + 1) << "the progress thread never issued the op";
}

// Polls (~10 s at most) until `done` says so.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 40000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::microseconds(250));
  return done();
}

TEST(EmulatedThreadShm, AnAwaitedEpochKeepsTheAgentPollingInsteadOfNapping) {
  auto b = MakeSpinning(60 * 1000 * 1000);
  ASSERT_TRUE(b);
  CounterId c[2];
  ASSERT_TRUE(b->AllocCounters(2, c).ok());
  const CounterId done = c[0], poke = c[1];
  b->ExpectCounter(done, 1);
  GiveTheThreadWork(b.get(), poke);
  // Naps before the work (the epoch was announced first) do not count.
  ASSERT_TRUE(Eventually([&] { return b->epoch_yields_for_test() >= 1000; }))
      << "the thread did not poll while the epoch waited";
  const std::uint64_t naps = b->epoch_naps_for_test();
  ASSERT_TRUE(Eventually([&] { return b->epoch_yields_for_test() >= 3000; }));
  EXPECT_EQ(b->epoch_naps_for_test(), naps) << "the thread napped while the epoch waited";
  ASSERT_TRUE(b->AddCounter(done, 1).ok());
  // Once the epoch is done the thread naps again, and those naps are not
  // naps of an awaited epoch.
  EXPECT_TRUE(Eventually([&] { return b->nap_us_for_test() == 1000; }))
      << "the thread kept polling after the epoch was done";
  EXPECT_EQ(b->epoch_naps_for_test(), naps);
  EXPECT_EQ(b->ReadCounter(done), 1u);
}

TEST(EmulatedThreadShm, TheEpochSpinEndsWithoutWorkAndTheAgentNaps) {
  // 1 s: long enough that a loaded machine's scheduling still lets the
  // thread start it, short enough for the test.
  auto b = MakeSpinning(1000 * 1000);
  ASSERT_TRUE(b);
  CounterId c[2];
  ASSERT_TRUE(b->AllocCounters(2, c).ok());
  const CounterId done = c[0], poke = c[1];
  b->ExpectCounter(done, 1);  // not reached until the end: a peer that never comes
  GiveTheThreadWork(b.get(), poke);
  ASSERT_TRUE(Eventually([&] { return b->epoch_yields_for_test() > 0; }))
      << "the thread never polled for the epoch";
  const std::uint64_t naps = b->epoch_naps_for_test();
  EXPECT_TRUE(Eventually([&] { return b->epoch_naps_for_test() > naps; }))
      << "the thread polled on without work, never napping";
  ASSERT_TRUE(b->AddCounter(done, 1).ok());
}

// Two backends of this process stand for two processes of one node, each
// with its doorbell. B's progress thread naps on its bell with a nap far
// longer than the test's wait: only a ring ends it. A (no progress thread:
// its host drives it) adds to one of B's counters remotely; the add lands
// in B's CQ, which only B's thread reads, so B's counter moves only if A's
// ring woke that thread.
struct BellPair {
  static constexpr int kNapUs = 60 * 1000 * 1000;
  offload::AgentBell bell_a, bell_b;
  std::unique_ptr<EmulatedBackend> a, b;

  // A host-driven, B as asked, each knowing the other's address.
  void Connect(int b_progress_thread, int b_nap_us) {
    a = MakeOne(0, 0);
    b = MakeOne(b_progress_thread, b_nap_us);
    ASSERT_TRUE(a && b);
    std::vector<std::uint8_t> addr_a, addr_b;
    ASSERT_TRUE(a->LocalAddress(addr_a).ok());
    ASSERT_TRUE(b->LocalAddress(addr_b).ok());
    const std::vector<std::vector<std::uint8_t>> peers{addr_a, addr_b};
    ASSERT_TRUE(a->SetPeers(peers).ok());
    ASSERT_TRUE(b->SetPeers(peers).ok());
  }
  void Open() {
    Connect(1, kNapUs);
    if (::testing::Test::HasFatalFailure()) return;
    offload::AgentBell* const bells[2] = {&bell_a, &bell_b};
    a->SetAgentBells(&bell_a, bells);
    b->SetAgentBells(&bell_b, bells);
  }
  static std::unique_ptr<EmulatedBackend> MakeOne(int progress_thread, int nap_us) {
    EmulatedConfig c;
    c.provider = "shm";
    c.progress_thread = progress_thread;
    c.num_counters = 64;
    c.num_ops = 256;
    if (nap_us > 0) c.min_nap_us = c.max_nap_us = nap_us;
    std::unique_ptr<EmulatedBackend> out;
    Status s = EmulatedBackend::Create(c, &out);
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
  }
  // Two host-driven backends of one node (no threads, no bells), past
  // shm's address exchange: a first message (a remote add, both polled)
  // settles it, which any op's first issue waits for.
  void OpenHostDriven() {
    Connect(0, 0);
    if (::testing::Test::HasFatalFailure()) return;
    CounterId warm[2];
    ASSERT_TRUE(a->AllocCounters(1, &warm[0]).ok());
    ASSERT_TRUE(b->AllocCounters(1, &warm[1]).ok());
    TriggeredOp add;
    add.kind = OpKind::kRemoteCounterAdd;
    add.peer = 1;
    add.target_counter = warm[1];
    add.value = 1;
    add.completion = warm[0];
    ASSERT_TRUE(a->Post({&add, 1}).ok());
    for (int i = 0; i < 200000 && (a->ReadCounter(warm[0]) == 0 || b->ReadCounter(warm[1]) == 0);
         ++i) {
      a->Progress();
      b->Progress();
    }
    ASSERT_EQ(b->ReadCounter(warm[1]), 1u) << "the first message never arrived";
    ASSERT_EQ(a->ReadCounter(warm[0]), 1u);
  }
  // Polls until B's thread is asleep on its bell (or gives up after ~5 s).
  bool BAsleep() const {
    for (int i = 0; i < 20000 && !b->asleep_on_bell_for_test(); ++i)
      std::this_thread::sleep_for(std::chrono::microseconds(250));
    return b->asleep_on_bell_for_test();
  }
};

TEST(EmulatedThreadShm, APeersRemoteCounterAddRingsTheAgentAwake) {
  BellPair p;
  p.Open();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  CounterId arrival, sent;
  ASSERT_TRUE(p.b->AllocCounters(1, &arrival).ok());  // starts B's progress thread
  ASSERT_TRUE(p.a->AllocCounters(1, &sent).ok());
  ASSERT_TRUE(p.b->progress_thread_running());
  ASSERT_FALSE(p.a->progress_thread_running());
  // B's host wait drives no progress while its thread runs, so only the
  // agent delivers: without the peer's ring it would sleep 60 s and the
  // 10 s wait would fail. The bell counts as armed a little before the
  // agent's last poll (after its membarrier), and an add landing in that
  // window is taken by the poll with no wake-up; so a round waits a few
  // milliseconds past the arming, and the wake-ups are counted over the
  // three rounds rather than required in each.
  const std::uint64_t wakes_before = p.b->bell_wakes_for_test();
  for (int round = 1; round <= 3; ++round) {
    ASSERT_TRUE(p.BAsleep()) << "B's progress thread never slept on its bell";
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    TriggeredOp add;
    add.kind = OpKind::kRemoteCounterAdd;
    add.peer = 1;
    add.target_counter = arrival;
    add.value = 5;
    add.completion = sent;
    ASSERT_TRUE(p.a->Post({&add, 1}).ok());
    Status s = p.a->WaitCounter(sent, round, 10000);
    ASSERT_TRUE(s.ok()) << s.message();
    s = p.b->WaitCounter(arrival, 5 * round, 10000);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.message();
    EXPECT_EQ(p.b->ReadCounter(arrival), 5u * round);
  }
  EXPECT_GT(p.b->bell_wakes_for_test(), wakes_before) << "no round woke B's agent by its bell";
  EXPECT_EQ(p.b->nap_timeouts_for_test(), 0u) << "a 60 s nap ran out: nothing rang";
}

// Records whether the watched thread made a provider call while armed.
class ThreadCallProbe final : public EmulatedBackend::ProviderCallObserver {
 public:
  explicit ThreadCallProbe(std::thread::id watched) : watched_(watched) {}
  void Enter() override {
    if (std::this_thread::get_id() == watched_) calls_.fetch_add(1);
  }
  void Leave() override {}
  int calls() const { return calls_.load(); }

 private:
  std::thread::id watched_;
  std::atomic<int> calls_{0};
};

// A host's counter add (a resident plan's MPI_Start) with the agent running
// on shm leaves the ops it made ready to the agent: the adding thread makes
// no provider call, the add rings the napping agent (60 s naps: nothing
// else wakes it in time), and the agent issues the op, which completes
// with no further call from the host on B.
TEST(EmulatedThreadShm, AHostCounterAddLeavesTheReadyOpsToTheAgent) {
  BellPair p;
  p.Open();
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  CounterId arrival, gate, sent;
  ASSERT_TRUE(p.a->AllocCounters(1, &arrival).ok());
  ASSERT_TRUE(p.b->AllocCounters(1, &gate).ok());  // starts B's progress thread
  ASSERT_TRUE(p.b->AllocCounters(1, &sent).ok());
  ASSERT_TRUE(p.b->progress_thread_running());
  ThreadCallProbe probe(std::this_thread::get_id());
  for (int round = 1; round <= 3; ++round) {
    TriggeredOp add;
    add.kind = OpKind::kRemoteCounterAdd;
    add.peer = 0;
    add.target_counter = arrival;
    add.value = 1;
    add.trigger = gate;
    add.threshold = std::uint64_t(round);
    add.completion = sent;
    ASSERT_TRUE(p.b->Post({&add, 1}).ok());
    ASSERT_TRUE(p.BAsleep()) << "B's progress thread never slept on its bell";
    const std::uint64_t wakes = p.b->bell_wakes_for_test();
    p.b->SetProviderCallObserverForTest(&probe);
    ASSERT_TRUE(p.b->AddCounter(gate, 1).ok());
    // Only reads of B from here (and A's own host-driven progress, which
    // answers shm's first message), until the agent completed the op.
    for (int i = 0; i < 40000 && (p.b->ReadCounter(sent) < std::uint64_t(round) ||
                                  p.a->ReadCounter(arrival) < std::uint64_t(round));
         ++i) {
      p.a->Progress();
      std::this_thread::sleep_for(std::chrono::microseconds(250));
    }
    p.b->SetProviderCallObserverForTest(nullptr);
    EXPECT_EQ(p.b->ReadCounter(sent), std::uint64_t(round)) << "round " << round;
    EXPECT_EQ(p.a->ReadCounter(arrival), std::uint64_t(round)) << "round " << round;
    EXPECT_EQ(probe.calls(), 0) << "round " << round << ": the adding thread issued the op";
    EXPECT_GT(p.b->bell_wakes_for_test(), wakes) << "round " << round << ": the add rang no one";
  }
  EXPECT_EQ(p.b->nap_timeouts_for_test(), 0u) << "a 60 s nap ran out: nothing rang";
}

// A put that asks only for source completion (the neighbourhood exchange's)
// completes at its initiator on shm without any progress of the target: it
// is injected, not delivery-complete (whose completion waits for the
// target's answer). The target still counts its landing, with the data.
TEST(EmulatedThreadShm, ASourceCompletionPutCompletesWithoutTheTargetsProgress) {
  BellPair p;
  ASSERT_NO_FATAL_FAILURE(p.OpenHostDriven());
  CounterId arrival, done;
  ASSERT_TRUE(p.b->AllocCounters(1, &arrival).ok());
  ASSERT_TRUE(p.a->AllocCounters(1, &done).ok());
  char landing[8] = {};
  offload::MemRegion region;
  ASSERT_TRUE(p.b->RegisterMemory(landing, sizeof landing, arrival, &region).ok());
  const char sent[8] = {'i', 'n', 'j', 'e', 'c', 't', 'e', 'd'};
  TriggeredOp put;
  put.kind = OpKind::kPut;
  put.peer = 1;
  put.local_buf = sent;
  put.bytes = sizeof sent;
  put.remote_addr = region.remote_addr;
  put.remote_key = region.key;
  put.target_counter = arrival;
  put.completion = done;
  put.source_completion = true;
  ASSERT_TRUE(p.a->Post({&put, 1}).ok());
  // Only A progresses here; B is not polled until A's put completed.
  Status s = p.a->WaitCounter(done, 1, 5000);
  ASSERT_TRUE(s.ok()) << "the put waited for the target: " << s.message();
  s = p.b->WaitCounter(arrival, 1, 10000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(std::memcmp(landing, sent, sizeof sent), 0);
  EXPECT_TRUE(p.b->DeregisterMemory(&region).ok());
}

// A remote counter add that asks only for source completion (an exchange's
// ready token) completes at issue on shm, with no completion for anyone to
// read; the target still counts the add once it reads it.
TEST(EmulatedThreadShm, ASourceCompletionTokenCompletesAtIssue) {
  BellPair p;
  ASSERT_NO_FATAL_FAILURE(p.OpenHostDriven());
  CounterId ready, sent;
  ASSERT_TRUE(p.b->AllocCounters(1, &ready).ok());
  ASSERT_TRUE(p.a->AllocCounters(1, &sent).ok());
  // Three tokens, counted as they leave: no poll of A's completion queue,
  // and B not polled at all.
  for (int t = 1; t <= 3; ++t) {
    TriggeredOp token;
    token.kind = OpKind::kRemoteCounterAdd;
    token.peer = 1;
    token.target_counter = ready;
    token.value = std::uint64_t(t);
    token.completion = sent;
    token.source_completion = true;
    ASSERT_TRUE(p.a->Post({&token, 1}).ok());
    EXPECT_EQ(p.a->ReadCounter(sent), std::uint64_t(t)) << "token " << t << " not counted at issue";
  }
  EXPECT_EQ(p.b->ReadCounter(ready), 0u) << "B was never polled";
  Status s = p.b->WaitCounter(ready, 6, 10000);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(p.b->ReadCounter(ready), 6u);
  EXPECT_EQ(p.a->ReadCounter(sent), 3u);
}

INSTANTIATE_TEST_SUITE_P(Providers, EmulatedThread, ::testing::Values("tcp;ofi_rxm", "shm"),
                         [](const auto& info) {
                           return std::string(info.param[0] == 's' ? "shm" : "tcp_rxm");
                         });

}  // namespace
}  // namespace nicq::ofi
