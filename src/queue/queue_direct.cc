// Direct steps of a host-sequenced queue (queue.h): with nothing ahead in
// the ring, a host-engine start begins inside its enqueue call and an
// enqueued wait whose requests are all done retires inside its own call;
// neither is ever written to the ring.
//
// Why this keeps chapter 13's order: the ring is empty exactly when every
// earlier enqueued start has begun and every earlier enqueued wait has
// retired, which is all an enqueued start waits for (13.4), and on a queue
// of MPI_QUEUE_TYPE_DEFAULT an enqueued start is MPI_Start (13.3.4). A wait
// whose requests are done, with no wait ahead of it, completes; a pass
// would retire it at once. Starts of other kinds (backend epochs,
// MPI_PROC_NULL, collectives), a start whose previous epoch still runs, and
// a wait that is not done or whose operation failed take the ring as
// before, so a failure is reported as a step at the head is: by the fence
// and every later pass (docs/queue-semantics.md, "Failed operations").
//
// What it saves: a step written and read back, a pass's loop and its
// StartHostEngineRun, and the ring turning non-empty and empty again (the
// count of queues holding steps and the progress thread's wake-up), about
// 1,000 host instructions per iteration of the 8-byte queued ring
// (docs/performance.md).
#include "queue/matched_p2p.h"
#include "queue/queue.h"
#include "queue/queue_types.h"
#include "runtime/runtime.h"

namespace nicq::queue {

std::size_t Queue::StartDirect(std::span<Enqueueable* const> es) {
  std::size_t n = 0;
  for (; n < es.size(); ++n) {
    Enqueueable* e = es[n];
    QueueSlot& s = e->qslot;
    if (!s.host_engine) break;
    auto* m = static_cast<MatchedP2p*>(e);
    // kAgain: its previous epoch still runs (MPI_Start outside the queue
    // cannot have begun it: such a request is refused). A step, in order.
    // Another error ended the epoch at once, in error: its wait reports it.
    if (m->StartHostEpoch().code() == Code::kAgain) [[unlikely]]
      break;
    s.started_epoch = m->EpochsStarted();
    s.queue = this;
    AddUnwaited(e);
  }
  return n;
}

bool Queue::RetireDirect(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                         StatusFiller fill, bool* polled) {
  for (const Enqueueable* e : es)
    if (!e->qslot.host_engine) return false;
  (void)rt::PollEngine();
  *polled = true;
  for (const Enqueueable* e : es)
    if (static_cast<const MatchedP2p*>(e)->HostEpochState() != EpochState::kDone) return false;
  const std::size_t n = es.size();
  const std::uint64_t k0 = k_;
  for (std::size_t i = 0; i < n; ++i) {
    Enqueueable* e = es[i];
    QueueSlot& s = e->qslot;
    s.waited_epoch = s.started_epoch;
    RemoveUnwaited(e);
    Finish(e, statuses.empty() ? nullptr : statuses[i], fill, s.started_epoch);
  }
  k_ = k0 + n;
  host_done_.fetch_add(n, std::memory_order_release);
  return true;
}

}  // namespace nicq::queue
