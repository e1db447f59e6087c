// Spin briefly, then yield, then sleep: the one waiting rhythm of the ofi
// backends. Two cores here are shared by several ranks and their progress
// threads, so no loop may spin without bound.
#pragma once

#include <sched.h>
#include <time.h>

#include <cstdint>

#include "core/cpu_relax.h"

namespace nicq::ofi {

class Backoff {
 public:
  // spins: busy iterations before yielding; yields: sched_yield calls before
  // sleeping; sleeps grow from 20 us to max_sleep_us.
  explicit Backoff(int spins = 200, int yields = 50, int max_sleep_us = 1000)
      : spins_(spins), yields_(yields), max_sleep_us_(max_sleep_us) {}

  // Returns true once the caller has reached the sleeping phase (it may then
  // prefer a real blocking call of its own).
  bool Pause() {
    if (n_ < spins_) {
      ++n_;
      CpuRelax();
      return false;
    }
    if (n_ < spins_ + yields_) {
      ++n_;
      sched_yield();
      return false;
    }
    timespec ts{0, static_cast<long>(sleep_us_) * 1000};
    nanosleep(&ts, nullptr);
    if (sleep_us_ < max_sleep_us_)
      sleep_us_ = sleep_us_ * 2 > max_sleep_us_ ? max_sleep_us_ : sleep_us_ * 2;
    return true;
  }
  bool sleeping() const { return n_ >= spins_ + yields_; }
  void Reset() {
    n_ = 0;
    sleep_us_ = 20;
  }

 private:
  int spins_, yields_, max_sleep_us_;
  int n_ = 0;
  int sleep_us_ = 20;
};

// Milliseconds on the monotonic clock (deadlines of WaitCounter/Flush only).
inline std::int64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Nanoseconds on the monotonic clock (spin and idle bounds of the progress
// threads).
inline std::int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace nicq::ofi
