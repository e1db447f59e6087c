// Persistent neighborhood allgather(v) / alltoall(v/w) as a resident trigger plan:
// after init, a start is one counter add and the halo exchange runs on the
// process OffloadBackend (the NIC's triggered ops on native, the
// emulator's agent on emulated), with no host step inside an epoch.
//
// Per epoch, on every rank (docs/collectives.md, "Offloaded neighborhood
// collectives"):
//   start        the start counter moves (MPI_Start or a queue's gate);
//   ready tokens one remote counter add to each in-neighbour per non-empty
//                edge: "my receive buffer may be overwritten for this epoch";
//   puts         send block j into destination j's receive buffer, at the
//                block MPI pairs it with; all puts wait on this rank's own
//                start and on every token its out-neighbours owe it;
//   arrivals     the receive buffer's arrival counter counts the puts
//                landing in it (one per non-null, non-empty in-edge).
// An epoch is done when its puts completed locally, its tokens went out and
// every in-edge's block arrived. A put lands only after its target started
// the same epoch: the target's token for epoch e is sent at its start of e,
// and a rank cannot have sent the token for e+1 before this rank's puts of
// e fired (it needs their data to finish e), so the one "ready" counter
// reaches its epoch-e threshold only with every out-neighbour's epoch-e
// token in.
//
// Alltoallw's blocks each have their own datatype and byte displacement:
// a block whose layout is one contiguous run of bytes (a contiguous type,
// or a derived type whose items are single abutting blocks) is one put
// from (or into) that run, and the plan dump's put label says which kind
// of type it was; a block that would need packing sends the whole
// collective to the host schedule (the plan has no host step to pack).
//
// Anything the plan cannot take (no offload context, a noncontiguous
// datatype, a negative displacement, too many ops for the trigger slots,
// blocks larger than one put, an intercommunicator) leaves *out null: the
// host schedule runs it, on every rank alike, with one NICQ_LOG=info line
// naming the reason (for alltoallw, the first block that is not one run).
#pragma once

#include <memory>
#include <string>
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
  std::vector<std::size_t> recv_bytes;        // per in-edge; 0: nothing arrives
  std::vector<offload::PeerId> destinations;  // per out-edge; -1: MPI_PROC_NULL
  std::vector<const void*> send_blocks;       // per out-edge
  std::vector<std::size_t> send_bytes;        // per out-edge; 0: nothing moves
  // Per out-edge: where its data lands, in bytes from the start of the
  // destination's receive buffer (MPI 4.1 8.6's pairing, the receiver's
  // displacement); ignored for null and empty edges.
  std::vector<std::uint64_t> remote_offset;
  void* recvbuf = nullptr;
  std::size_t recv_len = 0;  // bytes of recvbuf the in-edges' blocks span
  // Per out-edge, optional: how its block is laid out (alltoallw), for the
  // put's label in the plan dump.
  std::vector<std::string> send_notes;
};
Status BuildNeighborExchange(const NeighborPlanArgs& a, offload::Schedule* s);

// Collective over a.comm for neighbor allgather(v) / alltoall(v/w) after
// the argument checks (CheckNeighborSizes); *out stays null when the host
// schedule should run it. The result runs through the same Start, match
// and enqueue paths as the offloaded allreduce.
Status CreateOffloadedNeighbor(const Args& a, std::unique_ptr<OffloadedAllreduce>* out);

}  // namespace nicq::coll
