// Hierarchical schedules for communicators spanning nodes (node_layout.h).
// Reductions use them only for commutative ops: the node phase combines a
// node's ranks before the others, which changes MPI's canonical order.
#pragma once

#include <cstddef>

#include "coll/node_layout.h"
#include "coll/schedule.h"

namespace nicq::coll {

// `in` may equal `out`; every rank's `out` receives the result.
void BuildAllreduceHierarchical(Schedule& s, const NodeGroups& g, const void* in, void* out,
                                std::size_t elems, std::size_t esize);
// From the root (GroupByNode's root) to every rank.
void BuildBcastHierarchical(Schedule& s, const NodeGroups& g, void* buf, std::size_t bytes);
void BuildBarrierHierarchical(Schedule& s, const NodeGroups& g);

}  // namespace nicq::coll
