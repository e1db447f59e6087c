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
//    cumulative target -> qc += n (offload/algorithms/enqueued_wait.h). So qc
//    passes k0 only when all n requests completed and all earlier waits
//    did, even if they complete before earlier requests. When every one of
//    them was started after the k0-th wait (start gate qc >= k0), their
//    completion implies qc >= k0 and that op is left out.
//  * a join is reused only after its previous wait completed (else a later
//    wait's completions could stand in for the earlier one's); with every
//    join busy the enqueue drives progress until the oldest completes.
// Host sequencing (queue_host.cc): on the emulated backend without its
// agent thread (the host calls must fire the counter ops anyway), and with
// it over shm (each hop is an agent's poll in another process, while the
// host progress thread can run the same steps itself), compiling starts
// and waits into triggered counter ops only adds work. The
// queue then keeps its starts and waits as steps in a ring and executes them
// in order itself: the starts at the head are posted together as MPI_Start
// would (no gate), a wait at the head retires once its requests' done
// counters reach their targets. Steps run in the queue's own calls (fence,
// a full ring, and on shm one pass per enqueued wait) and in every MPI
// call's progress (QueueProgress -> AdvanceQueueSteps), so the ordering,
// completion and progress rules of 13.4 are those of the counter chains.
// A counter-chain queue uses the same ring for starts and waits it cannot
// post at once ("Deferred steps" in queue_host.cc), so that no enqueue call
// waits for room that only the peer can free.
// Matched pairs between same-node ranks of such a process run their epochs
// on the point-to-point engine itself ("Host-engine epochs" in
// matched_p2p.h): the queue then waits in the engine (WaitInEngine).
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
#include "offload/algorithms/enqueued_wait.h"
#include "queue/enqueueable.h"
#include "queue/matched_p2p.h"
#include "queue/queue_types.h"
#include "runtime/runtime.h"

namespace nicq::queue {

// Fills an MPI_Status (opaque here) from a request status; set by the API.
using StatusFiller = void (*)(void* status, const RequestStatus& rs);

class Queue {
 public:
  static Status Create(int type, void* external, Queue** out);
  ~Queue();

  // Callers validated every request (CheckStart / CheckWait) first.
  Status EnqueueStart(Enqueueable* e);
  static constexpr std::size_t kMaxWaitAll = 64;  // requests per call (the API's bound)
  // MPI_Enqueue_startall (at most kMaxWaitAll requests): host-sequenced
  // queues start them together (one Post); counter chains one by one.
  // The host-sequenced case inline: it is every call of a queued ring on
  // one node, which then takes no extra call layer.
  Status EnqueueStartAll(std::span<Enqueueable* const> es) {
    if (host_ && es.size() <= kMaxWaitAll && failed_.ok()) [[likely]]
      return HostEnqueueStart(es);
    return EnqueueStartAllChecked(es);
  }
  // MPI_Enqueue_wait(all): waits for every request of `es`, all or none
  // enqueued. statuses: empty (ignored) or one per request (may be null).
  Status EnqueueWaitAll(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                        StatusFiller fill) {
    if (host_ && !es.empty() && es.size() <= kMaxWaitAll && failed_.ok()) [[likely]]
      return HostEnqueueWaitAll(es, statuses, fill);
    return EnqueueWaitAllChecked(es, statuses, fill);
  }
  // The API's valid case on a host-sequenced queue (queue_api.cc), which
  // takes no Call object: whether `n` starts or waits fit in the step ring
  // now, so that recording them can neither wait nor fail (caller inside
  // the queue).
  bool HostRoomFor(std::size_t n) const { return host_ && kSteps - step_count_ >= n; }
  // That case's memo of request handles (queue_api.cc): the last handles
  // its checks looked up, by their low bits, with what the lookup found
  // (the API's request object, opaque here). Only the thread inside the
  // queue reads or writes it.
  struct HandleMemo {
    int handle = 0;
    void* found = nullptr;
  };
  static constexpr std::size_t kHandleMemo = 8;
  HandleMemo handle_memo[kHandleMemo];
  // That case's enqueue, every request checked (CanStart / CanWait, none
  // repeated) and HostRoomFor(es.size()): EnqueueStartAll / EnqueueWaitAll
  // of a host-sequenced queue once they found room.
  // (Inline: it is two of the three calls of every queued ring iteration.)
  void HostStartValid(std::span<Enqueueable* const> es) {
    StepsWatch watch(this);
    // With nothing ahead, host-engine starts begin here (queue_direct.cc).
    // Any other start is a step, even with nothing ahead: it runs at the
    // next pass (the enqueued wait's poll where polling only reads memory,
    // fence, or any MPI call).
    if (DirectSteps()) {
      es = es.subspan(StartDirect(es));
      if (es.empty()) return;
    }
    RecordHostStarts(es);
  }
  void HostWaitValid(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                     StatusFiller fill);
  // Blocks until all enqueued work completed; requests return to inactive.
  Status Fence();
  // No enqueued work outstanding (freeing is allowed).
  bool Empty();
  // Enqueued waits whose epochs are known complete, read from the queue's
  // counter (host sequencing: the waits it retired) without driving any
  // progress; with waits_enqueued(), what a test reads while every host
  // thread sleeps.
  std::uint64_t WaitsCompleted() const;
  // Counters of the queue and its pending waits, for stall reports.
  std::string Describe() const;

  // Precondition checks (no side effects): Ok or kQueue/kMatch with why.
  Status CheckStart(Enqueueable* e) const;
  Status CheckWait(Enqueueable* e) const;
  // Their valid case for a matched request, inline for the enqueue calls'
  // per-element checks: true exactly when CheckStart / CheckWait is Ok.
  bool CanStart(const Enqueueable* e) const {
    const QueueSlot& s = e->qslot;
    return s.queue == nullptr || (s.queue == this && s.waited_epoch == s.started_epoch);
  }
  bool CanWait(const Enqueueable* e) const {
    const QueueSlot& s = e->qslot;
    return s.queue == this && s.waited_epoch != s.started_epoch;
  }

  // One-thread-at-a-time guard (13.4 "Thread safety"): an atomic word
  // taken on entry; a second application thread inside the same queue gets
  // kQueue. Progress from another thread (AdvanceQueueSteps) takes it too,
  // only when the queue is free and only for one bounded pass of steps: an
  // application thread that finds such a pass running waits it out.
  bool Enter() {
    std::uint32_t free = 0;
    return guard_.compare_exchange_strong(free, kUserInside, std::memory_order_acquire) ||
           EnterContended();
  }
  void Leave() { guard_.fetch_and(~kUserInside, std::memory_order_release); }

  // A fresh stamp per enqueue call: the API marks each element's QueueSlot
  // with it to find repeated requests in O(n) (caller inside the queue).
  std::uint64_t NextCheckStamp() { return ++check_stamp_; }

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
  // The enqueue calls with every check (counter chains, bad counts, a
  // failed chain); the host-sequenced valid case is inline above.
  Status EnqueueStartAllChecked(std::span<Enqueueable* const> es);
  Status EnqueueWaitAllChecked(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                               StatusFiller fill);
  // Enter when the guard was not free: waits out a progress pass.
  bool EnterContended();
  // ---- steps: host sequencing, and deferred posts of counter chains (queue_host.cc) ----
  // A host-sequenced start sets e and wait only (the slot may hold a
  // former step's other fields); counter chains' starts also gate.
  struct Step {
    Enqueueable* e = nullptr;
    void* status = nullptr;  // waits: MPI_Status to fill (may be null)
    StatusFiller fill = nullptr;
    std::uint64_t epoch = 0;  // waits: the epoch waited for
    std::uint32_t group = 0;  // waits: n on the first step of a wait(all) of n requests
    bool wait = false;        // false: a start
    std::uint64_t gate = 0;   // counter chains: a start's gate, a wait's k0
  };
  Status HostEnqueueStart(std::span<Enqueueable* const> es);
  // HostStartValid's steps, with room for them in the ring.
  void RecordHostStarts(std::span<Enqueueable* const> es) {
    // The ring's base and tail in locals: stores into a step or a slot
    // could otherwise be the queue's own fields, reloaded on every element.
    Step* const ring = steps_.data();
    const std::size_t tail = step_head_ + step_count_;
    bool backend = false;
    for (std::size_t i = 0; i < es.size(); ++i) {
      Enqueueable* e = es[i];
      Step& st = ring[(tail + i) & kStepMask];
      st.e = e;  // a host-sequenced start reads nothing else
      st.wait = false;
      QueueSlot& s = e->qslot;
      // Its epoch: one past the last one started or planned on this queue.
      // (No start_gate: only counter chains compile a gate from it.)
      const std::uint64_t started =
          s.host_engine ? static_cast<const MatchedP2p*>(e)->EpochsStarted() : e->EpochsStarted();
      s.started_epoch = (s.started_epoch > started ? s.started_epoch : started) + 1;
      s.queue = this;
      backend |= !s.host_engine;
    }
    step_count_ += es.size();
    backend_steps_ |= backend;
    unwaited_count_ += es.size();  // AddUnwaited of each: host-sequenced queues count them
  }
  // Direct steps (queue_direct.cc): whether the ring is empty on a default
  // queue, so a host-engine start may begin and a done wait retire inside
  // the enqueue call; StartDirect begins the host-engine starts at the
  // front of es and returns how many it began (the rest become steps);
  // RetireDirect, when every request of the wait is a host-engine one,
  // polls the engine once (*polled) and retires the wait if each epoch
  // ended well; false: it changed nothing but the poll.
  bool DirectSteps() const { return step_count_ == 0 && type_ == kQueueTypeDefault; }
  std::size_t StartDirect(std::span<Enqueueable* const> es);
  bool RetireDirect(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                    StatusFiller fill, bool* polled);
  Status HostEnqueueWaitAll(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                            StatusFiller fill);
  // Counter chains: starts and waits that could not be posted at once
  // (queue_host.cc, "Deferred steps"), and their posting in order.
  Status DeferStart(Enqueueable* e);
  Status DeferWaitAll(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                      StatusFiller fill, std::uint64_t k0);
  // Once the chain failed, runs nothing and returns the failure.
  Status AdvanceDeferred(bool* progressed);
  // Posts the compiled wait for waits k0+1..k0+n and records them; with
  // polls it drives progress for room, without it answers kAgain.
  Status PostWait(std::span<Enqueueable* const> es, std::span<void* const> statuses,
                  StatusFiller fill, std::uint64_t k0, std::uint32_t* polls);
  // Runs steps from the head until a wait whose requests are not all done;
  // Ok with *progressed when any step ran; an error from a start stops it.
  Status AdvanceHost(bool* progressed);
  // Starts es now (gate open), with one Post when every engine builds its
  // start; *started: how many did (a prefix), also on error.
  Status StartNow(std::span<Enqueueable* const> es, std::size_t* started);
  // The host-engine request whose running epoch keeps the head wait from
  // retiring, or null: a pass may run steps.
  // While it runs, a pass over the steps would change nothing, so the
  // fence's idle loop and an enqueued wait's pass look only at it.
  // The group's first running request is the one to watch: while it runs
  // the wait cannot retire, whichever of the others end first. A request
  // of another kind or an epoch ended in error ahead of it leaves the pass
  // to run (the error is the pass's to report).
  const MatchedP2p* HeadWaitRunning() const {
    if (step_count_ == 0) return nullptr;
    const Step& head = StepAt(0);
    if (!head.wait) return nullptr;
    for (std::uint32_t i = 0; i < head.group; ++i) {
      const Enqueueable* e = StepAt(i).e;
      if (!e->qslot.host_engine) return nullptr;
      const auto* m = static_cast<const MatchedP2p*>(e);
      const EpochState state = m->HostEpochState();
      if (state == EpochState::kRuns) return m;
      if (state == EpochState::kFailed) return nullptr;
    }
    return nullptr;
  }
  // Starts the host-engine starts at the head (QueueSlot::host_engine);
  // *blocked when one of them cannot start yet (its previous epoch runs).
  Status StartHostEngineRun(bool* progressed, bool* blocked);
  // A wait step's request whose epoch ended in error: the error its pass
  // returns (cold).
  [[gnu::cold, gnu::noinline]] static Status StepFailed(const Enqueueable* e);
  // EpochState of a request whose epochs run on the backend.
  static EpochState BackendEpochState(const Enqueueable* e) {
    bool failed = false;
    const bool done = e->EpochDone(&failed);
    return failed ? EpochState::kFailed : done ? EpochState::kDone : EpochState::kRuns;
  }
  // The done counter and target the head wait still waits for (false: none).
  bool HostBlockOn(offload::CounterId* counter, std::uint64_t* value) const;
  std::string DescribeHost() const;
  // AdvanceQueueSteps (another thread's progress) runs this queue's steps.
  friend bool AdvanceQueueSteps();
  bool TryEnterForProgress() {
    std::uint32_t free = 0;
    return guard_.compare_exchange_strong(free, kProgressInside, std::memory_order_acquire);
  }
  void LeaveProgress() { guard_.fetch_and(~kProgressInside, std::memory_order_release); }
  // Records whose waits completed: statuses filled, requests inactive.
  void Reap();
  void Finish(Enqueueable* e, void* status, StatusFiller fill, std::uint64_t epoch) {
    QueueSlot& s = e->qslot;
    if (status && fill) {
      RequestStatus rs;
      e->GetStatus(&rs);
      fill(status, rs);
    }
    // Inactive again unless a newer start was enqueued meanwhile.
    if (s.queue == this && s.started_epoch == epoch) s.queue = nullptr;
    // Host-engine epochs are never armed ahead (matched_p2p.h): no window.
    if (!s.host_engine) e->EpochRetired();
  }
  // A counter chain that cannot complete: the pending operation `culprit`
  // (null: unknown) failed with `failure`. Every pending wait retires, posted
  // or deferred, its status's MPI_ERROR the failed operation's class (its
  // own class where its counter kept one, MPI_ERR_PENDING behind it); the
  // deferred steps are dropped, and every request attached to the queue
  // (waited or not) is detached and inactive. The queue is empty, keeps
  // `failure` and returns it from every later call but MPI_Queue_free
  // (docs/queue-semantics.md, "Failed operations").
  Status FailChain(const Status& failure, const Enqueueable* culprit);
  // The failure of a pending wait's operation, if one is known: an error
  // its counter counted, or (idle for NICQ_PEER_TIMEOUT) its peer gone.
  // Null Status: none. `what` names the call in the message.
  Status ChainFailure(const char* what, bool check_peers, const Enqueueable** culprit) const;
  // A free join slot (recycling those whose waits are done, else growing
  // the pool), or -1 when the backend has no counter left.
  std::int64_t TakeJoin();
  void AddJoin(offload::CounterId id);
  // Drive progress once while waiting for room / completion; errors on a
  // dead chain (error counters) or after NICQ_PEER_TIMEOUT without change.
  Status Backpressure(std::uint32_t* polls, const char* what);
  // Backpressure of a host-sequenced queue while host-engine epochs exist.
  Status WaitInEngine(std::uint32_t* polls);
  // Fence of such a queue (queue_host.cc).
  Status FenceInEngine();
  // Its idle loop's check every 1024 idle passes: the debug log after a
  // second, the stall error after 4 x NICQ_PEER_TIMEOUT (*idle_since_ms: 0
  // until the first check of an idle spell).
  [[gnu::cold, gnu::noinline]] Status FenceStalled(std::uint64_t* idle_since_ms) const;
  rt::Backoff engine_backoff_;

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
  std::uint64_t k_ = 0;  // waits enqueued
  // Requests with an enqueued start and no enqueued wait yet: an intrusive
  // list through QueueSlot (no allocation), so that FailChain can detach
  // them and no request outlives the queue pointing at it.
  Enqueueable* unwaited_ = nullptr;
  // A host-sequenced queue never fails its chain (a failed step stays at
  // the head), so it needs no list to detach: a count, for Empty().
  std::size_t unwaited_count_ = 0;
  void AddUnwaited(Enqueueable* e) {
    if (host_) {
      ++unwaited_count_;
      return;
    }
    QueueSlot& s = e->qslot;
    s.unwaited_prev = nullptr;
    s.unwaited_next = unwaited_;
    if (unwaited_ != nullptr) unwaited_->qslot.unwaited_prev = e;
    unwaited_ = e;
  }
  void RemoveUnwaited(Enqueueable* e) {
    if (host_) {
      --unwaited_count_;
      return;
    }
    QueueSlot& s = e->qslot;
    if (s.unwaited_prev != nullptr)
      s.unwaited_prev->qslot.unwaited_next = s.unwaited_next;
    else
      unwaited_ = s.unwaited_next;
    if (s.unwaited_next != nullptr) s.unwaited_next->qslot.unwaited_prev = s.unwaited_prev;
    s.unwaited_prev = s.unwaited_next = nullptr;
  }
  std::vector<Record> ring_;                       // capacity fixed at Create
  std::vector<offload::WaitTarget> targets_;       // EnqueueWaitAll scratch (kMaxWaitAll)
  std::vector<offload::TriggeredOp> scratch_ops_;  // its ops (2 kMaxWaitAll + 2)
  std::size_t head_ = 0, count_ = 0;
  // Backpressure: when the current idle spell began, and its phase (0 spin,
  // 1 yield, 2 block) as of the last clock read.
  std::uint64_t idle_since_ns_ = 0;
  int idle_phase_ = 0;
  std::uint32_t passes_ = 0;    // Backpressure passes (runtime polled every 8th)
  std::uint64_t stall_ms_ = 0;  // fence stall report after this long (4 x NICQ_PEER_TIMEOUT)
  Status failed_;               // FailChain's failure, returned by every later call
  // Steps: the ring (capacity fixed at Create) and, host-sequenced, the
  // waits retired so far (the fence's progress mark).
  bool host_ = false;
  // Host sequencing: a start of a request without host-engine epochs was
  // enqueued (ever): an enqueued wait's pass polls the backend too.
  bool backend_steps_ = false;
  std::vector<Step> steps_;  // kSteps, a power of two: positions wrap with kStepMask
  static constexpr std::size_t kSteps = 8192, kStepMask = kSteps - 1;
  Step& StepAt(std::size_t i) { return steps_[(step_head_ + i) & kStepMask]; }
  const Step& StepAt(std::size_t i) const { return steps_[(step_head_ + i) & kStepMask]; }
  std::size_t step_head_ = 0, step_count_ = 0;
  // Around each call that adds or retires steps: counts the queue among
  // those holding steps while its ring is non-empty (queue_host.cc).
  class StepsWatch {
   public:
    explicit StepsWatch(Queue* q) : q_(q) {}
    ~StepsWatch() { q_->NoteSteps(); }
    StepsWatch(const StepsWatch&) = delete;
    StepsWatch& operator=(const StepsWatch&) = delete;

   private:
    Queue* q_;
  };
  // Idempotent: watches nest (an enqueued wait runs a pass that retires
  // steps), so each compares the ring with what was counted, not with what
  // it saw on entry. A queue whose head step failed holds steps no pass can
  // run (its own calls report the error): it must not keep the host thread
  // polling.
  void NoteSteps() {
    const bool holds = step_count_ > 0 && !steps_failed_ && !fencing_;
    if (holds != counted_) CountSteps(holds);
  }
  void CountSteps(bool holds);
  // The head step failed (a progress pass saw it): not counted any more.
  void NoteStepsFailed() {
    steps_failed_ = true;
    NoteSteps();
  }
  bool counted_ = false;  // counted among the queues holding steps
  bool steps_failed_ = false;
  // FenceInEngine runs: this thread's own passes run the steps, so the
  // queue is not counted (its passes' hook then skips the registry, which
  // could not enter the queue anyway; other queues' steps still run).
  bool fencing_ = false;
  std::atomic<std::uint64_t> host_done_{0};
  static constexpr std::uint32_t kUserInside = 1, kProgressInside = 2;
  std::atomic<std::uint32_t> guard_{0};
  std::uint64_t check_stamp_ = 0;
};

// Whether this process's queues are host-sequenced (NICQ_QUEUE_EXEC=host,
// or auto on the emulated backend without its agent thread, or with it
// over shm, where the host progress thread runs the steps for a tenth of
// the agent's hops). Matched
// requests read it too: with no NIC or thread to fire ahead, arming their
// epochs ahead of the starts (resident plans) only adds host work.
bool HostSequencedQueues();

// Queues register at create and leave at destruction.
void TrackQueue(Queue* q, bool add);
// Runs the steps of every queue no thread is inside (the runtime's progress
// hook, via QueueProgress); true when any step ran.
bool AdvanceQueueSteps();

// Whether `req` has an enqueued start pending (for MPI_Wait/Test/Start/
// Cancel/Request_free, which must reject it).
bool HasPendingEnqueuedStart(Request* req);

}  // namespace nicq::queue
