// Init-time agreement of the offloaded collective plans (offload_allreduce,
// offload_neighbor): every step is collective over the communicator, on its
// init tag class, and every rank leaves with the same verdict, since a plan
// on one rank meets nothing posted by a rank that runs the host schedule.
#pragma once

#include <cstddef>
#include <string>

#include "core/status.h"
#include "offload/trigger_plan.h"
#include "runtime/comm.h"

namespace nicq::coll {

// Blocking allgather of `bytes` per rank into `all` (size * bytes).
Status Exchange(Comm* comm, const void* mine, std::size_t bytes, void* all);
// One verdict for all: *all_ok is false when any rank passes false.
Status AllAgree(Comm* comm, bool mine, bool* all_ok);
// Every rank offers its plan's exports (`plan` null: this rank has none);
// when every rank offered, each resolves its plan against the others' and
// all agree on the outcome. *resolved false (with an Ok status) means every
// rank runs the host schedule; *why then says why, as this rank saw it.
Status ExchangeAndResolve(Comm* comm, offload::TriggerPlan* plan, bool* resolved, std::string* why);

}  // namespace nicq::coll
