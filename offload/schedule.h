// Schedule: one rank's part of a communication plan as a DAG of steps with
// explicit dependencies (vertices with inputs, as MPICH gentran / UCC
// schedules). Lowering (lowering.h) turns it into a TriggerPlan of
// triggered ops whose thresholds are the sums of their inputs' completion
// increments.
//
// Steps name their inputs (`deps`, always earlier steps, so the graph is
// acyclic by construction). A step may also wait on a named counter that
// peers increment (a put/atomic landing in a buffer bound to it, or a
// remote counter add): it then fires when the counter has received, per
// epoch, `remote_per_epoch` remote increments plus one completion of each
// of its local inputs. All steps waiting on one named counter must have the
// same local inputs (Validate checks), since those inputs all feed that one
// counter.
//
// Nothing here knows MPI handles: buffers are addresses, peers are PeerIds
// (world ranks), element types are the backend's AtomicType.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "providers/backend.h"

namespace nicq::offload {

using StepId = std::uint32_t;
using PlanCounter = std::uint32_t;  // index of a named counter of this schedule
using BufferId = std::uint32_t;     // index of a buffer this schedule exposes to peers
inline constexpr PlanCounter kNoPlanCounter = 0xffffffffu;

enum class StepKind : std::uint8_t {
  kSend,              // tagged send to peer
  kRecv,              // tagged receive from peer
  kPut,               // RMA write into a peer's exposed buffer
  kAtomic,            // remote atomic into a peer's exposed buffer
  kRemoteCounterAdd,  // add to a peer's named counter (ready tokens)
  kCounterAdd,        // add to one of this schedule's named counters
  kReduce,            // host: dst = dst op src (element-wise)
  kCopy,              // host: dst = src
  kHost,              // host: call fn(arg)
  kNop,               // joins its inputs; costs one NIC counter op
};
const char* StepKindName(StepKind k);

struct RemoteBuffer {
  PeerId peer = -1;
  BufferId buffer = 0;       // index in the peer's schedule's buffers
  std::uint64_t offset = 0;  // bytes from the start of that buffer
};
struct RemoteCounter {
  PeerId peer = -1;
  PlanCounter counter = 0;  // index in the peer's schedule's named counters
};

struct Step {
  StepKind kind = StepKind::kNop;
  std::vector<StepId> deps;
  PlanCounter wait_counter = kNoPlanCounter;
  std::uint64_t completion_inc = 1;
  PeerId peer = -1;
  const void* src = nullptr;
  void* dst = nullptr;
  std::size_t bytes = 0;
  std::uint64_t tag = 0;
  AtomicOp aop = AtomicOp::kSum;
  AtomicType atype = AtomicType::kDouble;
  RemoteBuffer rbuf;
  RemoteCounter rctr;
  PlanCounter local_counter = kNoPlanCounter;
  std::uint64_t value = 0;
  bool source_completion = false;  // put, remote counter add: TriggeredOp::source_completion
  void (*host_fn)(void*) = nullptr;
  void* host_arg = nullptr;
  std::string label;  // for dumps: "round 3 recv"
};

struct NamedCounter {
  std::string name;
  std::uint64_t remote_per_epoch = 0;  // increments peers make each epoch
};

struct ExposedBuffer {
  std::string name;
  void* addr = nullptr;
  std::size_t len = 0;
  PlanCounter arrival = kNoPlanCounter;  // counts puts/atomics landing here
};

class Schedule {
 public:
  explicit Schedule(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  PlanCounter AddCounter(std::string name, std::uint64_t remote_per_epoch);
  BufferId ExposeBuffer(std::string name, void* addr, std::size_t len, PlanCounter arrival);
  // Scratch memory owned by the schedule (and then by its plan): build-time only.
  void* AllocScratch(std::size_t bytes);

  StepId Send(PeerId peer, const void* src, std::size_t bytes, std::uint64_t tag,
              std::vector<StepId> deps);
  StepId Recv(PeerId peer, void* dst, std::size_t bytes, std::uint64_t tag,
              std::vector<StepId> deps);
  StepId Put(const void* src, std::size_t bytes, RemoteBuffer to, std::vector<StepId> deps);
  StepId Atomic(AtomicOp op, AtomicType type, const void* src, std::size_t bytes, RemoteBuffer to,
                std::vector<StepId> deps);
  StepId RemoteCounterAdd(RemoteCounter to, std::uint64_t value, std::vector<StepId> deps);
  StepId CounterAdd(PlanCounter counter, std::uint64_t value, std::vector<StepId> deps);
  StepId Reduce(AtomicOp op, AtomicType type, void* dst, const void* src, std::size_t bytes,
                std::vector<StepId> deps);
  StepId Copy(void* dst, const void* src, std::size_t bytes, std::vector<StepId> deps);
  StepId Host(void (*fn)(void*), void* arg, std::vector<StepId> deps);
  StepId Nop(std::vector<StepId> deps);

  // The step also waits for `counter`'s per-epoch increments.
  void WaitOn(StepId step, PlanCounter counter) { steps_[step].wait_counter = counter; }
  void SetLabel(StepId step, std::string label) { steps_[step].label = std::move(label); }
  // A put whose completion need only free its source (the target's arrival
  // counter, not this completion, tells anyone that the data landed), or a
  // remote counter add whose landing nothing at the initiator waits for.
  void CompleteAtSource(StepId step) { steps_[step].source_completion = true; }
  void SetCompletionIncrement(StepId step, std::uint64_t inc) { steps_[step].completion_inc = inc; }

  // Structural checks: deps point backwards, counters/buffers exist, steps
  // sharing a named counter share their inputs, sizes match element types.
  Status Validate() const;

  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<NamedCounter>& counters() const { return counters_; }
  const std::vector<ExposedBuffer>& buffers() const { return buffers_; }
  std::vector<std::unique_ptr<std::uint8_t[]>> TakeScratch() { return std::move(scratch_); }

 private:
  StepId Add(Step s);

  std::string name_;
  std::vector<Step> steps_;
  std::vector<NamedCounter> counters_;
  std::vector<ExposedBuffer> buffers_;
  std::vector<std::unique_ptr<std::uint8_t[]>> scratch_;
};

}  // namespace nicq::offload
