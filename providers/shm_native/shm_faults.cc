// A peer process of the shm backend that dies: a lock it held stays set
// (ShmMutex::Lock reports it after a nap), a counter only it would have
// moved never moves (WaitCounter looks at the peers after a silent nap).
// Either way the backend remembers the death, fails every later call with
// kProcFailed naming the process, and counts an error on each of this
// process's counters so that no wait on one outlives the job.
#include <chrono>
#include <string>

#include "providers/shm_native/shm_backend.h"

namespace nicq::shmtrig {

namespace {
constexpr std::int64_t kLivenessPeriodNs = 250 * 1000 * 1000;

std::int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

bool ShmTriggerBackend::LockArea(ShmMutex& m) {
  // A lock still held by the process already found dead fails at once.
  const int known = dead_pid_.load(std::memory_order_relaxed);
  if (known != 0 && (m.word.load(std::memory_order_relaxed) & ~ShmMutex::kWaiters) ==
                        static_cast<std::uint32_t>(known))
    return false;
  int dead = 0;
  if (m.Lock(my_pid_, &dead)) return true;
  NotePeerDeath(dead, true);
  return false;
}

void ShmTriggerBackend::NotePeerDeath(int pid, bool held_a_lock) {
  int none = 0;
  if (!dead_pid_.compare_exchange_strong(none, pid, std::memory_order_acq_rel)) return;
  dead_held_lock_.store(held_a_lock, std::memory_order_relaxed);
  // Without our area's lock (the dead process may hold it): `errors` is
  // atomic, and a counter freed meanwhile only gets a stray error.
  AreaHeader* h = Own();
  for (std::uint32_t i = 0; i < h->counters_used && i < h->n_counters; ++i)
    if (own_.counters()[i].allocated.load(std::memory_order_relaxed)) RecordError(self_, i);
}

Status ShmTriggerBackend::DeadPeerError(const char* call) const {
  const int pid = dead_pid_.load(std::memory_order_acquire);
  std::string who = "pid " + std::to_string(pid);
  for (std::uint32_t a = 0; a < areas_.size(); ++a)
    if (areas_[a].pid == pid) who = "rank " + std::to_string(a) + " (" + who + ")";
  return Error(Code::kProcFailed, std::string("shm ") + call + ": process " + who +
                                      (dead_held_lock_.load(std::memory_order_relaxed)
                                           ? " died holding a lock of the shared trigger areas"
                                           : " has exited"));
}

bool ShmTriggerBackend::PeersAlive() {
  if (PeerDied()) return false;
  const std::int64_t now = SteadyNs();
  std::int64_t due = liveness_due_ns_.load(std::memory_order_relaxed);
  if (now < due || !liveness_due_ns_.compare_exchange_strong(due, now + kLivenessPeriodNs,
                                                             std::memory_order_relaxed))
    return true;
  for (std::uint32_t a = 0; a < areas_.size(); ++a) {
    if (a == self_ || ProcessAlive(areas_[a].pid)) continue;
    NotePeerDeath(areas_[a].pid, false);
    return false;
  }
  return true;
}

bool ShmTriggerBackend::HoldAreaLockForTest(std::uint32_t area) {
  return area < areas_.size() && LockArea(A(area).hdr()->lock);
}

}  // namespace nicq::shmtrig
