// The "sim" offload backend: one OffloadBackend per simulated NIC of a
// shared fwsim::World, so everything above the backend interface (plans,
// collectives, queues) can be tested with many ranks in one process, with
// deterministic timing and injected faults.
//
// Threading: the simulation is single-threaded by design (determinism);
// all backends of one SimWorld must be driven from one thread. Progress()
// on any of them advances the whole world.
#pragma once

#include <memory>
#include <vector>

#include "firmware-sim/world.h"
#include "providers/backend.h"
#include "providers/common/backend_registry.h"

namespace nicq::sim {

class SimWorld {
 public:
  static std::shared_ptr<SimWorld> Make(const fwsim::LogGP& params, std::size_t nics,
                                        const fwsim::FaultPlan& faults = fwsim::FaultPlan{});
  fwsim::World& fw() { return world_; }
  std::size_t size() const { return world_.size(); }
  // Events one Progress() call runs at most (keeps callers responsive).
  std::size_t progress_batch = 4096;
  // Post() translation buffer shared by every backend of this world (they
  // run on one thread); grows to the largest batch once.
  std::vector<fwsim::Command> scratch;

  explicit SimWorld(fwsim::World w) : world_(std::move(w)) {}

 private:
  fwsim::World world_;
};

class SimBackend final : public offload::OffloadBackend {
 public:
  SimBackend(std::shared_ptr<SimWorld> world, std::uint32_t nic);

  const char* Name() const override { return "sim"; }
  const offload::Capabilities& Caps() const override { return caps_; }
  std::uint32_t nic() const { return nic_; }
  SimWorld& world() { return *world_; }

  Status LocalAddress(std::vector<std::uint8_t>& out) override;
  Status SetPeers(std::span<const std::vector<std::uint8_t>> addrs) override;

  Status AllocCounters(std::size_t n, offload::CounterId* out) override;
  void FreeCounter(offload::CounterId id) override;
  std::uint64_t ReadCounter(offload::CounterId id) const override;
  std::uint64_t ReadErrors(offload::CounterId id) const override;
  // Runs the simulation (not wall-clock time) until the counter reaches
  // `value`, an error lands on it, or nothing is left to simulate (a stuck
  // plan: kPending naming the counter). timeout_ms is ignored.
  Status WaitCounter(offload::CounterId id, std::uint64_t value, int timeout_ms) override;
  Status AddCounter(offload::CounterId id, std::uint64_t value) override;

  Status RegisterMemory(void* addr, std::size_t len, offload::CounterId arrival_counter,
                        offload::MemRegion* out) override;
  Status DeregisterMemory(offload::MemRegion* mr) override;

  Status Post(std::span<const offload::TriggeredOp> ops) override;
  Status Cancel(offload::CounterId trigger) override;
  Status Flush() override;
  bool Progress() override;
  std::size_t SlotsInUse() const override;
  std::size_t FreeSlots() const override;

  void SetSlotLimit(std::size_t n);
  // Pretend counters wrap above `v` (as sockets' 32-bit ones), so plans
  // rebase: for tests of counter-wrap handling. The simulator itself keeps 64 bits.
  void SetMaxCounterValue(std::uint64_t v) { caps_.max_counter_value = v; }

 private:
  std::shared_ptr<SimWorld> world_;
  std::uint32_t nic_;
  offload::Capabilities caps_;
  std::vector<std::uint32_t> peer_nic_;  // PeerId -> NIC; empty: identity
  std::vector<fwsim::Command> scratch_;  // translation buffer, grows to the largest batch
};

// Factory registered as "sim": BackendOptions::context is a
// std::shared_ptr<SimWorld>*
// shared by all ranks (nullptr with world_size 1: a private one-NIC world).
Status CreateSimBackend(const offload::BackendOptions& options,
                        std::unique_ptr<offload::OffloadBackend>* out);

}  // namespace nicq::sim
