// Lock-epoch staging of small puts on the one-node direct path (direct.h).
// A put to another process's MPI_Win_create memory costs a system call
// (about 1.2-1.5 us on the 2-core VM, nearly all of a lock/put/unlock
// epoch) because the origin cannot map that memory. When the target is
// inside MPI anyway (its progress pass ran in the last kListenFreshNs), the
// origin instead copies the put into the pair's slot in the control block;
// the unlock or flush publishes the slot and the target's next progress
// pass copies it into its window. A passive target need not be inside MPI,
// so the origin waits for that at most NICQ_RMA_LOCK_STAGE_NS and then
// takes the slot back and writes the runs itself: the slot's state word,
// moved once from kSlotStaged by whichever side gets there first, makes
// every put land exactly once, and no origin waits on a target that left
// MPI for longer than the bound.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "core/config.h"
#include "core/cpu_relax.h"
#include "core/log.h"
#include "core/progress_hooks.h"
#include "rma/direct.h"

namespace nicq::rma::direct {
namespace {

// Slots exist up to this many ranks: size^2 slots of 576 bytes stay within
// about 600 KiB of (untouched until used) shared memory.
constexpr int kLockStageMaxRanks = 32;
// A target whose progress pass last ran longer ago than this is taken to
// be outside MPI (computing, or asleep in a blocking wait): staging to it
// would only cost the bound. A polling pass refreshes the stamp at most
// every kListenRefreshNs, so the line origins read does not bounce on
// every pass.
constexpr std::int64_t kListenFreshNs = 20'000;
constexpr std::int64_t kListenRefreshNs = 2'000;
// After a staged put waited out the bound, the origin stages nothing to
// that target for this many bounds: a target that stopped answering then
// costs at most 1/kBackoffBounds of the time it is written to.
constexpr std::int64_t kBackoffBounds = 64;
// Polls between clock reads while the origin waits for the target.
constexpr int kPollsPerClock = 16;

std::int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

enum class Mode { kOff, kAuto, kAlways };

Mode StageMode() {
  static const Mode mode = [] {
    const std::string v = config::GetString("NICQ_RMA_LOCK_STAGE");
    if (v == "off" || v == "0") return Mode::kOff;
    if (v == "always") return Mode::kAlways;
    return Mode::kAuto;
  }();
  return mode;
}

std::int64_t BoundNs() {
  static const std::int64_t ns =
      std::max<std::int64_t>(0, config::GetInt("NICQ_RMA_LOCK_STAGE_NS"));
  return ns;
}

LockSlot& Slot(Direct* d, int origin, int target) {
  return d->lock_slots[std::size_t(target) * std::size_t(d->size) + std::size_t(origin)];
}

// The windows whose target side this process's progress pass serves.
struct Registry {
  std::mutex mu;
  std::vector<Direct*> windows;
  std::atomic<int> live{0};  // windows.size(), read without the lock by every pass
};
Registry& Reg() {
  static Registry* r = new Registry();  // never destroyed: hooks may run at exit
  return *r;
}

// The target's progress pass: stamps "I am polling" and applies every
// staged slot addressed to this process. A pass that finds the registry
// busy (a window being freed, or another thread's pass) skips this turn.
bool ApplyStagedPuts(void*) {
  Registry& reg = Reg();
  if (reg.live.load(std::memory_order_relaxed) == 0) return false;
  std::unique_lock<std::mutex> lock(reg.mu, std::try_to_lock);
  if (!lock.owns_lock() || reg.windows.empty()) return false;
  const std::int64_t now = NowNs();
  bool applied = false;
  for (Direct* d : reg.windows) {
    LockStageTarget& me = d->lock_targets[d->me];
    if (now - d->listen_written >= kListenRefreshNs) {
      me.listen_ns.store(now, std::memory_order_relaxed);
      d->listen_written = now;
    }
    if (me.staged.load(std::memory_order_acquire) == 0) continue;
    char* window = d->local_base[std::size_t(d->me)];
    for (int o = 0; o < d->size; ++o) {
      if (o == d->me) continue;
      LockSlot& slot = Slot(d, o, d->me);
      std::uint32_t expect = kSlotStaged;
      if (slot.state.load(std::memory_order_relaxed) != kSlotStaged ||
          !slot.state.compare_exchange_strong(expect, kSlotApplying, std::memory_order_acquire))
        continue;
      ForEachStaged(slot.runs, slot.bytes, [&](const StageRun& run, const char* data) {
        std::memcpy(window + run.offset, data, std::size_t(run.length));
      });
      slot.state.store(kSlotApplied, std::memory_order_release);
      me.staged.fetch_sub(1, std::memory_order_relaxed);
      applied = true;
    }
  }
  return applied;
}

// A waiter about to block (in the CQ, up to milliseconds): origins should
// stop staging to this process until its next pass.
bool StopListening(int) {
  Registry& reg = Reg();
  if (reg.live.load(std::memory_order_relaxed) == 0) return false;
  std::unique_lock<std::mutex> lock(reg.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  for (Direct* d : reg.windows) {
    d->lock_targets[d->me].listen_ns.store(0, std::memory_order_relaxed);
    d->listen_written = 0;
  }
  return false;
}

// Waits, spinning, then yielding, then napping, until the target finished
// applying a slot it took (it is running its pass; only descheduling can
// make this long).
void AwaitApplied(LockSlot& slot) {
  for (int i = 0; slot.state.load(std::memory_order_acquire) != kSlotApplied; ++i) {
    if (i < 100) {
      CpuRelax();
    } else if (i < 1100) {
      sched_yield();
    } else {
      const timespec nap{0, 50'000};
      nanosleep(&nap, nullptr);
    }
  }
}

}  // namespace

std::size_t LockStageBytes(int size) {
  if (size < 2 || size > kLockStageMaxRanks) return 0;
  const std::size_t n = std::size_t(size);
  return n * sizeof(LockStageTarget) + n * n * sizeof(LockSlot);
}

void BindLockStage(Direct* d, char* at, int size) {
  const std::size_t n = std::size_t(size);
  d->lock_targets = reinterpret_cast<LockStageTarget*>(at);
  d->lock_slots = reinterpret_cast<LockSlot*>(at + n * sizeof(LockStageTarget));
  d->lock_used.assign(n, 0);
  d->lock_skip_until.assign(n, 0);
}

void StartLockStage(Direct* d) {
  if (!d->lock_slots || StageMode() == Mode::kOff) return;
  static const bool registered = [] {
    if (!progress::RegisterHook(ApplyStagedPuts, nullptr)) return false;
    (void)progress::RegisterSleeper(StopListening);
    return true;
  }();
  if (!registered) {
    // Without the pass nobody would apply a staged put: origins would pay
    // the bound on every one. The stamp stays 0, so none stages here.
    NICQ_LOG(kWarn, kCore, "no room for the one-sided staging progress hook");
    return;
  }
  std::lock_guard<std::mutex> lock(Reg().mu);
  Reg().windows.push_back(d);
  Reg().live.store(int(Reg().windows.size()), std::memory_order_relaxed);
}

void StopLockStage(Direct* d) {
  if (d->lock_staged_puts > 0)
    NICQ_LOG(kInfo, kCore,
             "lock-epoch puts staged: %llu, applied by their target: %llu batches, "
             "taken back: %llu batches",
             static_cast<unsigned long long>(d->lock_staged_puts),
             static_cast<unsigned long long>(d->lock_applied),
             static_cast<unsigned long long>(d->lock_reclaimed));
  std::lock_guard<std::mutex> lock(Reg().mu);
  auto& v = Reg().windows;
  v.erase(std::remove(v.begin(), v.end(), d), v.end());
  Reg().live.store(int(v.size()), std::memory_order_relaxed);
}

Status StageLockPut(Window* w, const Target& t, const char* in, bool* staged) {
  *staged = false;
  Direct* d = w->direct;
  const std::size_t r = std::size_t(t.rank);
  const std::int64_t bytes = t.type->size * t.count;
  if (!d->lock_slots || StageMode() == Mode::kOff || t.rank == w->rank || d->local_base[r] ||
      bytes > kLockStagePutMax)
    return Status::Ok();
  const std::int64_t base = PartOffset(w, t);
  const std::size_t need = StagedBytes(t, base);
  if (d->lock_used[r] == 0) {
    // A new batch: only to a target that is polling now, and not right
    // after it let one wait out the bound.
    if (StageMode() != Mode::kAlways) {
      const std::int64_t now = NowNs();
      const std::int64_t heard = d->lock_targets[r].listen_ns.load(std::memory_order_relaxed);
      if (heard == 0 || now - heard > kListenFreshNs || now < d->lock_skip_until[r])
        return Status::Ok();
    }
  } else if (d->lock_used[r] + need > kLockSlotBytes) {
    // The slot is full: what is in it lands first, so puts keep their order.
    NICQ_RETURN_IF_ERROR(FinishLockStage(w, t.rank));
    return Status::Ok();
  }
  if (need > kLockSlotBytes) return Status::Ok();
  PackStaged(t, base, in, Slot(d, w->rank, t.rank).runs + d->lock_used[r]);
  if (d->lock_used[r] == 0) ++d->lock_batches;
  d->lock_used[r] += std::uint32_t(need);
  ++d->lock_staged_puts;
  *staged = true;
  return Status::Ok();
}

Status FinishLockStage(Window* w, int target) {
  Direct* d = w->direct;
  if (!d->lock_slots) return Status::Ok();
  std::uint32_t& used = d->lock_used[std::size_t(target)];
  if (used == 0) return Status::Ok();
  --d->lock_batches;
  LockSlot& slot = Slot(d, w->rank, target);
  LockStageTarget& t = d->lock_targets[target];
  slot.bytes = used;
  used = 0;
  t.staged.fetch_add(1, std::memory_order_relaxed);
  slot.state.store(kSlotStaged, std::memory_order_seq_cst);
  const std::int64_t bound = BoundNs();
  const std::int64_t start = NowNs();
  for (int i = 1;; ++i) {
    if (slot.state.load(std::memory_order_acquire) == kSlotApplied) break;
    if (i % kPollsPerClock == 0 && NowNs() - start >= bound) break;
    if (bound == 0) break;
    CpuRelax();
  }
  std::uint32_t expect = kSlotStaged;
  Status st;
  if (slot.state.compare_exchange_strong(expect, kSlotFree, std::memory_order_acquire)) {
    // Taken back: the target will not touch it; write the runs here.
    t.staged.fetch_sub(1, std::memory_order_relaxed);
    st = WriteRuns(w, target, slot.runs, slot.bytes);
    ++d->lock_reclaimed;
    d->lock_skip_until[std::size_t(target)] = NowNs() + kBackoffBounds * bound;
    return st;
  }
  // The target took it (kSlotApplying) or is done: it lands by its hand.
  AwaitApplied(slot);
  slot.state.store(kSlotFree, std::memory_order_relaxed);
  ++d->lock_applied;
  return st;
}

}  // namespace nicq::rma::direct
