// NICQ_LOG=level:subsys,...: the listed subsystems log at the level, the
// others keep warnings and errors; an unknown subsystem name is reported.
// The setting is read once, at the first log call, so it is set here first.
#include <cstdio>
#include <cstdlib>

#include "core/log.h"

using nicq::log::Enabled;
using nicq::log::Level;
namespace log = nicq::log;

static int failures = 0;

static void Expect(bool got, bool want, const char* what) {
  if (got != want) {
    std::fprintf(stderr, "FAIL: %s: %d, want %d\n", what, got, want);
    ++failures;
  }
}

int main() {
  setenv("NICQ_LOG", "debug:p2p,offload,bogus", 1);
  Expect(Enabled(Level::kDebug, log::kP2p), true, "debug p2p");
  Expect(Enabled(Level::kDebug, log::kOffload), true, "debug offload");
  Expect(Enabled(Level::kTrace, log::kP2p), false, "trace p2p");
  Expect(Enabled(Level::kInfo, log::kCore), false, "info core (not listed)");
  Expect(Enabled(Level::kDebug, log::kColl), false, "debug coll (not listed)");
  Expect(Enabled(Level::kWarn, log::kCore), true, "warn core (not listed)");
  Expect(Enabled(Level::kError, log::kQueue), true, "error queue");
  NICQ_LOG(kDebug, kP2p, "a p2p debug line %d", 42);
  if (failures) return 1;
  std::fprintf(stderr, "PASS\n");
  return 0;
}
