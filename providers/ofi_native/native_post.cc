// NativeBackend: posting ops as deferred work, reclaiming their descriptors,
// host ops and progress. (Counters, memory and wire-up: native_backend.cc.)
#include <algorithm>
#include <climits>
#include <cstring>

#include "core/config.h"
#include "core/log.h"
#include "providers/ofi_common/atomic_map.h"
#include "providers/ofi_common/backoff.h"
#include "providers/ofi_common/mr_key.h"
#include "providers/ofi_common/ofi_error.h"
#include "providers/ofi_native/native_backend.h"
#include "providers/ofi_native/native_internal.h"

namespace nicq::ofi {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

namespace {
const std::uint64_t kZeroWord = 0;  // source of doorbell writes

bool IsData(OpKind k) {
  return k == OpKind::kSend || k == OpKind::kRecv || k == OpKind::kPut || k == OpKind::kAtomic ||
         k == OpKind::kRemoteCounterAdd;
}
}  // namespace

// NIC trigger entries an op takes: the op itself, the arm of a gated data
// op (native_internal.h), and the chained counter add reporting completion.
bool NativeBackend::Armed(const TriggeredOp& op) const {
  return arm_data_ops_ && IsData(op.kind) && op.trigger != kNoCounter;
}
std::size_t NativeBackend::EntriesFor(const TriggeredOp& op) const {
  if (op.kind == OpKind::kHost) return 0;
  return (op.completion != kNoCounter ? 2 : 1) + (Armed(op) ? 1 : 0);
}

// Capability checks only (the selector asks before the plan's counters
// exist on this backend); Post also validates counters and peers.
Status NativeBackend::CheckOps(std::span<const TriggeredOp> ops) const {
  NICQ_RETURN_IF_ERROR(OffloadBackend::CheckOps(ops));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TriggeredOp& op = ops[i];
    auto refuse = [&](const std::string& why) {
      return Error(Code::kUnsupportedOperation, "native CheckOps: op " + std::to_string(i) + " (" +
                                                    offload::OpKindName(op.kind) + "): " + why);
    };
    // sockets fires a counter op while holding its trigger counter's lock;
    // touching that same counter again would deadlock its progress thread.
    if ((op.kind == OpKind::kCounterAdd || op.kind == OpKind::kCounterSet) &&
        op.trigger != kNoCounter &&
        (op.target_counter == op.trigger || op.completion == op.trigger))
      return refuse("a counter op may not add to its own trigger counter on the NIC");
    // cxi accepts a deferred receive only at threshold 0 (posted at once).
    if (cxi_ && op.kind == OpKind::kRecv && op.trigger != kNoCounter && op.threshold > 0)
      return refuse("cxi takes triggered receives only at threshold 0");
    if (op.kind == OpKind::kRemoteCounterAdd && (op.value == 0 || op.value > kMaxDoorbellWrites))
      return refuse("remote counter add of " + std::to_string(op.value) +
                    " (the NIC counts one per doorbell write; 1 to " +
                    std::to_string(kMaxDoorbellWrites) + " are offloaded)");
  }
  return Status::Ok();
}

Status NativeBackend::ValidateLocked(std::span<const TriggeredOp> ops) const {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TriggeredOp& op = ops[i];
    auto counter_ok = [&](CounterId id) {
      return id == kNoCounter || (id < config_.num_counters && counters_[id].in_use);
    };
    if (!counter_ok(op.trigger) || !counter_ok(op.completion))
      return Error(Code::kArg, "native Post: op " + std::to_string(i) +
                                   ": trigger or completion counter is not allocated");
    if ((op.kind == OpKind::kCounterAdd || op.kind == OpKind::kCounterSet) &&
        (op.target_counter == kNoCounter || !counter_ok(op.target_counter)))
      return Error(Code::kArg,
                   "native Post: op " + std::to_string(i) + ": target_counter is not allocated");
    if (IsData(op.kind) &&
        (op.peer < 0 || static_cast<std::size_t>(op.peer) >= peer_doorbells_.size()))
      return Error(Code::kRank, "native Post: op " + std::to_string(i) + ": peer " +
                                    std::to_string(op.peer) + " unknown");
  }
  return Status::Ok();
}

Status NativeBackend::Post(std::span<const TriggeredOp> ops) {
  std::size_t entries = 0, records = 0, hosts = 0;
  bool any_host = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    NICQ_RETURN_IF_ERROR(CheckOps(ops));
    NICQ_RETURN_IF_ERROR(ValidateLocked(ops));
    for (const TriggeredOp& op : ops) {
      entries += EntriesFor(op);
      if (op.kind == OpKind::kHost)
        ++hosts;
      else
        records += op.kind == OpKind::kRemoteCounterAdd ? op.value : 1;
    }
    // A slot is one op (a NIC op takes up to two deferred-work entries: the
    // op and its completion report; a host op sits in the host list).
    // The provider's deferred-work queue (entry_budget_, this rank's share
    // of the node's) is never overrun, however the slots are counted.
    auto fits = [&] {
      return SlotsInUseLocked() + records + hosts <= budget_ && records <= free_records_.size() &&
             host_ops_.size() + hosts <= host_ops_.capacity() &&
             (entry_budget_ == 0 || entries_in_use_.load() + entries <= entry_budget_);
    };
    if (!fits()) ReclaimLocked();
    if (!fits())
      return Error(Code::kAgain,
                   "native Post: " + std::to_string(ops.size()) + " ops, " +
                       std::to_string(budget_ - std::min(budget_, SlotsInUseLocked())) + " of " +
                       std::to_string(budget_) + " trigger slots free (NICQ_NATIVE_SLOTS)");
    // Every threshold within its counter's hardware window (rebasing where
    // due) before anything is posted: a batch is all or none.
    for (const TriggeredOp& op : ops)
      if (op.kind != OpKind::kHost)
        NICQ_RETURN_IF_ERROR(FitThresholdLocked(op.trigger, op.threshold));
    for (const TriggeredOp& op : ops) {
      if (op.kind == OpKind::kHost) {
        // Sorted by (trigger, threshold, posting order); capacity reserved.
        HostOp h{op, host_seq_++};
        auto pos = std::upper_bound(host_ops_.begin(), host_ops_.end(), h,
                                    [](const HostOp& a, const HostOp& b) {
                                      if (a.op.trigger != b.op.trigger)
                                        return a.op.trigger < b.op.trigger;
                                      if (a.op.threshold != b.op.threshold)
                                        return a.op.threshold < b.op.threshold;
                                      return a.seq < b.seq;
                                    });
        host_ops_.insert(pos, h);
        any_host = true;
        continue;
      }
      // A provider error part-way leaves earlier ops posted: the batch is
      // all-or-none only for what is checked above (slots, kinds, counters).
      if (op.kind == OpKind::kRemoteCounterAdd && op.value > 1) {
        // The NIC counts one arrival per doorbell write: `value` writes, the
        // last one reporting completion (they complete in order on one
        // endpoint's queue).
        TriggeredOp unit = op;
        unit.value = 1;
        for (std::uint64_t k = 0; k < op.value; ++k) {
          unit.completion = k + 1 == op.value ? op.completion : kNoCounter;
          NICQ_RETURN_IF_ERROR(PostOne(unit));
        }
        continue;
      }
      NICQ_RETURN_IF_ERROR(PostOne(op));
    }
  }
  if (any_host) RunHostOps();
  return Status::Ok();
}

NativeBackend::Record* NativeBackend::TakeRecord() {
  Record* r = free_records_.back();
  free_records_.pop_back();
  r->next = busy_head_;
  busy_head_ = r;
  return r;
}

Status NativeBackend::QueueWork(fi_deferred_work* w, const char* what) {
  work_requests_.fetch_add(1, std::memory_order_relaxed);
  return Check(fi_control(&ep_->domain()->fid, FI_QUEUE_WORK, w), "fi_control(FI_QUEUE_WORK)",
               what);
}

Status NativeBackend::FitThresholdLocked(CounterId id, std::uint64_t threshold) {
  if (id == kNoCounter) return Status::Ok();
  Counter& c = counters_[id];
  std::uint64_t base = c.base.load();
  if (threshold <= base) return Status::Ok();
  // Pending counts records not reclaimed yet: ones that fired long ago (a
  // queue's counter after a fence) must not hold the rebase back. Reclaim
  // and the unfired-trigger check walk the busy list, so only once the
  // threshold is a quarter of the limit ahead of the base.
  const bool rebase_due = threshold - base > hw_limit_ / 4;
  if (rebase_due && c.pending.load() != 0) (void)ReclaimLocked();
  const bool waited_on = rebase_due && HasUnfiredTriggerLocked(id);
  if (rebase_due && !waited_on) {
    // Rebase: move the hardware value down into the logical base. Only when
    // no trigger waits on the counter (their hardware thresholds would
    // move; ops that already fired and are still moving data do not read
    // it again), and early (a quarter of the limit ahead) so that a counter
    // with triggers posted far ahead, idle only now and then (a queue's
    // counter between fences), still gets its chance before the limit. The
    // subtract is one atomic counter update: increments that land
    // concurrently (a peer's ready token, an RMA event) are kept. Subtract
    // first, then raise the base, so a concurrent reader sees at worst a
    // transiently low value, never a too-high one.
    std::uint64_t v = fi_cntr_read(c.cntr);
    if (hw_limit_ <= INT32_MAX) v &= 0x7fffffffu;
    NICQ_RETURN_IF_ERROR(
        Check(fi_cntr_add(c.cntr, static_cast<std::uint64_t>(-static_cast<std::int64_t>(v))),
              "fi_cntr_add", "rebase of counter " + std::to_string(id)));
    c.base.fetch_add(v);
    base += v;
    NICQ_LOG(kDebug, kProvider, "native: counter %u rebased by %llu", id,
             static_cast<unsigned long long>(v));
  }
  if (threshold - base <= hw_limit_) return Status::Ok();
  // Beyond the counter's window while triggers still wait on it: the chain
  // that is posted will reach them, the counter can rebase then, and the
  // caller posts this later (a queue defers the step; a plan retries).
  if (waited_on) return Status(Code::kAgain, {});  // no message: a retry path allocates nothing
  return Error(Code::kUnsupportedOperation,
               "native Post: threshold " + std::to_string(threshold) + " on counter " +
                   std::to_string(id) + " is more than the hardware counter limit (" +
                   std::to_string(hw_limit_) + ") ahead of its value " + std::to_string(base));
}

std::uint64_t NativeBackend::HwThreshold(CounterId id, std::uint64_t threshold) const {
  if (id == kNoCounter) return 0;
  const std::uint64_t base = counters_[id].base.load();
  return threshold <= base ? 0 : threshold - base;
}

Status NativeBackend::PostOne(const TriggeredOp& op) {
  const std::uint64_t hw = HwThreshold(op.trigger, op.threshold);
  fid_cntr* trig = op.trigger == kNoCounter ? zero_cntr_ : counters_[op.trigger].cntr;
  fid_cntr* comp = op.completion == kNoCounter ? nullptr : counters_[op.completion].cntr;
  Record* r = TakeRecord();
  r->trigger = op.trigger;
  r->completion = op.completion;
  r->trigger_cntr = trig;
  r->hw_threshold = hw;
  r->entries = EntriesFor(op);
  r->is_data = IsData(op.kind);
  r->armed = Armed(op);
  r->disarmed = false;
  std::memset(r->work, 0, sizeof(r->work));
  if (r->armed) {
    // The arm hop (native_internal.h): trigger -> slot + 1 -> data op.
    r->slot_target = fi_cntr_read(r->slot_cntr) + 2;
    fi_deferred_work& arm = r->work[0];
    r->cntr[0] = {r->slot_cntr, 1};
    arm.threshold = hw;
    arm.triggering_cntr = trig;
    arm.op_type = FI_OP_CNTR_ADD;
    arm.op.cntr = &r->cntr[0];
  }
  fi_deferred_work& w = r->work[r->armed ? 1 : 0];
  w.threshold = r->armed ? r->slot_target - 1 : hw;
  w.triggering_cntr = r->armed ? r->slot_cntr : trig;
  fid_ep* ep = ep_->ep();
  const fi_addr_t peer = ep_->Peer(op.peer);

  if (!r->is_data) {
    Counter& target = counters_[op.target_counter];
    std::uint64_t value = op.value;
    if (op.kind == OpKind::kCounterSet) {
      const std::uint64_t base = target.base.load();
      if (op.value < base) {
        // Below the logical base (the backend rebased this counter): the NIC
        // cannot express it. A set that fires at once (a plan's own rebase,
        // triggered-semantics.md 8.2) is done here on the host instead.
        if (op.trigger != kNoCounter) {
          free_records_.push_back(r);
          busy_head_ = r->next;
          return Error(Code::kUnsupportedOperation,
                       "native Post: counter set to " + std::to_string(op.value) +
                           " below the rebased base " + std::to_string(base) + " of counter " +
                           std::to_string(op.target_counter) + " cannot be triggered on the NIC");
        }
        target.base.store(0);
        NICQ_RETURN_IF_ERROR(Check(fi_cntr_set(target.cntr, op.value), "fi_cntr_set",
                                   "counter " + std::to_string(op.target_counter)));
        if (comp != nullptr) fi_cntr_add(comp, op.completion_inc);
        free_records_.push_back(r);
        busy_head_ = r->next;
        return Status::Ok();
      }
      value = op.value - base;
    }
    r->cntr[0] = {target.cntr, value};
    w.op_type = op.kind == OpKind::kCounterSet ? FI_OP_CNTR_SET : FI_OP_CNTR_ADD;
    w.op.cntr = &r->cntr[0];
  } else {
    if (!r->armed) r->slot_target = fi_cntr_read(r->slot_cntr) + 1;
    w.completion_cntr = r->slot_cntr;
    void* ctx = &w.context;
    switch (op.kind) {
      case OpKind::kSend:
      case OpKind::kRecv: {
        r->iov = {op.kind == OpKind::kSend ? const_cast<void*>(op.local_buf) : op.local_rbuf,
                  op.bytes};
        fi_op_tagged& t = r->data.tagged;
        t = {};
        t.ep = ep;
        t.msg.msg_iov = &r->iov;
        t.msg.iov_count = 1;
        t.msg.addr = peer;
        t.msg.tag = op.tag;
        t.msg.context = ctx;
        w.op_type = op.kind == OpKind::kSend ? FI_OP_TSEND : FI_OP_TRECV;
        w.op.tagged = &t;
        break;
      }
      case OpKind::kPut:
      case OpKind::kRemoteCounterAdd: {
        const bool put = op.kind == OpKind::kPut;
        r->iov = {put ? const_cast<void*>(op.local_buf) : const_cast<std::uint64_t*>(&kZeroWord),
                  put ? op.bytes : sizeof(kZeroWord)};
        const std::uint64_t db =
            ep_->virt_addr() ? peer_doorbells_[op.peer] + 8 * std::uint64_t{op.target_counter} : 0;
        r->riov = {put ? op.remote_addr : db, r->iov.iov_len,
                   put ? op.remote_key : keys_.DoorbellKey(op.target_counter)};
        fi_op_rma& m = r->data.rma;
        m = {};
        m.ep = ep;
        m.msg.msg_iov = &r->iov;
        m.msg.iov_count = 1;
        m.msg.addr = peer;
        m.msg.rma_iov = &r->riov;
        m.msg.rma_iov_count = 1;
        m.msg.context = ctx;
        w.op_type = FI_OP_WRITE;
        w.op.rma = &m;
        break;
      }
      case OpKind::kAtomic: {
        const std::size_t count = op.bytes / offload::AtomicTypeSize(op.atype);
        r->ioc = {const_cast<void*>(op.local_buf), count};
        r->rioc = {op.remote_addr, count, op.remote_key};
        fi_op_atomic& a = r->data.atomic;
        a = {};
        a.ep = ep;
        a.msg.msg_iov = &r->ioc;
        a.msg.iov_count = 1;
        a.msg.addr = peer;
        a.msg.rma_iov = &r->rioc;
        a.msg.rma_iov_count = 1;
        a.msg.datatype = ToFiType(op.atype);
        a.msg.op = ToFiOp(op.aop);
        a.msg.context = ctx;
        w.op_type = FI_OP_ATOMIC;
        w.op.atomic = &a;
        break;
      }
      default:
        break;
    }
  }
  if (op.trigger != kNoCounter) counters_[op.trigger].pending.fetch_add(1);
  entries_in_use_.fetch_add(r->entries);
  // The data op first, its arm after: the arm may fire at once.
  NICQ_RETURN_IF_ERROR(QueueWork(&w, offload::OpKindName(op.kind)));
  if (r->armed) NICQ_RETURN_IF_ERROR(QueueWork(&r->work[0], "arm of a data op"));
  if (comp != nullptr) {
    // Completion report: data ops chain on their slot counter; counter ops
    // (which complete when they fire) on the same trigger, posted after.
    fi_deferred_work& c = r->work[r->armed ? 2 : 1];
    r->cntr[1] = {comp, op.completion_inc};
    c.threshold = r->is_data ? r->slot_target : hw;
    c.triggering_cntr = r->is_data ? r->slot_cntr : trig;
    c.op_type = FI_OP_CNTR_ADD;
    c.op.cntr = &r->cntr[1];
    NICQ_RETURN_IF_ERROR(QueueWork(&c, "completion counter add"));
  }
  return Status::Ok();
}

}  // namespace nicq::ofi
