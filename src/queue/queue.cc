#include "queue/queue.h"

#include <chrono>
#include <string>
#include <thread>

#include "core/config.h"
#include "core/log.h"
#include "queue/epoch_ops.h"
#include "queue/match_engine.h"
#include "queue/matched_p2p.h"
#include "queue/offload_context.h"
#include "queue/queue_types.h"
#include "runtime/runtime.h"

namespace nicq::queue {
namespace {

using offload::kNoCounter;
using offload::TriggeredOp;

constexpr std::size_t kRecords = 4096;  // waits a queue holds before backpressure

std::uint64_t NowMs() {
  using namespace std::chrono;
  return std::uint64_t(duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

// steady_clock is read through the vDSO: no system call on the wait path.
std::uint64_t NowNs() {
  using namespace std::chrono;
  return std::uint64_t(duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count());
}

// Host waits: pure polling for kSpinNs after the last progress, polling
// with a yield between polls until kYieldNs, then blocking waits.
constexpr std::uint64_t kSpinNs = 20'000;
constexpr std::uint64_t kYieldNs = 2'000'000;

}  // namespace

Status Queue::Create(int type, void* external, Queue** out) {
  NICQ_RETURN_IF_ERROR(EnsureOffloadContext());
  EnsureProgressHook();
  const QueueType* t = FindQueueType(type);
  if (!t) return Error(Code::kArg, "queue type " + std::to_string(type) + " is not supported");
  auto* q = new Queue();
  q->type_ = type;
  q->external_ = external;
  q->ring_.resize(kRecords);
  // Read once: a lookup per fence (getenv, parse) is a microsecond of the
  // per-iteration cost of a fenced queue.
  q->stall_ms_ = 4000 * std::uint64_t(config::GetInt("NICQ_PEER_TIMEOUT"));
  Status st = Backend()->AllocCounters(1, &q->qc_);
  if (st.ok() && t->attach) st = t->attach(external);
  if (!st.ok()) {
    delete q;
    return st;
  }
  *out = q;
  return Status::Ok();
}

Queue::~Queue() {
  if (qc_ != kNoCounter && Backend()) Backend()->FreeCounter(qc_);
}

Status Queue::CheckStart(Enqueueable* e) const {
  if (!e || !e->IsMatched()) return Error(Code::kMatch, "request is not matched");
  const QueueSlot& s = e->qslot;
  if (s.queue == nullptr) return Status::Ok();
  if (s.queue != this)
    return Error(Code::kQueue, "request has an enqueued start pending on another queue");
  if (s.waited_epoch != s.started_epoch)
    return Error(Code::kQueue, "request's previous enqueued start has no enqueued wait yet");
  return Status::Ok();
}

Status Queue::CheckWait(Enqueueable* e) const {
  if (!e || !e->IsMatched()) return Error(Code::kMatch, "request is not matched");
  const QueueSlot& s = e->qslot;
  if (s.queue == nullptr) return Error(Code::kQueue, "request has no enqueued start pending");
  if (s.queue != this) return Error(Code::kQueue, "request's start was enqueued on another queue");
  if (s.waited_epoch == s.started_epoch)
    return Error(Code::kQueue, "a wait for the request's enqueued start is already enqueued");
  return Status::Ok();
}

Status Queue::Backpressure(std::uint32_t* polls, const char* what) {
  // The waiting rhythm of a host thread inside a queue call: poll, spin
  // briefly, yield, then block. Without a progress thread the emulated
  // backend advances only while someone polls it, and on shm a peer's
  // doorbell does not wake a CQ wait object, so the host keeps polling
  // (yielding the core between polls) for a bounded window after the last
  // progress before it blocks; otherwise every hop of a chain waits out a
  // sleep (measured: 1 KiB queued ring 24 us per iteration against 6 us
  // for MPI_Startall, most of it in the old 2 ms counter waits).
  const bool progressed = QueueProgress();
  bool rt_progressed = false;
  (void)rt::Progress(&rt_progressed);
  const std::uint64_t now = NowNs();
  if (progressed || rt_progressed || *polls == 0) {
    *polls = progressed || rt_progressed ? 0 : 1;
    idle_since_ns_ = now;
    return Status::Ok();
  }
  ++*polls;
  const std::uint64_t idle = now - idle_since_ns_;
  if (idle < kSpinNs) return Status::Ok();
  if (idle < kYieldNs) {
    std::this_thread::yield();
    return Status::Ok();
  }
  if (*polls % 64 == 0) {
    NudgeMatched();
    (void)Backend()->AddCounter(qc_, 0);
  }
  // Block on the queue counter for a short while (the backend drives its
  // progress and sleeps on its wait object, so a NIC or progress thread is
  // not starved); long idle waits cost a little latency, not the core.
  (void)Backend()->WaitCounter(qc_, Backend()->ReadCounter(qc_) + 1, 1);
  if (*polls % 16 == 0) {
    // A failed op stops its chain: report it rather than hang.
    for (std::size_t i = 0; i < count_; ++i) {
      const Record& r = ring_[(head_ + i) % ring_.size()];
      if (Backend()->ReadErrors(r.e->DoneCounter()) > 0)
        return Error(Code::kOther, std::string(what) + ": an enqueued operation failed");
    }
  }
  return Status::Ok();
}

void Queue::Finish(const Record& r) {
  QueueSlot& s = r.e->qslot;
  if (r.status && r.fill) {
    RequestStatus rs;
    r.e->GetStatus(&rs);
    r.fill(r.status, rs);
  }
  // Inactive again unless a newer start was enqueued meanwhile.
  if (s.queue == this && s.started_epoch == r.epoch) s.queue = nullptr;
}

void Queue::Reap() {
  if (count_ == 0) return;
  const std::uint64_t done = Backend()->ReadCounter(qc_);
  while (count_ > 0 && ring_[head_].k <= done) {
    Finish(ring_[head_]);
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
}

Status Queue::EnqueueStart(Enqueueable* e) {
  std::uint32_t polls = 0;
  for (;;) {
    Status st = e->StartGated(qc_, k_);
    if (st.ok()) break;
    if (st.code() != Code::kAgain) return st;
    NICQ_RETURN_IF_ERROR(Backpressure(&polls, "MPI_Enqueue_start"));
  }
  QueueSlot& s = e->qslot;
  s.queue = this;
  s.started_epoch = e->EpochsStarted();
  ++pending_starts_;
  return Status::Ok();
}

Status Queue::EnqueueWait(Enqueueable* e, void* status, StatusFiller fill) {
  QueueSlot& s = e->qslot;
  std::uint32_t polls = 0;
  Reap();
  const std::uint64_t m = s.waits + 1;
  const int slot = int(m % QueueSlot::kRing);
  // The ring entry's previous ops must be done, and a record must be free.
  for (;;) {
    const bool entry_free = s.wait_k[slot] == 0 || s.wait_qc[slot] == kNoCounter ||
                            Backend()->ReadCounter(s.wait_qc[slot]) >= s.wait_k[slot];
    if (entry_free && count_ < ring_.size()) break;
    NICQ_RETURN_IF_ERROR(Backpressure(&polls, "MPI_Enqueue_wait"));
    Reap();
  }
  const std::uint64_t k = k_ + 1;
  TriggeredOp* ops = s.wait_ops[slot];
  BuildWaitOps(e->DoneCounter(), e->DoneTarget(), s.join, m, qc_, k,
               Backend()->Caps().counter_op_cycles_deadlock, rt::WorldRank(), ops);
  for (;;) {
    Status st = Backend()->Post({ops, 3});
    if (st.ok()) break;
    if (st.code() != Code::kAgain) return st;
    NICQ_RETURN_IF_ERROR(Backpressure(&polls, "MPI_Enqueue_wait"));
    Reap();
  }
  s.waits = m;
  s.wait_qc[slot] = qc_;
  s.wait_k[slot] = k;
  s.waited_epoch = s.started_epoch;
  s.wait_index = k;
  k_ = k;
  --pending_starts_;
  ring_[(head_ + count_) % ring_.size()] = Record{e, status, fill, k, s.started_epoch};
  ++count_;
  return Status::Ok();
}

Status Queue::Fence() {
  std::uint32_t polls = 0;
  // A queue that makes no progress for 4 x NICQ_PEER_TIMEOUT is reported,
  // not waited on forever (a peer that never starts its side, a dead chain).
  const std::uint64_t stall_ms = stall_ms_;
  std::uint64_t seen = Backend()->ReadCounter(qc_);
  std::uint64_t last_change = NowMs();
  while (Backend()->ReadCounter(qc_) < k_) {
    NICQ_RETURN_IF_ERROR(Backpressure(&polls, "MPI_Queue_fence"));
    const std::uint64_t now_value = Backend()->ReadCounter(qc_);
    if (now_value == seen && NowMs() - last_change > 1000 && polls % 1024 == 0)
      NICQ_LOG(kDebug, kQueue, "fence waiting: %s", Describe().c_str());
    if (now_value != seen) {
      seen = now_value;
      last_change = NowMs();
    } else if (polls % 1024 == 1023 && NowMs() - last_change > stall_ms) {
      return Error(Code::kPending, "MPI_Queue_fence: " + std::to_string(k_ - now_value) +
                                       " enqueued wait(s) made no progress (is every matching "
                                       "operation started on its peer?) " +
                                       Describe());
    }
  }
  Reap();
  return Status::Ok();
}

std::string Queue::Describe() const {
  offload::OffloadBackend* b = Backend();
  std::string out = "[queue counter " + std::to_string(b->ReadCounter(qc_)) + "/" +
                    std::to_string(k_) + "; pending waits:";
  for (std::size_t i = 0; i < count_ && i < 8; ++i) {
    const Record& r = ring_[(head_ + i) % ring_.size()];
    out += " {k " + std::to_string(r.k) + " done " +
           std::to_string(b->ReadCounter(r.e->DoneCounter())) + "/" +
           std::to_string(r.e->DoneTarget()) + " join " +
           std::to_string(b->ReadCounter(r.e->qslot.join)) + " " + r.e->DebugString() + "}";
  }
  return out + "]";
}

bool Queue::Empty() {
  Reap();
  return count_ == 0 && pending_starts_ == 0;
}

bool HasPendingEnqueuedStart(Request* req) {
  Enqueueable* e = EnqueueableOf(req);
  if (!e || e->qslot.queue == nullptr) return false;
  const QueueSlot& s = e->qslot;
  if (s.waited_epoch != s.started_epoch) return true;
  return Backend()->ReadCounter(s.queue->counter()) < s.wait_index;
}

}  // namespace nicq::queue
