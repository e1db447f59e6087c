// Algorithm selection for the host engine: by message size, communicator
// size and op properties, overridable per call (Args::algo, from the
// "nicq_algorithm" info key of the _init calls) and for allreduce by
// NICQ_ALLREDUCE_ALGO. A forced name that cannot run (unknown, or ring /
// rabenseifner with a non-commutative op) falls back to the default and
// says so once in the log; the chosen name is reported by the plan dump.
#pragma once

#include "coll/coll.h"

namespace nicq::coll {

// Names per collective (first is the default fallback):
//   allreduce: recursive_doubling, rabenseifner, ring (nic_tree: offload only)
//   bcast:     binomial, knomial, scatter_allgather
//   allgather: ring, recursive_doubling
// Every other collective has one algorithm (named in KindName's docs).
const char* PickAlgorithm(const Args& a);

// Prints the schedule shape when NICQ_PLAN_DUMP is set.
void DumpSchedule(const Args& a, const Schedule& s);

}  // namespace nicq::coll
