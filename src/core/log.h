// Logging: one line per event, "nicq[rank] level subsystem: message".
// NICQ_LOG=level[:subsys,subsys]: the listed subsystems log at `level`, the
// others at most warnings (e.g. NICQ_LOG=debug:p2p,offload). Without a list
// every subsystem logs at `level`.
// Log once where an error is first detected; callers above only add context.
#pragma once

#include <cstdarg>

namespace nicq::log {

enum class Level : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

enum Subsys : unsigned {
  kCore = 1u << 0,
  kBoot = 1u << 1,
  kP2p = 1u << 2,
  kFabric = 1u << 3,
  kOffload = 1u << 4,
  kProvider = 1u << 5,
  kColl = 1u << 6,
  kQueue = 1u << 7,
  kApi = 1u << 8,
  kAll = ~0u,
};

// Rank printed in the prefix (-1 before bootstrap).
void SetRank(int rank);
bool Enabled(Level level, unsigned subsys);
void Write(Level level, unsigned subsys, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char* SubsysName(unsigned subsys);

}  // namespace nicq::log

#define NICQ_LOG(level, subsys, ...)                                                   \
  do {                                                                                 \
    if (::nicq::log::Enabled(::nicq::log::Level::level, ::nicq::log::subsys))          \
      ::nicq::log::Write(::nicq::log::Level::level, ::nicq::log::subsys, __VA_ARGS__); \
  } while (0)
