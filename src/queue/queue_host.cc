// Steps of a queue (queue.h): starts and waits kept in a ring and handled in
// enqueue order by whichever host thread drives the queue, its own calls or
// any MPI call's progress through AdvanceQueueSteps. A host-sequenced queue
// (the backend fires ops only inside host calls, OffloadBackend::HostDriven,
// where counter chains are pure overhead) executes them; a counter-chain
// queue only keeps there what it could not post at once ("Deferred steps").
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/log.h"
#include "providers/backend.h"
#include "queue/matched_p2p.h"
#include "queue/queue.h"
#include "runtime/async_progress.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::queue {
namespace {

// Every queue, for AdvanceQueueSteps. Registration happens at
// MPI_Queue_init / MPI_Queue_free only. `busy` is held by the one pass over
// the list under way and by a registration changing it: a pass only takes
// it when free (another thread's pass is running, or a start at the head
// polled progress again, as a collective's schedule does: skip), a
// registration waits for it. Every progress pass of every MPI call makes
// such a pass while a queue holds steps: one exchange, no lock, no
// thread-local read.
struct TrackedQueues {
  std::mutex mu;  // registrations among themselves
  std::atomic<bool> busy{false};
  std::vector<Queue*> queues;
};
TrackedQueues& Registry() {
  static auto* r = new TrackedQueues();  // never destroyed: read during exit
  return *r;
}

// How many queues hold steps. The host progress thread stays busy while
// any does, so their chains advance while every application thread
// computes or sleeps; it changes only when a queue's ring turns empty or
// non-empty (twice per iteration of a ring, not per step).
std::atomic<int> g_queues_with_steps{0};
bool QueuesHoldSteps() {
  return g_queues_with_steps.load(std::memory_order_seq_cst) > 0;
}

}  // namespace

void Queue::CountSteps(bool holds) {
  counted_ = holds;
  if (!holds) {
    g_queues_with_steps.fetch_sub(1, std::memory_order_seq_cst);
    return;
  }
  g_queues_with_steps.fetch_add(1, std::memory_order_seq_cst);
  // Not a kick: that would set the thread polling at once, contending for
  // the queue with the application's own next call (the 8-byte ring took
  // 3.3-4.8 us per iteration that way against 1.3-1.5 without).
  rt::WakeIdleAsyncProgress();
}

void TrackQueue(Queue* q, bool add) {
  if (add) rt::AddAsyncBusyProbe(&QueuesHoldSteps);  // once: it ignores repeats
  TrackedQueues& r = Registry();
  std::lock_guard<std::mutex> lock(r.mu);
  // A pass is bounded (one step run per queue at most): wait it out.
  for (int spins = 0; r.busy.exchange(true, std::memory_order_acquire); ++spins)
    if (spins >= 64) std::this_thread::yield();
  if (add) {
    r.queues.push_back(q);
  } else {
    r.queues.erase(std::remove(r.queues.begin(), r.queues.end(), q), r.queues.end());
  }
  r.busy.store(false, std::memory_order_release);
}

bool AdvanceQueueSteps() {
  // Runs in every progress pass of every MPI call: with no queue holding
  // steps it costs one load (the registry lock and the thread-local read
  // were a fifth of a wait loop's instructions while a queue merely exists).
  if (!QueuesHoldSteps()) return false;
  TrackedQueues& r = Registry();
  // No look at the offload context here: once MPI_Finalize closed it,
  // AdvanceHost runs nothing.
  if (r.busy.load(std::memory_order_relaxed) || r.busy.exchange(true, std::memory_order_acquire))
    return false;
  bool any = false;
  for (Queue* q : r.queues) {
    // Skipped while an application thread is inside it: that thread's own
    // call (enqueue backpressure, fence) runs the steps.
    if (!q->TryEnterForProgress()) continue;
    bool progressed = false;
    // Errors: the queue's own calls report them.
    if (!q->AdvanceHost(&progressed).ok()) q->NoteStepsFailed();
    q->LeaveProgress();
    any |= progressed;
  }
  r.busy.store(false, std::memory_order_release);
  return any;
}

Status Queue::StartNow(std::span<Enqueueable* const> es, std::size_t* started) {
  *started = 0;
  // One Post for all of them: per start, a Post and the drain behind it
  // were two thirds of the host's cost of a queued ring iteration.
  offload::TriggeredOp* ops = scratch_ops_.data();  // 2 kMaxWaitAll + 2 >= kMaxStartOps per request
  offload::CounterId host_add[kMaxWaitAll];
  std::size_t total = 0, i = 0;
  for (; i < es.size(); ++i) {
    std::size_t count = 0;
    Status st = es[i]->BuildStart(offload::kNoCounter, 0, ops + total, &count, &host_add[i]);
    if (st.code() == Code::kUnsupportedOperation) break;
    if (!st.ok()) return st;
    total += count;
  }
  if (i == es.size()) {
    if (total > 0) NICQ_RETURN_IF_ERROR(rt::Backend()->Post({ops, total}));
    Status result;
    for (std::size_t j = 0; j < es.size(); ++j) {
      Status st = es[j]->CommitStart(host_add[j]);  // posted: started either way
      if (!st.ok() && result.ok()) result = st;
    }
    *started = es.size();
    return result;
  }
  // An engine that starts only through StartGated (a persistent collective):
  // one by one, in order.
  for (Enqueueable* e : es) {
    NICQ_RETURN_IF_ERROR(e->StartGated(offload::kNoCounter, 0));
    ++*started;
  }
  return Status::Ok();
}

Status Queue::HostEnqueueStart(std::span<Enqueueable* const> es) {
  std::uint32_t polls = 0;
  // All or none: room for every start's step first (a direct start needs
  // none, and finds the ring empty).
  while (kSteps - step_count_ < es.size())
    NICQ_RETURN_IF_ERROR(Backpressure(&polls, "MPI_Enqueue_start"));
  HostStartValid(es);
  return Status::Ok();
}

Status Queue::HostEnqueueWaitAll(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                                 StatusFiller fill) {
  const std::size_t n = es.size();
  std::uint32_t polls = 0;
  // All or none: room for every request's step first (a wait that retires
  // directly needs none, and finds the ring empty).
  while (kSteps - step_count_ < n)
    NICQ_RETURN_IF_ERROR(Backpressure(&polls, n == 1 ? "MPI_Enqueue_wait" : "MPI_Enqueue_waitall"));
  HostWaitValid(es, statuses, fill);
  return Status::Ok();
}

void Queue::HostWaitValid(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                          StatusFiller fill) {
  StepsWatch watch(this);
  // With nothing ahead, a wait whose requests are done retires here
  // (queue_direct.cc); one that is not needs no pass below either.
  bool polled = false;
  if (DirectSteps() && RetireDirect(es, statuses, fill, &polled)) return;
  const std::size_t n = es.size();
  const std::uint64_t k0 = k_;
  // The ring's base and tail in locals (as in HostStartValid); the group's
  // size on its first step; statuses looked at once per call.
  Step* const ring = steps_.data();
  const std::size_t tail = step_head_ + step_count_;
  void* const* const sts = statuses.empty() ? nullptr : statuses.data();
  for (std::size_t i = 0; i < n; ++i) {
    QueueSlot& s = es[i]->qslot;
    Step& st = ring[(tail + i) & kStepMask];
    st.e = es[i];
    st.status = sts != nullptr ? sts[i] : nullptr;
    st.fill = fill;
    st.epoch = s.started_epoch;
    st.wait = true;
    st.group = 0;
    s.waited_epoch = s.started_epoch;
  }
  ring[tail & kStepMask].group = std::uint32_t(n);  // retired together, when all n are done
  step_count_ += n;
  unwaited_count_ -= n;  // RemoveUnwaited of each: host-sequenced queues count them
  k_ = k0 + n;
  // Where a poll only reads memory, one pass now: the steps ahead start as
  // soon as what they wait for has landed, while the host goes on
  // enqueueing, instead of all at the fence (8-byte shm ring: 10% less time
  // per iteration). Errors are the fence's to report.
  // Host-engine epochs (matched_p2p.h) complete in the point-to-point
  // engine, whose same-node poll reads memory too. Only what this queue's
  // steps can wait for is polled (the backend only once a start of another
  // kind was enqueued here), not the progress hooks (other queues,
  // schedules, matches): those run in the fence and every other MPI call.
  const bool engine = HostEngineEpochsInUse();
  const bool backend = backend_steps_ && rt::Backend()->Caps().memory_poll;
  // A head wait whose first request's epoch still runs after the poll: the
  // pass would run nothing (the window of a queued ring that enqueues
  // faster than its exchange advances is mostly this).
  if (!polled && (engine || backend)) {
    bool stepped = false;
    if (engine) (void)rt::PollEngine();
    if (backend) (void)rt::Backend()->Progress();
    if (HeadWaitRunning() == nullptr) (void)AdvanceHost(&stepped);
  }
}

// ---- Deferred steps of counter chains ----
// A counter-chain queue posts each enqueued start and wait at once. When a
// start cannot be posted (its request already has QueueSlot::kRing epochs
// in flight, or the backend has no trigger slots), waiting for room inside
// the enqueue call could wait on the peer: a rank that enqueues 17
// start/wait pairs of one request before it lets the peer start its side
// would never return. Such a start, and everything enqueued after it while
// steps are pending, becomes a step instead; passes (this queue's calls
// and every MPI call's progress) post the steps in enqueue order as room
// appears, each exactly as it would have been posted at enqueue (a start
// gated on its own wait count, a wait compiled for its own k0). Steps are
// posted by host calls only: offload resumes once they drain.

Status Queue::DeferStart(Enqueueable* e) {
  StepsWatch watch(this);
  std::uint32_t polls = 0;
  while (step_count_ == kSteps) NICQ_RETURN_IF_ERROR(Backpressure(&polls, "MPI_Enqueue_start"));
  Step& st = StepAt(step_count_++);
  st = Step{};
  st.e = e;
  st.gate = k_;
  QueueSlot& s = e->qslot;
  s.started_epoch = std::max(s.started_epoch, e->EpochsStarted()) + 1;  // planned
  s.queue = this;
  s.start_gate = k_;
  AddUnwaited(e);
  return Status::Ok();
}

Status Queue::DeferWaitAll(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                           StatusFiller fill, std::uint64_t k0) {
  StepsWatch watch(this);
  const std::size_t n = es.size();
  std::uint32_t polls = 0;
  while (kSteps - step_count_ < n)
    NICQ_RETURN_IF_ERROR(Backpressure(&polls, n == 1 ? "MPI_Enqueue_wait" : "MPI_Enqueue_waitall"));
  for (std::size_t i = 0; i < n; ++i) {
    Step& st = StepAt(step_count_++);
    st = Step{};
    st.e = es[i];
    st.status = statuses.empty() ? nullptr : statuses[i];
    st.fill = fill;
    st.epoch = es[i]->qslot.started_epoch;  // planned or posted
    st.group = i == 0 ? std::uint32_t(n) : 0;
    st.wait = true;
    st.gate = k0;
  }
  return Status::Ok();
}

Status Queue::AdvanceDeferred(bool* progressed) {
  StepsWatch watch(this);
  if (!failed_.ok()) return failed_;  // a dead chain: its steps were dropped
  while (step_count_ > 0) {
    const Step& head = StepAt(0);
    std::size_t n = 1;
    if (!head.wait) {
      Status st = head.e->StartGated(qc_, head.gate);
      if (st.code() == Code::kAgain) return Status::Ok();  // no room yet: a later pass
      if (!st.ok()) return FailChain(st, head.e);          // the chain cannot go on past it
    } else {
      n = head.group;
      Enqueueable* es[kMaxWaitAll];
      void* sts[kMaxWaitAll];
      for (std::size_t i = 0; i < n; ++i) {
        es[i] = StepAt(i).e;
        sts[i] = StepAt(i).status;
      }
      Status st = PostWait({es, n}, {sts, n}, head.fill, head.gate, nullptr);
      if (st.code() == Code::kAgain) return Status::Ok();
      if (!st.ok()) return FailChain(st, head.e);
    }
    step_head_ = (step_head_ + n) & kStepMask;
    step_count_ -= n;
    *progressed = true;
  }
  return Status::Ok();
}

// ---- Host sequencing ----

Status Queue::StepFailed(const Enqueueable* e) {
  RequestStatus rs;
  e->GetStatus(&rs);
  const Code c = rs.error != 0 ? Code(rs.error) : Code::kOther;
  return Error(
      c, "enqueued " + e->OperationText() + " failed (error class " + std::to_string(int(c)) + ")");
}

// Inline (one caller, AdvanceHost): a member function out of line is a call
// through the PLT in the shared library, with its Status in memory.
[[gnu::always_inline]] inline Status Queue::StartHostEngineRun(bool* progressed, bool* blocked) {
  // The host-engine starts at the head, in order: nothing to build or post
  // on the backend, each is the engine's send or receive. Like StartNow, a
  // failed start is started (its epoch ended in error) and the run goes
  // on; the first error is returned.
  Status first_error;
  std::size_t n = 0;
  // Locals: only this thread changes the ring while it runs (it is inside
  // the queue), and the engine calls could otherwise be assumed to.
  const Step* const ring = steps_.data();
  const std::size_t h = step_head_, count = step_count_;
  while (n < count) {
    const Step& st = ring[(h + n) & kStepMask];
    if (st.wait || !st.e->qslot.host_engine) break;
    Status started = static_cast<MatchedP2p*>(st.e)->StartHostEpoch();
    if (!started.ok()) [[unlikely]] {
      if (started.code() == Code::kAgain) {
        *blocked = true;
        break;
      }
      if (first_error.ok()) first_error = std::move(started);
    }
    ++n;
  }
  step_head_ = (h + n) & kStepMask;
  step_count_ = count - n;
  *progressed |= n > 0;
  return first_error;
}

Status Queue::AdvanceHost(bool* progressed) {
  StepsWatch watch(this);
  offload::OffloadBackend* b = rt::Backend();
  if (!b) return Status::Ok();  // after MPI_Finalize closed the context
  if (!host_) return AdvanceDeferred(progressed);
  while (step_count_ > 0) {
    const Step& head = StepAt(0);
    if (!head.wait && head.e->qslot.host_engine) {
      // Every earlier wait retired: the turn of the starts at the head.
      bool blocked = false;
      Status st = StartHostEngineRun(progressed, &blocked);
      if (!st.ok()) return st;           // that start ran, in error: its wait reports it too
      if (blocked) return Status::Ok();  // its previous epoch still runs: next pass
      continue;
    }
    if (!head.wait) {
      Enqueueable* es[kMaxWaitAll];
      std::size_t n = 0;
      while (n < step_count_ && n < kMaxWaitAll && !StepAt(n).wait &&
             !StepAt(n).e->qslot.host_engine) {
        es[n] = StepAt(n).e;
        ++n;
      }
      std::size_t started = 0;
      Status st = StartNow({es, n}, &started);
      step_head_ = (step_head_ + started) & kStepMask;
      step_count_ -= started;
      *progressed |= started > 0;
      if (st.code() == Code::kAgain) return Status::Ok();  // no trigger slots now: next pass
      if (!st.ok()) return st;  // stays at the head: every later call reports it
      continue;
    }
    // A wait(all) of `group` requests retires when all of them are done.
    const std::uint32_t n = head.group;
    const Step* const ring = steps_.data();
    const std::size_t h = step_head_;
    for (std::uint32_t i = 0; i < n; ++i) {
      const Enqueueable* e = ring[(h + i) & kStepMask].e;
      const EpochState state = e->qslot.host_engine
                                   ? static_cast<const MatchedP2p*>(e)->HostEpochState()
                                   : BackendEpochState(e);
      if (state == EpochState::kRuns) return Status::Ok();
      if (state == EpochState::kFailed) [[unlikely]]
        return StepFailed(e);
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      const Step& st = ring[(h + i) & kStepMask];
      Finish(st.e, st.status, st.fill, st.epoch);
    }
    step_head_ = (h + n) & kStepMask;
    step_count_ -= n;
    host_done_.fetch_add(n, std::memory_order_release);
    *progressed = true;
  }
  return Status::Ok();
}

namespace {

std::uint64_t SteadyMs() {
  using namespace std::chrono;
  return std::uint64_t(duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count());
}

}  // namespace

Status Queue::FenceStalled(std::uint64_t* idle_since_ms) const {
  // A queue that makes no progress for 4 x NICQ_PEER_TIMEOUT is reported,
  // not waited on forever (a peer that never starts its side).
  const std::uint64_t now = SteadyMs();
  if (*idle_since_ms == 0) *idle_since_ms = now;
  if (now - *idle_since_ms > 1000)
    NICQ_LOG(kDebug, kQueue, "fence waiting: %s", Describe().c_str());
  if (now - *idle_since_ms > stall_ms_)
    return Error(Code::kPending, "MPI_Queue_fence: " + std::to_string(k_ - host_done_.load()) +
                                     " enqueued wait(s) made no progress (is every matching "
                                     "operation started on its peer?) " +
                                     Describe());
  return Status::Ok();
}

Status Queue::FenceInEngine() {
  // The runtime's wait (rt::ProgressWait: poll, spin, yield, then sleep on
  // the shm inbox's futex), this queue's steps after each pass, in a loop
  // whose idle pass adds only a look at the head wait's first request, as
  // MPI_Waitall's loop looks at its requests. The clock is read once every
  // 1024 idle passes, for the debug log and the stall report.
  struct Fencing {
    Queue* q;
    explicit Fencing(Queue* queue) : q(queue) {
      q->fencing_ = true;
      q->NoteSteps();
    }
    ~Fencing() {
      q->fencing_ = false;
      q->NoteSteps();
    }
    Fencing(const Fencing&) = delete;
    Fencing& operator=(const Fencing&) = delete;
  } fencing(this);
  bool stepped = false;
  NICQ_RETURN_IF_ERROR(AdvanceHost(&stepped));
  rt::Backoff wait;
  std::uint32_t idle = 0;
  std::uint64_t idle_since_ms = 0;  // 0: not read since the last step ran
  // The request the head wait waits on while its epoch runs (null: the
  // head may run), looked up again only after a pass ran steps: an idle
  // pass then reads one flag.
  // With none running, one pass and then the steps: a flag that reads done.
  static const std::atomic<bool> kNoneRunning{true};
  const MatchedP2p* running = HeadWaitRunning();
  while (step_count_ > 0) {
    // Idle passes while that request runs: the pass, its flag and the idle
    // count, nothing else.
    const std::atomic<bool>& done = running ? running->HostEpochDoneFlag() : kNoneRunning;
    do {
      Status st = rt::ProgressWait(wait);
      if (!st.ok()) [[unlikely]]
        return st;
      if (++idle % 1024 == 0) [[unlikely]]
        NICQ_RETURN_IF_ERROR(FenceStalled(&idle_since_ms));
    } while (!done.load(std::memory_order_acquire));
    stepped = false;
    NICQ_RETURN_IF_ERROR(AdvanceHost(&stepped));
    running = HeadWaitRunning();
    if (stepped) {
      wait.Reset();
      idle = 0;
      idle_since_ms = 0;
    }
  }
  Reap();
  return Status::Ok();
}

bool Queue::HostBlockOn(offload::CounterId* counter, std::uint64_t* value) const {
  // The first request of the head wait still short of its target: its done
  // counter is what the next step waits for.
  if (step_count_ == 0 || !StepAt(0).wait) return false;
  const std::uint32_t n = StepAt(0).group;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Enqueueable* e = StepAt(i).e;
    bool failed = false;
    if (!e->EpochDone(&failed)) {
      *counter = e->DoneCounter();
      *value = e->DoneTarget();
      return true;
    }
  }
  return false;
}

std::string Queue::DescribeHost() const {
  std::string out = "[host-sequenced queue: " + std::to_string(host_done_.load()) + "/" +
                    std::to_string(k_) + " waits done; next steps:";
  for (std::size_t i = 0; i < step_count_ && i < 8; ++i) {
    const Step& st = StepAt(i);
    out += st.wait ? " {wait " : " {start ";
    out += st.e->DebugString() + "}";
  }
  return out + "]";
}

}  // namespace nicq::queue
