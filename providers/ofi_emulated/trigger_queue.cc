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
      free_counters_(new CounterId[num_counters]) {
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
    c.in_use.store(true);
    out[i] = id;
  }
  return Status::Ok();
}

void TriggerQueue::FreeCounter(CounterId id) {
  if (!CounterInUse(id)) return;
  Cancel(id);
  std::lock_guard<std::mutex> lock(mu_);
  counters_[id].in_use.store(false);
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

// Sorted insert, scanning from the tail: plans post epochs in growing
// threshold order, so this is O(1) in practice. Equal thresholds keep
// posting order (the new node goes after them).
void TriggerQueue::InsertPendingLocked(Counter& c, EmuNode* n) {
  std::int32_t after = c.tail;
  while (after >= 0 && nodes_[after].op->threshold > n->op->threshold) after = nodes_[after].prev;
  n->prev = after;
  if (after < 0) {
    n->next = c.head.load(std::memory_order_relaxed);
    if (n->next >= 0) nodes_[n->next].prev = n->index;
    c.head.store(n->index, std::memory_order_seq_cst);
  } else {
    n->next = nodes_[after].next;
    if (n->next >= 0) nodes_[n->next].prev = n->index;
    nodes_[after].next = n->index;
  }
  if (n->next < 0) c.tail = n->index;
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

void TriggerQueue::AppendReadyLocked(EmuNode* n) {
  n->next = -1;
  n->prev = -1;
  if (ready_tail_ >= 0)
    nodes_[ready_tail_].next = n->index;
  else
    ready_head_ = n->index;
  ready_tail_ = n->index;
  ++unpublished_ready_;
}

Status TriggerQueue::Post(std::span<const TriggeredOp> ops) {
  bool changed = false;  // a local counter op ran: wake the sleepers
  bool ready = false;    // an op is ready to issue
  Status st = PostLocked(ops, &changed, &ready);
  // Ready work also ends a progress thread's nap (no syscall without
  // sleepers). Ops gated on a counter need no one now: the change that
  // reaches them notifies. (A resident plan's re-armed epochs are all
  // gated: waking the napping agent for them was a futex wake and a
  // wake-up for nothing per epoch.)
  if (changed || (st.ok() && ready && AnySleeper())) NotifyChange();
  return st;
}

Status TriggerQueue::PostLocked(std::span<const TriggeredOp> ops, bool* changed_out,
                                bool* ready_out) {
  std::lock_guard<std::mutex> lock(mu_);
  bool& changed = *changed_out;
  // Check everything first: all ops are accepted or none.
  // Full: no message, since callers retry (enqueue backpressure) and a
  // retry path allocates nothing; they name the call if they give up.
  if (ops.size() > free_count_) return Status(Code::kAgain, {});
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TriggeredOp& op = ops[i];
    auto bad = [&](const char* what, CounterId id) {
      return Error(Code::kArg, "emulated Post: op " + std::to_string(i) + " (" +
                                   offload::OpKindName(op.kind) + "): " + what + " " +
                                   std::to_string(id) + " is not an allocated counter");
    };
    if (op.trigger != kNoCounter && !CounterInUse(op.trigger)) return bad("trigger", op.trigger);
    if (op.completion != kNoCounter && !CounterInUse(op.completion))
      return bad("completion", op.completion);
    if ((op.kind == OpKind::kCounterAdd || op.kind == OpKind::kCounterSet) &&
        !CounterInUse(op.target_counter))
      return bad("target_counter", op.target_counter);
  }
  for (const TriggeredOp& op : ops) {
    EmuNode* n = &nodes_[free_head_];
    free_head_ = n->next;
    --free_count_;
    BumpInUseLocked(+1);
    n->copy = op;
    n->op = &n->copy;
    n->seq = next_seq_++;
    n->stage = 0;
    if (op.trigger == kNoCounter) {
      AppendReadyLocked(n);
      *ready_out = true;
      continue;
    }
    Counter& c = counters_[op.trigger];
    InsertPendingLocked(c, n);
    // Already reached (or reached by a racing increment): ready now. Ops
    // before it on the list that a racing Add reached are that Add's to
    // collect (it takes the lock after us), so only this op's own
    // threshold decides whether to collect here.
    if (c.value.load(std::memory_order_seq_cst) >= n->copy.threshold) {
      changed |= CollectLocked(c);
      *ready_out = true;
    }
  }
  PublishReadyLocked();
  return Status::Ok();
}

Status TriggerQueue::TakeNodes(std::span<const TriggeredOp> ops, EmuNode** out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ops.size() > free_count_) return Status(Code::kAgain, {});
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].completion != kNoCounter && !CounterInUse(ops[i].completion))
      return Error(Code::kArg, "emulated Post: op " + std::to_string(i) + " (" +
                                   offload::OpKindName(ops[i].kind) + "): completion " +
                                   std::to_string(ops[i].completion) +
                                   " is not an allocated counter");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    EmuNode* n = &nodes_[free_head_];
    free_head_ = n->next;
    --free_count_;
    n->copy = ops[i];
    n->op = &n->copy;
    n->seq = next_seq_++;
    n->stage = 0;
    n->next = n->prev = -1;
    out[i] = n;
  }
  BumpInUseLocked(int(ops.size()));
  return Status::Ok();
}

std::size_t TriggerQueue::Cancel(CounterId trigger) {
  if (trigger >= num_counters_) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  Counter& c = counters_[trigger];
  std::size_t n = 0;
  for (std::int32_t h = c.head.load(); h >= 0;) {
    EmuNode* node = &nodes_[h];
    h = node->next;
    node->op = nullptr;
    node->next = free_head_;
    free_head_ = node->index;
    ++free_count_;
    BumpInUseLocked(-1);
    ++n;
  }
  c.head.store(-1);
  c.tail = -1;
  return n;
}

void TriggerQueue::CancelAll() {
  for (std::size_t id = 0; id < num_counters_; ++id)
    if (counters_[id].head.load(std::memory_order_relaxed) >= 0) Cancel(static_cast<CounterId>(id));
}

int TriggerQueue::PopReady(EmuNode** out, int max) {
  if (!HasReady()) return 0;
  int got = 0;
  bool changed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Counters a host added to without collecting go first: what they
    // reached became ready before anything this pop could return.
    if (marked_head_.load(std::memory_order_relaxed) >= 0) changed = CollectMarkedLocked();
    while (got < max && ready_head_ >= 0) {
      EmuNode* n = &nodes_[ready_head_];
      ready_head_ = n->next;
      n->next = -1;
      out[got++] = n;
    }
    if (ready_head_ < 0) ready_tail_ = -1;
    if (got > 0) ready_count_.fetch_sub(std::size_t(got), std::memory_order_release);
  }
  if (changed) NotifyChange();
  return got;
}

void TriggerQueue::PushReadyFront(EmuNode* const* nodes, int count) {
  if (count <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = count - 1; i >= 0; --i) {
    EmuNode* n = nodes[i];
    n->next = ready_head_;
    ready_head_ = n->index;
    if (ready_tail_ < 0) ready_tail_ = n->index;
  }
  ready_count_.fetch_add(std::size_t(count), std::memory_order_seq_cst);
}

void TriggerQueue::PushReadyBack(EmuNode* n) {
  std::lock_guard<std::mutex> lock(mu_);
  AppendReadyLocked(n);
  PublishReadyLocked();
}

void TriggerQueue::Release(EmuNode* n) {
  std::lock_guard<std::mutex> lock(mu_);
  FreeNodeLocked(n);
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

void TriggerQueue::FreeNodeLocked(EmuNode* n) {
  n->op = nullptr;
  n->next = free_head_;
  free_head_ = n->index;
  ++free_count_;
  BumpInUseLocked(-1);
}

}  // namespace nicq::ofi
