// Neighborhood collectives (MPI 4.1 8.6) in their three forms: argument
// checks that read the communicator's topology (topo_internal.h) into a
// coll::Args, and the C entry points. The schedule is built by
// src/coll/build_neighbor.cc; the forms run like every other collective.
// MPI_IN_PLACE is not defined for these calls and is refused.
#include <string>
#include <type_traits>
#include <vector>

#include "api/coll_c_fill.h"
#include "api/topo_internal.h"

namespace nicq::coll::capi {

using api::Call;

namespace {

static_assert(sizeof(MPI_Aint) == sizeof(std::int64_t) && std::is_signed_v<MPI_Aint>,
              "neighbor alltoallw passes MPI_Aint displacements on as int64");

thread_local std::vector<const dtype::Type*> t_stypes, t_rtypes;

// The topology of the communicator this thread's last neighborhood call
// named, by the Comm object's serial: MPI_Comm_get_attr (its table's lock
// and lookup) was about 270 instructions of an 8-byte call. A serial is
// never reused, so a freed communicator's entry is never matched again,
// and the topology attribute lives as long as its communicator.
struct LastTopology {
  std::uint64_t serial = 0;  // 0: none (serials start at 1)
  const api::Topology* topology = nullptr;
};
[[gnu::tls_model("initial-exec")]] thread_local LastTopology t_last_topology;

// Every check builds its message only when it fails (coll_run.cc).
bool Topo(Call& c, const Comm* comm, Args* a) {
  const std::uint64_t serial = comm->serial.value;
  LastTopology& last = t_last_topology;
  const api::Topology* t = last.topology;
  if (last.serial != serial) [[unlikely]] {
    t = api::TopologyOf(c.comm_handle());
    if (t == nullptr) [[unlikely]]
      return c.Check(false, Code::kTopology,
                     "communicator " + std::to_string(c.comm_handle()) +
                         " has no process topology (neighborhood collectives need a Cartesian, "
                         "graph or distributed graph communicator)");
    last = {serial, t};
  }
  a->sources = t->sources.data();
  a->destinations = t->destinations.data();
  a->indegree = static_cast<int>(t->sources.size());
  a->outdegree = static_cast<int>(t->destinations.size());
  a->cartesian_pairs = t->kind == MPI_CART;
  return true;
}

bool NoInPlace(Call& c, const void* sendbuf, const void* recvbuf) {
  if (sendbuf != MPI_IN_PLACE && recvbuf != MPI_IN_PLACE) [[likely]]
    return true;
  return c.Check(false, Code::kBuffer, "MPI_IN_PLACE is not allowed in a neighborhood collective");
}

// counts (non-negative) and displacements: n entries, NULL allowed when n is 0.
bool Array(Call& c, const void* v, int n, const char* what) {
  return n == 0 || c.NotNull(v, what);
}
bool NonNegative(Call& c, const int* counts, int n, const char* what) {
  return Array(c, counts, n, what) && (n == 0 || Counts(c, counts, n, what, true));
}

bool TypeList(Call& c, const MPI_Datatype* h, int n, const char* what,
              std::vector<const dtype::Type*>& out) {
  if (!Array(c, h, n, what)) return false;
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    dtype::Type* t = dtype::LookupPredefined(h[i]);
    if (t == nullptr && h[i] != MPI_DATATYPE_NULL) t = dtype::Lookup(h[i]);
    if (t == nullptr || !t->committed) [[unlikely]] {
      const std::string w = std::string(what) + "[" + std::to_string(i) + "]";
      if (!c.TypeArg(h[i], &t, w.c_str())) return false;
    }
    out[static_cast<std::size_t>(i)] = t;
  }
  return true;
}

// The receive type of the v forms (no per-slot buffer check: a count may be 0).
bool TypeOnly(Call& c, MPI_Datatype h, const dtype::Type** out, const char* what) {
  dtype::Type* t = nullptr;
  if (!c.TypeArg(h, &t, what)) return false;
  *out = t;
  return true;
}

}  // namespace

bool NeighborDegrees(Call& c, int* indegree, int* outdegree) {
  Args a;
  Comm* comm = nullptr;  // Begin checked the handle; CommArg reports it otherwise
  if (!c.CommArg(c.comm_handle(), &comm) || !Topo(c, comm, &a)) return false;
  *indegree = a.indegree;
  *outdegree = a.outdegree;
  return true;
}

bool FillNeighborAllgather(Call& c, Args* a, const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype) {
  if (!Topo(c, a->comm, a) || !NoInPlace(c, sendbuf, recvbuf) ||
      !Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false) ||
      !Data(c, recvbuf, recvcount, recvtype, &a->rtype, "receive", false))
    return false;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  a->scount = sendcount;
  a->rcount = recvcount;
  return true;
}

bool FillNeighborAllgatherv(Call& c, Args* a, const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int displs[], MPI_Datatype recvtype) {
  if (!Topo(c, a->comm, a) || !NoInPlace(c, sendbuf, recvbuf) ||
      !Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false) ||
      !NonNegative(c, recvcounts, a->indegree, "recvcounts") ||
      !Array(c, displs, a->indegree, "displs") ||
      !TypeOnly(c, recvtype, &a->rtype, "receive datatype"))
    return false;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  a->scount = sendcount;
  a->rcounts = recvcounts;
  a->rdispls = displs;
  return true;
}

bool FillNeighborAlltoallv(Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int rdispls[], MPI_Datatype recvtype) {
  if (!Topo(c, a->comm, a) || !NoInPlace(c, sendbuf, recvbuf) ||
      !NonNegative(c, sendcounts, a->outdegree, "sendcounts") ||
      !Array(c, sdispls, a->outdegree, "sdispls") ||
      !TypeOnly(c, sendtype, &a->stype, "send datatype") ||
      !NonNegative(c, recvcounts, a->indegree, "recvcounts") ||
      !Array(c, rdispls, a->indegree, "rdispls") ||
      !TypeOnly(c, recvtype, &a->rtype, "receive datatype"))
    return false;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  a->scounts = sendcounts;
  a->sdispls = sdispls;
  a->rcounts = recvcounts;
  a->rdispls = rdispls;
  return true;
}

bool FillNeighborAlltoallw(Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                           const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[]) {
  if (!Topo(c, a->comm, a) || !NoInPlace(c, sendbuf, recvbuf) ||
      !NonNegative(c, sendcounts, a->outdegree, "sendcounts") ||
      !Array(c, sdispls, a->outdegree, "sdispls") ||
      !TypeList(c, sendtypes, a->outdegree, "sendtypes", t_stypes) ||
      !NonNegative(c, recvcounts, a->indegree, "recvcounts") ||
      !Array(c, rdispls, a->indegree, "rdispls") ||
      !TypeList(c, recvtypes, a->indegree, "recvtypes", t_rtypes))
    return false;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  a->scounts = sendcounts;
  a->rcounts = recvcounts;
  a->sbyte_displs = reinterpret_cast<const std::int64_t*>(sdispls);
  a->rbyte_displs = reinterpret_cast<const std::int64_t*>(rdispls);
  a->stypes = t_stypes.data();
  a->rtypes = t_rtypes.data();
  return true;
}

}  // namespace nicq::coll::capi

using namespace nicq::coll::capi;

extern "C" {

int MPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Neighbor_allgather", kNeighborAllgather, comm,
      FillNeighborAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Ineighbor_allgather", kNeighborAllgather, comm, request,
      FillNeighborAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Neighbor_allgather_init", kNeighborAllgather, comm, info, request,
      FillNeighborAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Neighbor_allgatherv", kNeighborAllgatherv, comm,
                     FillNeighborAllgatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf,
                                            recvcounts, displs, recvtype));
}

int MPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ineighbor_allgatherv", kNeighborAllgatherv, comm, request,
                        FillNeighborAllgatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf,
                                               recvcounts, displs, recvtype));
}

int MPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Neighbor_allgatherv_init", kNeighborAllgatherv, comm, info, request,
                       FillNeighborAllgatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf,
                                              recvcounts, displs, recvtype));
}

int MPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Neighbor_alltoall", kNeighborAlltoall, comm,
      FillNeighborAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Ineighbor_alltoall", kNeighborAlltoall, comm, request,
      FillNeighborAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Neighbor_alltoall_init", kNeighborAlltoall, comm, info, request,
      FillNeighborAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Neighbor_alltoallv", kNeighborAlltoallv, comm,
                     FillNeighborAlltoallv(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                           recvcounts, rdispls, recvtype));
}

int MPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ineighbor_alltoallv", kNeighborAlltoallv, comm, request,
                        FillNeighborAlltoallv(c, &a, sendbuf, sendcounts, sdispls, sendtype,
                                              recvbuf, recvcounts, rdispls, recvtype));
}

int MPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Neighbor_alltoallv_init", kNeighborAlltoallv, comm, info, request,
                       FillNeighborAlltoallv(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                             recvcounts, rdispls, recvtype));
}

int MPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Neighbor_alltoallw", kNeighborAlltoallw, comm,
                     FillNeighborAlltoallw(c, &a, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                           recvcounts, rdispls, recvtypes));
}

int MPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ineighbor_alltoallw", kNeighborAlltoallw, comm, request,
                        FillNeighborAlltoallw(c, &a, sendbuf, sendcounts, sdispls, sendtypes,
                                              recvbuf, recvcounts, rdispls, recvtypes));
}

int MPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Neighbor_alltoallw_init", kNeighborAlltoallw, comm, info, request,
                       FillNeighborAlltoallw(c, &a, sendbuf, sendcounts, sdispls, sendtypes,
                                             recvbuf, recvcounts, rdispls, recvtypes));
}

}  // extern "C"
