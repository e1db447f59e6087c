// Enqueueable: what a matched persistent request (point-to-point here,
// collective in src/coll) exposes so that queues (chapter 13) can start and
// wait on it with counters only.
//
// Contract with the engines:
//  * A persistent collective request (Request::kind == kPersistentColl) has
//    Request::engine pointing to an object derived from Enqueueable (COLL
//    sets it in *_init, with Request::ops its own RequestOps). Matched
//    point-to-point requests get Request::ops == &kMatchedP2pOps and
//    Request::engine -> MatchedP2p (src/queue/matched_p2p.h).
//  * Epochs: the n-th start (n = 1, 2, ...) of the request is epoch n. After
//    StartGated() for epoch n, the counter DoneCounter() reaches DoneTarget()
//    exactly when epoch n is complete (send buffer reusable / data landed /
//    collective result in place), and only grows.
//  * StartGated(gate, threshold) posts epoch n's ops so that the epoch begins
//    when counter `gate` >= `threshold` (kNoCounter: at once, which is what
//    MPI_Start does). Hot path: no allocation, no syscall, no lock held while
//    firing. kAgain: the backend has no trigger slots now; nothing was posted
//    and the caller drives progress and retries.
//  * All counters live on Backend() (rt::Backend(), the process-wide one).
//  * GetStatus() is called by the host after the epoch completed (fence or
//    MPI_Wait); DebugString() feeds stall reports.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "providers/backend.h"
#include "runtime/offload_context.h"
#include "runtime/request.h"

namespace nicq::queue {

class Queue;
class Enqueueable;

// The last started epoch of a request, as a queue's pass retiring its wait
// reads it.
enum class EpochState : std::uint8_t { kRuns, kDone, kFailed };

// Bookkeeping the queue keeps inside each enqueueable request (no allocation
// per enqueue: everything is here, sized at match time).
struct QueueSlot {
  Queue* queue = nullptr;           // queue holding a pending enqueued start, else nullptr
  std::uint64_t started_epoch = 0;  // epoch of the pending enqueued start
  std::uint64_t waited_epoch = 0;   // last epoch whose wait was enqueued
  std::uint64_t start_gate = 0;     // counter chains: the pending start's gate, qc >= this
  // Links of the queue's list of requests with an enqueued start and no
  // enqueued wait yet (Queue::unwaited_), so a failed chain detaches them.
  Enqueueable* unwaited_prev = nullptr;
  Enqueueable* unwaited_next = nullptr;
  // Epochs a request may have enqueued ahead of its completions (engines
  // size their descriptor rings by it).
  static constexpr int kRing = 16;
  int owner_handle = 0;  // MPI_Request of the request (for messages)
  // A matched point-to-point request whose epochs run on the point-to-point
  // engine (MatchedP2p, "Host-engine epochs"): a host-sequenced queue starts
  // and retires its steps through MatchedP2p directly, with no ops to build.
  bool host_engine = false;
  // Duplicate check of one enqueue call (Queue::NextCheckStamp).
  const Queue* check_queue = nullptr;
  std::uint64_t check_stamp = 0;
  int check_index = 0;
};

class Enqueueable {
 public:
  virtual ~Enqueueable() = default;

  // ---- match (MPI_Match / MPI_Imatch and variants) ----
  // Local: post this request's part of the match exchange.
  virtual Status BeginMatch() = 0;
  // Local: advance the exchange; *done once matched. Errors are final.
  virtual Status PollMatch(bool* done) = 0;
  virtual bool IsMatched() const = 0;

  // ---- data path (matched only) ----
  virtual Status StartGated(offload::CounterId gate, std::uint64_t threshold) = 0;
  // Batched starts (a queue posting the ops of several starts with one
  // Post): BuildStart writes the next epoch's ops, gated like StartGated, to
  // ops[0..kMaxStartOps) and changes nothing; *count is how many (0
  // allowed). kAgain: no room for another epoch now (retry after progress);
  // kUnsupportedOperation: this engine starts only through StartGated. Once
  // the caller posted the ops, CommitStart makes that epoch the started one
  // and bumps *host_add (offload::kNoCounter: none) by one.
  static constexpr std::size_t kMaxStartOps = 2;
  virtual Status BuildStart(offload::CounterId /*gate*/, std::uint64_t /*threshold*/,
                            offload::TriggeredOp* /*ops*/, std::size_t* /*count*/,
                            offload::CounterId* /*host_add*/) {
    return Status(Code::kUnsupportedOperation, {});
  }
  virtual Status CommitStart(offload::CounterId /*host_add*/) {
    return Status(Code::kUnsupportedOperation, {});
  }
  // The queue saw an enqueued wait of this request complete (Reap, inside
  // an enqueued wait or a fence). A resident plan re-arms its window here,
  // so the next enqueued start finds its epoch armed and posts only its gate.
  virtual void EpochRetired() {}
  virtual offload::CounterId DoneCounter() const = 0;
  virtual std::uint64_t DoneTarget() const = 0;  // for the last started epoch
  // Whether the last started epoch is complete; *failed when it ended in
  // an error. By default DoneCounter() reached DoneTarget() (errors: the
  // counter's error count); an engine whose epochs the host runs on the
  // point-to-point engine answers from its own request (host-sequenced
  // queues only, which read completion through this).
  virtual bool EpochDone(bool* failed) const {
    offload::OffloadBackend* b = rt::Backend();
    *failed = b->ReadErrors(DoneCounter()) > 0;
    return b->ReadCounter(DoneCounter()) >= DoneTarget();
  }
  virtual std::uint64_t EpochsStarted() const = 0;
  // Status of the last completed epoch (source, tag, bytes) for MPI_Status.
  virtual void GetStatus(RequestStatus* out) const = 0;
  // Releases counters and registrations (request freed; no epoch pending).
  virtual Status Release() = 0;
  // Counters and peer of this request, for stall reports (may be empty).
  virtual std::string DebugString() const { return {}; }
  // The operation as an error message names it ("receive from rank 1 tag
  // 11"; ranks of the request's communicator).
  virtual std::string OperationText() const { return DebugString(); }
  // Whether the peer this request's epochs need is known gone (its process
  // exited); *rank: that peer's rank in the request's communicator. A
  // liveness check (a system call): for waits that stalled, not hot paths.
  virtual bool PeerGone(int* /*rank*/) const { return false; }

  // Queue bookkeeping (src/queue only).
  QueueSlot qslot;
};

// The Enqueueable behind a request, or nullptr when it has none yet (an
// unmatched persistent point-to-point request, any nonpersistent request).
Enqueueable* EnqueueableOf(Request* req);

}  // namespace nicq::queue
