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
// To the root (GroupByNode's root); `out` is written at the root only.
void BuildReduceHierarchical(Schedule& s, const NodeGroups& g, const void* in, void* out,
                             std::size_t elems, std::size_t esize);
// From the root (GroupByNode's root) to every rank.
void BuildBcastHierarchical(Schedule& s, const NodeGroups& g, void* buf, std::size_t bytes);
void BuildBarrierHierarchical(Schedule& s, const NodeGroups& g);

// The leaders' phase alone, for callers that run the node phases another
// way (the same-node area: hier_node.cc). Nothing is added on a rank that
// leads no node. Allreduce works in place in `buf`; reduce combines each
// leader's `partial` into `out` at the root's leader (the root itself).
void BuildAllreduceAmongLeaders(Schedule& s, const NodeGroups& g, void* buf, std::size_t elems,
                                std::size_t esize);
void BuildReduceAmongLeaders(Schedule& s, const NodeGroups& g, const void* partial, void* out,
                             std::size_t elems, std::size_t esize);
void BuildBcastAmongLeaders(Schedule& s, const NodeGroups& g, void* buf, std::size_t bytes);
void BuildBarrierAmongLeaders(Schedule& s, const NodeGroups& g);

}  // namespace nicq::coll
