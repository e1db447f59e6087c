// OffloadBackend: the narrow, batched interface every offload backend
// implements (ofi_native, ofi_emulated, sim, shm_native).
//
// Contract (full text in docs/triggered-semantics.md):
//  * Counters are 64-bit, only grow (except an explicit kCounterSet), and
//    have a success value and an error value.
//  * A triggered op fires when counter(trigger) >= threshold. Ops on one
//    counter fire in threshold order, equal thresholds in posting order. An
//    op posted with its threshold already reached fires at once.
//  * When an op completes, `completion_inc` is added to its local completion
//    counter; a failed op adds 1 to that counter's error value instead and
//    no op gated on that completion fires.
//  * Ops that move data to a peer may increment a counter at the target
//    (`remote_counter`) when the data has landed there.
//  * Post() copies the op descriptors before it returns (every backend
//    does): callers may reuse the span's storage at once.
//
// Put/atomic landing: the target region's `arrival_counter` (RegisterMemory)
// gets +1 when the data has landed (libfabric binds remote counters to the
// MR, so the initiator cannot choose another); TriggeredOp::target_counter on
// a put/atomic names that same counter. Callers set it: where the provider
// chooses memory keys (verbs) or keys are 32 bits (cxi), the key cannot
// carry the counter and the emulated backend learns it only from the op.
//
// Added by OFFLOAD (additive only): Capabilities::{max_counter_value,
// max_msg_bytes, AllowAtomic}, AtomicTypeSize, OpKindName, and the virtuals
// CheckOps/FreeSlots with default implementations.
//
// The interface does not mention libfabric so that a shared-memory backend
// can implement it too. Nothing here knows about MPI or collectives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/agent_bell.h"
#include "core/status.h"

namespace nicq::offload {

using CounterId = std::uint32_t;
inline constexpr CounterId kNoCounter = 0xffffffffu;

// Index of a peer process in the backend's address table (world rank).
using PeerId = std::int32_t;

enum class OpKind : std::uint8_t {
  kSend,              // tagged send of local_buf[0..bytes) to peer, tag
  kRecv,              // tagged receive into local_rbuf[0..bytes) from peer, tag
  kPut,               // RMA write local_buf -> peer's (remote_addr, remote_key)
  kAtomic,            // remote atomic: peer's (remote_addr) op= local_buf, count elements of atype
  kCounterAdd,        // add `value` to local counter `target_counter`
  kCounterSet,        // set local counter `target_counter` to `value`
  kRemoteCounterAdd,  // add `value` to counter `target_counter` of peer (ready tokens)
  kHost,  // host step: call host_fn(host_arg) on the progress engine (reduce, copy, pack)
};

enum class AtomicOp : std::uint8_t {
  kSum,
  kProd,
  kMin,
  kMax,
  kLand,
  kLor,
  kLxor,
  kBand,
  kBor,
  kBxor,
  kReplace
};
enum class AtomicType : std::uint8_t {
  kInt8,
  kUint8,
  kInt16,
  kUint16,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat,
  kDouble
};

// Who fires a triggered op once its condition is met: a NIC with no host
// thread or call (native, the simulator); the backend's own agent thread
// (the emulator with its progress thread); a host thread of this process
// inside an MPI call (the emulator without its thread); or whichever
// process's counter update met the condition, inside that update (shm).
// Callers choose plans by this, never by a backend's name.
enum class Firing : std::uint8_t { kNic, kAgentThread, kHostCalls, kUpdater };

struct TriggeredOp {
  OpKind kind = OpKind::kHost;
  AtomicOp aop = AtomicOp::kSum;
  AtomicType atype = AtomicType::kDouble;
  CounterId trigger = kNoCounter;  // kNoCounter: fire at once
  std::uint64_t threshold = 0;     // absolute value of `trigger` at which to fire
  CounterId completion = kNoCounter;
  std::uint64_t completion_inc = 1;
  PeerId peer = -1;
  const void* local_buf = nullptr;        // send/put/atomic source
  void* local_rbuf = nullptr;             // recv destination
  std::size_t bytes = 0;                  // bytes (atomic: bytes of the operand vector)
  std::uint64_t tag = 0;                  // send/recv
  std::uint64_t remote_addr = 0;          // put/atomic target address (as the target registered it)
  std::uint64_t remote_key = 0;           // put/atomic target memory key
  CounterId target_counter = kNoCounter;  // counter ops; for put/atomic: counter at the target
  // Put: its completion need only say that the source is reusable, since
  // the target counts the landing itself (its arrival counter). Remote
  // counter add: its completion need only say that the add is on its way,
  // since nothing at the initiator waits for it to land. A backend may then
  // count either before its effect is visible at the target
  // (docs/triggered-semantics.md, clause 4.2).
  bool source_completion = false;
  std::uint64_t value = 0;  // counter add/set amount
  void (*host_fn)(void* arg) = nullptr;
  void* host_arg = nullptr;
};

struct Capabilities {
  bool native_triggers = false;       // ops fire without any host thread
  bool remote_counters = false;       // put/atomic can bump a target counter
  bool atomics = false;               // remote atomics supported at all
  std::size_t max_trigger_slots = 0;  // 0: unlimited
  // Elements one atomic op may carry (fi_query_atomic's count; cxi: 1,
  // CXIP_AMO_MAX_IOV). 0: unlimited. A limit in elements, not bytes: the
  // same count allows 8 bytes of doubles and 1 of int8.
  std::size_t max_atomic_count = 0;
  bool AtomicFits(AtomicType t, std::size_t bytes) const;
  bool SupportsAtomic(AtomicOp op, AtomicType t) const {  // per backend table
    return atomics && (atomic_mask[static_cast<int>(op)] >> static_cast<int>(t)) & 1u;
  }
  std::uint64_t atomic_mask[16] = {};  // bit (type) set in atomic_mask[op]
  // Largest value a counter can hold before it wraps (sockets: 2^31 - 1, its
  // counters are signed 32-bit). Plans rebase their thresholds before they
  // would cross it (docs/triggered-semantics.md, "Counter wrap").
  std::uint64_t max_counter_value = ~std::uint64_t{0};
  // Largest send/recv/put size in one op (0: unlimited).
  std::size_t max_msg_bytes = 0;
  // The NIC runs a triggered counter op inside the lock of its trigger
  // counter and fires the target's own triggers before releasing it
  // (sockets), so a cycle of counter ops (A adds to B, B adds to A) deadlocks
  // its progress thread. Callers close such a cycle with a
  // kRemoteCounterAdd to their own rank: it fires later, outside the chain.
  bool counter_op_cycles_deadlock = false;
  // Largest `value` of one kRemoteCounterAdd (native: one doorbell write per
  // unit; emulated: 32 bits of CQ data). Callers split larger adds.
  std::uint64_t max_remote_add = ~std::uint64_t{0};
  // Progress() only reads memory when nothing is ready (shm: the provider's
  // queues are shared memory; tcp would read sockets), so callers on a hot
  // path (an enqueued wait) may poll it once.
  bool memory_poll = false;
  // Freeing a counter (or Cancel) withdraws ops posted on it that have not
  // fired, data ops included (emulator, simulator, native on sockets with
  // its arm hops). Plans arm epochs ahead of their starts only where this
  // holds: on a NIC that cannot withdraw deferred work (cxi), an epoch armed
  // but never started would hold its trigger entries until the process ends.
  bool withdraws_unfired_ops = false;
  // Two peers' atomics that land in one buffer in the same epoch may lose
  // or double a contribution (emulated over libfabric 1.17's shm: the
  // nic_tree allreduce at 3 ranks gave wrong sums; shm's double free of
  // delivery-complete atomics' buffers, which the emulated backend now
  // avoids, see fetch_sink_). Plans whose atomics converge on one buffer
  // stay on the host there; chains that land one atomic per buffer and
  // epoch are safe.
  bool converging_atomics_lose_updates = false;
  // Triggered ops run on a provider thread that naps when idle (sockets'
  // progress thread, FI_SOCKETS_PE_WAITTIME: ~10 ms), so a short epoch of
  // them is slower than host messages.
  bool trigger_thread_naps = false;

  void AllowAtomic(AtomicOp op, AtomicType t) {
    atomic_mask[static_cast<int>(op)] |= std::uint64_t{1} << static_cast<int>(t);
  }
};

// Size in bytes of one element of an atomic type.
inline std::size_t AtomicTypeSize(AtomicType t) {
  switch (t) {
    case AtomicType::kInt8:
    case AtomicType::kUint8:
      return 1;
    case AtomicType::kInt16:
    case AtomicType::kUint16:
      return 2;
    case AtomicType::kInt32:
    case AtomicType::kUint32:
    case AtomicType::kFloat:
      return 4;
    default:
      return 8;
  }
}
inline bool Capabilities::AtomicFits(AtomicType t, std::size_t bytes) const {
  return max_atomic_count == 0 || bytes <= max_atomic_count * AtomicTypeSize(t);
}
inline const char* OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    case OpKind::kPut:
      return "put";
    case OpKind::kAtomic:
      return "atomic";
    case OpKind::kCounterAdd:
      return "counter_add";
    case OpKind::kCounterSet:
      return "counter_set";
    case OpKind::kRemoteCounterAdd:
      return "remote_counter_add";
    case OpKind::kHost:
      return "host";
  }
  return "?";
}

struct MemRegion {
  void* addr = nullptr;
  std::size_t len = 0;
  std::uint64_t remote_addr = 0;  // what a peer puts into TriggeredOp::remote_addr
  std::uint64_t key = 0;          // what a peer puts into TriggeredOp::remote_key
  void* handle = nullptr;         // backend private
};

class OffloadBackend {
 public:
  virtual ~OffloadBackend() = default;
  virtual const char* Name() const = 0;
  virtual const Capabilities& Caps() const = 0;

  // Wire-up (init time): each process publishes its address; the runtime
  // exchanges them through the bootstrap and hands back the table indexed by
  // PeerId (world rank). Backends with no addressing (sim) return empty.
  virtual Status LocalAddress(std::vector<std::uint8_t>& out) = 0;
  virtual Status SetPeers(std::span<const std::vector<std::uint8_t>> addrs) = 0;

  // Counters. Allocation happens at plan build time, never on the hot path.
  virtual Status AllocCounters(std::size_t n, CounterId* out) = 0;
  virtual void FreeCounter(CounterId id) = 0;
  virtual std::uint64_t ReadCounter(CounterId id) const = 0;
  virtual std::uint64_t ReadErrors(CounterId id) const = 0;
  // The class of the first failure counted on `id` since its allocation
  // (kTruncate: a receive longer than its buffer; kProcFailed: the peer is
  // gone), kOther where the backend cannot tell; kOk: none counted.
  virtual Code ErrorClass(CounterId id) const {
    return ReadErrors(id) > 0 ? Code::kOther : Code::kOk;
  }
  // Block (spin briefly, yield, then sleep on the backend's wait object) until
  // counter >= value or an error is recorded on it; timeout_ms < 0: no limit.
  virtual Status WaitCounter(CounterId id, std::uint64_t value, int timeout_ms) = 0;
  virtual Status AddCounter(CounterId id, std::uint64_t value) = 0;  // host-side add

  // Memory exposed to peers for put/atomic (target side). Increments of
  // `arrival_counter` (may be kNoCounter) count landed puts/atomics.
  virtual Status RegisterMemory(void* addr, std::size_t len, CounterId arrival_counter,
                                MemRegion* out) = 0;
  virtual Status DeregisterMemory(MemRegion* mr) = 0;

  // Post a batch of triggered ops (one virtual call per batch). Either all
  // ops are accepted or none: kAgain means "no slots now" (the caller falls
  // back or retries), kUnsupportedOperation means this backend cannot do
  // one of them (the caller falls back to another backend).
  virtual Status Post(std::span<const TriggeredOp> ops) = 0;
  // Cancel ops not yet fired that are gated on `trigger`; flush: fire nothing
  // more, wait for in-flight ops to complete.
  virtual Status Cancel(CounterId trigger) = 0;
  virtual Status Flush() = 0;

  // Drive software progress (emulator, host steps); returns true if anything
  // happened. Safe to call from any thread.
  virtual bool Progress() = 0;
  // Ops fire only while a host thread calls Progress (or a call that drives
  // it): no NIC and no progress thread does it. Queues then sequence their
  // starts and waits on the host instead of compiling them into counter
  // chains (src/queue/queue.h, "Host sequencing").
  virtual bool HostDriven() const { return false; }
  // Who fires ops (Firing above); backends whose ops are fired by the
  // updating process override it.
  virtual Firing Fires() const {
    if (Caps().native_triggers) return Firing::kNic;
    return HostDriven() ? Firing::kHostCalls : Firing::kAgentThread;
  }
  // A started epoch is done when counter `id` reaches `value`, and its
  // remaining hops (a peer's ready token, its put) arrive from other
  // processes. A software agent that naps while idle polls promptly until
  // then; a NIC needs no hint. Called on the hot path: no allocation, no
  // lock, no system call.
  virtual void ExpectCounter(CounterId id, std::uint64_t value) {
    (void)id;
    (void)value;
  }
  // A resident plan's re-arming (offload/trigger_plan.h, Refill), taken
  // over by a software agent: `refill(arg)` runs on the agent's thread in
  // its polls, so that the host's wait for an epoch only reads the done
  // counter. True: accepted, the caller leaves re-arming to the agent
  // (and arms only an epoch a start finds missing); false (a NIC, or no
  // agent): the host re-arms. `refill` must return at once when it has
  // nothing to do and must not block.
  virtual bool AddRefiller(void (*refill)(void*), void* arg) {
    (void)refill;
    (void)arg;
    return false;
  }
  // After it returns, `refill(arg)` neither runs nor will run again.
  virtual void RemoveRefiller(void* arg) { (void)arg; }
  // Wire-up, after SetPeers: this process's doorbell and, by PeerId, those
  // of the peers on its node (nullptr: not on it, or no shared memory). A
  // software agent sleeps on its own and rings a peer's after handing that
  // peer work (agent_bell.h); a NIC needs neither. The bells outlive the
  // backend; the tables are copied.
  virtual void SetAgentBells(AgentBell* own, std::span<AgentBell* const> peers) {
    (void)own;
    (void)peers;
  }
  // Trigger slots currently in use (for budgeting and nicq_info).
  virtual std::size_t SlotsInUse() const = 0;
  // Deferred-work requests handed to the NIC or the emulator since the
  // backend opened: fi_control(FI_QUEUE_WORK) calls on native, ops queued or
  // issued by Post on emulated. Tests read it around a start to show that a
  // resident plan's start posts nothing (NICQX_Offload_work_requests).
  virtual std::uint64_t WorkRequests() const { return 0; }

  // ---- added by OFFLOAD (defaults keep existing backends compiling) ----
  // Build-time check used by fallback selection (providers/common): Ok if
  // every op is within Caps() (kinds, atomic op/type, sizes); otherwise
  // kUnsupportedOperation naming the first op it refuses. Backends with
  // restrictions beyond Caps() (e.g. cxi: RECV only at threshold 0) override.
  virtual Status CheckOps(std::span<const TriggeredOp> ops) const;
  // Trigger slots still free (SIZE_MAX when unlimited).
  virtual std::size_t FreeSlots() const {
    const std::size_t max = Caps().max_trigger_slots;
    if (max == 0) return static_cast<std::size_t>(-1);
    const std::size_t used = SlotsInUse();
    return used >= max ? 0 : max - used;
  }
};

inline Status OffloadBackend::CheckOps(std::span<const TriggeredOp> ops) const {
  const Capabilities& caps = Caps();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TriggeredOp& op = ops[i];
    auto refuse = [&](const char* why) {
      return Error(Code::kUnsupportedOperation, std::string(Name()) + " CheckOps: op " +
                                                    std::to_string(i) + " (" + OpKindName(op.kind) +
                                                    "): " + why);
    };
    if (op.kind == OpKind::kAtomic) {
      if (!caps.SupportsAtomic(op.aop, op.atype)) return refuse("atomic op/type not supported");
      if (!caps.AtomicFits(op.atype, op.bytes))
        return refuse("atomic operand longer than the provider's max_atomic_count elements");
    }
    if ((op.kind == OpKind::kPut || op.kind == OpKind::kAtomic) &&
        op.target_counter != kNoCounter && !caps.remote_counters)
      return refuse("remote counter on put/atomic needs remote_counters");
    if (caps.max_msg_bytes != 0 && op.bytes > caps.max_msg_bytes &&
        (op.kind == OpKind::kSend || op.kind == OpKind::kRecv || op.kind == OpKind::kPut))
      return refuse("message larger than max_msg_bytes");
    if (op.kind == OpKind::kHost && op.host_fn == nullptr) return refuse("host op without host_fn");
  }
  return Status::Ok();
}

}  // namespace nicq::offload
