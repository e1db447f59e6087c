// Persistent reduce_scatter(_block), scan and exscan on an
// intracommunicator as resident trigger plans of remote atomics: after init
// a start is one counter add and the NIC combines every block itself, so a
// queued chain of epochs completes with every host thread asleep on the
// native backend. Types and ops are those of the offloaded allreduce
// (NicAtomicType, NicAtomicOp) where the backend's atomic table takes them.
// The plans themselves are built by offload/algorithms/reduce_scan.h (per
// epoch, docs/collectives.md, "Offloaded reductions: reduce_scatter, scan,
// exscan"); this layer decides whether the NIC can combine the op and type
// and turns the counts into bytes.
// Anything the plan cannot take (another type or op, a single rank, nothing
// to reduce, a block larger than one put, too many ops for the
// trigger slots) leaves *out null on every rank alike, with one
// NICQ_LOG=info:coll line naming the reason; an op or type the NIC cannot
// combine then tries the host-fold plan (offload_host_fold.h).
#pragma once

#include <memory>

#include "coll/coll.h"
#include "coll/offload_allreduce.h"
#include "core/status.h"

namespace nicq::coll {

// Whether `k` is a kind this plan family serves.
bool IsReductionPlanKind(Kind k);
// The request's algorithm string for an offloaded `k`, static storage.
const char* ReductionPlanAlgorithm(Kind k);

// Collective over a.comm after the argument checks of InitPersistent;
// *out stays null when the host schedule should run it. The result runs
// through the same Start, match and enqueue paths as the offloaded
// allreduce.
Status CreateOffloadedReduction(const Args& a, std::unique_ptr<OffloadedPlan>* out);

}  // namespace nicq::coll
