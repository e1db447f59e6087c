// The persistent neighborhood collectives' init-time argument check: MPI
// requires the data sent along each edge to match what its receiver
// expects, which no rank can see alone (sizes may differ edge by edge). At
// init every rank sends the byte count of each of its send slots along the
// edges themselves, compares what arrives with its receive slots, and the
// ranks share their verdicts, so every rank fails alike at init instead of
// one receive being truncated at some later start.
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/build_util.h"
#include "coll/coll.h"

namespace nicq::coll {
namespace {

std::int64_t SendBytes(const Args& a, int j) {
  switch (a.kind) {
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAllgatherv:
    case Kind::kNeighborAlltoall:
      return a.scount * a.stype->size;
    case Kind::kNeighborAlltoallv:
      return a.scounts[j] * a.stype->size;
    default:
      return a.scounts[j] * a.stypes[j]->size;
  }
}

std::int64_t RecvBytes(const Args& a, int i) {
  switch (a.kind) {
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAlltoall:
      return a.rcount * a.rtype->size;
    case Kind::kNeighborAllgatherv:
    case Kind::kNeighborAlltoallv:
      return a.rcounts[i] * a.rtype->size;
    default:
      return a.rcounts[i] * a.rtypes[i]->size;
  }
}

Status RunInitSchedule(Comm* comm, Schedule* s) {
  s->release_on_done = true;
  s->algorithm = "init-check";
  Request req;
  NICQ_RETURN_IF_ERROR(s->Launch(ShadowOf(comm), NextTag(comm, 3), &req));
  Activate(s, /*async=*/false);
  return WaitRequest(&req);
}

}  // namespace

Status CheckNeighborSizes(const Args& a) {
  // Along the edges: each send slot's byte count, as an alltoall of int64
  // with the collective's own pairing.
  std::vector<std::int64_t> sent(std::size_t(a.outdegree)), expected(std::size_t(a.indegree), -1);
  for (int j = 0; j < a.outdegree; ++j) sent[std::size_t(j)] = SendBytes(a, j);
  Schedule* s = AcquireSchedule();
  for (int i = 0; i < a.indegree; ++i)
    if (a.sources[i] >= 0) s->Recv(&expected[std::size_t(i)], sizeof(std::int64_t), a.sources[i]);
  for (int k = 0; k < a.outdegree; ++k) {
    const int j = NeighborSendSlot(a, k);
    if (a.destinations[j] >= 0)
      s->Send(&sent[std::size_t(j)], sizeof(std::int64_t), a.destinations[j]);
  }
  NICQ_RETURN_IF_ERROR(RunInitSchedule(a.comm, s));
  std::string why;
  for (int i = 0; i < a.indegree && why.empty(); ++i) {
    if (a.sources[i] < 0) continue;
    const std::int64_t want = RecvBytes(a, i), got = expected[std::size_t(i)];
    if (got != want)
      why = std::string(KindName(a.kind)) + ": receive slot " + std::to_string(i) + " (from rank " +
            std::to_string(a.sources[i]) + ") takes " + std::to_string(want) + " bytes but rank " +
            std::to_string(a.sources[i]) + " sends " + std::to_string(got) +
            " there (counts and datatypes must match along each edge)";
  }
  // Verdicts: an allgather of one flag per rank.
  const int p = a.comm->size;
  std::vector<std::int32_t> bad(std::size_t(p), 0);
  bad[std::size_t(a.comm->rank)] = why.empty() ? 0 : 1;
  s = AcquireSchedule();
  BuildAllgatherRing(*s, a.comm->rank, p, [&](int r) {
    return Block{reinterpret_cast<char*>(&bad[std::size_t(r)]), sizeof(std::int32_t)};
  });
  NICQ_RETURN_IF_ERROR(RunInitSchedule(a.comm, s));
  if (!why.empty()) return Error(Code::kArg, why);
  for (int r = 0; r < p; ++r)
    if (bad[std::size_t(r)])
      return Error(Code::kArg, "rank " + std::to_string(r) + " found the " + KindName(a.kind) +
                                   " arguments inconsistent along one of its edges");
  return Status::Ok();
}

}  // namespace nicq::coll
