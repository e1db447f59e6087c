// The host steps of an exchange plan (exchange_plan.h) for blocks whose
// datatype is not one contiguous run: packing send blocks into plan
// scratch at the start, unpacking the receive scratch into the user's
// buffer once every block arrived. Each step is one host op that walks a
// task list built at init and kept in plan scratch, so a start allocates
// nothing.
#pragma once

#include <vector>

#include "coll/exchange_plan.h"
#include "offload/schedule.h"

namespace nicq::coll {

// Where each out-edge's put reads (*src, per out-edge: send_blocks[j], or
// the packed copy of send_layout[j]); adds the pack step, gated on the
// start, to `s` when some live out-edge's block is not one run, and
// returns true with its id in *step.
bool AddPackStep(const ExchangePlanArgs& a, offload::Schedule* s, std::vector<const void*>* src,
                 offload::StepId* step);

// Adds the unpack step of a.unpack: it waits on `arrive` and scatters every
// live in-edge's block from `landing` + recv_offset[i] into recv_layout[i].
offload::StepId AddUnpackStep(const ExchangePlanArgs& a, const char* landing,
                              offload::PlanCounter arrive, offload::Schedule* s);

}  // namespace nicq::coll
