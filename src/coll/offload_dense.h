// Persistent dense collectives on an intracommunicator as resident
// exchange plans (exchange_plan.h): allgather(v), alltoall(v/w), gather(v),
// scatter(v), bcast and barrier. After init a start is one counter add and
// every block moves as a put into its receiver's exposed buffer, gated on
// the receiver's ready token; with contiguous blocks there is no host step
// inside an epoch, so a queued chain of epochs completes with every host
// thread asleep on the native backend. A block whose datatype is not one
// run of bytes adds a pack (or unpack) host step (exchange_plan.h), which
// the emulator's agent runs, and on native the host's progress. The edges (docs/collectives.md,
// "Offloaded dense collectives"):
//   allgather(v)  complete graph: my block to every rank's recvbuf at my
//                 displacement there (to myself too: the NIC's put is the
//                 local copy; MPI_IN_PLACE: no self edge, my block is in place);
//   alltoall(v/w) block j to rank j at my slot there (MPI_IN_PLACE: host);
//                 alltoallw: per-peer types and byte displacements;
//   gather(v)     every rank's block to the root (in place at the root: its
//                 own block stays);
//   scatter(v)    the root's block r to rank r;
//   bcast         the root's buffer to every other rank, flat;
//   barrier       one byte to every other rank into plan-owned scratch: a
//                 put lands only after its target started the epoch, and a
//                 rank is done only when every other rank's put arrived.
// Receivers' displacements and sizes are exchanged at init, so v forms
// whose displacements differ per rank and zero counts work; a sender whose
// size differs from what its receiver expects sends every rank to the host.
//
// Taken when the process backend is native (as the offloaded allreduce:
// before the same-node area, which cannot progress with hosts asleep) or
// when the request's info forces it (nicq_algorithm=offload, on any
// backend with remote counters). Anything the plan cannot take (a block
// larger than one put, too many ops for the trigger slots, in-place
// alltoall(v/w), a single rank) leaves *out null on every rank alike, with one NICQ_LOG=info:coll
// line naming the reason.
#pragma once

#include <memory>

#include "coll/coll.h"
#include "coll/offload_allreduce.h"
#include "core/status.h"

namespace nicq::coll {

// Whether `k` is a kind this plan family serves.
bool IsDenseExchangeKind(Kind k);
// The request's algorithm string for an offloaded `k` ("allgather puts
// (offloaded)"), static storage.
const char* DenseExchangeAlgorithm(Kind k);

// Collective over a.comm after the argument checks of InitPersistent;
// *out stays null when the host schedule (or the same-node area) should
// run it. The result runs through the same Start, match and enqueue paths
// as the offloaded allreduce.
Status CreateOffloadedDense(const Args& a, std::unique_ptr<OffloadedPlan>* out);

}  // namespace nicq::coll
