#include "providers/ofi_native/native_backend.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "core/config.h"
#include "core/log.h"
#include "providers/ofi_common/atomic_map.h"
#include "providers/ofi_common/backoff.h"
#include "providers/ofi_common/mr_key.h"
#include "providers/ofi_common/ofi_error.h"
#include "providers/ofi_native/native_internal.h"

namespace nicq::ofi {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

NativeBackend::NativeBackend(const NativeConfig& config) : config_(config) {}

Status NativeBackend::Create(const NativeConfig& config, std::unique_ptr<NativeBackend>* out) {
  std::unique_ptr<NativeBackend> b(new NativeBackend(config));
  NICQ_RETURN_IF_ERROR(b->Init().WithContext("native backend on " + config.provider));
  *out = std::move(b);
  return Status::Ok();
}

Status NativeBackend::Init() {
  EndpointOptions o;
  o.provider = config_.provider;
  o.triggers = true;
  // Doorbell keys name counters, so peers must be able to compute them.
  o.client_keys = true;
  NICQ_RETURN_IF_ERROR(OfiEndpoint::Open(o, &ep_));
  const std::string prov = ep_->provider_name();
  // sockets' flaws (counter-op cycles, 32-bit counters) also hold under a
  // persona that runs on it; its copy-at-queue behaviour (the arm hop) does
  // not, since the persona keeps cxi's deferred-work semantics.
  const bool sockets = prov == "sockets";
  const bool sockets_core = ep_->CoreProvider() == "sockets";
  // The cxi family (the NIC and its test persona) shares cxi's deferred-work
  // rules (CheckOps).
  cxi_ = prov.rfind("cxi", 0) == 0;
  keys_ = MrKeyLayout(ep_->mr_key_bytes());
  if (config_.num_counters > keys_.MaxCounters())
    return Error(Code::kUnsupportedOperation,
                 "the provider's " + std::to_string(ep_->mr_key_bytes()) +
                     "-byte MR keys cannot name " + std::to_string(config_.num_counters) +
                     " counters (NICQ_OFFLOAD_COUNTERS)");
  // sockets keeps counters in a signed 32-bit atomic.
  hw_limit_ = config_.counter_limit ? config_.counter_limit
                                    : (sockets_core ? INT32_MAX : (std::uint64_t{1} << 48) - 1);
  NICQ_RETURN_IF_ERROR(BudgetDeferredWork());
  caps_.native_triggers = true;
  caps_.trigger_thread_naps = sockets;
  caps_.counter_op_cycles_deadlock = sockets_core;
  caps_.max_remote_add = kMaxDoorbellWrites;
  arm_data_ops_ = sockets;
  caps_.withdraws_unfired_ops = arm_data_ops_;
  caps_.remote_counters = true;
  ep_->QueryAtomics(&caps_);
  caps_.max_trigger_slots = budget_;
  // Counters are presented as logical 64-bit values: HwThreshold rebases
  // the hardware counter under them (an atomic subtract, which keeps
  // increments that land meanwhile, ready tokens from peers included), so
  // plans never reset a counter themselves; a reset would lose a peer's
  // early token for the next epoch.
  caps_.max_counter_value = ~std::uint64_t{0};
  caps_.max_msg_bytes = ep_->info()->ep_attr->max_msg_size;

  counters_.reset(new Counter[config_.num_counters]);
  doorbells_.reset(new std::uint64_t[config_.num_counters]());
  free_counters_.reserve(config_.num_counters);
  for (std::size_t i = config_.num_counters; i > 0; --i)
    free_counters_.push_back(static_cast<CounterId>(i - 1));
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  attr.wait_obj = FI_WAIT_UNSPEC;
  NICQ_RETURN_IF_ERROR(
      Check(fi_cntr_open(ep_->domain(), &attr, &zero_cntr_, nullptr), "fi_cntr_open", "zero"));
  records_.reset(new Record[budget_]);
  free_records_.reserve(budget_);
  for (std::size_t i = budget_; i > 0; --i) {
    Record& r = records_[i - 1];
    NICQ_RETURN_IF_ERROR(
        Check(fi_cntr_open(ep_->domain(), &attr, &r.slot_cntr, nullptr), "fi_cntr_open", "slot"));
    free_records_.push_back(&r);
  }
  host_ops_.reserve(budget_);
  retired_slots_.reserve(4 * budget_);
  return Status::Ok();
}

// The provider's deferred-work queue is shared by the node's processes
// (fi_cxi(7), "Triggered Operation": exhausting it is undefined): this
// process takes its share and never posts past it. A depth the provider
// does not report leaves the configured budget alone.
Status NativeBackend::BudgetDeferredWork() {
  bool known = false;
  const std::size_t depth = ep_->DeferredWorkDepth(&known);
  const std::size_t ranks = std::max(1, config_.node_ranks);
  entry_budget_ = known ? depth / ranks : 0;
  if (known && entry_budget_ < kMinEntries)
    return Error(Code::kUnsupportedOperation,
                 "deferred work queue depth " + std::to_string(depth) + " of provider " +
                     ep_->provider_name() + " shared by " + std::to_string(ranks) +
                     " rank(s) of this node leaves " + std::to_string(entry_budget_) +
                     " entries per rank (at least " + std::to_string(kMinEntries) + " needed)");
  budget_ = config_.slot_budget ? config_.slot_budget : 1024;
  if (known) budget_ = std::min(budget_, entry_budget_);
  if (known)
    NICQ_LOG(kInfo, kProvider, "native: deferred work queue depth %zu / %zu rank(s): %zu entries",
             depth, ranks, entry_budget_);
  return Status::Ok();
}

NativeBackend::~NativeBackend() {
  if (ep_ && records_) {  // a backend whose Init failed has nothing to flush
    Status s = Flush();
    if (!s.ok()) NICQ_LOG(kWarn, kProvider, "native: %s", s.message().c_str());
  }
  if (counters_) {
    for (std::size_t i = 0; i < config_.num_counters; ++i) {
      if (counters_[i].doorbell_mr) fi_close(&counters_[i].doorbell_mr->fid);
    }
  }
  ep_.reset();  // endpoint first: counters stay bound to it until it closes
  if (records_)
    for (std::size_t i = 0; i < budget_; ++i) {
      if (records_[i].slot_cntr) fi_close(&records_[i].slot_cntr->fid);
      if (records_[i].spare_slot) fi_close(&records_[i].spare_slot->fid);
    }
  for (fid_cntr* c : retired_slots_) fi_close(&c->fid);
  if (counters_)
    for (std::size_t i = 0; i < config_.num_counters; ++i)
      if (counters_[i].cntr) fi_close(&counters_[i].cntr->fid);
  if (zero_cntr_) fi_close(&zero_cntr_->fid);
}

Status NativeBackend::LocalAddress(std::vector<std::uint8_t>& out) {
  WireAddress w;
  NICQ_RETURN_IF_ERROR(ep_->Name(w.name));
  w.doorbell_base = ep_->RemoteBase(doorbells_.get());
  return EncodeWire(w, out);
}

Status NativeBackend::SetPeers(std::span<const std::vector<std::uint8_t>> addrs) {
  std::vector<WireAddress> peers(addrs.size());
  for (std::size_t i = 0; i < addrs.size(); ++i)
    NICQ_RETURN_IF_ERROR(
        DecodeWire(addrs[i], &peers[i]).WithContext("native SetPeers: peer " + std::to_string(i)));
  NICQ_RETURN_IF_ERROR(ep_->InsertPeers(peers));
  std::lock_guard<std::mutex> lock(mu_);
  peer_doorbells_.resize(peers.size());
  for (std::size_t i = 0; i < peers.size(); ++i) peer_doorbells_[i] = peers[i].doorbell_base;
  return Status::Ok();
}

Status NativeBackend::OpenCounter(CounterId id) {
  Counter& c = counters_[id];
  if (c.cntr == nullptr) {
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    attr.wait_obj = FI_WAIT_UNSPEC;
    NICQ_RETURN_IF_ERROR(Check(fi_cntr_open(ep_->domain(), &attr, &c.cntr, nullptr), "fi_cntr_open",
                               "counter " + std::to_string(id)));
    // The counter's doorbell: a remote write to it counts as one arrival.
    NICQ_RETURN_IF_ERROR(ep_->RegisterMr(&doorbells_[id], sizeof(std::uint64_t), FI_REMOTE_WRITE,
                                         keys_.DoorbellKey(id), &c.doorbell_mr, c.cntr)
                             .WithContext("doorbell of counter " + std::to_string(id)));
  } else {
    NICQ_RETURN_IF_ERROR(Check(fi_cntr_set(c.cntr, 0), "fi_cntr_set", "reused counter"));
    fi_cntr_seterr(c.cntr, 0);
  }
  c.base.store(0);
  // pending is not reset: records of the counter's previous life that
  // FreeCounter neutralized may still await reclaim, and each will take
  // its count back (a reset made it go negative, which blocked rebasing).
  c.in_use = true;
  return Status::Ok();
}

Status NativeBackend::AllocCounters(std::size_t n, CounterId* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (n > free_counters_.size())
    return Error(Code::kNoMem, "native AllocCounters(n=" + std::to_string(n) + "): only " +
                                   std::to_string(free_counters_.size()) +
                                   " counters left (NICQ_OFFLOAD_COUNTERS)");
  for (std::size_t i = 0; i < n; ++i) {
    const CounterId id = free_counters_.back();
    NICQ_RETURN_IF_ERROR(OpenCounter(id));
    free_counters_.pop_back();
    out[i] = id;
  }
  return Status::Ok();
}

// Freeing cancels what is armed on the counter (docs/triggered-semantics.md
// 1.4). A counter whose NIC list still holds ops that cannot be neutralized
// (data ops) is quarantined rather than handed out again, where they would
// fire when the new owner's counter grows.
void NativeBackend::FreeCounter(CounterId id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (id >= config_.num_counters || !counters_[id].in_use) return;
  host_ops_.erase(std::remove_if(host_ops_.begin(), host_ops_.end(),
                                 [&](const HostOp& h) { return h.op.trigger == id; }),
                  host_ops_.end());
  ReclaimLocked();
  const std::size_t stuck = NeutralizeLocked(id);
  if (stuck == 0) DrainNeutralizedLocked(id);
  counters_[id].in_use = false;
  if (stuck == 0)
    free_counters_.push_back(id);
  else
    NICQ_LOG(kWarn, kProvider, "native FreeCounter(%u): %zu data op(s) still armed; not reused", id,
             stuck);
}

std::uint64_t NativeBackend::Logical(const Counter& c) const {
  std::uint64_t hw = fi_cntr_read(c.cntr);
  // A 32-bit provider counter comes back sign-extended.
  if (hw_limit_ <= INT32_MAX) hw &= 0x7fffffffu;
  return c.base.load(std::memory_order_acquire) + hw;
}

std::uint64_t NativeBackend::ReadCounter(CounterId id) const {
  if (id >= config_.num_counters || counters_[id].cntr == nullptr) return 0;
  return Logical(counters_[id]);
}

std::uint64_t NativeBackend::ReadErrors(CounterId id) const {
  if (id >= config_.num_counters || counters_[id].cntr == nullptr) return 0;
  return fi_cntr_readerr(counters_[id].cntr);
}

Status NativeBackend::AddCounter(CounterId id, std::uint64_t value) {
  if (id >= config_.num_counters || !counters_[id].in_use)
    return Error(Code::kArg,
                 "native AddCounter: counter " + std::to_string(id) + " is not allocated");
  // The provider's add fires what it reached on this thread (sockets:
  // sock_cntr_add runs the counter's trigger list under its lock; a fired
  // data op signals sockets' progress thread: docs/offload-backends.md).
  const int ret = fi_cntr_add(counters_[id].cntr, value);
  if (ret != 0) [[unlikely]]
    return Check(ret, "fi_cntr_add", "counter " + std::to_string(id));  // message only then
  RunHostOps();
  return Status::Ok();
}

Status NativeBackend::WaitCounter(CounterId id, std::uint64_t value, int timeout_ms) {
  if (id >= config_.num_counters || !counters_[id].in_use)
    return Error(Code::kArg,
                 "native WaitCounter: counter " + std::to_string(id) + " is not allocated");
  const std::int64_t deadline = timeout_ms >= 0 ? NowMs() + timeout_ms : 0;
  // Poll with sleeps rather than fi_cntr_wait: sockets' wait with a finite
  // timeout returns at once, and blocking forever would miss host ops and
  // stalled triggers that only Progress() revives.
  Backoff backoff(200, 20, 500);
  for (;;) {
    if (Logical(counters_[id]) >= value) return Status::Ok();
    const std::uint64_t errors = ReadErrors(id);
    if (errors > 0)
      return Error(Code::kOther, "native WaitCounter(counter " + std::to_string(id) + ", " +
                                     std::to_string(value) + "): " + std::to_string(errors) +
                                     " op(s) failed on it");
    if (timeout_ms >= 0 && NowMs() >= deadline)
      return Error(Code::kPending, "native WaitCounter(counter " + std::to_string(id) + ", " +
                                       std::to_string(value) + "): timed out after " +
                                       std::to_string(timeout_ms) + " ms at value " +
                                       std::to_string(Logical(counters_[id])));
    if (backoff.sleeping() ? Progress() : RunHostOps())
      backoff.Reset();
    else
      backoff.Pause();
  }
}

Status NativeBackend::RegisterMemory(void* addr, std::size_t len, CounterId arrival_counter,
                                     offload::MemRegion* out) {
  if (arrival_counter != kNoCounter &&
      (arrival_counter >= config_.num_counters || !counters_[arrival_counter].in_use))
    return Error(Code::kArg, "native RegisterMemory: arrival_counter " +
                                 std::to_string(arrival_counter) + " is not allocated");
  fid_mr* mr = nullptr;
  fid_cntr* arrival = arrival_counter == kNoCounter ? nullptr : counters_[arrival_counter].cntr;
  NICQ_RETURN_IF_ERROR(
      ep_->RegisterMr(addr, len, FI_REMOTE_WRITE | FI_REMOTE_READ | FI_READ | FI_WRITE,
                      keys_.UserKey(arrival_counter, next_key_.fetch_add(1)), &mr, arrival)
          .WithContext("native RegisterMemory"));
  out->addr = addr;
  out->len = len;
  out->remote_addr = ep_->RemoteBase(addr);
  out->key = fi_mr_key(mr);
  out->handle = mr;
  return Status::Ok();
}

Status NativeBackend::DeregisterMemory(offload::MemRegion* mr) {
  if (mr == nullptr || mr->handle == nullptr) return Status::Ok();
  Status s = Check(fi_close(&static_cast<fid_mr*>(mr->handle)->fid), "fi_close", "memory region");
  mr->handle = nullptr;
  return s;
}

}  // namespace nicq::ofi
