// Queue: an ordered stream of enqueued starts and waits (chapter 13.3),
// executed by counters on the offload backend.
//
// Ordering (13.4) with one counter per queue, `qc`, that counts completed
// enqueued waits in enqueue order:
//  * an enqueued start posts its request's epoch gated on qc >= W, W = waits
//    enqueued before it: it begins once every earlier wait completed;
//  * an enqueued wait (or waitall) for n requests, the waits k0+1..k0+n,
//    posts n + 2 counter ops on a join counter J of the queue's ring of
//    joins: each request done -> J += 1; qc >= k0 -> J += 1; J reaching its
//    cumulative target -> qc += n (epoch_ops.h, BuildWaitAllOps). So qc
//    passes k0 only when all n requests completed and all earlier waits
//    did, even if they complete before earlier requests. When every one of
//    them was started after the k0-th wait (start gate qc >= k0), their
//    completion implies qc >= k0 and that op is left out.
//  * a join is reused only after its previous wait completed (else a later
//    wait's completions could stand in for the earlier one's); with every
//    join busy the enqueue drives progress until the oldest completes.
// Different queues share no counter and no lock. Enqueue calls allocate
// nothing (records live in a ring sized at MPI_Queue_init), make no syscall
// and hold no lock; when the backend has no trigger slots (kAgain) or the
// ring is full, the call drives progress until room appears (backpressure:
// the NIC or progress thread keeps completing earlier work meanwhile).
// Statuses and inactivity of waited requests are recorded when the host
// observes the completion: in MPI_Queue_fence, or in later enqueue calls.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "queue/enqueueable.h"
#include "queue/epoch_ops.h"

namespace nicq::queue {

// Fills an MPI_Status (opaque here) from a request status; set by the API.
using StatusFiller = void (*)(void* status, const RequestStatus& rs);

class Queue {
 public:
  static Status Create(int type, void* external, Queue** out);
  ~Queue();

  // Callers validated every request (CheckStart / CheckWait) first.
  Status EnqueueStart(Enqueueable* e);
  // MPI_Enqueue_wait(all): waits for every request of `es`, all or none
  // enqueued. statuses: empty (ignored) or one per request (may be null).
  Status EnqueueWaitAll(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                        StatusFiller fill);
  static constexpr std::size_t kMaxWaitAll = 64;  // requests per call (the API's bound)
  // Blocks until all enqueued work completed; requests return to inactive.
  Status Fence();
  // No enqueued work outstanding (freeing is allowed).
  bool Empty();
  // Counters of the queue and its pending waits, for stall reports.
  std::string Describe() const;

  // Precondition checks (no side effects): Ok or kQueue/kMatch with why.
  Status CheckStart(Enqueueable* e) const;
  Status CheckWait(Enqueueable* e) const;

  // One-thread-at-a-time guard (13.4 "Thread safety"): an atomic flag
  // exchanged on entry; a second thread inside the same queue gets kQueue.
  bool Enter() { return !busy_.exchange(true, std::memory_order_acquire); }
  void Leave() { busy_.store(false, std::memory_order_release); }

  int type() const { return type_; }
  std::uint64_t waits_enqueued() const { return k_; }
  offload::CounterId counter() const { return qc_; }

 private:
  struct Record {
    Enqueueable* e = nullptr;
    void* status = nullptr;
    StatusFiller fill = nullptr;
    std::uint64_t k = 0;      // qc value at which this wait completed
    std::uint64_t epoch = 0;  // the request's epoch it waited for
  };
  Queue() = default;
  // Records whose waits completed: statuses filled, requests inactive.
  void Reap();
  void Finish(const Record& r);
  // A free join slot (recycling those whose waits are done, else growing
  // the pool), or -1 when the backend has no counter left.
  std::int64_t TakeJoin();
  void AddJoin(offload::CounterId id);
  // Drive progress once while waiting for room / completion; errors on a
  // dead chain (error counters) or after NICQ_PEER_TIMEOUT without change.
  Status Backpressure(std::uint32_t* polls, const char* what);

  int type_ = 0;
  void* external_ = nullptr;
  offload::CounterId qc_ = offload::kNoCounter;
  // Join counters, one per outstanding enqueued wait(all) (BuildWaitAllOps).
  // Waits complete in enqueue order, so busy joins free in FIFO order. The
  // pool starts with kInitialJoins and grows by one backend counter when
  // every join is busy, up to one per wait record: an enqueued wait never
  // waits for a join (enqueue calls are local), only for a free record.
  // Every vector is reserved at Create, so growing allocates no memory.
  static constexpr std::size_t kInitialJoins = 8;
  struct BusyJoin {
    std::uint32_t slot;
    std::uint64_t free_at;  // qc value at which its wait is done
  };
  std::vector<offload::CounterId> join_ids_;  // by slot
  std::vector<std::uint64_t> join_total_;     // by slot: adds scheduled onto it so far
  std::vector<std::uint32_t> join_free_;      // free slots (stack)
  std::vector<BusyJoin> join_busy_;           // FIFO ring of busy slots
  std::size_t busy_head_ = 0, busy_count_ = 0;
  std::uint64_t k_ = 0;                            // waits enqueued
  std::uint64_t pending_starts_ = 0;               // starts enqueued without their wait yet
  std::vector<Record> ring_;                       // capacity fixed at Create
  std::vector<WaitTarget> targets_;                // EnqueueWaitAll scratch (kMaxWaitAll)
  std::vector<offload::TriggeredOp> scratch_ops_;  // its ops (2 kMaxWaitAll + 2)
  std::size_t head_ = 0, count_ = 0;
  // Backpressure: when the current idle spell began, and its phase (0 spin,
  // 1 yield, 2 block) as of the last clock read.
  std::uint64_t idle_since_ns_ = 0;
  int idle_phase_ = 0;
  std::uint32_t passes_ = 0;    // Backpressure passes (runtime polled every 8th)
  std::uint64_t stall_ms_ = 0;  // fence stall report after this long (4 x NICQ_PEER_TIMEOUT)
  std::atomic<bool> busy_{false};
};

// Whether `req` has an enqueued start pending (for MPI_Wait/Test/Start/
// Cancel/Request_free, which must reject it).
bool HasPendingEnqueuedStart(Request* req);

}  // namespace nicq::queue
