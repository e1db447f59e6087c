#include "core/log.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/config.h"

namespace nicq::log {
namespace {

const char* kSubsysNames[] = {"core",     "boot", "p2p",   "fabric", "offload",
                              "provider", "coll", "queue", "api"};

// `level` applies to the subsystems in `mask`; the others keep warnings and
// errors, so narrowing the log to one subsystem never hides a warning.
struct Settings {
  Level level = Level::kWarn;
  unsigned mask = kAll;
};
constexpr unsigned kNumSubsys = sizeof(kSubsysNames) / sizeof(kSubsysNames[0]);

Level ParseLevel(const std::string& s) {
  if (s == "error") return Level::kError;
  if (s == "warn" || s.empty()) return Level::kWarn;
  if (s == "info") return Level::kInfo;
  if (s == "debug") return Level::kDebug;
  if (s == "trace") return Level::kTrace;
  std::fprintf(stderr, "nicq: warning: unknown NICQ_LOG level '%s', using warn\n", s.c_str());
  return Level::kWarn;
}

Settings Parse() {
  Settings st;
  std::string v = config::GetString("NICQ_LOG");
  auto colon = v.find(':');
  st.level = ParseLevel(v.substr(0, colon));
  if (colon != std::string::npos) {
    st.mask = 0;
    std::string list = v.substr(colon + 1);
    size_t pos = 0;
    while (pos <= list.size()) {
      size_t comma = list.find(',', pos);
      std::string name =
          list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      bool known = name == "all";
      for (unsigned i = 0; i < kNumSubsys; ++i)
        if (name == kSubsysNames[i]) st.mask |= 1u << i, known = true;
      if (name == "all") st.mask = kAll;
      if (!known)
        std::fprintf(stderr,
                     "nicq: warning: unknown NICQ_LOG subsystem '%s' (known: core, boot, p2p, "
                     "fabric, offload, provider, coll, queue, api, all)\n",
                     name.c_str());
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  return st;
}

const Settings& Get() {
  static const Settings st = Parse();
  return st;
}

std::atomic<int> g_rank{-1};
const char* kLevelNames[] = {"error", "warn", "info", "debug", "trace"};

}  // namespace

void SetRank(int rank) {
  g_rank.store(rank, std::memory_order_relaxed);
}

bool Enabled(Level level, unsigned subsys) {
  const Settings& st = Get();
  if (level == Level::kError) return true;
  Level limit = (st.mask & subsys) != 0 ? st.level : std::min(st.level, Level::kWarn);
  return static_cast<int>(level) <= static_cast<int>(limit);
}

const char* SubsysName(unsigned subsys) {
  for (unsigned i = 0; i < kNumSubsys; ++i)
    if (subsys == (1u << i)) return kSubsysNames[i];
  return "all";
}

void Write(Level level, unsigned subsys, const char* fmt, ...) {
  char body[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(body, sizeof(body), fmt, ap);
  va_end(ap);
  // One fprintf per line so lines from threads and ranks do not interleave.
  std::fprintf(stderr, "nicq[%d] %s %s: %s\n", g_rank.load(std::memory_order_relaxed),
               kLevelNames[static_cast<int>(level)], SubsysName(subsys), body);
}

}  // namespace nicq::log
