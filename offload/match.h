// The match exchange of a persistent plan (MPI_Match / MPI_*_init time):
// every rank publishes what its plan exposes (named counter ids, buffer
// addresses and keys, PlanExports) and resolves its remote references with
// what its peers published. The transport is the caller's (the runtime's
// point-to-point engine or the bootstrap's allgather), so this layer stays
// free of MPI handles and of any particular wire-up.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "offload/trigger_plan.h"

namespace nicq::offload {

// Collective over the ranks that share the plan: `mine` in, every rank's
// words out, indexed by PeerId (ranks that take no part may leave theirs empty).
using WordsAllgather = std::function<Status(const std::vector<std::uint64_t>& mine,
                                            std::vector<std::vector<std::uint64_t>>* all)>;

// Exchanges exports and resolves the plan. The plan must be bound.
Status MatchPlan(TriggerPlan& plan, const WordsAllgather& allgather);

}  // namespace nicq::offload
