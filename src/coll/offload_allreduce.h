// Full offload of a small persistent allreduce: after init, each start is
// one host counter bump (MPI_Start) and everything else is triggered NIC
// work on the process OffloadBackend (runtime/offload_context.h): a put of
// sendbuf into recvbuf (to self, so even the copy needs no host step),
// ready tokens down, remote atomics up a k-ary tree, puts of the result
// down. Completion is the plan's done counter. Used when the backend is
// native (or NICQ_ALLREDUCE_ALGO / the info key force nic_tree), the NIC
// combines the op/type itself, and the vector is small (offload's
// PickAllreduce says nic_tree). A user op or a pair the NIC cannot combine
// takes the host-fold plan (offload_host_fold.h); anything else the host
// engine runs.
#pragma once

#include <memory>
#include <vector>

#include "coll/coll.h"
#include "core/status.h"
#include "offload/schedule.h"
#include "offload/trigger_plan.h"

namespace nicq::coll {

// The MPI types whose items the NIC can combine (the provider's own table,
// Caps().SupportsAtomic, then decides per op and type): predefined
// integers of 8 to 64 bits, float and double.
bool NicAtomicType(int handle, offload::AtomicType* t);
// Every predefined reduction but MINLOC/MAXLOC (pairs) and REPLACE/NO_OP
// (not reductions of allreduce); MPI's own argument check has already
// refused an op the type does not admit (MPI 4.1 6.9.2).
bool NicAtomicOp(int handle, offload::AtomicOp* o);

// One rank's part of the nic_tree plan (offload/algorithms' k-ary NIC tree;
// the contribution is already in recvbuf when the start counter moves).
// Exposed for the NIC simulator tests at scale.
struct NicTreeArgs {
  int rank = 0, size = 1;
  const int* world_ranks = nullptr;  // comm rank -> backend peer
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  std::size_t bytes = 0;
  offload::AtomicType type = offload::AtomicType::kDouble;
  offload::AtomicOp op = offload::AtomicOp::kSum;
  int radix = 4;
  // MPI_Reduce: the result stays at tree rank 0 (the caller numbers the
  // ranks from the root), no result goes down, and the other ranks combine
  // in scratch the plan owns (their recvbuf is not significant).
  bool reduce = false;
};
Status BuildNicTree(const NicTreeArgs& a, offload::Schedule* s);

// A persistent collective's resident trigger plan and its start, match and
// enqueue paths: the nic_tree allreduce/reduce that Create builds, or any
// other resolved plan (exchange, reduction) that Adopt takes over.
class OffloadedPlan {
 public:
  // Collective over a.comm (all ranks decide alike from the checked
  // arguments). *out stays null when the host engine should run it.
  static Status Create(const Args& a, std::unique_ptr<OffloadedPlan>* out);
  ~OffloadedPlan();
  // Any other resolved resident plan whose epoch is one start-counter add
  // (the neighbour exchange, offload_neighbor.h) runs through the same
  // Start, match and enqueue paths.
  static std::unique_ptr<OffloadedPlan> Adopt(std::unique_ptr<offload::TriggerPlan> plan);
  // Keeps `op` alive while the plan lives: its host steps call a user op,
  // whose handle the program may free before the request.
  void HoldOp(int op);

  // MPI_Start: arms the next epoch and bumps the start counter; the
  // request `owner` is marked done by the progress hook.
  Status Start(Request* owner);
  // A queue start whose gate is already reached (no request to watch).
  Status StartNow();
  // Starts the epoch an earlier plan().ArmNext() armed (the start
  // counter): a gated start whose gate op could not be posted then.
  Status StartArmed();
  bool Done() const { return plan_->Test(); }
  Request* owner() const { return owner_; }
  offload::TriggerPlan& plan() { return *plan_; }
  // The next plan on the progress watch's stack of new starts.
  OffloadedPlan* watch_next() const { return watch_next_; }
  void set_watch_next(OffloadedPlan* next) { watch_next_ = next; }

 private:
  // Descriptor arrays per plan: as many epochs as a queue may run ahead
  // (queue::QueueSlot::kRing). How many are armed at once is the plan's
  // resident window and the backend's free slots.
  static constexpr std::size_t kPlanDepth = 16;
  // Lowers and binds the nic_tree plan; an error means the host runs it.
  Status BuildPlan(const Args& a, offload::OffloadBackend* be, offload::AtomicType type,
                   offload::AtomicOp op, std::size_t bytes);

  // Room in the watch list for this plan (a start never allocates) and the
  // progress sleeper on its done counter.
  void CountWatched();

  std::unique_ptr<offload::TriggerPlan> plan_;
  std::vector<int> tree_world_;  // tree rank -> world rank (the plan's peers)
  Request* owner_ = nullptr;
  int held_op_ = 0;                      // see HoldOp; 0: none
  bool watched_ = false;                 // counted in the watch list's reserved room
  OffloadedPlan* watch_next_ = nullptr;  // see watch_next()
};

// Engine hooks: offloaded requests whose done counter the progress hook watches.
void WatchOffloaded(OffloadedPlan* op);
bool PollOffloaded();
// progress::SleepInEngine's sleeper: waits on a started plan's done counter.
bool SleepOnOffloaded(int timeout_ms);

}  // namespace nicq::coll
