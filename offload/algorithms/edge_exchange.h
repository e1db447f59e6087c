// The edge exchange: blocks moved along a list of edges as puts into each
// receiver's exposed receive buffer, gated by ready tokens, one arrival
// counter per receiver. The collectives layer builds every persistent
// neighbourhood collective and the dense ones (allgather(v), alltoall(v/w),
// gather(v), scatter(v), bcast, barrier) as one of these: it works out the
// edges from MPI's arguments (src/coll/offload_dense.cc,
// offload_neighbor.cc, exchange_plan.cc) and hands them here as bytes,
// addresses and world ranks.
//
// Per epoch, on every rank (docs/collectives.md, "Offloaded neighborhood
// collectives" and "Offloaded dense collectives"):
//   start        the start counter moves (MPI_Start or a queue's gate);
//   ready tokens one remote counter add to each in-neighbour per non-empty
//                edge: "my receive buffer may be overwritten for this epoch";
//   puts         send block j into destination j's receive buffer, at the
//                byte its receiver placed it; all puts wait on this rank's
//                own start and on every token its out-neighbours owe it;
//   arrivals     the receive buffer's arrival counter counts the puts
//                landing in it (one per non-null, non-empty in-edge).
// An epoch is done when its puts completed locally, its tokens went out and
// every in-edge's block arrived. A put lands only after its target started
// the same epoch: the target's token for epoch e is sent at its start of e,
// and a rank cannot have sent the token for e+1 before this rank's puts of
// e fired (it needs their data to finish e), so the one "ready" counter
// reaches its epoch-e threshold only with every out-neighbour's epoch-e
// token in. Edges to the rank itself need no token (its own start gates
// them): the put to itself is the local copy, done by the NIC.
//
// Blocks that are not one run of bytes are the caller's business: it packs
// them with a host step it describes (pack, run at the start, before every
// put) into memory the puts then read, and unpacks the receive buffer with
// another (unpack, run once every block arrived). Their functions and
// arguments are opaque here; what they touch must live as long as the plan
// (Schedule::AllocScratch).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "offload/schedule.h"

namespace nicq::offload {

// A host step the caller prepared: fn(arg), and its label in the plan dump.
// fn null: no step.
struct HostStepSpec {
  void (*fn)(void*) = nullptr;
  void* arg = nullptr;
  std::string label;
};

// One rank's part of an exchange (world ranks).
struct EdgeExchangeArgs {
  PeerId self = -1;
  std::vector<PeerId> sources;           // per in-edge; -1: MPI_PROC_NULL
  std::vector<std::size_t> recv_bytes;   // per in-edge; 0: nothing arrives
  std::vector<PeerId> destinations;      // per out-edge; -1: MPI_PROC_NULL
  std::vector<const void*> send_blocks;  // per out-edge: where its put reads
  std::vector<std::size_t> send_bytes;   // per out-edge; 0: nothing moves
  // Per out-edge: where its data lands, in bytes from the start of the
  // destination's receive buffer (the receiver's displacement for this
  // edge); ignored for null and empty edges.
  std::vector<std::uint64_t> remote_offset;
  // The receive buffer the in-edges' blocks land in. Null with recv_len
  // set: plan-owned scratch of recv_len bytes (a barrier's landing bytes).
  void* recvbuf = nullptr;
  std::size_t recv_len = 0;  // bytes of recvbuf the in-edges' blocks span
  // Per out-edge, optional: how its block is laid out, for the put's label.
  std::vector<std::string> send_notes;
  // Per out-edge, optional: its put reads what `pack` wrote (for the label).
  std::vector<bool> send_packed;
  // Run at the start; every put waits on it.
  HostStepSpec pack;
  // Run once every live in-edge's block arrived, in place of the bare join.
  HostStepSpec unpack;
};

// Adds the exchange to `s` (its counters "ready" and "arrive" and its
// buffer "recvbuf" have the same indices on every rank: the schedule must
// be empty of counters and buffers).
Status BuildEdgeExchange(const EdgeExchangeArgs& a, Schedule* s);

}  // namespace nicq::offload
