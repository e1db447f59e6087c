// Persistent allreduce, reduce, reduce_scatter(_block), scan and exscan
// whose combining the NIC cannot do (a
// user-defined op, or a predefined op on a predefined type whose pair the
// backend's atomic table lacks: MPI_2INT with MPI_MINLOC, MPI_INT where no
// int32 atomic exists) as a resident trigger plan with one explicit host
// step, instead of running the whole operation on the host schedule.
//
// Per epoch (docs/collectives.md, "Offloaded reductions with a host fold"):
//   root     (allreduce: rank 0; reduce: its root) sends a ready token to
//            every other rank at its start: "the gather slots may be
//            overwritten for this epoch";
//   puts     every other rank j puts its contribution into slot j of the
//            root's plan scratch once its own start and the root's token
//            are in; an arrival counter at the root counts the p - 1 puts;
//   fold     a host step at the root, gated by that counter: copies its own
//            contribution into its slot and folds the slots in rank order
//            (x_0 op (x_1 op (... op x_{p-1}))), through dtype::Reduce, the
//            call path of the host schedule, so a non-commutative user op
//            sees MPI's order;
//   result   allreduce only: the root puts the result into every other
//            rank's recvbuf after the fold; each counts its arrival.
// reduce_scatter(_block), scan and exscan gather to rank 0 the same way;
// their fold computes every rank's own result (a block of the whole
// reduction, or a rank-order prefix) and puts it to that rank
// (offload_host_fold_scatter.cc).
// The host step runs on the emulator's agent on the emulated backend (the
// epoch completes while every host thread sleeps) and in the host's
// progress (any MPI call) on the native one. A noncontiguous datatype
// moves packed: a non-root rank packs its contribution in a host step at
// its start (and an allreduce's unpacks the result once it landed); the
// fold packs the root's own, unpacks each slot into an image of the type in
// scratch before the op sees it, and packs the result for the puts.
#pragma once

#include <memory>

#include "coll/coll.h"
#include "coll/offload_allreduce.h"
#include "core/status.h"

namespace nicq::coll {

// The request's algorithm string of a host-fold plan.
inline constexpr const char* kHostFoldAlgorithm = "host fold (offloaded)";

// Collective over a.comm, called after OffloadedPlan::Create left its
// *out null. *out stays null, on every rank alike, when the host schedule
// runs the collective: a case the atomic plans serve or refuse for another
// reason, a backend that is not native without nicq_algorithm=offload, or
// a refusal of this plan (one NICQ_LOG=info:coll line saying why).
Status CreateHostFoldPlan(const Args& a, std::unique_ptr<OffloadedPlan>* out);

}  // namespace nicq::coll
