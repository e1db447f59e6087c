// Partitioned requests on queues: PartQueued (partitioned_queue.h) and the
// progress hook that runs their epochs.
#include "api/partitioned_queue.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "core/progress_hooks.h"
#include "runtime/async_progress.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

using nicq::offload::CounterId;
using nicq::offload::kNoCounter;

namespace nicq::api {
namespace {

// Every PartQueued made (requests enqueued at least once) and how many of
// their epochs are gated and not complete: the hook's fast path with none
// outstanding is one load, and the host progress thread stays busy while
// any is (an epoch's message may wait for a progress pass to be posted,
// and its completion for one to bump the done counter).
struct Polled {
  std::mutex mu;
  std::vector<PartQueued*> list;
  std::atomic<int> outstanding{0};
};
Polled& Registry() {
  static auto* r = new Polled();  // never destroyed: hooks may run during exit
  return *r;
}

bool Outstanding() {
  return Registry().outstanding.load(std::memory_order_acquire) > 0;
}

// A pass already under way on another thread is enough: never wait for it.
bool PollQueued(void*) {
  Polled& r = Registry();
  if (r.outstanding.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(r.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool any = false;
  for (PartQueued* q : r.list)
    if (q->Running()) any |= q->Poll();
  return any;
}

}  // namespace

PartQueued::PartQueued(Partitioned* p)
    : p_(p), marks_(p->is_send ? static_cast<std::size_t>(p->partitions) : 0) {}

PartQueued::~PartQueued() {
  (void)Release();
}

Status PartQueued::Init() {
  static const bool hooked = [] {
    rt::AddAsyncBusyProbe(&Outstanding);
    return progress::RegisterHook(&PollQueued, nullptr);
  }();
  if (!hooked) return Error(Code::kOther, "no room for the partitioned queue progress hook");
  offload::OffloadBackend* b = rt::Backend();
  if (b == nullptr) return Error(Code::kOther, "no offload backend is open");
  NICQ_RETURN_IF_ERROR(b->AllocCounters(1, &done_));
  Polled& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.list.push_back(this);
  listed_ = true;
  return Status::Ok();
}

Status PartQueued::Release() {
  if (listed_) {
    Polled& r = Registry();
    std::lock_guard<std::mutex> lock(r.mu);  // waits out a hook's pass over the list
    std::erase(r.list, this);
    listed_ = false;
  }
  if (done_ != kNoCounter) {
    if (offload::OffloadBackend* b = rt::Backend()) b->FreeCounter(done_);
    done_ = kNoCounter;
  }
  return Status::Ok();
}

Status PartQueued::StartGated(CounterId gate, std::uint64_t threshold) {
  const std::uint64_t n = gated_.load(std::memory_order_relaxed);
  // Room for its gate (a counter chain may gate kRing epochs ahead).
  if (n - begun_.load(std::memory_order_acquire) >= kGates) return Status(Code::kAgain, {});
  gates_[n % kGates] = Gate{gate, threshold};
  Registry().outstanding.fetch_add(1, std::memory_order_acq_rel);
  gated_.store(n + 1, std::memory_order_release);
  // Host-sequenced queues (no gate) begin it here when the last epoch is
  // complete; a counter chain's gate is read by later passes.
  if (!Poll()) rt::WakeIdleAsyncProgress();
  return Status::Ok();
}

bool PartQueued::Poll() {
  if (polling_.exchange(true, std::memory_order_acquire)) return false;
  bool progressed = false;
  for (;;) {
    const std::uint64_t begun = begun_.load(std::memory_order_relaxed);
    if (begun > completed_.load(std::memory_order_relaxed)) {
      // Epoch `begun` runs: its message posted (send), then done.
      if (p_->is_send && !p_->ProcNull() && !TryPost()) break;
      if (!p_->data_req.IsDone()) break;
      if (!p_->is_send && p_->data_req.status.error == 0 && !Unpacked(p_)) break;
      Complete(begun);
      progressed = true;
      continue;
    }
    if (begun == gated_.load(std::memory_order_acquire)) break;
    const Gate& g = gates_[begun % kGates];
    if (g.counter != kNoCounter) {
      const offload::OffloadBackend* b = rt::Backend();  // null once MPI_Finalize closed it
      if (b == nullptr || b->ReadCounter(g.counter) < g.threshold) break;
    }
    Begin(begun + 1);
    progressed = true;
  }
  polling_.store(false, std::memory_order_release);
  return progressed;
}

void PartQueued::Begin(std::uint64_t j) {
  Partitioned* p = p_;
  p->data_req.done.store(false, std::memory_order_relaxed);
  p->data_req.status = RequestStatus{};
  p->unpack.store(UnpackStage::kPending, std::memory_order_relaxed);
  if (p->ProcNull()) {
    p->data_req.MarkDone();
  } else if (!p->is_send) {
    void* buf = p->staged ? p->staging.data() : p->user_buf;
    Status st = rt::Irecv(buf, p->bytes, p->peer, static_cast<int>(p->receive_id),
                          p->data_comm.get(), &p->data_req);
    if (!st.ok()) {
      p->data_req.status.error = static_cast<int>(st.code());
      p->data_req.MarkDone();
    }
  }
  // Sequentially consistent with MarkReady's marks: of a Pready readying
  // the last partition and this epoch's beginning, one sees the other.
  begun_.store(j, std::memory_order_seq_cst);
  if (p->is_send && !p->ProcNull()) (void)TryPost();
}

// The begun epoch's message, once every partition is marked for it and the
// offer is here; exactly one caller (Poll, MarkReady) posts it.
bool PartQueued::TryPost() {
  const std::uint64_t j = begun_.load(std::memory_order_seq_cst);
  std::uint64_t posted = posted_.load(std::memory_order_acquire);
  if (posted >= j) return true;
  if (j == 0 || !p_->offer_req.IsDone()) return false;
  for (const auto& m : marks_)
    if ((m.load(std::memory_order_seq_cst) & kMarks) < j) return false;
  if (!posted_.compare_exchange_strong(posted, j, std::memory_order_acq_rel)) return false;
  Status st = PostSendData(p_);
  if (!st.ok()) {
    p_->data_req.status.error = static_cast<int>(st.code());
    p_->data_req.MarkDone();
  }
  return true;
}

void PartQueued::Complete(std::uint64_t j) {
  const Partitioned* p = p_;
  RequestStatus rs;
  if (p->ProcNull()) {
    rs.source = MPI_PROC_NULL;
    rs.tag = MPI_ANY_TAG;
  } else {
    rs.source = p->peer;
    rs.tag = p->tag;
    rs.bytes = p->data_req.status.bytes;
    rs.error = p->data_req.status.error;
  }
  last_ = rs;
  // A failed epoch counts too (the chain must not hang): its wait's status
  // carries the error. The add comes before completed_ is published: a
  // host-sequenced queue retires the wait on completed_, after which the
  // program may free the request and with it done_.
  if (offload::OffloadBackend* b = rt::Backend()) (void)b->AddCounter(done_, 1);
  completed_.store(j, std::memory_order_release);
  Registry().outstanding.fetch_sub(1, std::memory_order_acq_rel);
}

bool PartQueued::EpochDone(bool* failed) const {
  auto* self = const_cast<PartQueued*>(this);  // a poll: the epoch may complete now
  (void)self->Poll();
  if (completed_.load(std::memory_order_acquire) < gated_.load(std::memory_order_acquire))
    return false;
  *failed = last_.error != 0;
  return true;
}

void PartQueued::Unmark(const int* list, int upto, int low) {
  for (int i = 0; i < upto; ++i)
    marks_[std::size_t(list ? list[i] : low + i)].fetch_and(kMarks, std::memory_order_acq_rel);
}

int PartQueued::MarkReady(Call& c, const int* list, int n, int low) {
  // Readyings allowed per partition: one per enqueued start.
  const std::uint64_t enqueued = qslot.started_epoch;
  for (int i = 0; i < n; ++i) {
    const int part = list ? list[i] : low + i;
    const std::uint32_t old =
        marks_[std::size_t(part)].fetch_or(kInCall, std::memory_order_acq_rel);
    if (old & kInCall) {
      bool listed_twice = false;
      for (int j = 0; list && j < i; ++j) listed_twice = listed_twice || list[j] == part;
      Unmark(list, i, low);  // the first entry's mark, too, when listed twice
      return c.Fail(Code::kArg,
                    "partition " + std::to_string(part) +
                        (listed_twice ? " appears twice in array_of_partitions"
                                      : " is being marked ready by another call at the same time"));
    }
    if ((old & kMarks) >= enqueued) {
      Unmark(list, i + 1, low);
      return c.Fail(Code::kArg, "partition " + std::to_string(part) +
                                    " is already marked ready for each of the request's " +
                                    std::to_string(enqueued) + " enqueued starts");
    }
  }
  // Each mark: one more readying, the call's flag off (one exchange).
  for (int i = 0; i < n; ++i)
    marks_[std::size_t(list ? list[i] : low + i)].fetch_sub(kInCall - 1, std::memory_order_seq_cst);
  if (!p_->ProcNull() &&
      begun_.load(std::memory_order_seq_cst) > posted_.load(std::memory_order_acquire))
    (void)TryPost();
  return MPI_SUCCESS;
}

bool PartQueued::Arrived() {
  (void)Poll();
  const std::uint64_t j = qslot.started_epoch;
  const Partitioned* p = p_;
  if (begun_.load(std::memory_order_acquire) < j || !p->data_req.IsDone()) return false;
  return p->data_req.status.error != 0 || Unpacked(p_);
}

std::string PartQueued::OperationText() const {
  const Partitioned* p = p_;
  return std::string("partitioned ") + (p->is_send ? "send to" : "receive from") + " rank " +
         std::to_string(p->peer) + " tag " + std::to_string(p->tag);
}

std::string PartQueued::DebugString() const {
  return OperationText() + " (queued epochs gated " + std::to_string(gated_.load()) + ", begun " +
         std::to_string(begun_.load()) + ", posted " + std::to_string(posted_.load()) +
         ", complete " + std::to_string(completed_.load()) + "; done counter " +
         std::to_string(done_) + ")";
}

bool PartitionedEnqueueable(Call& c, ApiRequest* r, const std::string& what,
                            queue::Enqueueable** out) {
  Partitioned* p = PartitionedOf(r);
  if (!p->queued) {
    auto q = std::make_unique<PartQueued>(p);
    if (Status st = q->Init(); !st.ok())
      return c.Check(false, st.code(), what + ": " + st.message());
    p->queued = std::move(q);
  }
  *out = p->queued.get();
  return true;
}

}  // namespace nicq::api
