// What a backend gives the triggered-op conformance suite: a "world" of N
// backend instances in one process, wired to each other (PeerId i is
// backend(i)), plus helpers that drive progress the way every test does.
//
// A backend family instantiates the suite with a factory (see
// conformance_suite.h for the instantiation recipe).
#pragma once

#include <sched.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "providers/backend.h"

namespace nicq::conformance {

using offload::CounterId;
using offload::OffloadBackend;

class BackendWorld {
 public:
  virtual ~BackendWorld() = default;
  virtual std::size_t size() const = 0;
  virtual OffloadBackend& backend(std::size_t rank) = 0;
};

struct WorldOptions {
  std::size_t ranks = 2;
  // Trigger slots each backend may use (0: backend default). A factory that
  // cannot limit slots returns nullptr when this is non-zero; the tests that
  // need it then skip.
  std::size_t slot_limit = 0;
};

using WorldFactory = std::function<std::unique_ptr<BackendWorld>(const WorldOptions&)>;

struct BackendUnderTest {
  std::string name;  // gtest parameter name: letters, digits, '_'
  WorldFactory make;
  // Written exclusions (as fabtests' *.exclude): test name (without the
  // suite/parameter prefix) -> why this backend cannot pass it.
  std::map<std::string, std::string> exclusions;
  // Progress rounds a test waits before asserting "nothing happened": enough
  // for a backend with its own progress thread to have acted if it was going to.
  int quiet_rounds = 50;
};

// Short printing keeps ctest names readable ("... # GetParam() = sim").
inline void PrintTo(const BackendUnderTest& b, std::ostream* os) {
  *os << b.name;
}

inline std::string ParamName(const testing::TestParamInfo<BackendUnderTest>& info) {
  return info.param.name;
}

// A world that owns already-created backends and wires them: every
// backend's LocalAddress goes into the table each one receives in SetPeers.
class VectorWorld : public BackendWorld {
 public:
  explicit VectorWorld(std::vector<std::unique_ptr<OffloadBackend>> backends)
      : backends_(std::move(backends)) {}
  // Exchange addresses; call once after construction.
  Status Wire() {
    std::vector<std::vector<std::uint8_t>> addrs(backends_.size());
    for (std::size_t i = 0; i < backends_.size(); ++i) {
      NICQ_RETURN_IF_ERROR(backends_[i]->LocalAddress(addrs[i]));
    }
    for (auto& b : backends_) NICQ_RETURN_IF_ERROR(b->SetPeers(addrs));
    return Status::Ok();
  }
  std::size_t size() const override { return backends_.size(); }
  OffloadBackend& backend(std::size_t rank) override { return *backends_[rank]; }

 private:
  std::vector<std::unique_ptr<OffloadBackend>> backends_;
};

// Progress every backend once; true if any reported progress.
inline bool ProgressAll(BackendWorld& w) {
  bool any = false;
  for (std::size_t i = 0; i < w.size(); ++i) any |= w.backend(i).Progress();
  return any;
}

// Drive progress until pred() holds. Spins briefly, then yields, then
// sleeps (2 shared cores: a backend's own progress thread must get to run).
// The limit only guards against a hang; tests never assert on time.
inline bool DriveUntil(BackendWorld& w, const std::function<bool()>& pred, int limit_s = 20) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(limit_s);
  for (std::uint64_t round = 0;; ++round) {
    if (pred()) return true;
    const bool progressed = ProgressAll(w);
    if (progressed || round < 64) continue;
    if (round < 256) {
      sched_yield();
    } else {
      if (std::chrono::steady_clock::now() > deadline) return pred();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

// Drive progress for a number of rounds, giving threaded backends time to
// act, so that "nothing happened" assertions mean something.
inline void DriveQuietly(BackendWorld& w, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    ProgressAll(w);
    if (i % 8 == 7) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

}  // namespace nicq::conformance
