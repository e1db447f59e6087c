// Persistent neighborhood allgather / alltoall as a resident trigger plan:
// after init, a start is one counter add and the halo exchange runs on the
// process OffloadBackend (the NIC's triggered ops on native, the
// emulator's agent on emulated), with no host step inside an epoch.
//
// Per epoch, on every rank (docs/collectives.md, "Offloaded neighborhood
// collectives"):
//   start        the start counter moves (MPI_Start or a queue's gate);
//   ready tokens one remote counter add to each in-neighbour per edge: "my
//                receive buffer may be overwritten for this epoch";
//   puts         send block j into destination j's receive buffer, at the
//                block MPI pairs it with; all puts wait on this rank's own
//                start and on every token its out-neighbours owe it;
//   arrivals     the receive buffer's arrival counter counts the puts
//                landing in it (one per non-null in-edge).
// An epoch is done when its puts completed locally, its tokens went out and
// every in-edge's block arrived. A put lands only after its target started
// the same epoch: the target's token for epoch e is sent at its start of e,
// and a rank cannot have sent the token for e+1 before this rank's puts of
// e fired (it needs their data to finish e), so the one "ready" counter
// reaches its epoch-e threshold only with every out-neighbour's epoch-e
// token in.
//
// Anything the plan cannot take (no offload context, a noncontiguous or
// empty block, too many ops for the trigger slots, blocks larger than one
// put, an intercommunicator) leaves *out null: the host schedule runs it,
// on every rank alike, with one NICQ_LOG=info line naming the reason.
#pragma once

#include <memory>
#include <vector>

#include "coll/coll.h"
#include "coll/offload_allreduce.h"
#include "core/status.h"
#include "offload/schedule.h"

namespace nicq::coll {

// One rank's part of the neighbour exchange, in backend terms (world
// ranks). Exposed for unit tests of the schedule shape.
struct NeighborPlanArgs {
  offload::PeerId self = -1;
  std::vector<offload::PeerId> sources;       // per in-edge; -1: MPI_PROC_NULL
  std::vector<offload::PeerId> destinations;  // per out-edge; -1: MPI_PROC_NULL
  // Per out-edge: the block index in the destination's receive buffer this
  // edge's data lands in (MPI 4.1 8.6's pairing); ignored for null edges.
  std::vector<int> landing;
  std::vector<const void*> send_blocks;  // per out-edge
  void* recvbuf = nullptr;
  std::size_t block_bytes = 0;  // every edge moves this many bytes
};
Status BuildNeighborExchange(const NeighborPlanArgs& a, offload::Schedule* s);

// Collective over a.comm for kNeighborAllgather / kNeighborAlltoall after
// the argument checks (CheckNeighborSizes); *out stays null when the host
// schedule should run it. The result runs through the same Start, match
// and enqueue paths as the offloaded allreduce.
Status CreateOffloadedNeighbor(const Args& a, std::unique_ptr<OffloadedAllreduce>* out);

}  // namespace nicq::coll
