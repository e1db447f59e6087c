// The host steps of an exchange plan (exchange_plan.h) for blocks whose
// datatype is not one contiguous run: packing send blocks into plan
// scratch at the start, unpacking the receive scratch into the user's
// buffer once every block arrived. Each step is one host call that walks a
// task list built at init and kept in plan scratch, so a start allocates
// nothing; the edge-exchange builder (offload/algorithms/edge_exchange.h)
// places it in the plan.
#pragma once

#include <vector>

#include "coll/exchange_plan.h"
#include "offload/algorithms/edge_exchange.h"
#include "offload/schedule.h"

namespace nicq::coll {

// Where each out-edge's put reads (*src, per out-edge: send_blocks[j], or
// the packed copy of send_layout[j]; *packed_from[j]: the latter); returns
// the pack step (its task list and packed copies in `s`'s scratch) when some
// live out-edge's block is not one run, else a spec with no function.
offload::HostStepSpec PreparePack(const ExchangePlanArgs& a, offload::Schedule* s,
                                  std::vector<const void*>* src, std::vector<bool>* packed_from);

// The unpack step of a.unpack: scatters every live in-edge's block from
// `landing` + recv_offset[i] into recv_layout[i] (its task list in `s`'s
// scratch).
offload::HostStepSpec PrepareUnpack(const ExchangePlanArgs& a, const char* landing,
                                    offload::Schedule* s);

}  // namespace nicq::coll
