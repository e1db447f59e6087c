// NativeBackend: reclaiming descriptors of finished ops, reviving triggers
// that stalled on EAGAIN, host ops, Cancel and Flush.
#include <algorithm>

#include "core/config.h"
#include "core/log.h"
#include "providers/ofi_common/backoff.h"
#include "providers/ofi_common/ofi_error.h"
#include "providers/ofi_native/native_internal.h"

namespace nicq::ofi {

using offload::OpKind;
using offload::TriggeredOp;

namespace {
constexpr std::uint64_t kSlotRebaseAt = std::uint64_t{1} << 30;

std::uint64_t HwRead(fid_cntr* c, bool narrow) {
  std::uint64_t v = fi_cntr_read(c);
  return narrow ? (v & 0x7fffffffu) : v;
}
}  // namespace

// A record is done when its slot counter reached its target (data op) or
// its trigger reached its threshold (counter op, which completes as it
// fires). fi_cntr_add(counter, 0) then serves as a barrier: sockets fires a
// counter's triggers holding that counter's lock, so once the add returns
// no firing that reads the record is still running.
// Deferred work reports success only on counters, but some failures (a
// truncated receive) arrive as CQ error entries naming the op's context.
void NativeBackend::ReadCqErrorsLocked() {
  fi_cq_data_entry entries[8];
  ssize_t n;
  while ((n = fi_cq_read(ep_->cq(), entries, 8)) > 0) {
  }
  if (n != -FI_EAVAIL) return;
  fi_cq_err_entry err{};
  while (fi_cq_readerr(ep_->cq(), &err, 0) > 0) {
    const auto* base = reinterpret_cast<const char*>(records_.get());
    const auto* ctx = static_cast<const char*>(err.op_context);
    if (ctx >= base && ctx < base + budget_ * sizeof(Record)) {
      Record& r = records_[(ctx - base) / sizeof(Record)];
      if (static_cast<void*>(&r.work[r.armed ? 1 : 0].context) == err.op_context)
        r.cq_failed = true;
    }
    NICQ_LOG(kWarn, kProvider, "native: error completion: %s", fi_strerror(err.err));
    err = {};
  }
}

std::size_t NativeBackend::ReclaimLocked() {
  const bool narrow = hw_limit_ <= INT32_MAX;
  ReadCqErrorsLocked();
  std::size_t freed = 0;
  Record** link = &busy_head_;
  while (Record* r = *link) {
    bool done = false, failed = false;
    if (r->disarmed) {
      // Cancelled before it fired: done once its arm (now adding 0) has
      // fired; until then sockets may still read the record's descriptors.
      done = HwRead(r->trigger_cntr, narrow) >= r->hw_threshold;
    } else if (r->is_data) {
      done = HwRead(r->slot_cntr, narrow) >= r->slot_target;
      if (!done) {
        const std::uint64_t errors = fi_cntr_readerr(r->slot_cntr);
        failed = errors > r->slot_errors || r->cq_failed;
        r->slot_errors = errors;
      }
    } else {
      done = HwRead(r->trigger_cntr, narrow) >= r->hw_threshold;
    }
    if (!done && !failed) {
      // sockets stops scanning a trigger list at the first EAGAIN until the
      // counter changes again: a reached trigger whose op has not completed
      // may be such a stall, and adding 0 makes it rescan.
      if (HwRead(r->trigger_cntr, narrow) >= r->hw_threshold) fi_cntr_add(r->trigger_cntr, 0);
      if (r->armed && HwRead(r->slot_cntr, narrow) + 1 >= r->slot_target)
        fi_cntr_add(r->slot_cntr, 0);  // armed; the data op itself may have stalled
      link = &r->next;
      continue;
    }
    fi_cntr_add(r->is_data && !r->disarmed ? r->slot_cntr : r->trigger_cntr, 0);  // barrier
    if (r->disarmed) {
      // The disarmed data op stays on the old slot counter's list: the
      // record goes on with the spare counter; the old one is closed with
      // the backend (closing it now could free entries sockets still scans).
      retired_slots_.push_back(r->slot_cntr);
      r->slot_cntr = r->spare_slot;
      r->spare_slot = nullptr;
      r->disarmed = false;
      r->armed = false;
    }
    *link = r->next;
    entries_in_use_.fetch_sub(r->entries);
    if (r->trigger != kNoCounter) counters_[r->trigger].pending.fetch_sub(1);
    if (failed) {
      // The op failed: its completion counter records an error and nothing
      // chained on it fires. Its chained entry still waits on the slot
      // counter, so the record is retired rather than reused.
      if (r->completion != kNoCounter) fi_cntr_adderr(counters_[r->completion].cntr, 1);
      NICQ_LOG(kError, kProvider, "native: a triggered op failed; its record is retired");
      continue;
    }
    if (r->is_data && r->slot_target >= kSlotRebaseAt) fi_cntr_set(r->slot_cntr, 0);
    r->armed = false;
    r->cq_failed = false;
    free_records_.push_back(r);
    ++freed;
  }
  return freed;
}

// An armed record's trigger has fired once its arm moved the slot counter
// (slot_target - 1). A disarmed one's arm adds 0 and an unarmed data op
// shows nothing until it completes (and sockets may have reached its
// threshold without firing it, after an EAGAIN): both count as waiting.
// A counter op fires and completes at once: reclaim already took those.
bool NativeBackend::HasUnfiredTriggerLocked(CounterId id) const {
  if (counters_[id].pending.load() == 0) return false;
  const bool narrow = hw_limit_ <= INT32_MAX;
  for (const Record* r = busy_head_; r; r = r->next) {
    if (r->trigger != id) continue;
    if (!r->armed || r->disarmed) return true;
    if (HwRead(r->slot_cntr, narrow) + 1 < r->slot_target) return true;
  }
  return false;
}

// Host ops run in (trigger, threshold, posting) order, outside the lock, by
// one thread at a time.
bool NativeBackend::RunHostOps() {
  bool did = false;
  for (;;) {
    if (host_ops_.empty() || running_host_.exchange(true)) return did;
    constexpr std::size_t kBatch = 16;
    TriggeredOp ready[kBatch];
    std::size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = host_ops_.begin(); it != host_ops_.end() && n < kBatch;) {
        const TriggeredOp& op = it->op;
        const bool reached =
            op.trigger == kNoCounter || Logical(counters_[op.trigger]) >= op.threshold;
        if (reached) {
          ready[n++] = op;
          it = host_ops_.erase(it);
        } else {
          // Later ops on this counter have higher thresholds: skip to the next counter.
          const CounterId t = op.trigger;
          while (it != host_ops_.end() && it->op.trigger == t) ++it;
        }
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      ready[i].host_fn(ready[i].host_arg);
      if (ready[i].completion != kNoCounter)
        fi_cntr_add(counters_[ready[i].completion].cntr, ready[i].completion_inc);
    }
    running_host_.store(false);
    if (n == 0) return did;
    did = true;
  }
}

// libfabric cannot withdraw a trigger-list entry, but sockets reads a
// counter op's value when it fires: unfired counter adds, completion reports
// and the arms of data ops on `trigger` (kNoCounter: every counter) are
// turned into adds of 0. Returns how many unfired ops could not be
// neutralized (counter sets).
std::size_t NativeBackend::NeutralizeLocked(CounterId trigger) {
  const bool narrow = hw_limit_ <= INT32_MAX;
  std::size_t stuck = 0;
  for (Record* r = busy_head_; r != nullptr; r = r->next) {
    if (trigger != kNoCounter && r->trigger != trigger) continue;
    if (r->disarmed || HwRead(r->trigger_cntr, narrow) >= r->hw_threshold) continue;  // fired
    if ((r->is_data && !r->armed) || r->work[0].op_type == FI_OP_CNTR_SET) {
      ++stuck;
      continue;
    }
    if (r->armed) {
      // The replacement slot counter is opened now (not on the posting path).
      fi_cntr_attr attr{};
      attr.events = FI_CNTR_EVENTS_COMP;
      attr.wait_obj = FI_WAIT_UNSPEC;
      // Cold path (a free or cancel): the list grows rather than leave the
      // op armed.
      if (retired_slots_.size() == retired_slots_.capacity())
        retired_slots_.reserve(2 * retired_slots_.capacity() + 16);
      if (fi_cntr_open(ep_->domain(), &attr, &r->spare_slot, nullptr) != 0) {
        ++stuck;
        continue;
      }
      r->disarmed = true;
    }
    __atomic_store_n(&r->cntr[0].value, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&r->cntr[1].value, 0, __ATOMIC_RELEASE);
  }
  return stuck;
}

// Neutralized ops stay on the counter's trigger list as adds of 0 until
// the counter reaches their thresholds. Left there, they would fire when the
// counter's next owner counts up, into counters that owner may use in the
// opposite direction: sockets fires a counter op with the triggering
// counter's lock held, so a cycle of such adds deadlocks its thread. Raising
// the counter to the highest pending threshold fires them all now, while
// this plan's counters are quiescent, and lets ReclaimLocked retire them.
void NativeBackend::DrainNeutralizedLocked(CounterId id) {
  const bool narrow = hw_limit_ <= INT32_MAX;
  fid_cntr* cntr = counters_[id].cntr;
  std::uint64_t highest = 0;
  for (Record* r = busy_head_; r != nullptr; r = r->next) {
    if (r->trigger == id && r->hw_threshold > highest) highest = r->hw_threshold;
  }
  if (highest == 0 || HwRead(cntr, narrow) >= highest) return;
  if (fi_cntr_set(cntr, highest) != 0) return;  // left armed as adds of 0: harmless but kept
  ReclaimLocked();
}

bool NativeBackend::Progress() {
  bool did = RunHostOps();
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return did;
  if (busy_head_ != nullptr)
    did |= ReclaimLocked() > 0;
  else if (ep_->manual_progress())
    ReadCqErrorsLocked();  // a manual-progress provider moves only inside our calls
  return did;
}

Status NativeBackend::Cancel(CounterId trigger) {
  std::lock_guard<std::mutex> lock(mu_);
  if (trigger >= config_.num_counters || !counters_[trigger].in_use)
    return Error(Code::kArg,
                 "native Cancel: counter " + std::to_string(trigger) + " is not allocated");
  host_ops_.erase(std::remove_if(host_ops_.begin(), host_ops_.end(),
                                 [&](const HostOp& h) { return h.op.trigger == trigger; }),
                  host_ops_.end());
  ReclaimLocked();
  const std::size_t on_nic = NeutralizeLocked(trigger);
  if (on_nic > 0)
    return Error(Code::kUnsupportedOperation,
                 "native Cancel(counter " + std::to_string(trigger) +
                     "): " + std::to_string(on_nic) +
                     " op(s) sit on the NIC's trigger list, which libfabric cannot withdraw");
  return Status::Ok();
}

Status NativeBackend::Flush() {
  const std::int64_t deadline = NowMs() + config::GetInt("NICQ_PEER_TIMEOUT") * 1000;
  const bool narrow = hw_limit_ <= INT32_MAX;
  Backoff backoff(100, 20, 1000);
  {
    std::lock_guard<std::mutex> lock(mu_);
    host_ops_.clear();
    ReclaimLocked();
    const std::size_t stuck = NeutralizeLocked(kNoCounter);
    if (stuck > 0)
      NICQ_LOG(kWarn, kProvider, "native Flush: %zu unfired data op(s) stay on the NIC's lists",
               stuck);
  }
  for (;;) {
    std::size_t fired_busy = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ReclaimLocked();
      // Ops whose trigger has not been reached never fire: nothing to wait for.
      for (Record* r = busy_head_; r != nullptr; r = r->next)
        if (HwRead(r->trigger_cntr, narrow) >= r->hw_threshold) ++fired_busy;
    }
    if (fired_busy == 0) return Status::Ok();
    if (NowMs() >= deadline)
      return Error(Code::kPending, "native Flush: " + std::to_string(fired_busy) +
                                       " fired op(s) did not complete within NICQ_PEER_TIMEOUT");
    backoff.Pause();
  }
}

Status CreateNativeBackend(const offload::BackendOptions& options,
                           std::unique_ptr<offload::OffloadBackend>* out) {
  NativeConfig c;
  c.provider = options.provider;
  if (c.provider.empty() || c.provider == "auto") c.provider = config::GetString("NICQ_PROVIDER");
  // sockets proves the native path but is not a fast one: "auto" means a
  // real triggered NIC (cxi), else kUnsupportedOperation so that selection
  // moves on to the emulated backend. Ask for sockets by name.
  if (c.provider.empty() || c.provider == "auto") c.provider = "cxi";
  c.num_counters = static_cast<std::size_t>(config::GetInt("NICQ_OFFLOAD_COUNTERS"));
  c.slot_budget = options.slot_budget != 0
                      ? options.slot_budget
                      : static_cast<std::size_t>(config::GetInt("NICQ_NATIVE_SLOTS"));
  c.counter_limit = static_cast<std::uint64_t>(config::GetInt("NICQ_NATIVE_COUNTER_LIMIT"));
  c.node_ranks = options.node_ranks;
  std::unique_ptr<NativeBackend> b;
  NICQ_RETURN_IF_ERROR(NativeBackend::Create(c, &b));
  *out = std::move(b);
  return Status::Ok();
}

}  // namespace nicq::ofi
