// The nonblocking and persistent barrier, bcast, reduce and allreduce of a
// communicator spanning nodes, with the node phases on each node's ranks
// (hier_node.h has the blocking ones and what the forms share).
//
// A run is up to three phases; each starts once the one before completed
// on this rank:
//   first node phase  node reduce into the leader (reduce, allreduce),
//                     node barrier (barrier)
//   leaders' phase    a schedule among the nodes' leaders over the network
//   last node phase   node bcast from the leader (bcast, allreduce), node
//                     barrier (barrier; it releases a node only once its
//                     leader is through)
// A node phase runs on an op slot of the node communicator's same-node
// area where the call fits there (node_persistent.h), else as a schedule
// on the node communicator. A progress hook moves a run from phase to
// phase inside any MPI call of this process and on the host progress
// thread where that runs; the area's phases advance there as well.
//
// Persistent runs hold an op slot per node phase, agreed at init.
// Nonblocking runs share two reserved op slots of the node's area, one per
// node phase ("lanes"): a slot's starts must come in the same order on
// every node rank. First phases start inside the call, so in call order;
// last phases start when the leaders' phase ends, which differs between
// ranks, so each waits until the calls before it started theirs.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/coll.h"
#include "coll/hier_node.h"
#include "coll/node_persistent.h"
#include "coll/schedule.h"
#include "core/status.h"

namespace nicq::coll {

class HierRun {
 public:
  // Persistent, at init (collective over a.comm, after the argument
  // check). *out stays null, on every rank alike, when the operation does
  // not take the hierarchy with node phases (NICQ_NODE_COLL=off, a
  // non-commutative op, ...).
  static Status CreatePersistent(const Args& a, std::unique_ptr<HierRun>* out);
  // Nonblocking: false when the call takes the usual path. It takes this
  // one only where the communicator's node group is made already (at the
  // communicator's creation, MakeNodeGroupAtCreation, or by an earlier
  // blocking or persistent collective): making it is collective, which a
  // nonblocking call must not wait for. Every rank decides alike.
  static bool StartNonblocking(const Args& a, Request* req, Status* st);

  ~HierRun();
  HierRun(const HierRun&) = delete;
  HierRun& operator=(const HierRun&) = delete;

  // A persistent start (the request is inactive). `on_done(arg)` runs at
  // completion, after the owner's status is set and before it is marked
  // done (a matched request counts its epoch there). `deferred`: the first
  // phase is started by the hook, not here (a caller inside the schedule
  // engine's pass, which a phase's launch would wait for).
  Status Start(Request* owner, void (*on_done)(void*) = nullptr, void* on_done_arg = nullptr,
               bool deferred = false);
  // Whether a start has not completed yet.
  bool active() const { return active_.load(std::memory_order_acquire); }
  // "area", "p2p" (a node phase runs as a schedule) or "alone" (this rank
  // has no node mate), as the plan dump says.
  const char* node_phases() const { return node_phases_; }

  // The progress hook's pass (under its lock): advances a started run;
  // true when it completed. *moved: something changed.
  bool Advance(bool* moved);
  // The next of the deferred starts the hook adopts (Begin).
  HierRun* deferred_next() const { return deferred_next_; }

 private:
  enum class How : std::uint8_t { kNone, kSlot, kLane, kSchedule };
  struct Phase {
    How how = How::kNone;
    std::unique_ptr<NodeSlotCollective> slot;  // kSlot: persistent, its own op slot
    NodeSlotCollective* lane = nullptr;        // kLane: nonblocking, a reserved op slot
    Args args;                                 // kLane: the node call
    Schedule* sched = nullptr;                 // kSchedule
    std::unique_ptr<Schedule> owned;           // a persistent run's schedule
    Comm* comm = nullptr;                      // kSchedule: the shadow it runs on
    int tag = 0;
  };

  HierRun() = default;
  // Sets up the phases of `a` (ng's groups for its root are current).
  // Persistent: collective over the node (op slots); nonblocking: `tag` is
  // the leaders' tag the call drew.
  Status Plan(const Args& a, NodeGroup* ng, bool persistent, int tag);
  Status PlanNode(const Args& na, Phase* p, int lane);
  Schedule* NewSchedule(Phase* p);
  Status StartPhase(Phase& p);
  // The run's first steps, then hands it to the hook; deferred: hands it
  // over at once without the runs' lock (hier_async.cc, Runs::deferred).
  Status Begin(bool deferred);
  void Finish();
  void DropUnlaunched();

  Phase phase_[3];
  HierRun* deferred_next_ = nullptr;
  int stage_ = 0;  // the phase running, or the next to start
  bool started_ = false;
  bool persistent_ = false;
  NodeGroup* ng_ = nullptr;
  Comm* node_ = nullptr;  // held by a persistent run (its slots are on the node's area)
  // A nonblocking run's last node phase on a lane: its turn among the
  // communicator's calls (NodeGroup::last_phase_*).
  bool ordered_last_ = false;
  std::uint64_t last_turn_ = 0;
  Request inner_;  // the running phase's completion
  Request* owner_ = nullptr;
  void (*on_done_)(void*) = nullptr;
  void* on_done_arg_ = nullptr;
  int error_ = 0;
  std::atomic<bool> active_{false};
  std::vector<std::uint8_t> partial_;  // a reduce's node result at a leader not the root
  // A rank alone on its node starts with a copy of its input.
  const void* copy_from_ = nullptr;
  void* copy_to_ = nullptr;
  std::size_t copy_bytes_ = 0;
  dtype::Type* retained_ = nullptr;  // a nonblocking call's derived type
  const char* node_phases_ = "area";
};

}  // namespace nicq::coll
