// Blocking barrier, bcast, reduce and allreduce of a communicator spanning
// nodes, with the node phases of the hierarchy (algo_hier.h) through the
// same-node area of each node's ranks (node_area.h) and the leaders' phase
// on a schedule over the network.
//
// The node's ranks get a communicator of their own (split from the
// communicator by node, ranks in the communicator's order), made by the
// first such call, with its area made at once; it is freed with the
// communicator. The node phases are that communicator's own blocking
// collectives: they take its area when they fit (node_coll.cc) and its
// point-to-point schedules otherwise, each node on its own.
#pragma once

#include "coll/coll.h"
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

}  // namespace nicq::coll
