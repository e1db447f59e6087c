// The emulated backend's host calls on counters and ops: allocating and
// adding to counters, waiting on them, posting ops (issued at once when
// they fire at once and nothing else is ready) and cancelling them. Kept
// apart from setup (emulated_backend.cc) and from the data path
// (emulated_issue.cc); the progress thread starts here, with the first use.
#include <string>

#include "core/log.h"
#include "providers/ofi_common/backoff.h"
#include "providers/ofi_common/ofi_error.h"
#include "providers/ofi_emulated/emulated_backend.h"

namespace nicq::ofi {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

// The progress thread starts with the backend's first use (a counter, a
// registration or a post), not in Init: every process creates the backend
// in MPI_Init, and a program that never matches or enqueues should not
// share its cores with an idle thread (2-rank 8-byte persistent allreduce on
// shm, quiet machine: 1.9-3.2 us with an idle thread per rank, 1.4-1.9
// without).
void EmulatedBackend::EnsureThread() {
  if (!want_thread_ || thread_started_.load(std::memory_order_acquire)) return;
  std::call_once(thread_once_, [this] {
    Status st = thread_.Start([this] { return PollNow(); }, [this](int ms) { BlockInCq(ms); },
                              [this] {
                                if (ep_->cq_waitable())
                                  fi_cq_signal(ep_->cq());
                                else if (own_bell_ != nullptr)
                                  offload::RingBell(own_bell_);
                              },
                              config_.spin_us);
    if (!st.ok())
      NICQ_LOG(kWarn, kProvider, "emulated: no progress thread (%s); progress rides MPI calls",
               st.message().c_str());
    thread_started_.store(true, std::memory_order_release);
  });
}

Status EmulatedBackend::AllocCounters(std::size_t n, CounterId* out) {
  EnsureThread();
  return queue_.AllocCounters(n, out);
}

// With the progress thread running, a host add is the agent's to apply: the
// calling thread stores it into its own ring and publishes it with a
// release store (host_add_ring.h), and the agent takes it at its next pass,
// adds, collects what the add reached and issues it, as a NIC would. The
// add is a plan's MPI_Start, after which the host computes or sleeps: so
// the start neither issues (that would keep it in the call for the
// epoch's tokens and puts: performance.md, Run 48) nor collects (the
// queue's lock: Run 54), and makes no read-modify-write on a line the
// agent on another core reads (each waits for its line: Run 61). A thread
// with no ring (more threads than rings) or a full ring adds the
// read-modify-write way: the add and a mark for the agent to collect
// (AddLeavingCollection).
namespace {
// The calling thread's ring on the backend it last added to; its address
// is also the thread's token in HostAddRing::Claim (a thread that reuses a
// dead thread's storage takes over its ring, whose producer is gone).
// Initial-exec: an offset from the thread pointer, not a __tls_get_addr
// call per add (libnicq is loaded with the program; 16 bytes of static TLS).
struct RingCache {
  std::uint64_t gen = 0;  // EmulatedBackend::add_path_.gen; 0: none
  HostAddRing* ring = nullptr;
};
thread_local RingCache tls_ring __attribute__((tls_model("initial-exec")));
}  // namespace

inline HostAddRing* EmulatedBackend::OwnRing() {
  const RingCache& c = tls_ring;
  if (c.gen == add_path_.gen) [[likely]]
    return c.ring;
  return ClaimRing();
}

inline void EmulatedBackend::AwaitOwnAdds(CounterId id) const {
  const RingCache& c = tls_ring;
  if (c.gen != add_path_.gen || c.ring == nullptr || !c.ring->HoldsAddTo(id)) [[likely]]
    return;
  AwaitAgent(c.ring, id);
}

// The agent was woken by the add if it slept (AddCounter): this is one of
// its passes away.
[[gnu::noinline]] void EmulatedBackend::AwaitAgent(HostAddRing* ring, CounterId id) const {
  for (Backoff b(200, 50, 100); ring->HoldsAddTo(id) && thread_.running();) b.Pause();
}

// A plan's Test reads its done counter, which no start adds to: it never
// waits on its ring (HoldsAddTo matches the exact id).
std::uint64_t EmulatedBackend::ReadCounter(CounterId id) const {
  AwaitOwnAdds(id);
  return queue_.Read(id);
}

// An add left in any thread's ring must not land on the counter's next
// owner: nicq itself adds from one thread (a host progress thread
// completing a partitioned epoch) to a counter that another thread frees
// as soon as it sees the epoch done. Every add published before this call
// is applied before the counter goes back to the free list. The agent
// itself takes the rings, so it does not wait for them; its apply skips a
// counter no longer in use (TakeHostAdds).
void EmulatedBackend::FreeCounter(CounterId id) {
  if (thread_.running() && !thread_.on_thread()) AwaitAllRings();
  queue_.FreeCounter(id);
}

[[gnu::noinline]] void EmulatedBackend::AwaitAllRings() const {
  std::uint64_t heads[kHostRings];
  for (int i = 0; i < kHostRings; ++i) heads[i] = rings_[i].published();
  for (int i = 0; i < kHostRings; ++i)
    for (Backoff b(0, 50, 100); !rings_[i].TakenThrough(heads[i]) && thread_.running();) b.Pause();
}

Status EmulatedBackend::AddCounter(CounterId id, std::uint64_t value) {
  if (!queue_.CounterInUse(id))
    return Error(Code::kArg,
                 "emulated AddCounter: counter " + std::to_string(id) + " is not allocated");
  if (HostAddRing* ring = OwnRing(); ring != nullptr && ring->Push(id, value)) [[likely]] {
    // The agent may have announced its sleep: see AnnounceSleep for how
    // the two orders pair (the fence is a compiler barrier where the
    // agent fences with membarrier).
    if (add_path_.membarrier)
      std::atomic_signal_fence(std::memory_order_seq_cst);
    else
      std::atomic_thread_fence(std::memory_order_seq_cst);
    if (agent_asleep_.load(std::memory_order_acquire)) [[unlikely]]
      WakeAgentForHostAdds();
    return Status::Ok();
  }
  // A napping thread is woken by the add on shm (its bell or the queue's
  // futex, only while it sleeps: NotifyChange). On tcp a thread blocked in
  // the CQ's wait object would miss the add for its whole wait: while it is
  // not awake, one fi_cq_signal wakes it. The mark and awake() are both
  // sequentially consistent, as are the thread's store of awake_ and its
  // HasReady() before it blocks, so one of the two sees the other.
  if (thread_.running() && !thread_.on_thread()) {
    rmw_adds_.fetch_add(1, std::memory_order_relaxed);
    queue_.AddLeavingCollection(id, value);
    if (!ep_->cq_waitable() || thread_.awake() || !queue_.HasReady()) return Status::Ok();
    if (fi_cq_signal(ep_->cq()) == 0) return Status::Ok();
    Drain();  // no signal: the caller issues
    return Status::Ok();
  }
  queue_.Add(id, value);
  Drain();
  return Status::Ok();
}

HostAddRing* EmulatedBackend::ClaimRing() {
  // No ring before the agent runs (nobody would take it), and none for the
  // agent itself, whose adds collect in place. A backend that will never
  // run one is cached as ringless at once.
  if (!thread_.running()) {
    if (!want_thread_) tls_ring = {add_path_.gen, nullptr};
    return nullptr;
  }
  HostAddRing* mine = nullptr;
  if (!thread_.on_thread()) {
    const auto token = reinterpret_cast<std::uintptr_t>(&tls_ring);
    for (HostAddRing& r : rings_)
      if (r.owner() == token) mine = &r;
    for (int i = 0; mine == nullptr && i < kHostRings; ++i)
      if (rings_[i].Claim(token)) mine = &rings_[i];
    if (mine != nullptr) {
      // Before this thread's first push reads agent_asleep_: an agent
      // that read any_ring as false before its sleep did not fence, and
      // this thread then sees it asleep (AnnounceSleep). Every claimer
      // stores and fences (cold), also one that finds any_ring already
      // set: it may have read the flag before the claimer that set it
      // fenced, and its own pushes need the fence before their reads.
      add_path_.any_ring.store(true, std::memory_order_seq_cst);
      std::atomic_thread_fence(std::memory_order_seq_cst);
    }
  }
  // Cached, a null too: a thread that found every ring taken adds the
  // read-modify-write way from then on.
  tls_ring = {add_path_.gen, mine};
  return mine;
}

// A host thread that published an add and found the agent announced asleep.
void EmulatedBackend::WakeAgentForHostAdds() {
  if (ep_->cq_waitable()) {
    // A failed signal leaves the add to the end of the agent's blocking
    // read (10 ms at most): there is no other way to reach it.
    (void)fi_cq_signal(ep_->cq());
    return;
  }
  queue_.NotifyChange();  // its bell, or the queue's futex
}

bool EmulatedBackend::TakeHostAdds() {
  std::uint64_t n = 0;
  for (HostAddRing& r : rings_)
    n += r.Take([this](CounterId id, std::uint64_t v) {
      // FreeCounter waits for the rings; a counter freed anyway (by the
      // agent itself) takes no add.
      if (queue_.CounterInUse(id)) queue_.Add(id, v);
    });
  return n > 0;
}

bool EmulatedBackend::HostAddsPending() const {
  for (const HostAddRing& r : rings_)
    if (r.Pending()) return true;
  return false;
}

// The agent, before it sleeps: announce it, make every add the hosts
// published before they could see the announcement visible, then (the
// caller) look at the rings once more before sleeping. The host's side is
// a store (its ring's head) and then a plain load (agent_asleep_), with no
// fence: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) runs a full barrier
// on every CPU that runs a thread of this process, so each host thread
// either published before that barrier (the agent's look finds its add)
// or reads agent_asleep_ after it (it sees the announcement and wakes the
// agent). Where the kernel refused membarrier, both sides fence seq_cst
// (the host's fence is then a locked instruction per add). An agent that
// saw no ring claimed skips the fence; ClaimRing orders its claim before
// the claimer's first look at agent_asleep_.
void EmulatedBackend::AnnounceSleep() {
  agent_asleep_.store(true, std::memory_order_seq_cst);
  if (!add_path_.any_ring.load(std::memory_order_seq_cst)) return;
  if (add_path_.membarrier)
    Membarrier();
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

void EmulatedBackend::ExpectCounter(CounterId id, std::uint64_t value) {
  if (id >= (CounterId(1) << kExpectIdBits) || value >= (std::uint64_t(1) << kExpectValueBits))
    return;  // no hint: naps then grow as usual
  expect_[id % kExpectSlots].store((std::uint64_t(id) << kExpectValueBits) | value,
                                   std::memory_order_relaxed);
}

bool EmulatedBackend::AwaitingExpected() {
  constexpr std::uint64_t kValueMask = (std::uint64_t(1) << kExpectValueBits) - 1;
  bool awaiting = false;
  for (std::atomic<std::uint64_t>& slot : expect_) {
    std::uint64_t w = slot.load(std::memory_order_relaxed);
    if (w == 0) continue;
    const auto id = CounterId(w >> kExpectValueBits);
    if (queue_.CounterInUse(id) && queue_.Read(id) < (w & kValueMask) && queue_.Errors(id) == 0) {
      awaiting = true;
      continue;
    }
    slot.compare_exchange_strong(w, 0, std::memory_order_relaxed);  // a newer hint stays
  }
  return awaiting;
}

Status EmulatedBackend::WaitCounter(CounterId id, std::uint64_t value, int timeout_ms) {
  if (!queue_.CounterInUse(id))
    return Error(Code::kArg,
                 "emulated WaitCounter: counter " + std::to_string(id) + " is not allocated");
  const std::int64_t deadline = timeout_ms >= 0 ? NowMs() + timeout_ms : 0;
  Backoff backoff(200, 20);
  for (;;) {
    if (queue_.Read(id) >= value) return Status::Ok();
    if (queue_.Errors(id) > 0)
      return Error(Code::kOther, "emulated WaitCounter(counter " + std::to_string(id) + ", " +
                                     std::to_string(value) + "): " +
                                     std::to_string(queue_.Errors(id)) + " op(s) failed on it");
    if (timeout_ms >= 0 && NowMs() >= deadline)
      return Error(Code::kPending, "emulated WaitCounter(counter " + std::to_string(id) + ", " +
                                       std::to_string(value) + "): timed out after " +
                                       std::to_string(timeout_ms) + " ms at value " +
                                       std::to_string(queue_.Read(id)));
    // With a progress thread the CQ is its business; without, the waiter
    // drives progress itself.
    const bool did = thread_.running() ? Drain() : PollNow();
    if (did) {
      backoff.Reset();
      continue;
    }
    if (!backoff.sleeping()) {
      backoff.Pause();
    } else if (thread_.running()) {
      queue_.BeginSleep();
      const std::uint32_t e = queue_.epoch();
      if (queue_.Read(id) < value && queue_.Errors(id) == 0) queue_.SleepOnChange(e, 1000);
      queue_.EndSleep();
    } else {
      BlockInCq(1);
    }
  }
}

Status EmulatedBackend::Post(std::span<const TriggeredOp> ops) {
  EnsureThread();  // one acquire load once started
  NICQ_RETURN_IF_ERROR(CheckOps(ops));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TriggeredOp& op = ops[i];
    const bool remote = op.kind == OpKind::kSend || op.kind == OpKind::kRecv ||
                        op.kind == OpKind::kPut || op.kind == OpKind::kAtomic ||
                        op.kind == OpKind::kRemoteCounterAdd;
    if (op.kind == OpKind::kRemoteCounterAdd && op.value > 0xffffffffu)
      return Error(Code::kUnsupportedOperation,
                   "emulated Post: op " + std::to_string(i) +
                       ": remote counter add of more than 2^32-1 (remote CQ data carries 32 bits)");
    if (remote && !PeerOk(op.peer))
      return Error(Code::kRank, "emulated Post: op " + std::to_string(i) + " (" +
                                    offload::OpKindName(op.kind) + "): peer " +
                                    std::to_string(op.peer) + " unknown (SetPeers gave " +
                                    std::to_string(doorbells_.size()) + ")");
  }
  (thread_.on_thread() ? agent_work_requests_ : work_requests_)
      .fetch_add(ops.size(), std::memory_order_relaxed);
  // Ops that fire at once, with no progress thread and nothing else ready:
  // this thread issues them now, without the round trip through the ready
  // FIFO and a second locked section to pop them (a host-sequenced queue's
  // starts are exactly this).
  if (!thread_.running() && ops.size() <= std::size_t(kIssueBatch) && AllFireNow(ops) &&
      !queue_.HasReady() && !draining_.exchange(true, std::memory_order_seq_cst))
    return IssueNow(ops);
  NICQ_RETURN_IF_ERROR(queue_.Post(ops));
  // With the progress thread polling, or napping on the queue's futex that
  // the post just ended (shm: no CQ wait object), the thread issues: an
  // issue can be long (shm copies a large message already announced by the
  // peer inside fi_trecv, ~100 us per MiB) and the caller is an enqueue
  // that should return at once. A thread blocked in the CQ's wait object
  // (tcp) would not see the post: when the post made ops ready, one
  // fi_cq_signal wakes it to issue them (a write to its wait fd: on tcp an
  // inline issue of a 512 KiB message kept the enqueue for 1.6-15 us and
  // the host out of its compute). Gated ops need no one now: whatever
  // reaches their gate (a CQ event the thread wakes for, a host add that
  // drains) issues them.
  if (thread_.running()) {
    if (thread_.awake() || !ep_->cq_waitable() || !queue_.HasReady()) return Status::Ok();
    if (fi_cq_signal(ep_->cq()) == 0) return Status::Ok();
  }
  Drain();
  return Status::Ok();
}

bool EmulatedBackend::AllFireNow(std::span<const TriggeredOp> ops) {
  for (const TriggeredOp& op : ops)
    if (op.trigger != kNoCounter || op.kind == OpKind::kCounterAdd ||
        op.kind == OpKind::kCounterSet)
      return false;  // counter ops keep TriggerQueue's inline collection
  return true;
}

Status EmulatedBackend::IssueNow(std::span<const TriggeredOp> ops) {
  // The caller took the drainer role with the FIFO empty (see Post).
  EmuNode* nodes[kIssueBatch];
  const int n = int(ops.size());
  Status st = queue_.TakeNodes(ops, nodes);
  if (st.ok()) {
    int issued = 0;
    for (; issued < n; ++issued) {
      const long r = Issue(nodes[issued]);
      if (r == -FI_EAGAIN) {  // the rest waits in the FIFO, retried by progress
        queue_.PushReadyFront(nodes + issued, n - issued);
        retry_.store(true, std::memory_order_relaxed);
        break;
      }
      if (r < 0) Fail(nodes[issued], r);
    }
    HopCounts::Bump(Hops().issued, std::uint64_t(issued));
    FlushCompletedAtIssue();
    WakeAgentForCompletions();
  }
  draining_.store(false, std::memory_order_seq_cst);
  // Ops another thread made ready while we held the role (Drain's handshake).
  if (queue_.HasReady()) Drain();
  return st;
}

Status EmulatedBackend::Cancel(CounterId trigger) {
  if (!queue_.CounterInUse(trigger))
    return Error(Code::kArg,
                 "emulated Cancel: counter " + std::to_string(trigger) + " is not allocated");
  queue_.Cancel(trigger);
  return Status::Ok();
}

}  // namespace nicq::ofi
