// The emulated backend's data path: issuing the ops that became ready,
// reading the endpoint's completions (and the doorbells that carry remote
// counter adds), and the progress thread's wait between them.
#include <sched.h>
#include <time.h>

#include "core/config.h"
#include "core/log.h"
#include "providers/ofi_common/atomic_map.h"
#include "providers/ofi_common/backoff.h"
#include "providers/ofi_common/mr_key.h"
#include "providers/ofi_common/ofi_error.h"
#include "providers/ofi_common/tsan_annotations.h"
#include "providers/ofi_emulated/emulated_backend.h"

namespace nicq::ofi {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

namespace {

// Remote CQ data: the counter to bump and by how much (the high 32 bits),
// and, for a put whose sender awaits the target's delivery response, who
// to ring once the target has read it (kCqRingBack and the sender's
// PeerId + 1; 0: nobody).
constexpr std::uint64_t kCqCounterBits = 20, kCqSourceBits = 11;
constexpr std::uint64_t kCqCounterMask = (std::uint64_t(1) << kCqCounterBits) - 1;
constexpr std::uint64_t kCqSourceMask = (std::uint64_t(1) << kCqSourceBits) - 1;
constexpr std::uint64_t kCqRingBack = std::uint64_t(1) << 31;
std::uint64_t EncodeCqData(CounterId counter, std::uint64_t value, std::uint64_t ring_back = 0) {
  return (value << 32) | ring_back | counter;
}

// The counter a put/atomic must bump at its target: the op names it, or the
// target region's key carries it where we chose the key (mr_key.h).
CounterId ArrivalCounter(const TriggeredOp& op, const MrKeyLayout* keys) {
  if (op.target_counter != kNoCounter || keys == nullptr) return op.target_counter;
  return keys->ArrivalCounterOfKey(op.remote_key);
}

constexpr int kCqBatch = 16;

// The progress thread's pause before it retries an op the provider refused
// with EAGAIN.
constexpr int kRetryPauseUs = 50;

// An idle backend reads its CQ on one Progress call in this many.
constexpr std::uint32_t kIdleReadEvery = 8;

}  // namespace

bool EmulatedBackend::Progress() {
  // Idle (no op posted, issued or ready, no region exposed) the CQ can hold
  // only a peer's early doorbell for a counter nothing here waits on yet:
  // it is read on every kIdleReadEvery-th call. Processes whose queues and
  // collectives run on the node area poll this backend in every progress
  // pass without using it; the CQ read was a fifth of a queued iteration.
  if (queue_.nodes_in_use() == 0 && in_flight_.load(std::memory_order_relaxed) == 0 &&
      regions_.load(std::memory_order_relaxed) == 0 && !queue_.HasReady()) {
    // A plain load and store: a lost update between threads only moves the
    // next read by a call.
    const std::uint32_t n = idle_polls_.load(std::memory_order_relaxed) + 1;
    idle_polls_.store(n, std::memory_order_relaxed);
    if (n % kIdleReadEvery != 0) return false;
  }
  return PollNow();
}

bool EmulatedBackend::PollNow() {
  const bool agent = thread_.on_thread();
  HopCounts& hops = agent ? agent_hops_ : host_hops_;
  const int entries = ReadCq();
  bool did = entries > 0;
  // The host threads' adds (MPI_Start): applied and collected here, so
  // that the Drain below issues what they reached.
  if (agent) did |= TakeHostAdds();
  did |= Drain();
  // Whoever completed an epoch (this thread, or a host in its wait), its
  // plan's next epochs are re-armed here, off the host.
  if (agent) RunRefillers();
  HopCounts::Bump(hops.polls);
  if (did) {
    HopCounts::Bump(hops.polls_with_work);
    HopCounts::Bump(hops.cq_entries, std::uint64_t(entries));
    nap_us_.store(config_.min_nap_us, std::memory_order_relaxed);
    if (agent) thread_worked_ns_ = NowNs();
  }
  return did;
}

bool EmulatedBackend::Drain() {
  // Nothing ready: no role to take (two locked instructions saved on every
  // idle poll). Whoever makes an op ready calls Drain after, and the
  // handshake below covers a producer that finds the role taken.
  if (!queue_.HasReady()) return false;
  bool did = false;
  for (;;) {
    if (draining_.exchange(true, std::memory_order_seq_cst)) return did;
    bool eagain = false;
    int issued = 0;
    EmuNode* batch[kIssueBatch];
    int got = 0;
    while (!eagain && (got = queue_.PopReady(batch, kIssueBatch)) > 0) {
      for (int i = 0; i < got; ++i) {
        EmuNode* n = batch[i];
        const long r = Issue(n);
        if (r == -FI_EAGAIN) {
          queue_.PushReadyFront(batch + i, got - i);
          eagain = true;
          break;
        }
        did = true;
        ++issued;
        if (r < 0) {
          const bool counted = n->stage == 2;
          Fail(n, r);
          if (counted) in_flight_.fetch_sub(1, std::memory_order_release);
        }
      }
      FlushCompletedAtIssue();  // ops done at issue (injects, counter ops)
    }
    retry_.store(eagain, std::memory_order_relaxed);
    if (issued > 0) HopCounts::Bump(Hops().issued, std::uint64_t(issued));
    // Another thread may have made ops ready while we held the role, and
    // returned because we held it. Its (ready count add, role exchange) and
    // our (role release, ready count load) are a store-load pair on each
    // side: with release/acquire the CPU may let both read the old values
    // and the op stays ready with no one issuing it (until the next poll:
    // a progress-thread nap, or the host's next MPI call). seq_cst closes it.
    draining_.store(false, std::memory_order_seq_cst);
    if (eagain || !queue_.HasReady()) {
      if (did) WakeAgentForCompletions();
      return did;
    }
  }
}

long EmulatedBackend::IssueDoorbell(EmuNode* n, offload::PeerId peer, CounterId counter,
                                    std::uint64_t value) {
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  long r;
  {
    ProviderCall call(this);
    r = fi_writedata(ep_->ep(), &kDoorbellSource, sizeof(kDoorbellSource), nullptr,
                     EncodeCqData(counter, value), ep_->Peer(peer), doorbells_[peer],
                     doorbell_keys_[peer], &n->ctx);
  }
  if (r != 0) in_flight_.fetch_sub(1, std::memory_order_relaxed);
  RingPeer(peer, r);
  return r;
}

// Ops the provider copies before the call returns and completes with no CQ
// entry: complete at issue, with no completion lookup and no node round
// trip, so they read the op in place (no completion can race them).
//   sends up to the inject size (a queued ring's sends, half its ops);
//   puts that ask only for source completion, up to the inject size, where
//   injecting them pays (inject_puts_);
//   remote counter adds that ask only that they left (the exchanges' and
//   the host-fold plans' ready tokens): a delivery-complete doorbell
//   write's completion is one more CQ entry, read by an agent woken for
//   nothing else.
// *injected false: not such an op, nothing issued.
long EmulatedBackend::IssueInjected(const TriggeredOp& op, bool* injected) {
  *injected = true;
  if (op.kind == OpKind::kSend && op.bytes <= inject_max_) {
    ProviderCall call(this);
    return fi_tinject(ep_->ep(), op.local_buf, op.bytes, ep_->Peer(op.peer), op.tag);
  }
  if (op.source_completion && inject_puts_) {
    if (op.kind == OpKind::kPut && op.bytes <= inject_max_) {
      const CounterId arrival = ArrivalCounter(op, key_arrival());
      ProviderCall call(this);
      return arrival != kNoCounter
                 ? fi_inject_writedata(ep_->ep(), op.local_buf, op.bytes, EncodeCqData(arrival, 1),
                                       ep_->Peer(op.peer), op.remote_addr, op.remote_key)
                 : fi_inject_write(ep_->ep(), op.local_buf, op.bytes, ep_->Peer(op.peer),
                                   op.remote_addr, op.remote_key);
    }
    if (op.kind == OpKind::kRemoteCounterAdd) {
      ProviderCall call(this);
      return fi_inject_writedata(ep_->ep(), &kDoorbellSource, sizeof(kDoorbellSource),
                                 EncodeCqData(op.target_counter, op.value), ep_->Peer(op.peer),
                                 doorbells_[op.peer], doorbell_keys_[op.peer]);
    }
  }
  *injected = false;
  return 0;
}

long EmulatedBackend::Issue(EmuNode* n) {
  if (n->stage != 2) {  // not an atomic's doorbell, which follows its landing
    bool injected = false;
    const long r = IssueInjected(*n->op, &injected);
    if (injected) {
      if (r == 0) CompleteAtIssue(n);
      RingPeer(n->op->peer, r);
      return r;
    }
  }
  // A copy for the rest: once posted, an op's completion may be handled and
  // its node reused by a Post on another thread while this one still reads
  // fields for the call (ThreadSanitizer saw exactly that reuse; the
  // release annotations below must follow every read of the op).
  const TriggeredOp op = *n->op;
  if (n->stage == 2) {  // still counted in flight since its atomic was issued
    // Stage set before the post: its completion may be handled (and the
    // node reused) on another thread before fi_writedata returns.
    n->stage = 3;
    NICQ_TSAN_RELEASE(n);
    long r;
    {
      ProviderCall call(this);
      r = fi_writedata(ep_->ep(), &kDoorbellSource, sizeof(kDoorbellSource), nullptr,
                       EncodeCqData(ArrivalCounter(op, key_arrival()), 1), ep_->Peer(op.peer),
                       doorbells_[op.peer], doorbell_keys_[op.peer], &n->ctx);
    }
    if (r != 0) n->stage = 2;  // not posted: retried as a doorbell
    RingPeer(op.peer, r);
    return r;
  }
  long r = 0;
  fid_ep* ep = ep_->ep();
  switch (op.kind) {
    case OpKind::kHost:
      op.host_fn(op.host_arg);
      CompleteAtIssue(n);
      return 0;
    case OpKind::kCounterAdd:
      queue_.Add(op.target_counter, op.value);
      CompleteAtIssue(n);
      return 0;
    case OpKind::kCounterSet:
      queue_.Set(op.target_counter, op.value);
      CompleteAtIssue(n);
      return 0;
    case OpKind::kRemoteCounterAdd:
      NICQ_TSAN_RELEASE(n);
      return IssueDoorbell(n, op.peer, op.target_counter, op.value);
    default:
      break;
  }
  NICQ_TSAN_RELEASE(n);  // the completion, read by another thread, acquires it
  in_flight_.fetch_add(1, std::memory_order_relaxed);
  {
    ProviderCall call(this);  // the fi_* call below (no callbacks into nicq from here on)
    switch (op.kind) {
      case OpKind::kSend:
        r = fi_tsend(ep, op.local_buf, op.bytes, nullptr, ep_->Peer(op.peer), op.tag, &n->ctx);
        break;
      case OpKind::kRecv:
        r = fi_trecv(ep, op.local_rbuf, op.bytes, nullptr, ep_->Peer(op.peer), op.tag, 0, &n->ctx);
        break;
      case OpKind::kPut: {
        // Delivery completion: the op completes once the target accepted the
        // data, so a bad key or a dead target becomes an error completion here
        // instead of a silent drop at the target.
        const CounterId arrival = ArrivalCounter(op, key_arrival());
        iovec iov{const_cast<void*>(op.local_buf), op.bytes};
        fi_rma_iov riov{op.remote_addr, op.bytes, op.remote_key};
        fi_msg_rma msg{};
        msg.msg_iov = &iov;
        msg.iov_count = 1;
        msg.addr = ep_->Peer(op.peer);
        msg.rma_iov = &riov;
        msg.rma_iov_count = 1;
        msg.context = &n->ctx;
        msg.data = arrival != kNoCounter ? EncodeCqData(arrival, 1, ring_back_) : 0;
        r = fi_writemsg(
            ep, &msg,
            FI_COMPLETION | FI_DELIVERY_COMPLETE | (arrival != kNoCounter ? FI_REMOTE_CQ_DATA : 0));
        break;
      }
      case OpKind::kAtomic: {
        // With an arrival counter the doorbell may only ring once the atomic
        // has been applied at the target: ask for delivery completion.
        const bool bump = ArrivalCounter(op, key_arrival()) != kNoCounter;
        fi_ioc ioc{const_cast<void*>(op.local_buf), op.bytes / offload::AtomicTypeSize(op.atype)};
        fi_rma_ioc rioc{op.remote_addr, ioc.count, op.remote_key};
        fi_msg_atomic msg{};
        msg.msg_iov = &ioc;
        msg.iov_count = 1;
        msg.addr = ep_->Peer(op.peer);
        msg.rma_iov = &rioc;
        msg.rma_iov_count = 1;
        msg.datatype = ToFiType(op.atype);
        msg.op = ToFiOp(op.aop);
        msg.context = &n->ctx;
        n->stage = bump ? 1 : 0;
        NICQ_TSAN_RELEASE(n);  // the stage too is read by the completion's thread
        if (bump && !fetch_sink_.empty()) {
          // A fetching atomic completes only once the target applied it, as
          // a delivery-complete one would, without the double free of
          // delivery-complete atomics on shm (see fetch_sink_).
          fi_ioc result{fetch_sink_.data(), ioc.count};
          r = fi_fetch_atomicmsg(ep, &msg, &result, nullptr, 1, FI_COMPLETION);
        } else {
          r = fi_atomicmsg(ep, &msg, FI_COMPLETION | (bump ? FI_DELIVERY_COMPLETE : 0));
        }
        break;
      }
      default:
        r = -FI_EINVAL;
    }
  }
  if (r != 0) in_flight_.fetch_sub(1, std::memory_order_relaxed);
  if (op.kind != OpKind::kRecv) RingPeer(op.peer, r);  // outside the call: a wake is a syscall
  return r;
}

void EmulatedBackend::Complete(EmuNode* n) {
  if (n->stage == 1) {  // the atomic landed: ring the target's doorbell next
    n->stage = 2;
    queue_.PushReadyBack(n);
    return;
  }
  const EmuCompletion c{n, n->op->completion, n->op->completion_inc};
  queue_.CompleteBatch({&c, 1});
}

void EmulatedBackend::Fail(EmuNode* n, long err) {
  const TriggeredOp& op = *n->op;
  NICQ_LOG(kError, kProvider, "emulated: %s to peer %d failed: %s", offload::OpKindName(op.kind),
           op.peer, fi_strerror(static_cast<int>(err < 0 ? -err : err)));
  if (op.completion != kNoCounter) queue_.AddError(op.completion, FailureClass(err));
  queue_.Release(n);
}

int EmulatedBackend::HandleEntries(const fi_cq_data_entry* entries, int n) {
  // The whole batch completes under one lock (TriggerQueue::CompleteBatch).
  EmuCompletion done[kCqBatch];
  int ndone = 0, finished = 0;
  offload::PeerId ring[kCqBatch];  // senders of puts that await our response
  int nring = 0;
  for (int i = 0; i < n; ++i) {
    const fi_cq_data_entry& e = entries[i];
    if ((e.flags & FI_REMOTE_CQ_DATA) && (e.flags & FI_REMOTE_WRITE)) {
      done[ndone++] = {nullptr, static_cast<CounterId>(e.data & kCqCounterMask), e.data >> 32};
      if ((e.data & kCqRingBack) != 0 && nring < kCqBatch)
        ring[nring++] = offload::PeerId((e.data >> kCqCounterBits) & kCqSourceMask) - 1;
      continue;
    }
    if (e.op_context == nullptr) continue;
    EmuNode* node = queue_.NodeOfContext(e.op_context);
    NICQ_TSAN_ACQUIRE(node);
    if (node->stage == 1) {  // an atomic whose doorbell is next: still in flight
      Complete(node);
      continue;
    }
    done[ndone++] = {node, node->op->completion, node->op->completion_inc};
    ++finished;
  }
  queue_.CompleteBatch({done, std::size_t(ndone)});
  // Only after the counters moved: Flush must not see an op gone before
  // its completion counter did.
  if (finished > 0) in_flight_.fetch_sub(finished, std::memory_order_release);
  // The provider wrote those puts' delivery responses while this thread
  // read them: the senders' agents may sleep on completions only they read.
  for (int i = 0; i < nring; ++i)
    if (i == 0 || ring[i] != ring[i - 1]) RingPeer(ring[i], 0);
  return n;
}

void EmulatedBackend::CompleteAtIssue(EmuNode* n) {
  done_at_issue_[ndone_at_issue_++] = {n, n->op->completion, n->op->completion_inc};
}

void EmulatedBackend::FlushCompletedAtIssue() {
  queue_.CompleteBatch({done_at_issue_, std::size_t(ndone_at_issue_)});
  ndone_at_issue_ = 0;
}

int EmulatedBackend::ReadCq() {
  fi_cq_data_entry entries[kCqBatch];
  int total = 0;
  for (;;) {
    ssize_t n;
    {
      ProviderCall call(this);
      n = fi_cq_read(ep_->cq(), entries, kCqBatch);
    }
    if (n > 0) {
      total += HandleEntries(entries, static_cast<int>(n));
      if (n < kCqBatch) return total;
      continue;
    }
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      ssize_t got;
      {
        ProviderCall call(this);
        got = fi_cq_readerr(ep_->cq(), &err, 0);
      }
      if (got > 0) {
        ++total;
        if (err.op_context != nullptr) {
          EmuNode* node = queue_.NodeOfContext(err.op_context);
          NICQ_TSAN_ACQUIRE(node);
          Fail(node, -err.err);
          in_flight_.fetch_sub(1, std::memory_order_release);
        } else {
          NICQ_LOG(kWarn, kProvider, "emulated: error completion without context: %s",
                   fi_strerror(err.err));
        }
      }
      continue;
    }
    return total;
  }
}

// Blocks the progress thread until the CQ has something (or timeout_ms).
void EmulatedBackend::BlockInCq(int timeout_ms) {
  if (retry_.load(std::memory_order_relaxed) || queue_.HasReady()) {
    // A timed retry, not a nap on the bell: the peer's progress that ends
    // an EAGAIN does not ring us.
    timespec ts{0, kRetryPauseUs * 1000L};
    nanosleep(&ts, nullptr);
    return;
  }
  if (!ep_->cq_waitable()) {
    // No wait object (shm): nap. Naps stay at the shortest while issued
    // ops await completions, and while a started epoch awaits its peers'
    // tokens and puts: those land in the CQ, which only a poll reads (with
    // 1 ms naps a plan's epoch took a nap per hop and did not progress while
    // the host slept). A peer that rings our doorbell ends the nap at once;
    // the timeout still bounds it where no peer rings (a provider's own
    // protocol steps, peers off the node).
    if (AwaitingExpected() && SpinForEpoch()) return;
    const bool awaiting = AwaitingExpected();
    if (awaiting) epoch_naps_.fetch_add(1, std::memory_order_relaxed);
    const int nap = nap_us_.load(std::memory_order_relaxed);
    const bool soon = in_flight_.load(std::memory_order_relaxed) > 0 || awaiting;
    const int cap = soon ? config_.min_nap_us : config_.max_nap_us;
    nap_us_.store(std::min(nap * 2, cap), std::memory_order_relaxed);
    if (own_bell_ != nullptr)
      NapOnBell(std::min(nap, cap));
    else
      NapOnChange(std::min(nap, cap));
    return;
  }
  // A host add published before the announcement is found here; one
  // after it sees the announcement and signals the CQ (AnnounceSleep).
  AnnounceSleep();
  if (HostAddsPending()) {
    EndSleep();
    return;
  }
  fi_cq_data_entry entries[kCqBatch];
  const ssize_t n = fi_cq_sread(ep_->cq(), entries, kCqBatch, nullptr, timeout_ms);
  EndSleep();
  if (n > 0)
    HandleEntries(entries, static_cast<int>(n));
  else if (n == -FI_EAVAIL)
    ReadCq();
  if (n > 0 || n == -FI_EAVAIL) Drain();
}

// Each hop of a started epoch (a peer's token, its put) is one wake-up of
// this thread when it naps, and a wake-up costs a futex wake and a context
// switch, several microseconds each, tens on a loaded machine: a 2-rank
// neighbourhood exchange is a chain of them. So for a short while after its
// last work, and only while an epoch is awaited, the thread keeps polling;
// sched_yield between polls hands the core to any other runnable thread
// (a host that woke from its compute, a peer's agent), so a rank
// oversubscribed on its cores loses little. Bounded: past epoch_spin_us
// without work it naps as before, until a ring or the nap's end.
bool EmulatedBackend::SpinForEpoch() {
  if (config_.epoch_spin_us <= 0) return false;
  const std::int64_t until = thread_worked_ns_ + std::int64_t(config_.epoch_spin_us) * 1000;
  while (NowNs() < until && AwaitingExpected() && !thread_.stopping()) {
    sched_yield();
    epoch_yields_.fetch_add(1, std::memory_order_relaxed);
    if (PollNow()) return true;
  }
  return false;
}

// Ended by a post or a counter change (the queue's change futex).
void EmulatedBackend::NapOnChange(int timeout_us) {
  queue_.BeginSleep();
  AnnounceSleep();  // a host add after it bumps the epoch (NotifyChange)
  const std::uint32_t e = queue_.epoch();
  if (!queue_.HasReady() && !HostAddsPending()) queue_.SleepOnChange(e, timeout_us);
  EndSleep();
  queue_.EndSleep();
}

// Ended by a peer's ring, or by a post or counter change here (the queue
// rings our own bell then). Armed before one last poll: a peer that
// delivered before we armed rang while no one slept, so its work must be
// found by that poll, and one that delivers after it rings us awake.
void EmulatedBackend::NapOnBell(int timeout_us) {
  const std::uint32_t seen = offload::ArmBell(own_bell_);
  AnnounceSleep();  // a host add after it rings the bell; PollNow takes those before
  if (!queue_.HasReady() && !PollNow()) {
    if (offload::SleepOnBell(own_bell_, seen, timeout_us))
      bell_wakes_.fetch_add(1, std::memory_order_relaxed);
    else
      nap_timeouts_.fetch_add(1, std::memory_order_relaxed);
  }
  EndSleep();
  offload::DisarmBell(own_bell_);
}

std::uint64_t EmulatedBackend::RingBackData(offload::PeerId self) {
  if (self < 0 || std::uint64_t(self) + 1 > kCqSourceMask) return 0;
  return kCqRingBack | ((std::uint64_t(self) + 1) << kCqCounterBits);
}

bool EmulatedBackend::CountersFitCqData(std::size_t num_counters) {
  return num_counters <= kCqCounterMask + 1;
}

Status CreateEmulatedBackend(const offload::BackendOptions& options,
                             std::unique_ptr<offload::OffloadBackend>* out) {
  EmulatedConfig c;
  c.provider = options.provider;
  if (c.provider.empty() || c.provider == "auto") c.provider = config::GetString("NICQ_PROVIDER");
  if (c.provider.empty() || c.provider == "auto") c.provider = "tcp;ofi_rxm";
  c.num_counters = static_cast<std::size_t>(config::GetInt("NICQ_OFFLOAD_COUNTERS"));
  c.num_ops = options.slot_budget != 0 ? options.slot_budget
                                       : static_cast<std::size_t>(config::GetInt("NICQ_EMU_OPS"));
  c.spin_us = static_cast<int>(config::GetInt("NICQ_PROGRESS_SPIN_US"));
  c.min_nap_us = static_cast<int>(config::GetInt("NICQ_EMU_MIN_NAP_US"));
  c.max_nap_us = static_cast<int>(config::GetInt("NICQ_EMU_MAX_NAP_US"));
  c.epoch_spin_us = static_cast<int>(config::GetInt("NICQ_EMU_EPOCH_SPIN_US"));
  c.local_ranks = options.local_ranks;
  std::unique_ptr<EmulatedBackend> b;
  NICQ_RETURN_IF_ERROR(EmulatedBackend::Create(c, &b));
  *out = std::move(b);
  return Status::Ok();
}

}  // namespace nicq::ofi
