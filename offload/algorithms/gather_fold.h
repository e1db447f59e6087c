// The gather-and-fold plan: every rank puts its contribution into its slot
// of the root's exposed gather buffer, gated by a ready token from the root;
// once every slot arrived a host step at the root folds them (the caller's:
// it knows the op and the datatype), then the root puts each rank its part
// of the result. The collectives layer builds its host-fold plans (an op or
// type the NIC cannot combine: allreduce, reduce, reduce_scatter(_block),
// scan, exscan; src/coll/offload_host_fold*.cc) as one of these, with the
// fold, and any pack or unpack of a noncontiguous type, as opaque host steps.
//
// Per epoch (docs/collectives.md, "Offloaded reductions with a host fold"):
//   root         a ready token to every other rank at its start; the fold
//                once the p - 1 contributions arrived (its own input it
//                reads itself); then a put of result_from[j] to every rank
//                j with result_bytes[j] > 0.
//   other ranks  the contribution (after the pack step, if any) into slot
//                rank at the root once the start and the token are in; then,
//                when a result comes back, a join on its arrival (or the
//                unpack step).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "offload/algorithms/edge_exchange.h"
#include "offload/schedule.h"

namespace nicq::offload {

struct GatherFoldArgs {
  int rank = 0;
  int size = 1;
  int root = 0;
  const PeerId* peers = nullptr;  // rank -> world rank, `size` of them
  std::size_t bytes = 0;          // one contribution (one slot)
  // Not the root: what the put sends (the input, or what `pack` writes).
  const void* contribution = nullptr;
  HostStepSpec pack;  // run at the start, before the put
  // Not the root: where its result lands (recvbuf, or scratch `unpack`
  // reads) and how many bytes; 0: no result comes back.
  void* landing = nullptr;
  std::size_t landing_bytes = 0;
  HostStepSpec unpack;  // run once the result arrived
  // The root: its gather buffer (size * bytes, slot j from rank j), the
  // fold step, and per rank what it sends back (bytes 0: nothing).
  void* slots = nullptr;
  HostStepSpec fold;
  std::vector<const void*> result_from;
  std::vector<std::size_t> result_bytes;
};

// Adds this rank's part to an empty `s` (counters "ready", "arrive",
// "down" and buffers "gather slots", "result" at the same indices on every
// rank).
Status BuildGatherFold(const GatherFoldArgs& a, Schedule* s);

}  // namespace nicq::offload
