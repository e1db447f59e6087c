// Algorithm selection for the host engine: by message size, communicator
// size and op properties, overridable per call (Args::algo, from the
// "nicq_algorithm" info key of the _init calls) and for allreduce by
// NICQ_ALLREDUCE_ALGO. A forced name that cannot run (unknown, or ring /
// rabenseifner with a non-commutative op) falls back to the default and
// says so once in the log; the chosen name is reported by the plan dump.
#pragma once

#include <cstddef>

#include "coll/coll.h"

namespace nicq::coll {

// Names per collective (first is the default fallback):
//   allreduce: recursive_doubling, rabenseifner, ring (nic_tree: offload only)
//   bcast:     binomial, knomial, scatter_allgather
//   allgather: ring, recursive_doubling
// Every other collective has one algorithm (named in KindName's docs).
const char* PickAlgorithm(const Args& a);

// The size rules of that choice, for any group of p ranks (the
// communicator, or the leaders and node groups of a hierarchical
// schedule). A commutative allreduce of `bytes` in `elems` elements takes
// a bandwidth algorithm (Rabenseifner for powers of two, else ring) instead
// of recursive doubling; a bcast of `bytes` takes scatter+allgather instead
// of a tree.
bool AllreduceUsesBandwidth(int p, std::size_t bytes, std::size_t elems);
bool BcastUsesScatterAllgather(int p, std::size_t bytes);

// Prints the schedule shape when NICQ_PLAN_DUMP is set.
void DumpSchedule(const Args& a, const Schedule& s);

}  // namespace nicq::coll
