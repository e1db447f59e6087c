// AgentBell: a process's doorbell in memory that every process of its node
// maps (the runtime places one per process in its shm inbox header). A
// software agent with no wait object to block on (the emulated backend's
// progress thread over libfabric's shm, whose CQ no peer's write signals)
// sleeps on `word`; a same-node peer that just handed it work (a token, a
// put, a send) rings it: one atomic add, and a futex wake only while someone
// sleeps on it, so a busy agent costs its peers no system call.
//
// The sleeper, without losing a ring:
//   seen = Arm(bell);        // counted among the sleepers, word read
//   if (no work, polled after Arm) Sleep(bell, seen, timeout_us);
//   Disarm(bell);
// A ringer adds to the word before it reads the sleeper count, the sleeper
// counts itself before it polls for work (all sequentially consistent): the
// ringer either sees it asleep and wakes it, or the work it delivered before
// ringing is there when the sleeper polls; a ring between Arm and the wait
// moves the word off `seen`, and the wait returns at once.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace nicq::offload {

struct alignas(64) AgentBell {
  std::atomic<std::uint32_t> word{0};
  std::atomic<std::uint32_t> sleepers{0};  // threads asleep (or about to be) on `word`
};

namespace bell_detail {
// Shared futex (no FUTEX_PRIVATE_FLAG): the word is written by other processes.
inline long Futex(std::atomic<std::uint32_t>* w, int op, std::uint32_t val, const timespec* ts) {
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(w), op, val, ts, nullptr, 0);
}
}  // namespace bell_detail

// Tells the bell's sleepers that work was delivered to them.
inline void RingBell(AgentBell* b) {
  b->word.fetch_add(1, std::memory_order_seq_cst);
  if (b->sleepers.load(std::memory_order_seq_cst) == 0) return;
  bell_detail::Futex(&b->word, FUTEX_WAKE, INT_MAX, nullptr);
}

inline std::uint32_t ArmBell(AgentBell* b) {
  b->sleepers.fetch_add(1, std::memory_order_seq_cst);
  return b->word.load(std::memory_order_seq_cst);
}

// True when woken by a ring (or the word moved before the wait), false when
// the timeout or a signal ended it.
inline bool SleepOnBell(AgentBell* b, std::uint32_t seen, int timeout_us) {
  const timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000L};
  if (bell_detail::Futex(&b->word, FUTEX_WAIT, seen, &ts) == 0) return true;
  return b->word.load(std::memory_order_relaxed) != seen;
}

inline void DisarmBell(AgentBell* b) {
  b->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace nicq::offload
