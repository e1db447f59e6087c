// Partitioned requests on queues (draft chapter 13: MPI_Enqueue_start
// takes "a partitioned persistent request (which is initialized as
// matched)"). PartQueued is the Enqueueable of one partitioned request;
// its epochs run on the point-to-point engine, as MPI_Start's do
// (partitioned.cc), and a queue orders them with its other items.
//
// Epochs. The j-th StartGated of the request is queued epoch j. It begins
// (a receive posts its receive; a send may post its message) once its gate
// is reached and epoch j-1 has completed; it completes when its message
// went out or arrived (a staged receive unpacked). Then the request's done
// counter, a backend counter, is bumped: DoneCounter() reaches DoneTarget()
// (epochs gated) exactly when the last gated epoch is complete, which is
// what counter chains' enqueued waits compile to, and EpochDone() answers
// host-sequenced queues from the same state. A failed epoch completes too,
// its error in the status (GetStatus) the enqueued wait reports.
//
// Who runs them: Poll(), from a progress hook (every MPI call's progress,
// the fence's waits among them, and the host progress thread while epochs
// are outstanding), from StartGated, from EpochDone and from MPI_Pready*.
// A pass is one thread's at a time (a flag taken with one exchange, never
// waited for); another thread's pass finds it taken and leaves it.
//
// Pready before the start ran. A send's partitions are counted per
// partition, as a NIC's pready counter would count them: marks_[i] is how
// many times partition i was readied by MPI_Pready* on queued epochs.
// Queued epoch j's message is posted once the epoch began and every mark
// is >= j. A partition may be readied once per enqueued start: a call that
// would take a mark past the starts enqueued so far (qslot.started_epoch)
// is MPI_ERR_ARG and changes nothing. So a program may ready the
// partitions of an enqueued start before the queue ran it, and of several
// enqueued starts ahead (each readying counts for the oldest of them whose
// partition is not ready yet). MPI_Pready* on another thread than the
// queue's reads qslot (the starts enqueued so far) as the program's own
// ordering left it: the start must have been enqueued before the Pready.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "api/partitioned.h"
#include "queue/enqueueable.h"

namespace nicq::api {

class PartQueued final : public queue::Enqueueable {
 public:
  explicit PartQueued(Partitioned* p);
  ~PartQueued() override;
  // Its done counter, and its place among the requests the progress hook
  // polls (not the hot path: the request's first enqueue call).
  Status Init();

  // ---- queue::Enqueueable: matched from MPI_Psend_init / MPI_Precv_init ----
  Status BeginMatch() override { return Status::Ok(); }
  Status PollMatch(bool* done) override {
    *done = true;
    return Status::Ok();
  }
  bool IsMatched() const override { return true; }
  Status StartGated(offload::CounterId gate, std::uint64_t threshold) override;
  offload::CounterId DoneCounter() const override { return done_; }
  std::uint64_t DoneTarget() const override { return gated_.load(std::memory_order_acquire); }
  std::uint64_t EpochsStarted() const override { return gated_.load(std::memory_order_acquire); }
  bool EpochDone(bool* failed) const override;
  void GetStatus(RequestStatus* out) const override { *out = last_; }
  Status Release() override;
  std::string DebugString() const override;
  std::string OperationText() const override;

  // An enqueued start of the request is pending: its wait has not retired
  // it yet (the queue's bookkeeping; written by the queue's thread).
  bool Open() const { return qslot.queue != nullptr; }
  // A gated epoch has not completed.
  bool Running() const {
    return gated_.load(std::memory_order_acquire) != completed_.load(std::memory_order_acquire);
  }
  // MPI_Pready* on queued epochs, partitions checked in range: marks each
  // listed partition (list, or low..low+n-1) for the oldest enqueued epoch
  // that lacks it; MPI_ERR_ARG (nothing changed) for a partition listed
  // twice or already readied for every enqueued start.
  int MarkReady(Call& c, const int* list, int n, int low);
  // MPI_Parrived: whether the data of the last enqueued start's epoch is in
  // the user's buffer (false until that start ran).
  bool Arrived();
  // One pass: completes the running epoch when it is done, begins the next
  // whose gate is reached. True when it changed something.
  bool Poll();

 private:
  void Begin(std::uint64_t j);
  bool TryPost();
  void Complete(std::uint64_t j);
  void Unmark(const int* list, int upto, int low);

  Partitioned* p_;
  offload::CounterId done_ = offload::kNoCounter;
  bool listed_ = false;  // among the polled requests
  // Gates of epochs gated and not begun: entry j % kGates is epoch j+1's.
  struct Gate {
    offload::CounterId counter = offload::kNoCounter;
    std::uint64_t threshold = 0;
  };
  static constexpr std::uint64_t kGates = queue::QueueSlot::kRing;
  Gate gates_[kGates];
  std::atomic<std::uint64_t> gated_{0};      // StartGated calls (the queue's epochs)
  std::atomic<std::uint64_t> begun_{0};      // of those, begun
  std::atomic<std::uint64_t> posted_{0};     // send: epochs whose message was posted
  std::atomic<std::uint64_t> completed_{0};  // of those begun, complete
  std::atomic<bool> polling_{false};         // a Poll pass runs
  RequestStatus last_;                       // the last completed epoch's
  // Send: readyings per partition; kInCall marks one an MPI_Pready* call
  // is marking (its duplicate check).
  static constexpr std::uint32_t kInCall = 1u << 31, kMarks = kInCall - 1;
  std::vector<std::atomic<std::uint32_t>> marks_;
};

// The Enqueueable of a partitioned request (made on its first enqueue
// call, cached in r->enqueueable by the caller); false with the error
// recorded on c when no backend counter is free. `what` names the element.
bool PartitionedEnqueueable(Call& c, ApiRequest* r, const std::string& what,
                            queue::Enqueueable** out);

}  // namespace nicq::api
