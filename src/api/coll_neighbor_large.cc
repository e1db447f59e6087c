// Large-count (MPI_Count counts, MPI_Aint displacements) forms of the
// neighborhood collectives in their three forms. Each converts its counts
// (and, but for alltoallw whose displacements are bytes in every form, its
// displacements) to int, MPI_ERR_COUNT naming an entry that does not fit,
// and runs the int form's checks and engine. Arrays have an entry per
// neighbor, so the topology's degrees are read first.
#include "api/coll_large.h"

using namespace nicq;
using namespace nicq::coll::capi;

namespace {

bool FillNeighborAllgatherC(api::Call& c, coll::Args* a, const void* sendbuf, MPI_Count sendcount,
                            MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype) {
  int sn = 0, rn = 0;
  return CountToInt(c, sendcount, "sendcount", &sn) && CountToInt(c, recvcount, "recvcount", &rn) &&
         FillNeighborAllgather(c, a, sendbuf, sn, sendtype, recvbuf, rn, recvtype);
}

bool FillNeighborAllgathervC(api::Call& c, coll::Args* a, const void* sendbuf, MPI_Count sendcount,
                             MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint displs[], MPI_Datatype recvtype) {
  int sn = 0, in = 0, out = 0;
  const int* rc = nullptr;
  const int* rd = nullptr;
  return NeighborDegrees(c, &in, &out) && CountToInt(c, sendcount, "sendcount", &sn) &&
         ArrayToInt(c, recvcounts, in, "recvcounts", 0, &rc) &&
         ArrayToInt(c, displs, in, "displs", 0, &rd) &&
         FillNeighborAllgatherv(c, a, sendbuf, sn, sendtype, recvbuf, rc, rd, recvtype);
}

bool FillNeighborAlltoallvC(api::Call& c, coll::Args* a, const void* sendbuf,
                            const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                            const MPI_Aint rdispls[], MPI_Datatype recvtype) {
  int in = 0, out = 0;
  const int* sc = nullptr;
  const int* sd = nullptr;
  const int* rc = nullptr;
  const int* rd = nullptr;
  return NeighborDegrees(c, &in, &out) && ArrayToInt(c, sendcounts, out, "sendcounts", 0, &sc) &&
         ArrayToInt(c, sdispls, out, "sdispls", 0, &sd) &&
         ArrayToInt(c, recvcounts, in, "recvcounts", 1, &rc) &&
         ArrayToInt(c, rdispls, in, "rdispls", 1, &rd) &&
         FillNeighborAlltoallv(c, a, sendbuf, sc, sd, sendtype, recvbuf, rc, rd, recvtype);
}

bool FillNeighborAlltoallwC(api::Call& c, coll::Args* a, const void* sendbuf,
                            const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf,
                            const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[]) {
  int in = 0, out = 0;
  const int* sc = nullptr;
  const int* rc = nullptr;
  return NeighborDegrees(c, &in, &out) && ArrayToInt(c, sendcounts, out, "sendcounts", 0, &sc) &&
         ArrayToInt(c, recvcounts, in, "recvcounts", 1, &rc) &&
         FillNeighborAlltoallw(c, a, sendbuf, sc, sdispls, sendtypes, recvbuf, rc, rdispls,
                               recvtypes);
}

}  // namespace

extern "C" {

int MPI_Neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Neighbor_allgather_c", kNeighborAllgather, comm,
      FillNeighborAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Ineighbor_allgather_c", kNeighborAllgather, comm, request,
      FillNeighborAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Neighbor_allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Neighbor_allgather_init_c", kNeighborAllgather, comm, info, request,
      FillNeighborAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                              MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Neighbor_allgatherv_c", kNeighborAllgatherv, comm,
                     FillNeighborAllgathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf,
                                             recvcounts, displs, recvtype));
}

int MPI_Ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ineighbor_allgatherv_c", kNeighborAllgatherv, comm, request,
                        FillNeighborAllgathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf,
                                                recvcounts, displs, recvtype));
}

int MPI_Neighbor_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Neighbor_allgatherv_init_c", kNeighborAllgatherv, comm, info, request,
                       FillNeighborAllgathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf,
                                               recvcounts, displs, recvtype));
}

int MPI_Neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Neighbor_alltoall_c", kNeighborAlltoall, comm,
      FillNeighborAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Ineighbor_alltoall_c", kNeighborAlltoall, comm, request,
      FillNeighborAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Neighbor_alltoall_init_c", kNeighborAlltoall, comm, info, request,
      FillNeighborAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Neighbor_alltoallv_c", kNeighborAlltoallv, comm,
                     FillNeighborAlltoallvC(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                            recvcounts, rdispls, recvtype));
}

int MPI_Ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ineighbor_alltoallv_c", kNeighborAlltoallv, comm, request,
                        FillNeighborAlltoallvC(c, &a, sendbuf, sendcounts, sdispls, sendtype,
                                               recvbuf, recvcounts, rdispls, recvtype));
}

int MPI_Neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Neighbor_alltoallv_init_c", kNeighborAlltoallv, comm, info, request,
                       FillNeighborAlltoallvC(c, &a, sendbuf, sendcounts, sdispls, sendtype,
                                              recvbuf, recvcounts, rdispls, recvtype));
}

int MPI_Neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                             void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Neighbor_alltoallw_c", kNeighborAlltoallw, comm,
                     FillNeighborAlltoallwC(c, &a, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                            recvcounts, rdispls, recvtypes));
}

int MPI_Ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ineighbor_alltoallw_c", kNeighborAlltoallw, comm, request,
                        FillNeighborAlltoallwC(c, &a, sendbuf, sendcounts, sdispls, sendtypes,
                                               recvbuf, recvcounts, rdispls, recvtypes));
}

int MPI_Neighbor_alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                  void* recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Neighbor_alltoallw_init_c", kNeighborAlltoallw, comm, info, request,
                       FillNeighborAlltoallwC(c, &a, sendbuf, sendcounts, sdispls, sendtypes,
                                              recvbuf, recvcounts, rdispls, recvtypes));
}

}  // extern "C"
