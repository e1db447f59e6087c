// The triggered-op conformance suite against the simulator backend.
#include "providers/sim/sim_backend.h"
#include "tests/conformance/conformance_suite.h"

namespace nicq::conformance {
namespace {

class SimTestWorld : public BackendWorld {
 public:
  explicit SimTestWorld(const WorldOptions& o)
      : world_(sim::SimWorld::Make(fwsim::LogGP{}, o.ranks)) {
    for (std::size_t r = 0; r < o.ranks; ++r) {
      backends_.push_back(std::make_unique<sim::SimBackend>(world_, static_cast<std::uint32_t>(r)));
      if (o.slot_limit) backends_.back()->SetSlotLimit(o.slot_limit);
    }
  }
  std::size_t size() const override { return backends_.size(); }
  OffloadBackend& backend(std::size_t r) override { return *backends_[r]; }

 private:
  std::shared_ptr<sim::SimWorld> world_;
  std::vector<std::unique_ptr<sim::SimBackend>> backends_;
};

// Also exercise the generic wiring path (LocalAddress/SetPeers) that the
// fabric backends use: same suite, NICs reached through the peer table.
std::unique_ptr<BackendWorld> MakeWiredSimWorld(const WorldOptions& o) {
  auto world = sim::SimWorld::Make(fwsim::LogGP{}, o.ranks);
  std::vector<std::unique_ptr<OffloadBackend>> backends;
  for (std::size_t r = 0; r < o.ranks; ++r) {
    auto b = std::make_unique<sim::SimBackend>(world, static_cast<std::uint32_t>(r));
    if (o.slot_limit) b->SetSlotLimit(o.slot_limit);
    backends.push_back(std::move(b));
  }
  auto vw = std::make_unique<VectorWorld>(std::move(backends));
  if (!vw->Wire().ok()) return nullptr;
  return vw;
}

BackendUnderTest Sim() {
  return {"sim", [](const WorldOptions& o) { return std::make_unique<SimTestWorld>(o); }, {}, 4};
}
BackendUnderTest WiredSim() {
  return {"sim_wired", MakeWiredSimWorld, {}, 4};
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Sim, TriggeredOpConformance, ::testing::Values(Sim(), WiredSim()),
                         ParamName);

}  // namespace nicq::conformance
