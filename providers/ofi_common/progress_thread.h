// A progress thread for the ofi backends: runs `step` (returns true when it
// did something) in a loop that spins briefly, yields, then blocks in
// `block` (e.g. fi_cq_sread with a wait object) until woken or a short
// timeout. It is bound with hwloc to a core away from the one the
// application thread runs on, when the process may use more than one.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

#include "core/status.h"

namespace nicq::ofi {

class ProgressThread {
 public:
  using Step = std::function<bool()>;
  // Blocks up to timeout_ms (returns early when there may be work); must
  // return promptly after Wake().
  using Block = std::function<void(int timeout_ms)>;
  using Wake = std::function<void()>;

  ProgressThread() = default;
  ~ProgressThread() { Stop(); }

  Status Start(Step step, Block block, Wake wake, int spin_us);
  void Stop();
  bool running() const { return thread_.joinable(); }
  // The calling thread is this progress thread. Its id is published by the
  // thread itself: thread_ is still being assigned by Start while the new
  // thread already runs its first step.
  bool on_thread() const {
    return std::this_thread::get_id() == id_.load(std::memory_order_relaxed);
  }
  // The PU it was bound to (-1: not bound).
  int bound_pu() const { return bound_pu_.load(); }
  // In its loop polling (not blocked in Block): it will see new work within
  // microseconds.
  bool awake() const { return awake_.load(std::memory_order_seq_cst); }
  // Stop() was called: a wait inside `step` or `block` should end.
  bool stopping() const { return stop_.load(std::memory_order_relaxed); }

  // NICQ_PROGRESS_THREAD: 1 on, 0 off, -1 on when the process may use two
  // processing units per rank of its node (`local_ranks`).
  static bool WantedByConfig(int local_ranks);

 private:
  void Run(int spin_us);
  void BindAwayFromApp(int app_pu);

  Step step_;
  Block block_;
  Wake wake_;
  std::atomic<bool> stop_{false};
  std::atomic<int> bound_pu_{-1};
  std::atomic<bool> awake_{false};
  std::atomic<std::thread::id> id_{};
  std::thread thread_;
};

}  // namespace nicq::ofi
