// TriggerQueue's ops: posting them (sorted onto their trigger counter's
// list, or ready at once), cancelling them, and the ready FIFO the drainer
// takes them from and gives them back to. Counters and their firing:
// trigger_queue.cc.
#include <string>

#include "providers/ofi_emulated/trigger_queue.h"

namespace nicq::ofi {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

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

}  // namespace nicq::ofi
