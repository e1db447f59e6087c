#include "queue/queue.h"

#include <chrono>
#include <string>
#include <thread>

#include "core/config.h"
#include "core/log.h"
#include "offload/algorithms/enqueued_wait.h"
#include "queue/match_engine.h"
#include "queue/matched_p2p.h"
#include "queue/queue_types.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::queue {
namespace {

using offload::BuildWaitAllOps;
using offload::kNoCounter;
using offload::TriggeredOp;
using offload::WaitTarget;

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

bool HostSequencedQueues() {
  // Host sequencing where host calls alone would fire the chains (the
  // emulated backend without its agent), and where the agent's hops cost
  // more than the host progress thread running the steps beside it: over a
  // backend whose poll only reads memory (shm), each hop of a counter chain
  // is an agent's poll in another process, and the 8-byte queued ring took
  // 14-15 us per iteration that way on a core per thread against 0.9-2.8
  // host-sequenced (MPI_Startall 0.8-1.4). Over tcp the agent's chains
  // were the faster (37-39 against 55-60 us; performance.md Run 44).
  // The backend is chosen once per process, so is this (read once: matched
  // requests ask at every match).
  static const std::string exec = config::GetString("NICQ_QUEUE_EXEC");
  if (exec == "host") return true;
  if (exec == "counters") return false;
  offload::OffloadBackend* b = rt::Backend();
  if (b == nullptr) return false;
  if (b->HostDriven()) return true;
  return b->Fires() == offload::Firing::kAgentThread && b->Caps().memory_poll;
}

Status Queue::Create(int type, void* external, Queue** out) {
  NICQ_RETURN_IF_ERROR(rt::EnsureOffloadContext());
  EnsureProgressHook();
  const QueueType* t = FindQueueType(type);
  if (!t) return Error(Code::kArg, "queue type " + std::to_string(type) + " is not supported");
  auto* q = new Queue();
  q->type_ = type;
  q->external_ = external;
  q->ring_.resize(kRecords);
  q->targets_.resize(kMaxWaitAll);
  q->scratch_ops_.resize(2 * kMaxWaitAll + 2);
  // Read once: a lookup per fence (getenv, parse) is a microsecond of the
  // per-iteration cost of a fenced queue.
  q->stall_ms_ = 4000 * std::uint64_t(config::GetInt("NICQ_PEER_TIMEOUT"));
  q->host_ = HostSequencedQueues();
  // Host-sequenced queues run their steps; counter chains keep deferred
  // starts and waits there (queue_host.cc). Both are advanced by progress.
  q->steps_.resize(kSteps);
  TrackQueue(q, true);
  q->join_ids_.reserve(kRecords);
  q->join_total_.reserve(kRecords);
  q->join_free_.reserve(kRecords);
  q->join_busy_.resize(kRecords);
  Status st = rt::Backend()->AllocCounters(1, &q->qc_);
  offload::CounterId joins[kInitialJoins];
  if (st.ok()) st = rt::Backend()->AllocCounters(kInitialJoins, joins);
  if (st.ok())
    for (offload::CounterId j : joins) q->AddJoin(j);
  if (st.ok() && t->attach) st = t->attach(external);
  if (!st.ok()) {
    delete q;
    return st;
  }
  *out = q;
  return Status::Ok();
}

Queue::~Queue() {
  // Out of the registry first: no progress pass can enter it after that.
  TrackQueue(this, false);
  step_count_ = 0;  // no longer counted among the queues holding steps
  NoteSteps();
  offload::OffloadBackend* b = rt::Backend();
  if (!b) return;
  if (qc_ != kNoCounter) b->FreeCounter(qc_);
  for (offload::CounterId j : join_ids_) b->FreeCounter(j);
}

bool Queue::EnterContended() {
  // A progress pass of another thread (AdvanceQueueSteps) is short: wait it
  // out, first spinning, then yielding the core to it.
  for (int spins = 0;; ++spins) {
    std::uint32_t g = guard_.load(std::memory_order_relaxed);
    if (g & kUserInside) return false;  // another application thread is inside
    if (g == 0 && guard_.compare_exchange_weak(g, kUserInside, std::memory_order_acquire))
      return true;
    if (spins >= 64) std::this_thread::yield();
  }
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
  // A pass polls the queues' backend; the whole runtime (the engine's CQ
  // and every progress hook, the queues' among them) when that found
  // nothing, and every 8th pass regardless. The clock is read when an idle
  // spell begins and then every 8th idle pass: a pass that progressed needs
  // no time. Both were several percent of a queued ring's iteration.
  if (host_ && HostEngineEpochsInUse()) return WaitInEngine(polls);
  bool progressed = QueueProgress();
  if (!progressed || (++passes_ & 7) == 0) {
    bool rt_progressed = false;
    (void)rt::Progress(&rt_progressed);
    progressed |= rt_progressed;
  }
  if (step_count_ > 0) {
    bool stepped = false;
    NICQ_RETURN_IF_ERROR(AdvanceHost(&stepped));
    progressed |= stepped;
  }
  if (progressed) {
    *polls = 0;
    return Status::Ok();
  }
  // Ranks outnumbering cores: no spin phase. What this thread waits for
  // needs a peer that is off its core while we poll (the runtime's waits
  // yield at once there too, rt::Oversubscribed).
  const std::uint64_t spin_ns = rt::Oversubscribed() ? 0 : kSpinNs;
  if (*polls == 0) {
    *polls = 1;
    idle_since_ns_ = NowNs();
    idle_phase_ = spin_ns > 0 ? 0 : 1;
    return Status::Ok();
  }
  ++*polls;
  if (*polls % 8 == 0) {
    const std::uint64_t idle = NowNs() - idle_since_ns_;
    idle_phase_ = idle < spin_ns ? 0 : idle < kYieldNs ? 1 : 2;
  }
  if (idle_phase_ == 0) return Status::Ok();
  if (idle_phase_ == 1) {
    std::this_thread::yield();
    return Status::Ok();
  }
  if (*polls % 64 == 0) {
    NudgeMatched();
    (void)rt::Backend()->AddCounter(qc_, 0);
  }
  // Block on the queue counter for a short while (the backend drives its
  // progress and sleeps on its wait object, so a NIC or progress thread is
  // not starved); long idle waits cost a little latency, not the core.
  offload::CounterId block_counter = qc_;
  std::uint64_t block_value = 0;
  if (!host_ || !HostBlockOn(&block_counter, &block_value)) {
    block_counter = qc_;
    block_value = rt::Backend()->ReadCounter(qc_) + 1;
  }
  // A backend that learned of a dead peer says so (kProcFailed, naming
  // it): that is the chain's failure, in the class the program expects.
  // Anything else (the 1 ms limit) only ends this round of waiting.
  if (Status waited = rt::Backend()->WaitCounter(block_counter, block_value, 1);
      waited.code() == Code::kProcFailed) {
    const Enqueueable* culprit = nullptr;
    Status known = ChainFailure(what, false, &culprit);
    Status failure =
        known.ok() ? Error(Code::kProcFailed, std::string(what) + ": " + waited.message()) : known;
    return host_ ? failure : FailChain(failure, culprit);
  }
  if (*polls % 16 == 0) {
    // A failed op stops its chain: report it rather than hang. A peer's
    // exit fails no receive from it: after NICQ_PEER_TIMEOUT idle, look.
    const bool check_peers =
        *polls % 256 == 0 && NowNs() - idle_since_ns_ >= stall_ms_ / 4 * 1000000;
    const Enqueueable* culprit = nullptr;
    if (Status failure = ChainFailure(what, check_peers, &culprit); !failure.ok())
      return host_ ? failure : FailChain(failure, culprit);
  }
  return Status::Ok();
}

namespace {

std::string FailureText(Code c, int peer) {
  switch (c) {
    case Code::kTruncate:
      return "the message is longer than the receive buffer (MPI_ERR_TRUNCATE)";
    case Code::kProcFailed:
      return peer >= 0 ? "rank " + std::to_string(peer) + " has failed (MPI_ERR_PROC_FAILED)"
                       : "the peer has failed (MPI_ERR_PROC_FAILED)";
    default:
      return "error class " + std::to_string(int(c));
  }
}

}  // namespace

Status Queue::ChainFailure(const char* what, bool check_peers, const Enqueueable** culprit) const {
  offload::OffloadBackend* b = rt::Backend();
  // Counter chains: the pending waits' records; host sequencing: its
  // steps' requests (started or not).
  const std::size_t n = host_ ? step_count_ : count_;
  for (std::size_t i = 0; i < n; ++i) {
    const Enqueueable* e = host_ ? StepAt(i).e : ring_[(head_ + i) % ring_.size()].e;
    const Code c = b->ErrorClass(e->DoneCounter());
    int peer = -1;
    if (c != Code::kOk) {
      *culprit = e;
      if (c == Code::kProcFailed) (void)e->PeerGone(&peer);
      return Error(c, std::string(what) + ": enqueued " + e->OperationText() +
                          " failed: " + FailureText(c, peer));
    }
    if (check_peers && b->ReadCounter(e->DoneCounter()) < e->DoneTarget() && e->PeerGone(&peer)) {
      *culprit = e;
      return Error(Code::kProcFailed,
                   std::string(what) + ": enqueued " + e->OperationText() +
                       " cannot complete: " + FailureText(Code::kProcFailed, peer));
    }
  }
  return Status::Ok();
}

Status Queue::FailChain(const Status& failure, const Enqueueable* culprit) {
  StepsWatch watch(this);
  offload::OffloadBackend* b = rt::Backend();
  // A wait whose epoch completed before the failure keeps its status; one
  // whose epoch never started (a deferred start) did not complete.
  auto fill = [&](const Enqueueable* e, void* status, StatusFiller filler, std::uint64_t epoch) {
    if (!status || !filler) return;
    RequestStatus rs;
    e->GetStatus(&rs);
    const bool done =
        e->EpochsStarted() >= epoch && b->ReadCounter(e->DoneCounter()) >= e->DoneTarget();
    if (rs.error == 0 && !done) rs.error = int(e == culprit ? failure.code() : Code::kPending);
    filler(status, rs);
  };
  // Whatever epoch a request's slot names (a newer start than the waited
  // one included), it is this queue's and cannot run now: detached.
  auto detach = [&](Enqueueable* e) {
    if (e->qslot.queue == this) e->qslot.queue = nullptr;
  };
  for (; count_ > 0; head_ = (head_ + 1) % ring_.size(), --count_) {
    const Record& r = ring_[head_];
    fill(r.e, r.status, r.fill, r.epoch);
    detach(r.e);
  }
  // Deferred steps come after every posted wait in enqueue order.
  for (; step_count_ > 0; step_head_ = (step_head_ + 1) & kStepMask, --step_count_) {
    const Step& st = StepAt(0);
    if (st.wait) fill(st.e, st.status, st.fill, st.epoch);
    detach(st.e);
  }
  while (unwaited_ != nullptr) {
    Enqueueable* e = unwaited_;
    RemoveUnwaited(e);
    detach(e);
  }
  failed_ = failure;
  return failure;
}

Status Queue::WaitInEngine(std::uint32_t* polls) {
  // Host-engine epochs complete in the point-to-point engine: wait as its
  // own waits do (rt::ProgressWait: spin, yield, then sleep on the shm
  // inbox's futex, which a sender's doorbell ends; at once yielding where
  // ranks outnumber cores), so a queue waits no worse than MPI_Waitall. Its
  // pass runs every progress hook, the backend's poll and the other queues'
  // steps among them; this queue's steps run here.
  if (*polls == 0) engine_backoff_.Reset();
  NICQ_RETURN_IF_ERROR(rt::ProgressWait(engine_backoff_));
  bool stepped = false;
  NICQ_RETURN_IF_ERROR(AdvanceHost(&stepped));
  if (stepped) {
    engine_backoff_.Reset();
    *polls = 0;
  } else {
    ++*polls;  // the fence's stall report counts these
  }
  return Status::Ok();
}

void Queue::Reap() {
  if (count_ == 0) return;
  const std::uint64_t done = rt::Backend()->ReadCounter(qc_);
  while (count_ > 0 && ring_[head_].k <= done) {
    Finish(ring_[head_].e, ring_[head_].status, ring_[head_].fill, ring_[head_].epoch);
    head_ = (head_ + 1) % ring_.size();
    --count_;
  }
}

void Queue::AddJoin(offload::CounterId id) {
  join_free_.push_back(std::uint32_t(join_ids_.size()));
  join_ids_.push_back(id);
  join_total_.push_back(0);
}

std::int64_t Queue::TakeJoin() {
  const std::uint64_t done = rt::Backend()->ReadCounter(qc_);
  while (busy_count_ > 0 && join_busy_[busy_head_].free_at <= done) {
    join_free_.push_back(join_busy_[busy_head_].slot);
    busy_head_ = (busy_head_ + 1) % join_busy_.size();
    --busy_count_;
  }
  if (join_free_.empty() && join_ids_.size() < kRecords) {
    offload::CounterId id = kNoCounter;
    if (rt::Backend()->AllocCounters(1, &id).ok()) AddJoin(id);  // cold: a burst of waits
  }
  if (join_free_.empty()) return -1;
  const std::uint32_t slot = join_free_.back();
  join_free_.pop_back();
  return slot;
}

Status Queue::EnqueueStart(Enqueueable* e) {
  if (!failed_.ok()) [[unlikely]]
    return failed_;
  if (host_) return HostEnqueueStart({&e, 1});
  if (step_count_ == 0) {
    Status st = e->StartGated(qc_, k_);
    if (st.ok()) {
      QueueSlot& s = e->qslot;
      s.queue = this;
      s.started_epoch = e->EpochsStarted();
      s.start_gate = k_;
      AddUnwaited(e);
      return Status::Ok();
    }
    if (st.code() != Code::kAgain) return st;
  }
  // No room to post it now (its request has kRing epochs in flight, or the
  // backend no trigger slots), or deferred steps ahead of it: a step that
  // later passes post in order (queue_host.cc), so the call stays local.
  return DeferStart(e);
}

Status Queue::EnqueueStartAllChecked(std::span<Enqueueable* const> es) {
  if (es.size() > kMaxWaitAll) return Error(Code::kCount, "more than 64 requests in one call");
  if (!failed_.ok()) [[unlikely]]
    return failed_;
  if (host_) return HostEnqueueStart(es);
  for (Enqueueable* e : es) NICQ_RETURN_IF_ERROR(EnqueueStart(e));
  return Status::Ok();
}

Status Queue::EnqueueWaitAllChecked(std::span<Enqueueable* const> es,
                                    std::span<void* const> statuses, StatusFiller fill) {
  const std::size_t n = es.size();
  if (n == 0) return Status::Ok();
  if (n > kMaxWaitAll) return Error(Code::kCount, "more than 64 requests in one enqueued wait");
  if (!failed_.ok()) [[unlikely]]
    return failed_;
  if (host_) return HostEnqueueWaitAll(es, statuses, fill);
  const std::uint64_t k0 = k_;
  if (step_count_ > 0) {  // behind deferred steps: in order with them
    NICQ_RETURN_IF_ERROR(DeferWaitAll(es, statuses, fill, k0));
  } else {
    // Enqueue calls are local (13.3): with no trigger slots or wait records
    // free now (cxi's deferred-work queue is small), the wait becomes a
    // deferred step that later passes post in order, rather than blocking
    // here for room that may need a peer this call holds back.
    Status st = PostWait(es, statuses, fill, k0, nullptr);
    if (st.code() == Code::kAgain) st = DeferWaitAll(es, statuses, fill, k0);
    NICQ_RETURN_IF_ERROR(st);
  }
  for (Enqueueable* e : es) {
    QueueSlot& s = e->qslot;
    s.waited_epoch = s.started_epoch;
  }
  k_ = k0 + n;
  for (Enqueueable* e : es) RemoveUnwaited(e);
  return Status::Ok();
}

Status Queue::PostWait(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                       StatusFiller fill, std::uint64_t k0, std::uint32_t* polls) {
  const std::size_t n = es.size();
  const char* what = n == 1 ? "MPI_Enqueue_wait" : "MPI_Enqueue_waitall";
  Reap();
  // n free records and a free join (only the backend's counter pool can
  // run out of those). From a progress pass (no polls): kAgain, next pass.
  std::int64_t j = -1;
  for (;;) {
    if (count_ + n <= ring_.size() && (j = TakeJoin()) >= 0) break;
    if (!polls) return Status(Code::kAgain, {});
    NICQ_RETURN_IF_ERROR(Backpressure(polls, what));
    Reap();
  }
  WaitTarget* targets = targets_.data();
  bool gate_implied = true;  // every start gated on qc >= k0 (BuildWaitAllOps)
  for (std::size_t i = 0; i < n; ++i) {
    targets[i] = {es[i]->DoneCounter(), es[i]->DoneTarget()};
    gate_implied &= es[i]->qslot.start_gate == k0;
  }
  const std::uint64_t join_target = join_total_[j] + n + (gate_implied ? 0 : 1);
  // Descriptors in the queue's scratch (sized at Create: no allocation, and
  // no 16 KiB of default-initialized array per call); backends copy them.
  const offload::Capabilities& caps = rt::Backend()->Caps();
  TriggeredOp* ops = scratch_ops_.data();
  const std::size_t count =
      BuildWaitAllOps({targets, n}, join_ids_[j], join_target, qc_, k0, gate_implied,
                      caps.counter_op_cycles_deadlock, caps.max_remote_add, rt::WorldRank(), ops);
  for (;;) {
    Status st = rt::Backend()->Post({ops, count});
    if (st.ok()) break;
    const bool again = st.code() == Code::kAgain;
    if (again && polls) st = Backpressure(polls, what);
    if (!again || !st.ok() || !polls) {
      join_free_.push_back(std::uint32_t(j));  // unused: back to the pool
      return st;
    }
    Reap();
  }
  join_total_[j] = join_target;
  join_busy_[(busy_head_ + busy_count_) % join_busy_.size()] = {std::uint32_t(j), k0 + n};
  ++busy_count_;
  for (std::size_t i = 0; i < n; ++i)
    ring_[(head_ + count_++) % ring_.size()] =
        Record{es[i], statuses.empty() ? nullptr : statuses[i], fill, k0 + i + 1,
               es[i]->qslot.started_epoch};
  return Status::Ok();
}

Status Queue::Fence() {
  if (!failed_.ok()) return failed_;
  // Host sequencing with an empty ring: every start began, every wait
  // retired (a failed step stays at the head), and no record exists.
  if (host_ && step_count_ == 0) return Status::Ok();
  if (host_ && HostEngineEpochsInUse()) return FenceInEngine();
  std::uint32_t polls = 0;
  bool stepped = false;
  if (host_) NICQ_RETURN_IF_ERROR(AdvanceHost(&stepped));
  // Done when every enqueued wait completed (counter chains: qc reached k_)
  // or every step ran (host sequencing: trailing starts included). The
  // progress mark is qc, or the waits the host retired.
  auto pending = [&] { return host_ ? step_count_ > 0 : rt::Backend()->ReadCounter(qc_) < k_; };
  auto mark = [&] {
    return host_ ? host_done_.load(std::memory_order_relaxed) : rt::Backend()->ReadCounter(qc_);
  };
  // A queue that makes no progress for 4 x NICQ_PEER_TIMEOUT is reported,
  // not waited on forever (a peer that never starts its side, a dead chain).
  std::uint64_t seen = mark();
  std::uint64_t last_change = NowMs();
  while (pending()) {
    NICQ_RETURN_IF_ERROR(Backpressure(&polls, "MPI_Queue_fence"));  // runs steps too
    const std::uint64_t now_value = mark();
    if (polls % 1024 == 0 && now_value == seen && NowMs() - last_change > 1000)
      NICQ_LOG(kDebug, kQueue, "fence waiting: %s", Describe().c_str());
    if (now_value != seen) {
      seen = now_value;
      last_change = NowMs();
    } else if (polls % 1024 == 1023 && NowMs() - last_change > stall_ms_) {
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
  if (host_) return DescribeHost();
  offload::OffloadBackend* b = rt::Backend();
  std::string out = "[queue counter " + std::to_string(b->ReadCounter(qc_)) + "/" +
                    std::to_string(k_) + "; " + std::to_string(step_count_) +
                    " deferred steps; pending waits:";
  for (std::size_t i = 0; i < count_ && i < 8; ++i) {
    const Record& r = ring_[(head_ + i) % ring_.size()];
    out += " {k " + std::to_string(r.k) + " done " +
           std::to_string(b->ReadCounter(r.e->DoneCounter())) + "/" +
           std::to_string(r.e->DoneTarget()) + " " + r.e->DebugString() + "}";
  }
  return out + "]";
}

bool Queue::Empty() {
  if (host_) {
    bool progressed = false;
    (void)AdvanceHost(&progressed);
    return step_count_ == 0 && unwaited_count_ == 0;
  }
  Reap();
  return count_ == 0 && unwaited_ == nullptr && step_count_ == 0;
}

std::uint64_t Queue::WaitsCompleted() const {
  return host_ ? host_done_.load(std::memory_order_acquire) : rt::Backend()->ReadCounter(qc_);
}

bool HasPendingEnqueuedStart(Request* req) {
  // Pending until the queue has recorded the wait's completion (status
  // filled, request inactive): a counter that already passed is not enough,
  // since the queue's record still refers to the request until it reaps it
  // (at the fence or a later enqueued wait; at once when host-sequenced).
  Enqueueable* e = EnqueueableOf(req);
  return e && e->qslot.queue != nullptr;
}

}  // namespace nicq::queue
