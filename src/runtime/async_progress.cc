// The host progress thread (async_progress.h).
#include "runtime/async_progress.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "core/config.h"
#include "core/log.h"
#include "core/progress_hooks.h"
#include "runtime/runtime.h"
#include "runtime/runtime_state.h"

namespace nicq::rt {
namespace {

using detail::NowNs;
using detail::S;

constexpr int kMaxProbes = 8;
// A pass that did something is followed by this much yielding polling
// (the next step of a schedule usually arrives within a round trip).
constexpr std::int64_t kActiveSpinNs = 20'000;
// Naps while work is pending but idle: 20 us doubling to 200 us.
constexpr long kFirstNapNs = 20'000, kMaxNapNs = 200'000;
// After an application thread's last progress pass, this long without
// polling.
constexpr std::int64_t kQuietNs = 150'000;
// Naps while quiet: not short, since every wake-up preempts a rank on a
// shared core (20 us naps doubled a 1 MiB allreduce's blocking latency).
constexpr long kQuietNapNs = 200'000;
// Nothing pending for this long: sleep on the futex until kicked.
constexpr std::int64_t kIdleBeforeSleepNs = 20'000'000;
// The futex sleep is bounded anyway, so a missed wake (none is known) costs
// at most this.
constexpr long kSleepTimeoutNs = 100'000'000;

struct Async {
  std::atomic<AsyncBusyFn> probes[kMaxProbes] = {};
  std::atomic<int> nprobes{0};
  std::mutex start_mu;  // first start and stop only
  std::thread thread;
  std::atomic<bool> stop{false};
  std::atomic<std::uint32_t> kicks{0};  // the futex word
  std::atomic<bool> sleeping{false};
  // In the long sleep of an idle thread (not a nap while work is listed).
  std::atomic<bool> idle_sleeping{false};
  std::atomic<int> enabled{-1};  // -1: not decided yet
};

Async& A() {
  static auto* a = new Async;  // never destroyed: exit must not join
  return *a;
}

bool Busy() {
  Async& a = A();
  const int n = a.nprobes.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    AsyncBusyFn fn = a.probes[i].load(std::memory_order_relaxed);
    if (fn && fn()) return true;
  }
  return false;
}

// One pass, like an application thread's MPI_Test under THREAD_MULTIPLE,
// except that it never waits for the engine lock: a thread holding it is
// progressing the engine already.
bool PassOnce() {
  auto& s = S();
  int n = 0;
  if (s.mu.try_lock()) {
    n = s.engine.Poll();
    s.mu.unlock();
  }
  if (progress::PollAll()) ++n;
  return n > 0;
}

// Sleeps up to `ns`, or until a start kicks. `unless_busy`: not at all
// when host work is listed (work that arrived between the last pass and
// `sleeping` was kicked before `seen` was read or is visible to Busy() now).
void NapUntilKicked(Async& a, long ns, bool unless_busy = false) {
  const std::uint32_t seen = a.kicks.load(std::memory_order_acquire);
  a.sleeping.store(true, std::memory_order_seq_cst);
  if (!(unless_busy && Busy()) && !a.stop.load(std::memory_order_acquire)) {
    timespec ts{0, ns};
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&a.kicks), FUTEX_WAIT_PRIVATE, seen, &ts,
            nullptr, 0);
  }
  a.sleeping.store(false, std::memory_order_relaxed);
}

void Run() {
  Async& a = A();
  // Short naps mean nothing under the default 50 us timer slack.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  std::int64_t last_work = NowNs();
  long nap = kFirstNapNs;
  while (!a.stop.load(std::memory_order_acquire)) {
    // An application thread waiting in MPI progresses everything itself:
    // polling beside it only contends for the locks and the core, and each
    // step the thread takes is one the waiter finds missing (it then backs
    // off into its own sleeps). So the thread keeps quiet while a waiter
    // passes (at least every 80 us on a manual-progress provider), and
    // takes over kQuietNs after the last pass (the application computes).
    const bool app_waiting = NowNs() - S().app_pass_ns.load(std::memory_order_relaxed) < kQuietNs;
    if (!app_waiting && PassOnce()) {
      last_work = NowNs();
      nap = kFirstNapNs;
      continue;
    }
    const std::int64_t idle = NowNs() - last_work;
    if (!app_waiting && idle < kActiveSpinNs) {
      sched_yield();
      continue;
    }
    if (!Busy() && idle >= kIdleBeforeSleepNs) {
      a.idle_sleeping.store(true, std::memory_order_seq_cst);
      NapUntilKicked(a, kSleepTimeoutNs, /*unless_busy=*/true);
      a.idle_sleeping.store(false, std::memory_order_relaxed);
      last_work = NowNs();
      nap = kFirstNapNs;
      continue;
    }
    if (app_waiting) {
      // A start (the waiter returned and began the next operation) kicks:
      // a plain nap here cost the first 200 us of every compute phase.
      NapUntilKicked(a, kQuietNapNs);
      nap = kFirstNapNs;  // the waiter may return to compute at any moment
      continue;
    }
    // Kickable: a plain nanosleep here outlasted the next start by up to
    // 200 us, and the iterations it overlapped got no background progress.
    NapUntilKicked(a, nap);
    // While a schedule is listed, a nap is time its next message waits:
    // naps stay short (20 us) then; idle ones grow to kMaxNapNs.
    const long cap = Busy() ? kFirstNapNs : kMaxNapNs;
    nap = nap * 2 > cap ? cap : nap * 2;
  }
}

bool DecideEnabled() {
  const std::int64_t v = config::GetInt("NICQ_PROGRESS_THREAD");
  if (v >= 0) return v != 0;
  // Auto: only when every rank of the node can have a second core.
  const int local = S().boot ? S().boot->LocalSize() : 1;
  return detail::CpusAllowed() >= 2 * detail::RanksSharingCpus(local);
}

// Whether the thread is wanted (NICQ_PROGRESS_THREAD and cores), decided once.
bool Enabled() {
  Async& a = A();
  std::lock_guard<std::mutex> lock(a.start_mu);
  if (a.enabled.load(std::memory_order_relaxed) < 0)
    a.enabled.store(DecideEnabled() ? 1 : 0, std::memory_order_relaxed);
  return a.enabled.load(std::memory_order_relaxed) == 1;
}

bool Running() {
  return S().async_running.load(std::memory_order_acquire);
}

}  // namespace

void AddAsyncBusyProbe(AsyncBusyFn fn) {
  Async& a = A();
  std::lock_guard<std::mutex> lock(a.start_mu);
  const int n = a.nprobes.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (a.probes[i].load(std::memory_order_relaxed) == fn) return;
  if (n == kMaxProbes) {
    // A lost probe lets the thread sleep while that layer's work waits.
    NICQ_LOG(kError, kCore, "host progress thread: more than %d busy probes; one is ignored",
             kMaxProbes);
    return;
  }
  a.probes[n].store(fn, std::memory_order_relaxed);
  a.nprobes.store(n + 1, std::memory_order_release);
}

void KickAsyncProgress() {
  Async& a = A();
  if (Running()) {
    // The application just started an operation, so it is not in a wait
    // loop now (its next pass, if it waits, stamps again): the thread may
    // take over at once instead of keeping quiet for kQuietNs.
    S().app_pass_ns.store(0, std::memory_order_relaxed);
    a.kicks.fetch_add(1, std::memory_order_seq_cst);
    if (a.sleeping.load(std::memory_order_seq_cst))
      syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&a.kicks), FUTEX_WAKE_PRIVATE, 1, nullptr,
              nullptr, 0);
    return;
  }
  if (a.enabled.load(std::memory_order_relaxed) == 0 || !Initialized()) return;
  if (!Enabled()) return;
  std::lock_guard<std::mutex> lock(a.start_mu);
  if (Running() || a.stop.load(std::memory_order_relaxed)) return;
  // From now on the engine is shared with the thread: every caller locks.
  // Ordered before the thread's first pass by the thread's creation.
  S().locking.store(true, std::memory_order_relaxed);
  a.thread = std::thread(Run);
  S().async_running.store(true, std::memory_order_release);
  NICQ_LOG(kInfo, kCore, "host progress thread started (engine lock on from now)");
}

void WakeIdleAsyncProgress() {
  Async& a = A();
  if (!Running()) {
    KickAsyncProgress();  // starts it on first use
    return;
  }
  // Ordered after the caller's busy-probe update (both sequentially
  // consistent): either the sleeper's probe check sees the work, or this
  // load sees the sleeper and the kick below changes its futex word.
  if (!a.idle_sleeping.load(std::memory_order_seq_cst)) return;
  a.kicks.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&a.kicks), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
}

bool AsyncProgressRunning() {
  return Running();
}

void StopAsyncProgress() {
  Async& a = A();
  std::lock_guard<std::mutex> lock(a.start_mu);
  if (!Running()) return;
  a.stop.store(true, std::memory_order_release);
  a.kicks.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&a.kicks), FUTEX_WAKE_PRIVATE, 1, nullptr,
          nullptr, 0);
  a.thread.join();
  S().async_running.store(false, std::memory_order_release);
}

}  // namespace nicq::rt
