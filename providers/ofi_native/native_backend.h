// NativeBackend: the triggered-op contract on libfabric triggered operations
// (fi_control(FI_QUEUE_WORK) deferred work, FI_RMA_EVENT remote counters).
// Written for cxi, runs here on sockets. The provider fires ops by itself;
// no host thread is involved except for kHost ops, which no NIC can run
// (they wait in a host-side list that Progress()/WaitCounter() drive).
//
// Mapping (docs/offload-backends.md has the reasoning):
//  * a CounterId is a fid_cntr; its 64-bit logical value is base + hardware
//    value, so a provider with narrow counters (sockets: signed 32-bit) can
//    be rebased when no trigger is pending on it;
//  * each counter owns an 8-byte doorbell region bound to it (fi_mr_bind,
//    FI_REMOTE_WRITE): a peer's write there is a remote counter add, and
//    user regions are bound to their arrival counter the same way;
//  * every data op gets a private "slot counter" as its deferred-work
//    completion counter, plus a chained FI_OP_CNTR_ADD that adds
//    completion_inc to the op's real completion counter. The slot counter
//    tells exactly when the op's descriptors may be reused, and lets
//    completion_inc be any value although the NIC counts completions by one;
//  * trigger slots (deferred-work entries) are budgeted: a Post that would
//    exceed the budget returns kAgain, never touching the NIC.
#pragma once

#include <rdma/fi_trigger.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "providers/backend.h"
#include "providers/common/backend_registry.h"
#include "providers/ofi_common/mr_key.h"
#include "providers/ofi_common/ofi_endpoint.h"

namespace nicq::ofi {

struct NativeConfig {
  std::string provider = "sockets";
  std::size_t num_counters = 4096;
  std::size_t slot_budget = 0;      // NIC trigger entries (0: provider default)
  std::uint64_t counter_limit = 0;  // largest hardware counter value (0: provider default)
  int node_ranks = 1;               // processes of this node sharing the NIC's trigger resources
};

class NativeBackend final : public offload::OffloadBackend {
 public:
  static Status Create(const NativeConfig& config, std::unique_ptr<NativeBackend>* out);
  ~NativeBackend() override;

  const char* Name() const override { return "native"; }
  const offload::Capabilities& Caps() const override { return caps_; }
  Status LocalAddress(std::vector<std::uint8_t>& out) override;
  Status SetPeers(std::span<const std::vector<std::uint8_t>> addrs) override;
  Status AllocCounters(std::size_t n, offload::CounterId* out) override;
  void FreeCounter(offload::CounterId id) override;
  std::uint64_t ReadCounter(offload::CounterId id) const override;
  std::uint64_t ReadErrors(offload::CounterId id) const override;
  Status WaitCounter(offload::CounterId id, std::uint64_t value, int timeout_ms) override;
  Status AddCounter(offload::CounterId id, std::uint64_t value) override;
  Status RegisterMemory(void* addr, std::size_t len, offload::CounterId arrival_counter,
                        offload::MemRegion* out) override;
  Status DeregisterMemory(offload::MemRegion* mr) override;
  Status Post(std::span<const offload::TriggeredOp> ops) override;
  Status Cancel(offload::CounterId trigger) override;
  Status Flush() override;
  bool Progress() override;
  std::uint64_t WorkRequests() const override {
    return work_requests_.load(std::memory_order_relaxed);
  }
  std::size_t SlotsInUse() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return SlotsInUseLocked();
  }
  // Deferred-work entries on the NIC (up to two per slot), for nicq_info.
  std::size_t NicEntriesInUse() const { return entries_in_use_.load(); }
  Status CheckOps(std::span<const offload::TriggeredOp> ops) const override;

 private:
  struct Counter;
  struct Record;
  struct HostOp {
    offload::TriggeredOp op;  // a copy: callers need not keep descriptors alive
    std::uint64_t seq;
  };

  explicit NativeBackend(const NativeConfig& config);
  Status Init();
  Status BudgetDeferredWork();
  Status OpenCounter(offload::CounterId id);
  std::uint64_t HwLimit() const { return hw_limit_; }
  std::uint64_t Logical(const Counter& c) const;
  // Rebases counter `id` where due; kAgain while `threshold` lies beyond its
  // hardware window and triggers still wait on it (a later post fits).
  Status FitThresholdLocked(offload::CounterId id, std::uint64_t threshold);
  // Hardware threshold for `threshold` on counter `id` (after FitThresholdLocked).
  std::uint64_t HwThreshold(offload::CounterId id, std::uint64_t threshold) const;
  std::size_t EntriesFor(const offload::TriggeredOp& op) const;
  bool Armed(const offload::TriggeredOp& op) const;
  Status PostOne(const offload::TriggeredOp& op);
  Status ValidateLocked(std::span<const offload::TriggeredOp> ops) const;
  Status QueueWork(fi_deferred_work* w, const char* what);
  Record* TakeRecord();
  // Returns records whose ops are done to the pool; nudges stalled triggers.
  std::size_t ReclaimLocked();
  // Whether an op posted on counter `id` may still be waiting for it: its
  // trigger (or, behind the arm hop, its arm) has not been seen to fire.
  bool HasUnfiredTriggerLocked(offload::CounterId id) const;
  std::size_t SlotsInUseLocked() const { return budget_ - free_records_.size() + host_ops_.size(); }
  void DrainNeutralizedLocked(offload::CounterId id);
  std::size_t NeutralizeLocked(offload::CounterId trigger);
  void ReadCqErrorsLocked();
  bool RunHostOps();

  NativeConfig config_;
  offload::Capabilities caps_;
  std::unique_ptr<OfiEndpoint> ep_;
  std::uint64_t hw_limit_ = 0;
  bool cxi_ = false;  // provider restrictions (CheckOps)
  // Gated data ops go behind an arm hop (native_internal.h) so Cancel can
  // disarm them: on sockets, whose copy-at-queue / read-at-fire behaviour
  // this relies on; elsewhere (cxi: trigger entries are scarce) they are
  // posted directly and Cancel refuses unfired data ops.
  bool arm_data_ops_ = false;
  std::size_t budget_ = 0;
  // This rank's share of the provider's deferred-work queue (0: the
  // provider does not report one). A plan needs a few entries at least.
  std::size_t entry_budget_ = 0;
  static constexpr std::size_t kMinEntries = 8;
  MrKeyLayout keys_;

  std::unique_ptr<Counter[]> counters_;
  std::unique_ptr<std::uint64_t[]> doorbells_;  // one 8-byte doorbell per counter
  std::vector<offload::CounterId> free_counters_;
  fid_cntr* zero_cntr_ = nullptr;  // never incremented: trigger for "fire at once"

  std::unique_ptr<Record[]> records_;
  std::vector<Record*> free_records_;
  Record* busy_head_ = nullptr;  // records whose ops may still be on the NIC
  std::atomic<std::size_t> entries_in_use_{0};

  // Slot counters of disarmed (cancelled) data ops, closed with the backend;
  // capacity reserved at Init (a full list makes Cancel refuse).
  std::vector<fid_cntr*> retired_slots_;
  std::vector<HostOp> host_ops_;  // sorted by (trigger, threshold, seq); capacity reserved
  std::uint64_t host_seq_ = 0;
  std::atomic<bool> running_host_{false};

  std::vector<std::uint64_t> peer_doorbells_;
  std::atomic<std::uint32_t> next_key_{1};
  mutable std::mutex mu_;
  std::atomic<std::uint64_t> work_requests_{0};  // fi_control(FI_QUEUE_WORK) calls
};

Status CreateNativeBackend(const offload::BackendOptions& options,
                           std::unique_ptr<offload::OffloadBackend>* out);

}  // namespace nicq::ofi
