// What is specific to the shm backend (the shared contract is the
// conformance suite): the process whose update completes a condition runs
// the op while the owner is in no call at all, a claimed op fires once
// however many threads add, puts between real processes (process_vm, also
// moved by a third process), and a WaitCounter sleeper woken by a peer's
// update.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "providers/shm_native/shm_backend.h"
#include "tests/providers/shm_fork_pair.h"

namespace nicq::shmtrig {
namespace {

using offload::CounterId;
using offload::kNoCounter;
using offload::MemRegion;
using offload::OpKind;
using offload::TriggeredOp;

std::vector<std::uint64_t> Pattern(std::size_t n) {
  std::vector<std::uint64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i * 3 + 1;
  return v;
}

struct RegionWire {
  std::uint64_t addr;
  std::uint64_t key;
  CounterId arrival;
};

// A put of `bytes` from `src` to peer `peer`'s region `target`, gated on
// counter `trigger` reaching 1, counted on `completion`.
TriggeredOp GatedPut(const void* src, std::size_t bytes, int peer, const RegionWire& target,
                     CounterId trigger, CounterId completion) {
  TriggeredOp put;
  put.kind = OpKind::kPut;
  put.trigger = trigger;
  put.threshold = 1;
  put.peer = peer;
  put.local_buf = src;
  put.bytes = bytes;
  put.remote_addr = target.addr;
  put.remote_key = target.key;
  put.target_counter = target.arrival;
  put.completion = completion;
  return put;
}

// The child posts a put gated on its own counter and then blocks in read(),
// inside no backend call. The parent's remote counter add completes the
// condition, so the parent runs the child's put (reading the child's memory
// with process_vm_readv) before its own Post returns.
TEST(ShmTrigger, TheAdderRunsTheOwnersOpWhileTheOwnerIsInNoCall) {
  constexpr std::size_t kWords = 64 * 1024;
  std::unique_ptr<ShmTriggerBackend> b;
  Channel ch;
  const pid_t pid = ForkPair(&b, &ch);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::vector<std::uint64_t> src = Pattern(kWords);
    RegionWire target{};
    ch.Recv(&target, sizeof target);
    CounterId ids[2];
    if (!b->AllocCounters(2, ids).ok()) _exit(10);
    const TriggeredOp put = GatedPut(src.data(), kWords * 8, 0, target, ids[0], ids[1]);
    if (!b->Post({&put, 1}).ok()) _exit(11);
    ch.Send(ids, sizeof ids);
    char done = 0;
    ch.Recv(&done, 1);  // asleep in read(): the parent does the work
    if (b->ReadCounter(ids[0]) != 1) _exit(12);
    if (b->ReadCounter(ids[1]) != 1) _exit(13);  // completion counted by the parent
    if (b->ops_executed() != 0) _exit(14);
    _exit(0);
  }
  std::vector<std::uint64_t> dst(kWords, 0);
  CounterId arr = kNoCounter, comp = kNoCounter;
  ASSERT_TRUE(b->AllocCounters(1, &arr).ok());
  ASSERT_TRUE(b->AllocCounters(1, &comp).ok());
  MemRegion mr;
  ASSERT_TRUE(b->RegisterMemory(dst.data(), kWords * 8, arr, &mr).ok());
  const RegionWire wire{mr.remote_addr, mr.key, arr};
  ch.Send(&wire, sizeof wire);
  CounterId child_ids[2];
  ch.Recv(child_ids, sizeof child_ids);
  TriggeredOp token;
  token.kind = OpKind::kRemoteCounterAdd;
  token.peer = 1;
  token.target_counter = child_ids[0];
  token.value = 1;
  token.completion = comp;
  ASSERT_TRUE(b->Post({&token, 1}).ok());
  // No waiting and no progress call: the Post that completed the child's
  // condition ran the child's put.
  EXPECT_EQ(b->ReadCounter(arr), 1u);
  EXPECT_EQ(b->ReadCounter(comp), 1u);
  EXPECT_EQ(b->ops_executed(), 2u);
  EXPECT_EQ(dst, Pattern(kWords));
  const char done = 1;
  ch.Send(&done, 1);
  EXPECT_EQ(ChildExit(pid), 0);
}

// The child sleeps in WaitCounter on its arrival counter; the parent puts
// into the child's memory (process_vm_writev) and the arrival wakes it.
TEST(ShmTrigger, APeersPutWakesASleeperInWaitCounter) {
  constexpr std::size_t kWords = 4096;
  std::unique_ptr<ShmTriggerBackend> b;
  Channel ch;
  const pid_t pid = ForkPair(&b, &ch);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<std::uint64_t> dst(kWords, 0);
    CounterId arr = kNoCounter;
    if (!b->AllocCounters(1, &arr).ok()) _exit(20);
    MemRegion mr;
    if (!b->RegisterMemory(dst.data(), kWords * 8, arr, &mr).ok()) _exit(21);
    const RegionWire wire{mr.remote_addr, mr.key, arr};
    ch.Send(&wire, sizeof wire);
    if (!b->WaitCounter(arr, 1, -1).ok()) _exit(22);
    if (dst != Pattern(kWords)) _exit(23);
    if (b->sleeps() == 0) _exit(24);
    if (b->sleep_timeouts() != 0) _exit(25);  // woken by the put, not by the clock
    _exit(0);
  }
  RegionWire target{};
  ch.Recv(&target, sizeof target);
  // Put only once the child sleeps in the kernel (its counter shows it).
  for (int i = 0; i < 100000 && !b->CounterHasSleeper(1, target.arrival); ++i) usleep(50);
  ASSERT_TRUE(b->CounterHasSleeper(1, target.arrival));
  const std::vector<std::uint64_t> src = Pattern(kWords);
  CounterId comp = kNoCounter;
  ASSERT_TRUE(b->AllocCounters(1, &comp).ok());
  TriggeredOp put;
  put.kind = OpKind::kPut;
  put.peer = 1;
  put.local_buf = src.data();
  put.bytes = kWords * 8;
  put.remote_addr = target.addr;
  put.remote_key = target.key;
  put.target_counter = target.arrival;
  put.completion = comp;
  ASSERT_TRUE(b->Post({&put, 1}).ok());
  EXPECT_EQ(b->ReadCounter(comp), 1u);
  EXPECT_EQ(ChildExit(pid), 0);
}

// Three processes: rank 1 owns a put from its memory into rank 2's, gated
// on a counter of rank 1; rank 0's remote add completes the condition, so
// rank 0 moves the data between two other address spaces (read into its
// staging buffer, then write), in chunks, while both sit in read().
TEST(ShmTrigger, AThirdProcessMovesAPutBetweenTwoOthers) {
  constexpr std::size_t kWords = 10000;  // 80,000 bytes: several staging chunks and a partial one
  constexpr int kRanks = 3;
  int up[kRanks][2], down[kRanks][2];
  for (int r = 1; r < kRanks; ++r) ASSERT_TRUE(pipe(up[r]) == 0 && pipe(down[r]) == 0);
  int me = 0;
  pid_t pids[kRanks] = {};
  for (int r = 1; r < kRanks && me == 0; ++r) {
    pids[r] = fork();
    ASSERT_GE(pids[r], 0);
    if (pids[r] == 0) me = r;
  }
  // Star: each child talks to rank 0 only.
  std::vector<Channel> to(kRanks);
  for (int r = 1; r < kRanks; ++r) {
    if (me == 0) to[r] = {down[r][1], up[r][0]};
    if (me == r) to[0] = {up[r][1], down[r][0]};
  }
  std::unique_ptr<ShmTriggerBackend> b;
  if (!ShmTriggerBackend::Open(ShmOptions{}, &b).ok()) _exit(92);
  std::vector<std::vector<std::uint8_t>> table(kRanks);
  if (!b->LocalAddress(table[me]).ok()) _exit(93);
  const std::size_t len = table[me].size();
  if (me != 0) {
    to[0].Send(table[me].data(), len);
    for (int r = 0; r < kRanks; ++r) {
      table[r].resize(len);
      to[0].Recv(table[r].data(), len);
    }
  } else {
    for (int r = 1; r < kRanks; ++r) {
      table[r].resize(len);
      to[r].Recv(table[r].data(), len);
    }
    for (int r = 1; r < kRanks; ++r)
      for (int t = 0; t < kRanks; ++t) to[r].Send(table[t].data(), len);
  }
  if (!b->SetPeers(table).ok()) _exit(94);
  if (me == 2) {  // the target: registers, then sleeps in read()
    std::vector<std::uint64_t> dst(kWords, 0);
    CounterId arr = kNoCounter;
    if (!b->AllocCounters(1, &arr).ok()) _exit(30);
    MemRegion mr;
    if (!b->RegisterMemory(dst.data(), kWords * 8, arr, &mr).ok()) _exit(31);
    const RegionWire wire{mr.remote_addr, mr.key, arr};
    to[0].Send(&wire, sizeof wire);
    char done = 0;
    to[0].Recv(&done, 1);
    if (b->ReadCounter(arr) != 1) _exit(32);
    if (dst != Pattern(kWords)) _exit(33);
    _exit(b->ops_executed() == 0 ? 0 : 34);
  }
  if (me == 1) {  // the owner: posts the put, then sleeps in read()
    const std::vector<std::uint64_t> src = Pattern(kWords);
    RegionWire target{};
    to[0].Recv(&target, sizeof target);
    CounterId ids[2];
    if (!b->AllocCounters(2, ids).ok()) _exit(40);
    const TriggeredOp put = GatedPut(src.data(), kWords * 8, 2, target, ids[0], ids[1]);
    if (!b->Post({&put, 1}).ok()) _exit(41);
    to[0].Send(ids, sizeof ids);
    char done = 0;
    to[0].Recv(&done, 1);
    if (b->ReadCounter(ids[1]) != 1) _exit(42);
    _exit(b->ops_executed() == 0 ? 0 : 43);
  }
  RegionWire wire{};
  to[2].Recv(&wire, sizeof wire);
  to[1].Send(&wire, sizeof wire);
  CounterId owner_ids[2];
  to[1].Recv(owner_ids, sizeof owner_ids);
  TriggeredOp token;
  token.kind = OpKind::kRemoteCounterAdd;
  token.peer = 1;
  token.target_counter = owner_ids[0];
  token.value = 1;
  ASSERT_TRUE(b->Post({&token, 1}).ok());
  EXPECT_EQ(b->ops_executed(), 2u) << "rank 0 ran its token and rank 1's put";
  const char done = 1;
  for (int r = 1; r < kRanks; ++r) to[r].Send(&done, 1);
  for (int r = 1; r < kRanks; ++r) EXPECT_EQ(ChildExit(pids[r]), 0) << "rank " << r;
}

std::atomic<int> g_hits[8192];
void Hit(void* arg) {
  g_hits[reinterpret_cast<std::uintptr_t>(arg)].fetch_add(1);
}

// Two threads add to one counter at once; every op gated on it (one per
// threshold) runs exactly once, on whichever thread claimed it.
TEST(ShmTrigger, TwoThreadsAddingConcurrentlyFireEachOpOnce) {
  std::unique_ptr<ShmTriggerBackend> b;
  ASSERT_TRUE(ShmTriggerBackend::Open(ShmOptions{}, &b).ok());
  constexpr std::uint64_t kPerThread = 2000;
  for (int round = 0; round < 4; ++round) {
    CounterId ids[3];
    ASSERT_TRUE(b->AllocCounters(3, ids).ok());
    const CounterId trig = ids[0], target = ids[1], comp = ids[2];
    std::vector<TriggeredOp> ops;
    for (std::uint64_t t = 1; t <= 2 * kPerThread; ++t) {
      g_hits[t].store(0);
      TriggeredOp host;
      host.kind = OpKind::kHost;
      host.trigger = trig;
      host.threshold = t;
      host.host_fn = &Hit;
      host.host_arg = reinterpret_cast<void*>(static_cast<std::uintptr_t>(t));
      host.completion = comp;
      TriggeredOp add = host;
      add.kind = OpKind::kCounterAdd;
      add.target_counter = target;
      add.value = 1;
      ops.push_back(host);
      ops.push_back(add);
    }
    ASSERT_TRUE(b->Post(ops).ok());
    auto adder = [&] {
      for (std::uint64_t i = 0; i < kPerThread; ++i) ASSERT_TRUE(b->AddCounter(trig, 1).ok());
    };
    std::thread t1(adder), t2(adder);
    t1.join();
    t2.join();
    EXPECT_EQ(b->ReadCounter(trig), 2 * kPerThread);
    EXPECT_EQ(b->ReadCounter(target), 2 * kPerThread);
    EXPECT_EQ(b->ReadCounter(comp), 4 * kPerThread);
    int wrong = 0;
    for (std::uint64_t t = 1; t <= 2 * kPerThread; ++t) wrong += g_hits[t].load() != 1;
    EXPECT_EQ(wrong, 0) << "host ops that did not run exactly once (round " << round << ")";
    EXPECT_EQ(b->SlotsInUse(), 0u);
    for (CounterId c : ids) b->FreeCounter(c);
  }
}

}  // namespace
}  // namespace nicq::shmtrig
