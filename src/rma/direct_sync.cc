// Synchronization of the one-node direct path: words in the window's shared
// control block, changed with atomic operations by whichever process
// synchronizes. A waiter spins briefly (the other side is usually about to
// act), then yields, then sleeps on a futex over the shared mapping; a
// waker calls futex_wake only when the word's sleeper count says someone
// sleeps. The machine may have fewer cores than ranks, so no wait spins
// without bound.
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "core/cpu_relax.h"
#include "rma/direct.h"

namespace nicq::rma::direct {
namespace {

constexpr std::uint32_t kExclusive = 1u << 31;
constexpr std::uint32_t kWriterUnit = 1u << 16;
constexpr std::uint32_t kWritersMask = 0x7fffu << 16;
constexpr std::uint32_t kReadersMask = 0xffffu;

// A wait polls its word up to the spin budget, then yields up to kYields
// times, then sleeps. The budget (4 polls to about 100 us) adapts: it grows
// while waits end during the spin and halves when one ended just after the
// first yields, because then the peer most likely shares this core (the
// scheduler tends to put processes that wake each other on one core), where
// every poll only delays it. Yielding many
// times before sleeping keeps steady ping-pongs off the futex, whose
// wake-ups are what pulls the two processes onto one core.
constexpr int kMinSpins = 4;
constexpr int kMaxSpins = 3000;
constexpr int kYields = 2000;
// A wait that the spin missed but that ended this soon after the first
// yield most likely waited on a process sharing this core (it ran as soon
// as we yielded). A longer one waited on a process that was busy or
// descheduled elsewhere: no reason to spin less.
constexpr std::int64_t kSharedCoreNs = 50'000;
// A sleeper re-checks its word at least this often (a lost wake-up can then
// only cost time, never hang a rank).
constexpr long kSleepNs = 200'000'000;

// Per process: all windows share one view of where the peers run.
std::atomic<int> spin_budget{200};

void FutexWait(std::atomic<std::uint32_t>* word, std::uint32_t seen) {
  timespec ts{0, kSleepNs};
  // Not FUTEX_PRIVATE: the word lives in a mapping shared by processes.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void Wake(WaitWord& w) {
  if (w.sleepers.load(std::memory_order_seq_cst) != 0)
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&w.value), FUTEX_WAKE, INT_MAX, nullptr,
            nullptr, 0);
}

// Returns the first value of w for which ready(value) holds.
std::int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

template <class Ready>
std::uint32_t WaitFor(WaitWord& w, Ready ready) {
  const int spins = spin_budget.load(std::memory_order_relaxed);
  std::int64_t spun_at = 0;
  for (int i = 0;; ++i) {
    std::uint32_t v = w.value.load(std::memory_order_acquire);
    if (ready(v)) {
      if (i > 0 && i < spins)
        spin_budget.store(std::min(kMaxSpins, spins + spins / 8 + 1), std::memory_order_relaxed);
      else if (i >= spins && NowNs() - spun_at < kSharedCoreNs)
        spin_budget.store(std::max(kMinSpins, spins / 2), std::memory_order_relaxed);
      return v;
    }
    if (i < spins) {
      CpuRelax();
      continue;
    }
    if (i == spins) spun_at = NowNs();
    if (i < spins + kYields) {
      sched_yield();
    } else {
      // Announce the sleep before the last look: a waker that changes the
      // word after that look sees the announcement (both seq_cst).
      w.sleepers.fetch_add(1, std::memory_order_seq_cst);
      v = w.value.load(std::memory_order_seq_cst);
      if (!ready(v)) FutexWait(&w.value, v);
      w.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
  }
}

}  // namespace

namespace {

std::size_t AlignUp(std::size_t v, std::size_t a) {
  return (v + a - 1) / a * a;
}

// Where a control block's parts start, and its unrounded length.
struct ControlLayout {
  std::size_t pscw_stage = 0, lock_stage = 0, end = 0;  // 0: none
};

ControlLayout Layout(int size, bool staged) {
  const std::size_t n = std::size_t(size);
  ControlLayout l;
  l.end = sizeof(ControlHeader) + sizeof(TargetControl) * n + sizeof(WaitWord) * n * n;
  if (staged && StageCapacity(size) > 0) {
    l.pscw_stage = AlignUp(l.end, alignof(StageHead));
    l.end = l.pscw_stage + n * n * (sizeof(StageHead) + StageCapacity(size));
  }
  if (staged && LockStageBytes(size) > 0) {
    l.lock_stage = AlignUp(l.end, alignof(LockSlot));
    l.end = l.lock_stage + LockStageBytes(size);
  }
  return l;
}

}  // namespace

std::size_t ControlBytes(int size, bool staged) {
  return AlignUp(Layout(size, staged).end, std::size_t(sysconf(_SC_PAGESIZE)));
}

void Bind(Direct* d, void* at, int size, bool staged) {
  char* p = static_cast<char*>(at);
  const std::size_t n = std::size_t(size);
  const ControlLayout l = Layout(size, staged);
  d->size = size;
  d->header = reinterpret_cast<ControlHeader*>(p);
  d->targets = reinterpret_cast<TargetControl*>(p + sizeof(ControlHeader));
  d->posts = reinterpret_cast<WaitWord*>(p + sizeof(ControlHeader) + sizeof(TargetControl) * n);
  d->posts_seen.assign(n, 0);
  if (l.pscw_stage) {
    d->stage = p + l.pscw_stage;
    d->stage_capacity = StageCapacity(size);
    d->stage_used.assign(n, 0);
  }
  if (l.lock_stage) BindLockStage(d, p + l.lock_stage, size);
}

// Shared: no exclusive holder and no writer waiting (writers go first, as
// on the active-message path, so a stream of readers cannot starve them).
void LockShared(Direct* d, int target) {
  WaitWord& w = d->targets[target].lock;
  for (;;) {
    std::uint32_t v =
        WaitFor(w, [](std::uint32_t x) { return (x & (kExclusive | kWritersMask)) == 0; });
    if (w.value.compare_exchange_weak(v, v + 1, std::memory_order_acquire)) return;
  }
}

void LockExclusive(Direct* d, int target) {
  WaitWord& w = d->targets[target].lock;
  w.value.fetch_add(kWriterUnit, std::memory_order_relaxed);
  for (;;) {
    std::uint32_t v =
        WaitFor(w, [](std::uint32_t x) { return (x & (kExclusive | kReadersMask)) == 0; });
    if (w.value.compare_exchange_weak(v, (v - kWriterUnit) | kExclusive, std::memory_order_acquire))
      return;
  }
}

void UnlockShared(Direct* d, int target) {
  WaitWord& w = d->targets[target].lock;
  w.value.fetch_sub(1, std::memory_order_seq_cst);
  Wake(w);
}

void UnlockExclusive(Direct* d, int target) {
  WaitWord& w = d->targets[target].lock;
  w.value.fetch_and(~kExclusive, std::memory_order_seq_cst);
  Wake(w);
}

void AccLock(Direct* d, int target) {
  WaitWord& w = d->targets[target].acc;
  for (;;) {
    std::uint32_t v = WaitFor(w, [](std::uint32_t x) { return x == 0; });
    if (w.value.compare_exchange_weak(v, 1, std::memory_order_acquire)) return;
  }
}

void AccUnlock(Direct* d, int target) {
  WaitWord& w = d->targets[target].acc;
  w.value.store(0, std::memory_order_seq_cst);
  Wake(w);
}

void Barrier(Direct* d) {
  ControlHeader& h = *d->header;
  const std::uint32_t round = h.barrier_round.value.load(std::memory_order_acquire);
  if (h.barrier_arrived.value.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      std::uint32_t(d->size)) {
    // The last to arrive resets the count before it opens the next round,
    // so nobody of that round can arrive before the reset.
    h.barrier_arrived.value.store(0, std::memory_order_relaxed);
    h.barrier_round.value.fetch_add(1, std::memory_order_seq_cst);
    Wake(h.barrier_round);
    return;
  }
  WaitFor(h.barrier_round, [round](std::uint32_t x) { return x != round; });
}

void Post(Direct* d, int me, const std::vector<int>& origins) {
  for (int o : origins) {
    WaitWord& w = d->posts[std::size_t(me) * std::size_t(d->size) + std::size_t(o)];
    w.value.fetch_add(1, std::memory_order_seq_cst);
    Wake(w);
  }
}

void Start(Direct* d, int me, const std::vector<int>& targets) {
  for (int t : targets) {
    WaitWord& w = d->posts[std::size_t(t) * std::size_t(d->size) + std::size_t(me)];
    const std::uint32_t seen = d->posts_seen[std::size_t(t)];
    // Counters wrap: compare differences.
    WaitFor(w, [seen](std::uint32_t x) { return std::int32_t(x - seen) > 0; });
    d->posts_seen[std::size_t(t)] = seen + 1;
  }
}

void Complete(Direct* d, int me, const std::vector<int>& targets) {
  // seq_cst: every store of the epoch (and the staged runs' publication) is
  // visible before the count moves.
  for (int t : targets) {
    PublishStaged(d, me, t);
    WaitWord& w = d->targets[t].completes;
    w.value.fetch_add(1, std::memory_order_seq_cst);
    Wake(w);
  }
}

bool WaitCompletes(Direct* d, int me, const std::vector<int>& origins, bool block) {
  WaitWord& w = d->targets[me].completes;
  const std::uint32_t base = d->completes_seen;
  const auto expected = std::uint32_t(origins.size());
  // Counters wrap: compare differences.
  auto ready = [base, expected](std::uint32_t x) {
    return std::int32_t(x - base) >= std::int32_t(expected);
  };
  if (block)
    WaitFor(w, ready);
  else if (!ready(w.value.load(std::memory_order_acquire)))
    return false;
  d->completes_seen = base + expected;
  ApplyStaged(d, me, origins);
  return true;
}

}  // namespace nicq::rma::direct
