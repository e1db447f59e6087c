// The collectives layer's internal API: one descriptor (Args) for every
// collective, and the three forms built on the host schedule engine:
//   blocking     = nonblocking + wait (schedule from the pool)
//   nonblocking  = schedule from the pool, built per call, returned at the end
//   persistent   = schedule built once at init (after a collective argument
//                  check), relaunched by each start without allocating.
// Traffic goes over a shadow of the user's communicator on its collective
// context (context_id + 1), so it never matches user point-to-point; tags
// keep blocking, nonblocking, persistent and init-time traffic apart:
//   bits 23..22  class (nonblocking 0, persistent 1, blocking 2, init 3)
//   bits 21..0   per-class sequence number (persistent: the init's number,
//                so starts in any order on different ranks match)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coll/schedule.h"
#include "core/status.h"
#include "dtype/datatype.h"
#include "runtime/comm.h"
#include "runtime/request.h"

namespace nicq::coll {

enum class Kind : std::uint8_t {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kReduceScatter,
  kReduceScatterBlock,
  kScan,
  kExscan,
  // Neighborhood collectives (MPI 4.1 8.6): traffic only along the edges of
  // the communicator's topology, as listed in Args::sources/destinations.
  kNeighborAllgather,
  kNeighborAllgatherv,
  kNeighborAlltoall,
  kNeighborAlltoallv,
  kNeighborAlltoallw,
};
inline constexpr Kind kLastKind = Kind::kNeighborAlltoallw;
inline bool IsNeighborKind(Kind k) {
  return k >= Kind::kNeighborAllgather && k <= Kind::kNeighborAlltoallw;
}
const char* KindName(Kind k);  // "allreduce", ...

// mpi.h's MPI_IN_PLACE, without including mpi.h below the API layer.
inline const void* const kInPlace = reinterpret_cast<const void*>(-1);
// mpi.h's MPI_ROOT: on an intercommunicator, the root of a rooted
// collective passes it (and the rest of its group MPI_PROC_NULL = -1); the
// other group passes the root's rank in the remote group.
inline constexpr int kRootArg = -3;
inline constexpr int kProcNullArg = -1;

struct Args {
  Kind kind = Kind::kBarrier;
  Comm* comm = nullptr;
  int root = 0;
  const void* sendbuf = nullptr;  // kInPlace allowed where MPI allows it
  void* recvbuf = nullptr;
  std::int64_t scount = 0, rcount = 0;
  const dtype::Type* stype = nullptr;
  const dtype::Type* rtype = nullptr;
  // v/w variants (counts in items; w: displacements in bytes).
  const int* scounts = nullptr;
  const int* sdispls = nullptr;
  const int* rcounts = nullptr;
  const int* rdispls = nullptr;
  const dtype::Type* const* stypes = nullptr;
  const dtype::Type* const* rtypes = nullptr;
  // Neighborhood collectives: this rank's neighbors in the topology's order
  // (MPI_PROC_NULL = -1 entries keep their buffer slot and move nothing).
  // Counts/types arrays have outdegree (send) and indegree (receive)
  // entries; neighbor alltoallw's displacements are bytes (MPI_Aint).
  const int* sources = nullptr;
  const int* destinations = nullptr;
  int indegree = 0, outdegree = 0;
  const std::int64_t* sbyte_displs = nullptr;
  const std::int64_t* rbyte_displs = nullptr;
  // Cartesian neighbors come in (-1, +1) pairs per dimension: what a rank
  // sends to its -1 neighbor arrives in that neighbor's +1 receive slot, so
  // when both neighbors of a dimension are one process (periodic, size 1 or
  // 2) the sends of a pair are posted in the order (+1, -1) against the
  // receives' (-1, +1), and in-order matching pairs them as MPI 4.1 8.6 says.
  bool cartesian_pairs = false;
  int op = 0;        // MPI_Op handle for reductions
  std::string algo;  // forced algorithm ("" or "auto": selection)
};

// Builds `a` into `s` (which must be Reset). Sets s->algorithm.
Status Build(const Args& a, Schedule* s);
// Persistent neighborhood collectives: every rank checks, collectively, that
// the bytes sent along each edge are what its receiver takes
// (neighbor_check.cc); the same error on every rank otherwise.
Status CheckNeighborSizes(const Args& a);
// The intercommunicator form (build_inter.cc); Build dispatches to it.
Status BuildInter(const Args& a, Schedule* s);
// The algorithm selection would pick (or the forced one when applicable).
const char* PickAlgorithm(const Args& a);

// ---- the three forms -------------------------------------------------------------
// Blocking: runs and waits.
Status RunBlocking(const Args& a);
// Small blocking allreduce on a power-of-two intra communicator, straight
// on point-to-point requests (allreduce_direct.cc); RunBlocking asks first.
bool AllreduceDirectFits(const Args& a);
// Blocking barrier, bcast, reduce and allreduce through the communicator's
// same-node area (node_coll.cc) when it fits (NICQ_NODE_COLL, every rank on
// this node's shm transport): true with *st set when it ran, false when
// the caller takes the usual path. Every rank decides alike.
bool TryNodeCollective(const Args& a, Status* st);
Status RunAllreduceDirect(const Args& a);
// Blocking neighborhood collective whose blocks are all contiguous, on an
// intracommunicator, up to 32 messages: posted straight on point-to-point
// requests (neighbor_direct.cc), the messages and tags the schedule would
// use. RunBlocking asks first.
bool NeighborDirectFits(const Args& a);
Status RunNeighborDirect(const Args& a);
// Nonblocking: `req` (a fresh engine request owned by the API) completes
// when the collective does.
Status StartNonblocking(const Args& a, Request* req);
// Persistent: collective over a.comm (checks that every rank passed
// matching arguments); `req` becomes an inactive persistent request whose
// RequestOps start/free/cancel the collective. Arrays in `a` are copied.
Status InitPersistent(const Args& a, Request* req);

// For tests and queues: is this request one of ours, and its algorithm.
bool IsCollRequest(const Request* req);
const char* RequestAlgorithm(const Request* req);
// For tests: whether a started request's operation has finished, read
// without driving progress. A resident plan's request is marked done only
// by a progress pass, so its done counter is what says the NIC (or the
// emulator's agent) finished the epoch while the host made no call.
bool RequestWorkDone(const Request* req);

// Tag and shadow communicator for a comm (created on first use).
// cls: 0 nonblocking, 1 persistent, 2 blocking, 3 init.
Comm* ShadowOf(Comm* comm);
int NextTag(Comm* comm, int cls);
// Both at once, under one lock (a blocking call's hot path).
Comm* ShadowAndTag(Comm* comm, int cls, int* tag);
// An intercommunicator's local group's collective shadow (what Send/Recv
// steps of its schedules use); nullptr for an intracommunicator.
Comm* LocalShadowOf(Comm* comm);

}  // namespace nicq::coll
