// TriggerQueue: the software counter emulator's state. 64-bit counters,
// per-counter pending ops kept sorted by (threshold, posting sequence) in
// intrusive lists over a preallocated node pool, and one FIFO of ops that
// became ready, in the order they became ready.
//
// Locking: one mutex guards the lists; nothing is issued while it is held.
// Counter values are atomics readable without it. A counter increment and a
// post can race: the post inserts first and then re-reads the counter, the
// increment adds first and then looks at the list head, both sequentially
// consistent, so at least one of them sees the other (no lost wake-up).
//
// Posting allocates nothing: nodes come from the pool and the op is copied
// into its node.
//
// Local counter ops (kCounterAdd, kCounterSet) run where they become ready,
// under the lock, instead of passing through the ready FIFO, the drainer and
// Release: a queued wait is three of them, and that round trip was most of
// the emulator's cost per queued iteration. Ops they make ready go on the
// FIFO behind everything already there, so issue order among fabric ops is
// unchanged.
#pragma once

#include <rdma/fabric.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "core/status.h"
#include "providers/backend.h"

namespace nicq::ofi {

struct EmuNode;

// One completion for TriggerQueue::CompleteBatch: add `value` to `counter`
// (kNoCounter: none) and return `node` to the pool (nullptr: none).
struct EmuCompletion {
  EmuNode* node = nullptr;
  offload::CounterId counter = offload::kNoCounter;
  std::uint64_t value = 0;
};

struct EmuNode {
  fi_context2 ctx;  // first: libfabric hands this pointer back in completions
  // The op is copied into the node (preallocated, so still no allocation):
  // callers need not keep their descriptors alive after Post returns.
  offload::TriggeredOp copy;
  const offload::TriggeredOp* op = nullptr;  // &copy while in use
  std::uint64_t seq = 0;
  std::int32_t prev = -1, next = -1;
  std::int32_t index = 0;
  // Atomics with an arrival counter complete in two stages: the atomic
  // (delivery complete), then the doorbell write that bumps the counter.
  // 0 plain; 1 atomic in flight, 2 its doorbell to issue, 3 doorbell in flight.
  std::uint8_t stage = 0;
};

class TriggerQueue {
 public:
  TriggerQueue(std::size_t num_counters, std::size_t num_nodes);

  std::size_t num_counters() const { return num_counters_; }
  std::size_t capacity() const { return num_nodes_; }
  std::size_t nodes_in_use() const { return in_use_.load(std::memory_order_seq_cst); }

  Status AllocCounters(std::size_t n, offload::CounterId* out);
  // Frees the counter and drops (never fires) its pending ops.
  void FreeCounter(offload::CounterId id);
  // Read from a line of its own (in_use_), not the counter's, which the
  // agent writes at every add: a host add checks it without a cache miss.
  bool CounterInUse(offload::CounterId id) const {
    return id < num_counters_ && in_use_flags_[id].load(std::memory_order_relaxed);
  }

  std::uint64_t Read(offload::CounterId id) const {
    return id < num_counters_ ? counters_[id].value.load(std::memory_order_acquire) : 0;
  }
  std::uint64_t Errors(offload::CounterId id) const {
    return id < num_counters_ ? counters_[id].errors.load(std::memory_order_acquire) : 0;
  }
  // Counter changes: move newly reached ops to the ready FIFO.
  void Add(offload::CounterId id, std::uint64_t v);
  // The add alone, for a host thread while the agent drains: the counter is
  // marked instead of collected (no lock), HasReady() reports the mark and
  // the drainer's next PopReady collects it. The agent moves and issues what
  // the add reached, as a NIC would, and the add still wakes a sleeping one.
  void AddLeavingCollection(offload::CounterId id, std::uint64_t v);
  void Set(offload::CounterId id, std::uint64_t v);
  // Counts a failure of class `code` on `id` (the first one's class stays).
  void AddError(offload::CounterId id, Code code = Code::kOther);
  Code ErrorClass(offload::CounterId id) const {
    return id < num_counters_ ? Code(counters_[id].first_error.load(std::memory_order_acquire))
                              : Code::kOk;
  }
  // Sleeping until some counter changes (futex on a change epoch):
  //   BeginSleep(); e = epoch(); if (!done()) SleepOnChange(e, us); EndSleep();
  std::uint32_t epoch() const { return change_epoch_.load(std::memory_order_seq_cst); }
  void BeginSleep();
  void EndSleep();
  void SleepOnChange(std::uint32_t seen, int timeout_us);
  // A doorbell the progress thread sleeps on instead of the epoch: counter
  // changes and posts ring it too while it has sleepers. Set before the
  // thread starts; nullptr: none.
  void SetBell(offload::AgentBell* bell) { bell_ = bell; }
  // Wakes whoever sleeps on a change (the bell's sleepers, the futex's):
  // every counter change calls it, and so does a host add the agent is to
  // apply (EmulatedBackend::AddCounter) when the agent sleeps.
  void NotifyChange();

  // Enqueues every op (all or none): kAgain when the pool lacks nodes.
  Status Post(std::span<const offload::TriggeredOp> ops);
  // Nodes for ops that fire at once (no trigger), handed to the caller
  // instead of the ready FIFO (all or none; kAgain when the pool lacks
  // nodes): a caller holding the drainer role while the FIFO is empty issues
  // them next, which is the order the FIFO would have given them.
  Status TakeNodes(std::span<const offload::TriggeredOp> ops, EmuNode** out);
  // Drops pending (not yet ready) ops gated on `trigger`; returns how many.
  std::size_t Cancel(offload::CounterId trigger);
  // Drops every pending op (Flush: nothing more fires).
  void CancelAll();

  // Ready FIFO: the drainer pops up to `max` in order (one lock for the
  // batch) and pushes what it could not issue back at the front, in order,
  // when the provider says EAGAIN.
  int PopReady(EmuNode** out, int max);
  void PushReadyFront(EmuNode* const* nodes, int count);
  void PushReadyBack(EmuNode* n);  // e.g. stage 2 of an atomic
  // Sequentially consistent with the adds: Drain's "did anyone make ops
  // ready while I held the role" check pairs a store to its flag with this
  // load, which acquire/release alone lets the CPU reorder (see Drain).
  // A marked counter (AddLeavingCollection) counts as ready.
  bool HasReady() const {
    return ready_count_.load(std::memory_order_seq_cst) > 0 ||
           marked_head_.load(std::memory_order_seq_cst) >= 0;
  }

  void Release(EmuNode* n);  // back to the pool (op completed or failed)
  // Completions (CQ entries, doorbells, ops done at issue) under one lock
  // and one wake-up: a locked section per batch instead of per entry.
  void CompleteBatch(std::span<const EmuCompletion> done);
  EmuNode* NodeOfContext(void* ctx) { return reinterpret_cast<EmuNode*>(ctx); }

 private:
  struct alignas(64) Counter {
    std::atomic<std::uint64_t> value{0};
    std::atomic<std::uint64_t> errors{0};
    std::atomic<int> first_error{0};     // Code of the first failure; 0: none
    std::atomic<std::int32_t> head{-1};  // read without the lock as a hint only
    std::int32_t tail = -1;
    // On the list of counters to collect (AddLeavingCollection).
    std::atomic<bool> marked{false};
    std::atomic<std::int32_t> marked_next{-1};
  };

  Status PostLocked(std::span<const offload::TriggeredOp> ops, bool* changed, bool* ready);
  void InsertPendingLocked(Counter& c, EmuNode* n);
  // Moves c's reached ops to the ready FIFO, running local counter ops at
  // once (and collecting the counters they change). Returns whether any
  // counter changed (the caller then notifies, outside the lock).
  bool CollectLocked(Counter& c);
  // Collects every marked counter (the list is taken whole).
  bool CollectMarkedLocked();
  // Applies a ready local counter op and frees its node; false (op left to
  // the caller) when `pending` is full.
  static constexpr int kPendingCounters = 32;
  bool RunCounterOpLocked(EmuNode* n, offload::CounterId* pending, int* npending);
  void FreeNodeLocked(EmuNode* n) {
    n->op = nullptr;
    n->next = free_head_;
    free_head_ = n->index;
    ++free_count_;
    BumpInUseLocked(-1);
  }
  // Appends to the FIFO; PublishReadyLocked makes the appended count
  // visible to HasReady with one locked add per locked section.
  void AppendReadyLocked(EmuNode* n) {
    n->next = -1;
    n->prev = -1;
    if (ready_tail_ >= 0)
      nodes_[ready_tail_].next = n->index;
    else
      ready_head_ = n->index;
    ready_tail_ = n->index;
    ++unpublished_ready_;
  }
  void PublishReadyLocked() {
    if (unpublished_ready_ == 0) return;
    ready_count_.fetch_add(unpublished_ready_, std::memory_order_seq_cst);
    unpublished_ready_ = 0;
  }
  // in_use_ changes only under the lock: a plain store, no locked add.
  void BumpInUseLocked(int d) {
    in_use_.store(in_use_.load(std::memory_order_relaxed) + std::size_t(d),
                  std::memory_order_relaxed);
  }

  // Read-mostly: the lock below, which the agent takes at every pass, starts
  // a cache line of its own so that a host's CounterInUse does not miss.
  const std::size_t num_counters_;
  const std::size_t num_nodes_;
  std::unique_ptr<Counter[]> counters_;
  std::unique_ptr<EmuNode[]> nodes_;
  std::unique_ptr<std::atomic<bool>[]> in_use_flags_;  // by counter: allocated
  alignas(64) std::mutex mu_;
  std::int32_t free_head_ = -1;  // node free list (next links)
  std::size_t free_count_ = 0;
  std::unique_ptr<offload::CounterId[]> free_counters_;
  std::size_t free_counter_count_ = 0;
  std::int32_t ready_head_ = -1, ready_tail_ = -1;
  std::atomic<std::size_t> ready_count_{0};
  // Marked counters, a stack linked through Counter::marked_next: pushed by
  // any thread with a compare-exchange, taken whole by the collector.
  std::atomic<std::int32_t> marked_head_{-1};
  std::size_t unpublished_ready_ = 0;  // appended, not yet in ready_count_ (lock held)
  std::atomic<std::size_t> in_use_{0};
  std::uint64_t next_seq_ = 0;
  std::atomic<std::uint32_t> change_epoch_{0};
  std::atomic<int> sleepers_{0};
  offload::AgentBell* bell_ = nullptr;
  bool AnySleeper() const {
    return sleepers_.load(std::memory_order_seq_cst) > 0 ||
           (bell_ != nullptr && bell_->sleepers.load(std::memory_order_seq_cst) > 0);
  }
};

}  // namespace nicq::ofi
