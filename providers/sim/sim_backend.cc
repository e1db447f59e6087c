#include "providers/sim/sim_backend.h"

#include <cstring>
#include <string>

#include "core/config.h"

namespace nicq::sim {

using offload::CounterId;
using offload::OpKind;
using offload::TriggeredOp;

// The backend's enums and the firmware's are numbered alike; keep them so.
static_assert(static_cast<int>(offload::AtomicOp::kReplace) ==
              static_cast<int>(fwsim::AluOp::kReplace));
static_assert(static_cast<int>(offload::AtomicType::kDouble) ==
              static_cast<int>(fwsim::AluType::kDouble));
static_assert(static_cast<int>(OpKind::kHost) == static_cast<int>(fwsim::CmdKind::kHost));
static_assert(offload::kNoCounter == fwsim::kNone);

std::shared_ptr<SimWorld> SimWorld::Make(const fwsim::LogGP& params, std::size_t nics,
                                         const fwsim::FaultPlan& faults) {
  return std::make_shared<SimWorld>(fwsim::World(params, nics, faults));
}

SimBackend::SimBackend(std::shared_ptr<SimWorld> world, std::uint32_t nic)
    : world_(std::move(world)), nic_(nic) {
  caps_.native_triggers = true;
  caps_.remote_counters = true;
  caps_.atomics = true;
  caps_.withdraws_unfired_ops = true;  // World::FreeCounter cancels what is armed on it
  caps_.max_trigger_slots = world_->fw().SlotLimit(nic);
  caps_.max_counter_value = world_->fw().params().CounterMax();
  for (int op = 0; op <= static_cast<int>(fwsim::AluOp::kReplace); ++op) {
    for (int t = 0; t <= static_cast<int>(fwsim::AluType::kDouble); ++t) {
      if (fwsim::AluSupports(fwsim::AluOp(op), fwsim::AluType(t))) {
        caps_.AllowAtomic(offload::AtomicOp(op), offload::AtomicType(t));
      }
    }
  }
}

void SimBackend::SetSlotLimit(std::size_t n) {
  world_->fw().SetSlotLimit(nic_, n);
  caps_.max_trigger_slots = n;
}

Status SimBackend::LocalAddress(std::vector<std::uint8_t>& out) {
  out.resize(sizeof(nic_));
  std::memcpy(out.data(), &nic_, sizeof(nic_));
  return Status::Ok();
}

Status SimBackend::SetPeers(std::span<const std::vector<std::uint8_t>> addrs) {
  peer_nic_.assign(addrs.size(), fwsim::kNone);
  for (std::size_t i = 0; i < addrs.size(); ++i) {
    if (addrs[i].size() != sizeof(std::uint32_t)) {
      return Error(Code::kArg,
                   "sim SetPeers: address " + std::to_string(i) + " is not a sim address");
    }
    std::memcpy(&peer_nic_[i], addrs[i].data(), sizeof(std::uint32_t));
    if (peer_nic_[i] >= world_->size()) {
      return Error(Code::kArg, "sim SetPeers: address " + std::to_string(i) + " names no NIC");
    }
  }
  return Status::Ok();
}

Status SimBackend::AllocCounters(std::size_t n, CounterId* out) {
  return world_->fw().AllocCounters(nic_, n, out);
}
void SimBackend::FreeCounter(CounterId id) {
  world_->fw().FreeCounter(nic_, id);
}
std::uint64_t SimBackend::ReadCounter(CounterId id) const {
  return world_->fw().ReadCounter(nic_, id);
}
std::uint64_t SimBackend::ReadErrors(CounterId id) const {
  return world_->fw().ReadErrors(nic_, id);
}
Status SimBackend::AddCounter(CounterId id, std::uint64_t value) {
  return world_->fw().AddCounter(nic_, id, value);
}

Status SimBackend::WaitCounter(CounterId id, std::uint64_t value, int /*timeout_ms*/) {
  fwsim::World& w = world_->fw();
  if (!w.ValidCounter(nic_, id)) {
    return Error(Code::kArg, "sim WaitCounter: no counter " + std::to_string(id));
  }
  for (;;) {
    if (w.ReadErrors(nic_, id) != 0) {
      return Error(Code::kOther, "sim WaitCounter: counter " + std::to_string(id) + " of nic " +
                                     std::to_string(nic_) + " has " +
                                     std::to_string(w.ReadErrors(nic_, id)) + " failed op(s)");
    }
    if (w.ReadCounter(nic_, id) >= value) return Status::Ok();
    if (!w.Step()) {
      return Error(Code::kPending, "sim WaitCounter: counter " + std::to_string(id) + " of nic " +
                                       std::to_string(nic_) + " stuck at " +
                                       std::to_string(w.ReadCounter(nic_, id)) + " < " +
                                       std::to_string(value) + " with nothing left to simulate");
    }
  }
}

Status SimBackend::RegisterMemory(void* addr, std::size_t len, CounterId arrival_counter,
                                  offload::MemRegion* out) {
  std::uint64_t key = 0;
  NICQ_RETURN_IF_ERROR(world_->fw().RegisterRegion(nic_, addr, len, arrival_counter, &key));
  out->addr = addr;
  out->len = len;
  out->remote_addr = reinterpret_cast<std::uintptr_t>(addr);
  out->key = key;
  out->handle = nullptr;
  return Status::Ok();
}

Status SimBackend::DeregisterMemory(offload::MemRegion* mr) {
  return world_->fw().DeregisterRegion(nic_, mr->key);
}

Status SimBackend::Post(std::span<const TriggeredOp> ops) {
  std::vector<fwsim::Command>& scratch = world_->scratch;
  if (scratch.size() < ops.size()) scratch.resize(ops.size());  // grows to the largest batch once
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TriggeredOp& op = ops[i];
    fwsim::Command& c = scratch[i];
    c.kind = static_cast<fwsim::CmdKind>(op.kind);
    c.aop = static_cast<fwsim::AluOp>(op.aop);
    c.atype = static_cast<fwsim::AluType>(op.atype);
    c.trigger = op.trigger;
    c.threshold = op.threshold;
    c.completion = op.completion;
    c.completion_inc = op.completion_inc;
    c.peer = op.peer;
    if (op.peer >= 0 && !peer_nic_.empty()) {
      c.peer = static_cast<std::size_t>(op.peer) < peer_nic_.size()
                   ? static_cast<std::int32_t>(peer_nic_[op.peer])
                   : -1;
    }
    c.src = op.local_buf;
    c.dst = op.local_rbuf;
    c.bytes = op.bytes;
    c.tag = op.tag;
    c.remote_addr = op.remote_addr;
    c.remote_key = op.remote_key;
    c.target_counter = op.target_counter;
    c.value = op.value;
    c.host_fn = op.host_fn;
    c.host_arg = op.host_arg;
  }
  return world_->fw().Post(nic_, std::span<const fwsim::Command>(scratch.data(), ops.size()));
}

Status SimBackend::Cancel(CounterId trigger) {
  if (!world_->fw().ValidCounter(nic_, trigger)) {
    return Error(Code::kArg, "sim Cancel: no counter " + std::to_string(trigger));
  }
  world_->fw().Cancel(nic_, trigger);
  return Status::Ok();
}

Status SimBackend::Flush() {
  fwsim::World& w = world_->fw();
  w.Cancel(nic_, fwsim::kNone);
  while (w.InFlight(nic_) > 0 && w.Step()) {
  }
  return Status::Ok();
}

bool SimBackend::Progress() {
  return world_->fw().Run(world_->progress_batch) > 0;
}

std::size_t SimBackend::SlotsInUse() const {
  return world_->fw().SlotsInUse(nic_);
}

std::size_t SimBackend::FreeSlots() const {
  const std::size_t used = SlotsInUse(), max = world_->fw().SlotLimit(nic_);
  return used >= max ? 0 : max - used;
}

Status CreateSimBackend(const offload::BackendOptions& options,
                        std::unique_ptr<offload::OffloadBackend>* out) {
  std::shared_ptr<SimWorld> world;
  if (options.context != nullptr) {
    world = *static_cast<std::shared_ptr<SimWorld>*>(options.context);
  } else if (options.world_size == 1) {
    // A private loopback world timed by NICQ_SIM_CONFIG (preset or file).
    const std::string model = config::GetString("NICQ_SIM_CONFIG");
    fwsim::LogGP params;
    Status s = fwsim::PresetLogGP(model, &params);
    if (!s.ok()) s = fwsim::LoadLogGP(model, &params);
    if (!s.ok()) return s.WithContext("sim backend: NICQ_SIM_CONFIG");
    world = SimWorld::Make(params, 1);
  } else {
    return Error(Code::kUnsupportedOperation,
                 "sim backend: world_size " + std::to_string(options.world_size) +
                     " needs a shared SimWorld (all ranks in one process)");
  }
  if (options.rank < 0 || static_cast<std::size_t>(options.rank) >= world->size()) {
    return Error(Code::kArg, "sim backend: rank " + std::to_string(options.rank) + " has no NIC");
  }
  auto b = std::make_unique<SimBackend>(world, static_cast<std::uint32_t>(options.rank));
  if (options.slot_budget) b->SetSlotLimit(options.slot_budget);
  *out = std::move(b);
  return Status::Ok();
}

}  // namespace nicq::sim

// In libnicq.so (layers linked whole-archive) "sim" registers itself; tests
// linking the layer archives call RegisterSimBackend().
NICQ_REGISTER_BACKEND(
    sim, "sim", 0, &nicq::sim::CreateSimBackend,
    "deterministic NIC simulator (firmware-sim), all ranks in one process; for tests");

namespace nicq::offload {
void RegisterSimBackend() {
  RegisterBackend(
      "sim", 0, &sim::CreateSimBackend,
      "deterministic NIC simulator (firmware-sim), all ranks in one process; for tests");
}
}  // namespace nicq::offload
