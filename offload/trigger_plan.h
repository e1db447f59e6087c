// TriggerPlan: a lowered Schedule, ready to replay epoch after epoch.
//
// Lifecycle (all allocation happens before the first Arm):
//   Lower(schedule)        -> ops with plan-local counter indices, and per op
//                             threshold = base + epoch * delta
//   Bind(backend)          allocate counters, register exposed buffers,
//                             copy ops into `depth` preallocated arrays
//   Exports()/Resolve()    the match exchange: peers' counter ids, buffer
//                             addresses and keys fill in remote references
//   Arm(k)                 compute epoch k's thresholds into array k % depth
//                             in place and Post() it in one call: no
//                             allocation, no rewrite of anything in flight
//   Resolve() / Refill()   resident window: epochs next..next+window-1 are
//                             armed ahead (at Resolve, then whenever an epoch
//                             is seen done: by the backend's agent where it
//                             has one (OffloadBackend::AddRefiller), else by
//                             the host's Wait and Poll); the window is the
//                             plan's share of the slot budget, 2..depth,
//                             and Refill keeps half the budget free, so that
//   Start()                is one counter add; a start that finds its epoch
//                             not armed (the program ran depth epochs ahead,
//                             or slots ran out) arms it itself
//   Wait() / Test()        epoch done when the done counter reaches its target
//
// Epoch k may be armed only after epoch k - depth completed (its descriptor
// array must stay valid until its ops complete), and epoch k's start must not
// be triggered before epoch k-1 is done (persistent-request rule; the queue
// gates its start on the previous item's done counter).
//
// Counter wrap: when the backend's counters hold less than the thresholds
// will need (Caps().max_counter_value; sockets: 2^31-1), Arm rebases between
// epochs: with the plan quiescent (previous epoch done, every counter at
// exactly epochs*delta), it sets every plan counter back to 0 with posted
// kCounterSet ops and restarts the epoch arithmetic from 0. This relies on
// peers not incrementing this plan's named counters before this rank starts
// the next epoch, which the ready-token protocols of offload/algorithms give.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "offload/schedule.h"
#include "providers/backend.h"

namespace nicq::offload {

enum class CounterRole : std::uint8_t { kStart, kDone, kNamed, kCompletion, kJoin };
const char* CounterRoleName(CounterRole r);

struct PlanCounterInfo {
  std::string name;
  CounterRole role = CounterRole::kJoin;
  std::uint64_t delta = 0;    // increments per epoch (remote ones included)
  CounterId id = kNoCounter;  // backend id once bound
};

// A remote reference of one op, resolved at match time.
struct OpRemoteRef {
  enum Kind : std::uint8_t { kNone, kBuffer, kCounter };
  Kind kind = kNone;
  std::uint32_t index = 0;
  std::uint64_t offset = 0;
};

// What a host step does when its trigger fires (runs on the progress engine).
struct HostTask {
  StepKind kind = StepKind::kHost;
  AtomicOp aop = AtomicOp::kSum;
  AtomicType atype = AtomicType::kDouble;
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
  void (*fn)(void*) = nullptr;
  void* arg = nullptr;
  static void Run(void* task);  // TriggeredOp::host_fn of every host step
};

// What peers need from this rank's plan (sent in the match exchange).
struct PlanExports {
  std::vector<CounterId> counters;  // per named counter
  struct Buffer {
    std::uint64_t remote_addr = 0, key = 0, len = 0;
    CounterId arrival = kNoCounter;
  };
  std::vector<Buffer> buffers;  // per exposed buffer
  std::vector<std::uint64_t> Serialize() const;
  static Status Deserialize(const std::uint64_t* words, std::size_t n, PlanExports* out);
};

class TriggerPlan {
 public:
  TriggerPlan(const TriggerPlan&) = delete;  // host tasks are pointed to by ops
  TriggerPlan& operator=(const TriggerPlan&) = delete;
  ~TriggerPlan();

  const std::string& name() const { return name_; }
  std::size_t num_ops() const { return proto_.size(); }
  std::size_t num_counters() const { return counters_.size(); }
  std::size_t slots_needed() const { return proto_.size(); }
  const std::vector<TriggeredOp>& ops() const { return proto_; }  // plan-local counter indices
  const std::vector<PlanCounterInfo>& counters() const { return counters_; }
  std::uint64_t base(std::size_t op) const { return base_[op]; }
  std::uint64_t delta(std::size_t op) const { return delta_[op]; }
  std::size_t step_of(std::size_t op) const { return step_of_[op]; }  // -1: a fan-out op

  Status Bind(OffloadBackend* backend, std::size_t depth = 2);
  PlanExports Exports() const;
  Status Resolve(const std::function<const PlanExports*(PeerId)>& exports_of);

  Status Arm(std::uint64_t epoch);  // epochs in order; kAgain: its array is still in use
  // Arm the window ahead of the starts (host progress, not the hot path).
  // Where the backend's agent re-arms it, only when less than half of the
  // window is left (two loads otherwise).
  Status Refill();
  bool refilled_by_agent() const { return agent_refills_; }
  Status ArmNext();  // count the next epoch started, arming it if not resident
  Status Start();    // ArmNext(), then bump the start counter
  Status Wait();     // block (backend's wait) until this epoch is done, refill
  bool Test() const;
  // Test(), and refill the window once the epoch is done (host progress;
  // where the agent refills, only if it fell behind: then a done epoch's
  // poll is the done counter's read and a compare of the starts' own words).
  bool Poll() {
    if (!Test()) return false;
    if (agent_refills_ && !WindowLow()) return true;
    (void)Refill();  // a failure shows again at the start that needs the epoch
    return true;
  }
  std::uint64_t epochs_armed() const { return armed_upto_.load(std::memory_order_acquire); }
  std::size_t resident_window() const { return window_; }
  std::uint64_t epochs_started() const { return next_epoch_.load(std::memory_order_relaxed); }
  std::uint64_t rebases() const { return rebases_; }
  CounterId start_counter() const { return counters_[0].id; }
  CounterId done_counter() const { return counters_[1].id; }
  std::uint64_t done_target() const { return done_target_; }
  OffloadBackend* backend() const { return backend_; }
  // Buffer b as registered (for tests and the match exchange).
  const MemRegion& region(std::size_t b) const { return regions_[b]; }

  // The bound descriptors epoch `epoch` uses (thresholds as last armed).
  std::span<const TriggeredOp> bound_ops(std::uint64_t epoch) const {
    return {live_.data() + (epoch % depth_) * proto_.size(), proto_.size()};
  }

  std::string DumpText() const;
  std::string DumpDot() const;

 private:
  friend class Lowering;
  TriggerPlan() = default;
  Status Rebase();
  void BuildRebaseOps();
  bool NeedsRebase(std::uint64_t epoch) const;
  Status RefillLocked();  // Refill with the arming role held
  static bool RefillEnabled(const OffloadBackend* backend);
  // Reads armed_upto_ only when the starts' last look says the window may
  // be low (the host's wait of a done epoch, where the agent refills).
  bool WindowLow() {
    const std::uint64_t want = next_epoch_.load(std::memory_order_relaxed) + window_ / 2;
    if (armed_seen_.load(std::memory_order_relaxed) >= want) return false;
    const std::uint64_t armed = armed_upto_.load(std::memory_order_acquire);
    armed_seen_.store(armed, std::memory_order_relaxed);
    return armed < want;
  }
  // Epoch `epoch`'s descriptor array is free: the epoch depth_ before it is done.
  bool ArrayFree(std::uint64_t epoch) const;
  // The agent's refill (AddRefiller): returns at once unless an epoch can
  // be armed, and skips while the host arms.
  static void RefillOnAgent(void* plan);
  // The arming role: Arm and the descriptor arrays, armed_upto_, epoch_base_
  // and the rebase belong to whoever holds it, the host's start or the
  // agent's refill (held for one Refill: an Arm and a Post per epoch).
  bool TryTakeArming() { return !arming_.exchange(true, std::memory_order_acquire); }
  void TakeArming();  // spins, then yields: the agent holds it for one Refill
  void ReleaseArming() { arming_.store(false, std::memory_order_release); }

  std::string name_;
  std::vector<TriggeredOp> proto_;
  std::vector<std::uint64_t> base_, delta_;
  std::vector<OpRemoteRef> remote_;
  std::vector<std::size_t> step_of_;
  std::vector<std::string> labels_;  // per op
  std::vector<PlanCounterInfo> counters_;
  std::vector<ExposedBuffer> buffers_;  // arrival = plan counter index
  std::vector<HostTask> host_tasks_;    // never resized after lowering
  std::vector<std::unique_ptr<std::uint8_t[]>> scratch_;

  OffloadBackend* backend_ = nullptr;
  std::size_t depth_ = 0;
  std::size_t window_ = 0;         // epochs Refill arms ahead of the starts (<= depth_)
  std::vector<TriggeredOp> live_;  // depth_ * num_ops, bound
  std::vector<TriggeredOp> rebase_ops_;
  std::vector<MemRegion> regions_;
  std::uint64_t max_delta_ = 0;
  bool agent_refills_ = false;    // the backend's agent runs RefillOnAgent
  bool resolved_ = false;         // remote references filled: epochs may be armed
  std::uint64_t epoch_base_ = 0;  // epoch at which counters were last zero
  std::uint64_t rebases_ = 0;
  // What a start writes, on a line of its own: the agent's refill reads
  // next_epoch_ at every pass, and writes nothing here.
  // Epochs started: written by the host's starts, read by the agent's refill.
  alignas(64) std::atomic<std::uint64_t> next_epoch_{0};
  std::uint64_t done_target_ = 0;  // done counter value that ends the last armed epoch
  // The starts' last look at armed_upto_ (it only grows): a start whose
  // epoch is below it reads no line the agent writes. A hint: the host's
  // start and its progress (Poll, maybe on another thread) both store it.
  std::atomic<std::uint64_t> armed_seen_{0};
  // What the arming role writes, on another line.
  // Epochs [0, armed_upto_) were posted: written with the arming role held,
  // read by the start that decides whether its epoch is resident.
  alignas(64) std::atomic<std::uint64_t> armed_upto_{0};
  std::atomic<bool> arming_{false};
};

// Schedule -> TriggerPlan (validates first). The schedule's scratch memory
// moves into the plan.
Status Lower(Schedule& schedule, std::unique_ptr<TriggerPlan>* out);

// NICQ_PLAN_DUMP=text|dot: print the plan to stderr or NICQ_PLAN_DUMP_FILE
// (appended). Called by plan builders once per plan; no-op when unset.
void MaybeDumpPlan(const TriggerPlan& plan, int rank);
// Who fires a plan's ops on `backend`, for dumps: "native (triggered ops on
// the NIC)", "emulated (software counters, fired by the emulator)".
std::string ExecutorName(const OffloadBackend* backend);
// Who runs a plan's host steps on `backend`, for dumps: "the emulator's
// agent" (the plan progresses with the host asleep) or "the host's
// progress (MPI calls)".
std::string HostStepRunner(const OffloadBackend* backend);

}  // namespace nicq::offload
