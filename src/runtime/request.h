// nicq::Request — the internal request object behind an MPI_Request.
//
// The API layer (src/api/) allocates requests from its handle table and
// passes Request* down; engines (p2p, collectives, queues) fill in
// completion. A request is complete when `done` is true (release store by
// the engine, acquire load by waiters). Persistent requests keep their
// arguments here so MPI_Start re-posts without allocating.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace nicq {

struct Comm;
struct Request;

// Operations of engines other than point-to-point (collectives, queues,
// matching) on requests the API layer does not know how to start, free or
// cancel itself. The API layer calls these when Request::ops is set.
struct RequestOps {
  Status (*start)(Request* req) = nullptr;   // MPI_Start of a persistent request
  Status (*free)(Request* req) = nullptr;    // MPI_Request_free (inactive request)
  Status (*cancel)(Request* req) = nullptr;  // MPI_Cancel; nullptr: not cancellable
  // Called by the waiter after IsDone(), before the status is reported
  // (e.g. unpack, mark a persistent request inactive); may be nullptr.
  Status (*complete)(Request* req) = nullptr;
  // True while an enqueued start of this request is pending on a queue
  // (chapter 13): MPI_Start/Wait/Test/Cancel/Request_free are then
  // erroneous and the API layer rejects them. May be nullptr.
  bool (*enqueued)(Request* req) = nullptr;
};

enum class ReqKind : std::uint8_t {
  kSend,
  kRecv,
  kPersistentSend,
  kPersistentRecv,
  kColl,            // nonblocking collective
  kPersistentColl,  // persistent collective
  kMatch,           // MPI_Imatch / MPI_Imatchall
  kGeneralized,
};

enum class SendMode : std::uint8_t { kStandard, kBuffered, kSynchronous, kReady };

// What MPI_Status reports; bytes is the received (or sent) byte count.
struct RequestStatus {
  int source = -1;  // comm rank (MPI_ANY_SOURCE until matched)
  int tag = -1;
  int error = 0;  // nicq::Code value
  std::size_t bytes = 0;
  bool cancelled = false;
};

struct Request {
  ReqKind kind = ReqKind::kSend;
  SendMode mode = SendMode::kStandard;
  bool persistent = false;
  bool active = false;  // persistent: started, not yet completed by a wait/test
  std::atomic<bool> done{false};
  RequestStatus status;

  // Arguments (kept for persistent restart; also used by the engines).
  Comm* comm = nullptr;
  void* buf = nullptr;  // contiguous byte buffer the engine reads/writes
  std::size_t bytes = 0;
  int peer = -1;  // comm rank, MPI_ANY_SOURCE(-2) or MPI_PROC_NULL(-1) as in mpi.h
  int tag = 0;    // user tag or MPI_ANY_TAG(-1)

  // Owner hooks (API layer): e.g. unpack a noncontiguous datatype. Called by
  // the waiter thread after `done`, never by the progress engine.
  void* api_data = nullptr;

  // Engine-private state (p2p: rendezvous slot, posted context; coll: plan).
  void* engine = nullptr;
  std::uint64_t engine_word[4] = {};
  const RequestOps* ops = nullptr;  // set by non-p2p engines; see RequestOps

  void MarkDone() { done.store(true, std::memory_order_release); }
  bool IsDone() const { return done.load(std::memory_order_acquire); }
  // Fresh for another post, once the engine is done with it: not done, an
  // empty status, no engine link (what rt::IsendFresh/IrecvFresh take).
  void MakeFresh() {
    done.store(false, std::memory_order_relaxed);
    status = RequestStatus{};
    engine = nullptr;
  }
};

}  // namespace nicq
