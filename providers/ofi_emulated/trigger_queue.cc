// TriggerQueue's counters and their firing: allocation, the sleepers'
// wake-ups, counter changes from the host and from completions, and the
// collection that moves the ops a counter reached to the ready FIFO (or
// runs them, for local counter ops). Posting ops and taking ready ones:
// trigger_queue_ops.cc.
#include "providers/ofi_emulated/trigger_queue.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ctime>
#include <string>

namespace nicq::ofi {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

TriggerQueue::TriggerQueue(std::size_t num_counters, std::size_t num_nodes)
    : num_counters_(num_counters),
      num_nodes_(num_nodes),
      counters_(new Counter[num_counters]),
      nodes_(new EmuNode[num_nodes]),
      in_use_flags_(new std::atomic<bool>[num_counters]),
      free_counters_(new CounterId[num_counters]) {
  for (std::size_t i = 0; i < num_counters; ++i) in_use_flags_[i].store(false);
  for (std::size_t i = 0; i < num_nodes; ++i) {
    nodes_[i].index = static_cast<std::int32_t>(i);
    nodes_[i].next = i + 1 < num_nodes ? static_cast<std::int32_t>(i + 1) : -1;
  }
  free_head_ = num_nodes > 0 ? 0 : -1;
  free_count_ = num_nodes;
  // Hand out low ids first.
  for (std::size_t i = 0; i < num_counters; ++i)
    free_counters_[i] = static_cast<CounterId>(num_counters - 1 - i);
  free_counter_count_ = num_counters;
}

Status TriggerQueue::AllocCounters(std::size_t n, CounterId* out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (n > free_counter_count_)
    return Error(Code::kNoMem, "emulated AllocCounters(n=" + std::to_string(n) + "): only " +
                                   std::to_string(free_counter_count_) +
                                   " counters left (NICQ_OFFLOAD_COUNTERS)");
  for (std::size_t i = 0; i < n; ++i) {
    CounterId id = free_counters_[--free_counter_count_];
    Counter& c = counters_[id];
    c.value.store(0);
    c.errors.store(0);
    c.first_error.store(0);
    c.head.store(-1);
    c.tail = -1;
    in_use_flags_[id].store(true);
    out[i] = id;
  }
  return Status::Ok();
}

void TriggerQueue::FreeCounter(CounterId id) {
  if (!CounterInUse(id)) return;
  Cancel(id);
  std::lock_guard<std::mutex> lock(mu_);
  in_use_flags_[id].store(false);
  free_counters_[free_counter_count_++] = id;
}

// Waking costs a syscall, so it happens only when a waiter may be asleep:
// a waiter registers in sleepers_ before reading the epoch and re-checking
// its counter, the notifier bumps the epoch after changing the counter and
// then reads sleepers_ (all sequentially consistent), so either the waiter
// sees the new value or the notifier sees the waiter.
//
// Without sleepers the epoch is left alone (a locked add saved per counter
// change): the change itself is a sequentially consistent atomic made
// before the sleepers_ load, so a waiter that registers after that load
// re-checks and sees the change; one registered before it is seen here.
//
// A progress thread asleep on the bell counts itself in the bell's
// sleepers, not in sleepers_, with the same pairing.
void TriggerQueue::NotifyChange() {
  if (bell_ != nullptr && bell_->sleepers.load(std::memory_order_seq_cst) > 0)
    offload::RingBell(bell_);
  if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
  change_epoch_.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&change_epoch_), FUTEX_WAKE_PRIVATE,
          INT32_MAX, nullptr, nullptr, 0);
}

void TriggerQueue::BeginSleep() {
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
}
void TriggerQueue::EndSleep() {
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

void TriggerQueue::SleepOnChange(std::uint32_t seen, int timeout_us) {
  timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000L};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&change_epoch_), FUTEX_WAIT_PRIVATE, seen,
          &ts, nullptr, 0);
}

void TriggerQueue::Add(CounterId id, std::uint64_t v) {
  if (id >= num_counters_) return;
  Counter& c = counters_[id];
  c.value.fetch_add(v, std::memory_order_seq_cst);
  if (c.head.load(std::memory_order_seq_cst) >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    (void)CollectLocked(c);
  }
  NotifyChange();
}

void TriggerQueue::AddLeavingCollection(CounterId id, std::uint64_t v) {
  if (id >= num_counters_) return;
  Counter& c = counters_[id];
  c.value.fetch_add(v, std::memory_order_seq_cst);
  // As in Add: a post that inserts after this load re-reads the value.
  if (c.head.load(std::memory_order_seq_cst) >= 0 &&
      !c.marked.exchange(true, std::memory_order_seq_cst)) {
    std::int32_t head = marked_head_.load(std::memory_order_relaxed);
    do {
      c.marked_next.store(head, std::memory_order_relaxed);
    } while (!marked_head_.compare_exchange_weak(head, std::int32_t(id), std::memory_order_seq_cst,
                                                 std::memory_order_relaxed));
  }
  NotifyChange();
}

bool TriggerQueue::CollectMarkedLocked() {
  std::int32_t id = marked_head_.exchange(-1, std::memory_order_seq_cst);
  bool changed = false;
  while (id >= 0) {
    Counter& c = counters_[id];
    const std::int32_t next = c.marked_next.load(std::memory_order_relaxed);
    // Unmarked before the collection: an add after it marks again, and is
    // collected by the next pop if this one missed its value.
    c.marked.store(false, std::memory_order_seq_cst);
    changed |= CollectLocked(c);
    id = next;
  }
  return changed;
}

void TriggerQueue::Set(CounterId id, std::uint64_t v) {
  if (id >= num_counters_) return;
  Counter& c = counters_[id];
  c.value.store(v, std::memory_order_seq_cst);
  if (c.head.load(std::memory_order_seq_cst) >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    (void)CollectLocked(c);
  }
  NotifyChange();
}

void TriggerQueue::AddError(CounterId id, Code code) {
  if (id >= num_counters_) return;
  int none = 0;
  counters_[id].first_error.compare_exchange_strong(none, int(code), std::memory_order_release);
  counters_[id].errors.fetch_add(1, std::memory_order_seq_cst);
  NotifyChange();
}

bool TriggerQueue::CollectLocked(Counter& first) {
  // Counters changed by local counter ops, still to collect: a small stack
  // (no allocation, no recursion); when it is full, ops go through the FIFO.
  CounterId pending[kPendingCounters];
  int npending = 0;
  bool changed = false;
  Counter* c = &first;
  for (;;) {
    const std::uint64_t v = c->value.load(std::memory_order_seq_cst);
    std::int32_t h = c->head.load(std::memory_order_relaxed);
    while (h >= 0 && nodes_[h].op->threshold <= v) {
      EmuNode* n = &nodes_[h];
      h = n->next;
      const OpKind k = n->op->kind;
      if ((k == OpKind::kCounterAdd || k == OpKind::kCounterSet) &&
          RunCounterOpLocked(n, pending, &npending)) {
        changed = true;
        continue;
      }
      AppendReadyLocked(n);
    }
    // No store-load pairing here (an Add that reads the old head takes the
    // lock and collects after us), so a release store, and none when
    // nothing was taken.
    if (h != c->head.load(std::memory_order_relaxed)) {
      c->head.store(h, std::memory_order_release);
      if (h >= 0)
        nodes_[h].prev = -1;
      else
        c->tail = -1;
    }
    if (npending == 0) {
      PublishReadyLocked();
      return changed;
    }
    c = &counters_[pending[--npending]];
  }
}

bool TriggerQueue::RunCounterOpLocked(EmuNode* n, CounterId* pending, int* npending) {
  const TriggeredOp& op = *n->op;
  const bool has_completion = op.completion != kNoCounter;
  if (*npending + 2 > kPendingCounters) return false;
  Counter& t = counters_[op.target_counter];
  if (op.kind == OpKind::kCounterAdd)
    t.value.fetch_add(op.value, std::memory_order_seq_cst);
  else
    t.value.store(op.value, std::memory_order_seq_cst);
  pending[(*npending)++] = op.target_counter;
  if (has_completion) {
    counters_[op.completion].value.fetch_add(op.completion_inc, std::memory_order_seq_cst);
    pending[(*npending)++] = op.completion;
  }
  FreeNodeLocked(n);
  return true;
}

void TriggerQueue::CompleteBatch(std::span<const EmuCompletion> done) {
  if (done.empty()) return;
  bool counted = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const EmuCompletion& d : done) {
      if (d.counter < num_counters_) {
        Counter& c = counters_[d.counter];
        c.value.fetch_add(d.value, std::memory_order_seq_cst);
        if (c.head.load(std::memory_order_relaxed) >= 0) (void)CollectLocked(c);
        counted = true;
      }
      if (d.node) FreeNodeLocked(d.node);
    }
  }
  if (counted) NotifyChange();
}

}  // namespace nicq::ofi
