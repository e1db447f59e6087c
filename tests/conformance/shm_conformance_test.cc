// The triggered-op conformance suite against the shm backend: N backends
// in one process, each with its own area, wired through LocalAddress and
// SetPeers as the runtime wires processes (the areas are mapped through
// /proc/self/fd, so every instance sees every other one's counters).
#include "providers/shm_native/shm_backend.h"
#include "tests/conformance/conformance_suite.h"

namespace nicq::conformance {
namespace {

std::unique_ptr<BackendWorld> MakeShmWorld(const WorldOptions& o) {
  std::vector<std::unique_ptr<OffloadBackend>> backends;
  for (std::size_t r = 0; r < o.ranks; ++r) {
    shmtrig::ShmOptions opts;
    if (o.slot_limit) opts.sizes.nodes = static_cast<std::uint32_t>(o.slot_limit);
    std::unique_ptr<shmtrig::ShmTriggerBackend> b;
    if (!shmtrig::ShmTriggerBackend::Open(opts, &b).ok()) return nullptr;
    backends.push_back(std::move(b));
  }
  auto vw = std::make_unique<VectorWorld>(std::move(backends));
  if (!vw->Wire().ok()) return nullptr;
  return vw;
}

BackendUnderTest Shm() {
  return {"shm", MakeShmWorld, {}, 4};
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Shm, TriggeredOpConformance, ::testing::Values(Shm()), ParamName);

}  // namespace nicq::conformance
