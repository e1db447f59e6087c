// Persistent neighborhood allgather(v) / alltoall(v/w) as a resident trigger plan:
// after init, a start is one counter add and the halo exchange runs on the
// process OffloadBackend (the NIC's triggered ops on native, the
// emulator's agent on emulated), with no host step inside an epoch.
//
// Each epoch is one exchange plan (exchange_plan.h): ready tokens to the
// in-neighbours, puts of each block into its out-neighbour's receive buffer
// at the block MPI 4.1 8.6 pairs it with, an arrival counter.
//
// Alltoallw's blocks each have their own datatype and byte displacement:
// a block whose layout is one contiguous run of bytes (a contiguous type,
// or a derived type whose items are single abutting blocks) is one put
// from (or into) that run, and the plan dump's put label says which kind
// of type it was. A block of any form that is not one run (or whose run
// starts below its buffer's address) is packed into
// plan scratch by a host step at the start, or lands in plan scratch and is
// unpacked by a host step once every block arrived (exchange_plan.h).
//
// Anything the plan cannot take (no offload context, too many ops for the
// trigger slots, blocks larger than one put, an intercommunicator) leaves *out null: the host
// schedule runs it, on every rank alike, with one NICQ_LOG=info line naming the reason.
#pragma once

#include <memory>

#include "coll/coll.h"
#include "coll/offload_allreduce.h"
#include "core/status.h"

namespace nicq::coll {

// Collective over a.comm for neighbor allgather(v) / alltoall(v/w) after
// the argument checks (CheckNeighborSizes); *out stays null when the host
// schedule should run it. The result runs through the same Start, match
// and enqueue paths as the offloaded allreduce.
Status CreateOffloadedNeighbor(const Args& a, std::unique_ptr<OffloadedPlan>* out);

}  // namespace nicq::coll
