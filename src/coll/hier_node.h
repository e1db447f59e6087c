// Blocking barrier, bcast, reduce and allreduce of a communicator spanning
// nodes, with the node phases of the hierarchy (algo_hier.h) through the
// same-node area of each node's ranks (node_area.h) and the leaders' phase
// on a schedule over the network.
//
// The node's ranks get a communicator of their own (ranks in the
// communicator's order, its context agreed among them alone), with its
// area made at once; it is freed with the communicator. The blocking calls
// that create a communicator make it there (MakeNodeGroupAtCreation), so a
// nonblocking call finds it from the first; otherwise the first blocking
// or persistent collective makes it. The node phases are that
// communicator's own blocking collectives: they take its area when they
// fit (node_coll.cc) and its point-to-point schedules otherwise, each node
// on its own.
//
// The nonblocking and persistent forms take the same phases as a request
// (hier_async.h); what both share is declared at the end.
#pragma once

#include <cstdint>
#include <vector>

#include "coll/coll.h"
#include "coll/node_layout.h"
#include "coll/schedule.h"
#include "core/status.h"
#include "runtime/comm.h"

namespace nicq::coll {

// Runs `a` that way when it takes the hierarchy and the area is on
// (NICQ_NODE_COLL): true with *st set, false when the caller takes the
// usual path. Every rank decides alike (the layout is the job's, the
// arguments are the ones MPI requires to match).
bool TryHierarchicalNode(const Args& a, Status* st);

// Frees what TryHierarchicalNode kept for `comm` (the destroy hook).
void FreeNodeGroup(Comm* comm);

// Called by the blocking calls that create `comm` (MPI_Init for world,
// MPI_Comm_dup, split, create, cart/graph creation, ...) on every member,
// once the communicator is made and before any call uses it: makes its
// node group when its collectives would take the hierarchy with node
// phases (collective over `comm`, then over each node). Nothing for other
// communicators, nor past kEagerContextSlots (see there). MPI_Comm_idup
// does not call it: its completion runs inside a wait or test, which must
// not wait for the other ranks, so its first blocking or persistent
// collective makes the group as before. The node communicator itself is
// made by rt::CommSplit, not through here, so it never makes one.
Status MakeNodeGroupAtCreation(Comm* comm);
// A communicator whose context slot (context_id / kContextStride, agreed by
// all its members) is this or above keeps the lazy group. Every rank
// decides alike, and a process holds at most this many groups made at
// creation (its live communicators have distinct slots), each a node
// communicator and one shared area of its node.
inline constexpr std::uint32_t kEagerContextSlots = 64;

// ---- shared with the nonblocking and persistent forms (hier_async.cc) ----

// What a communicator spanning nodes keeps (comm->node_group).
struct NodeGroup {
  Comm* node = nullptr;  // this rank's node's ranks; null: alone on its node
  bool area = false;     // the node's communicator has its same-node area
  NodeGroups groups;     // GroupByNode(comm, groups_root), kept for the next call
  int groups_root = -2;
  std::vector<std::uint8_t> partial;  // a leader's node result that is not the root's (reduce)
  // Nonblocking calls whose last node phase runs on the node's area start
  // it in call order (every node rank then numbers them alike): the call
  // numbers given out, and the next one allowed to start.
  std::uint64_t last_phase_calls = 0;
  std::uint64_t last_phase_next = 0;
};

// Whether `a` takes the hierarchy with its node phases on the node's ranks
// (any form; the same answer on every rank).
bool HierarchicalNodeFits(const Args& a);
// The communicator's NodeGroup, made at its creation or on first use:
// collective over `comm` (every rank gets here at the same call), then over
// each node.
Status NodeGroupOf(Comm* comm, NodeGroup** out);
// ng->groups for `a`'s root (none for allreduce and barrier).
const NodeGroups& GroupsFor(NodeGroup* ng, const Args& a);
// The node phase's arguments: `a` on the node's communicator, rooted at
// the node's leader.
Args NodeArgs(const Args& a, const NodeGroup& ng);
// The leaders' phase of `a` built into `s` (Reset); the rank must lead
// its node. `partial`: a reduce's node result at a leader that is not the
// root. Run on ShadowOf(a.comm).
Status BuildLeadersPhase(const Args& a, const NodeGroups& g, const void* partial, Schedule* s);
// A plan dump line for `a` (NICQ_PLAN_DUMP): `form` prefixes the kind
// ("i": nonblocking) and `suffix` follows it ("_init": persistent).
void DumpHierarchical(const Args& a, const NodeGroup& ng, const char* node_phases,
                      const char* form = "", const char* suffix = "");

}  // namespace nicq::coll
