// How a communicator's ranks fall on nodes, for hierarchical schedules:
// a reduction or broadcast that spans nodes first works inside each node
// (nicq's shm transport, or the same-node area), crosses the network once
// per node between the nodes' leaders, and ends inside each node again,
// instead of every rank crossing the network at every step.
#pragma once

#include <vector>

#include "runtime/comm.h"

namespace nicq::coll {

// comm->node_layout, filled from the runtime on first use.
const CommNodeLayout& NodeLayoutOf(Comm* comm);
// Sets it from node ids per comm rank (the runtime's, or a test's).
void SetNodeLayout(Comm* comm, std::vector<int> node_of_rank);

// Whether a hierarchy pays on this communicator: an intracommunicator over
// more than one node where some node holds two ranks or more. Every rank
// answers the same (the layout is the job's).
bool WantsHierarchy(Comm* comm);

// This rank's view of the hierarchy. Nodes are ordered by their lowest comm
// rank; each has a leader: the root where the root is on it, else its
// lowest rank.
struct NodeGroups {
  std::vector<int> node;     // comm ranks of this rank's node, its leader first
  std::vector<int> leaders;  // one comm rank per node
  int local = 0;             // this rank's index in `node`
  int leader = -1;           // this rank's index in `leaders`, -1 if it leads no node
  int root_leader = 0;       // index in `leaders` of the root's node
};
// root < 0: no root (allreduce, barrier).
void GroupByNode(Comm* comm, int root, NodeGroups* out);

}  // namespace nicq::coll
