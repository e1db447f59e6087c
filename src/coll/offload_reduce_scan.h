// Persistent reduce_scatter(_block), scan and exscan on an
// intracommunicator as resident trigger plans of remote atomics: after init
// a start is one counter add and the NIC combines every block itself, so a
// queued chain of epochs completes with every host thread asleep on the
// native backend. Types and ops are those of the offloaded allreduce
// (NicAtomicType, NicAtomicOp) where the backend's atomic table takes them.
// Per epoch (docs/collectives.md, "Offloaded reductions: reduce_scatter,
// scan, exscan"):
//   reduce_scatter(_block)  flat: my own block moves into my result buffer
//       (a NIC put to myself; nothing when it is already in place), then a
//       ready token to every other rank; my block j goes as a remote atomic
//       into rank j's result buffer once my start and every token owed to me
//       are in. An arrival counter counts the p - 1 atomics. In place, rank
//       r's own block sits at its displacement in recvbuf while the other
//       ranks' atomics would land at its start, over blocks still to be
//       read: the result then collects in plan scratch and one put moves it
//       to recvbuf after the last atomic in and out.
//   scan    a chain: rank i's recvbuf holds x_i (own put), its token goes to
//       i - 1, and i - 1 combines its inclusive prefix into it with one
//       atomic once that prefix is complete and the token arrived.
//   exscan  the same chain over an inclusive prefix in plan scratch
//       (x_i, then i - 1's prefix combined in); i - 1 puts its inclusive
//       prefix into rank i's recvbuf (the exclusive result) and combines it
//       into i's scratch. The last rank needs no scratch, rank 0's recvbuf
//       is not touched.
// A block longer than one atomic may carry (the backend's max_atomic_count;
// cxi: one item) goes as several atomics, each counted on arrival.
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
