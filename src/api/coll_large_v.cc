// Large-count (MPI_Count counts, MPI_Aint displacements) forms of the
// collectives that take per-process arrays, in their three forms. Each
// converts its arrays to int (MPI_ERR_COUNT naming the entry that does not
// fit) and runs the int form. Arrays a process does not read (the counts of
// a non-root, the send side of MPI_IN_PLACE) are not converted.
#include "api/coll_large.h"

using namespace nicq;
using namespace nicq::coll::capi;

namespace {

// Whether this process is the one whose arrays a rooted v-collective reads.
bool ReadsRootArrays(const coll::Args& a, int root) {
  return a.comm->inter ? root == MPI_ROOT : a.comm->rank == root;
}

bool FillGathervC(api::Call& c, coll::Args* a, const void* sendbuf, MPI_Count sendcount,
                  MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                  const MPI_Aint displs[], MPI_Datatype recvtype, int root) {
  int sn = 0;
  const int* rc = nullptr;
  const int* rd = nullptr;
  if (ReadsRootArrays(*a, root)) {
    const int p = PeerCount(*a);
    if (!ArrayToInt(c, recvcounts, p, "recvcounts", 0, &rc) ||
        !ArrayToInt(c, displs, p, "displs", 1, &rd))
      return false;
  }
  return (sendbuf == MPI_IN_PLACE || CountToInt(c, sendcount, "sendcount", &sn)) &&
         FillGatherv(c, a, sendbuf, sn, sendtype, recvbuf, rc, rd, recvtype, root);
}

bool FillScattervC(api::Call& c, coll::Args* a, const void* sendbuf, const MPI_Count sendcounts[],
                   const MPI_Aint displs[], MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root) {
  int rn = 0;
  const int* sc = nullptr;
  const int* sd = nullptr;
  if (ReadsRootArrays(*a, root)) {
    const int p = PeerCount(*a);
    if (!ArrayToInt(c, sendcounts, p, "sendcounts", 0, &sc) ||
        !ArrayToInt(c, displs, p, "displs", 1, &sd))
      return false;
  }
  return CountToInt(c, recvcount, "recvcount", &rn) &&
         FillScatterv(c, a, sendbuf, sc, sd, sendtype, recvbuf, rn, recvtype, root);
}

bool FillAllgathervC(api::Call& c, coll::Args* a, const void* sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint displs[], MPI_Datatype recvtype) {
  int sn = 0;
  const int* rc = nullptr;
  const int* rd = nullptr;
  const int p = PeerCount(*a);
  return (sendbuf == MPI_IN_PLACE || CountToInt(c, sendcount, "sendcount", &sn)) &&
         ArrayToInt(c, recvcounts, p, "recvcounts", 0, &rc) &&
         ArrayToInt(c, displs, p, "displs", 1, &rd) &&
         FillAllgatherv(c, a, sendbuf, sn, sendtype, recvbuf, rc, rd, recvtype);
}

bool FillAlltoallvC(api::Call& c, coll::Args* a, const void* sendbuf, const MPI_Count sendcounts[],
                    const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype) {
  const int p = PeerCount(*a);
  const int* sc = nullptr;
  const int* sd = nullptr;
  const int* rc = nullptr;
  const int* rd = nullptr;
  if (sendbuf != MPI_IN_PLACE && (!ArrayToInt(c, sendcounts, p, "sendcounts", 0, &sc) ||
                                  !ArrayToInt(c, sdispls, p, "sdispls", 1, &sd)))
    return false;
  return ArrayToInt(c, recvcounts, p, "recvcounts", 2, &rc) &&
         ArrayToInt(c, rdispls, p, "rdispls", 3, &rd) &&
         FillAlltoallv(c, a, sendbuf, sc, sd, sendtype, recvbuf, rc, rd, recvtype);
}

bool FillAlltoallwC(api::Call& c, coll::Args* a, const void* sendbuf, const MPI_Count sendcounts[],
                    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                    const MPI_Datatype recvtypes[]) {
  const int p = PeerCount(*a);
  const int* sc = nullptr;
  const int* sd = nullptr;
  const int* rc = nullptr;
  const int* rd = nullptr;
  if (sendbuf != MPI_IN_PLACE && (!ArrayToInt(c, sendcounts, p, "sendcounts", 0, &sc) ||
                                  !ArrayToInt(c, sdispls, p, "sdispls", 1, &sd)))
    return false;
  return ArrayToInt(c, recvcounts, p, "recvcounts", 2, &rc) &&
         ArrayToInt(c, rdispls, p, "rdispls", 3, &rd) &&
         FillAlltoallw(c, a, sendbuf, sc, sd, sendtypes, recvbuf, rc, rd, recvtypes);
}

// recvcounts has one entry per process of the local group.
bool FillReduceScatterC(api::Call& c, coll::Args* a, const void* sendbuf, void* recvbuf,
                        const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op) {
  const int* rc = nullptr;
  return ArrayToInt(c, recvcounts, a->comm->size, "recvcounts", 0, &rc) &&
         FillReduceScatter(c, a, sendbuf, recvbuf, rc, datatype, op);
}

}  // namespace

extern "C" {

int MPI_Gatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Gatherv_c", kGatherv, comm,
                     FillGathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, root));
}

int MPI_Igatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Igatherv_c", kGatherv, comm, request,
                        FillGathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                     displs, recvtype, root));
}

int MPI_Gatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Gatherv_init_c", kGatherv, comm, info, request,
                       FillGathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                    displs, recvtype, root));
}

int MPI_Scatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                   MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Scatterv_c", kScatterv, comm,
                     FillScattervC(c, &a, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                   recvtype, root));
}

int MPI_Iscatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Iscatterv_c", kScatterv, comm, request,
                        FillScattervC(c, &a, sendbuf, sendcounts, displs, sendtype, recvbuf,
                                      recvcount, recvtype, root));
}

int MPI_Scatterv_init_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                        MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Scatterv_init_c", kScatterv, comm, info, request,
                       FillScattervC(c, &a, sendbuf, sendcounts, displs, sendtype, recvbuf,
                                     recvcount, recvtype, root));
}

int MPI_Allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                     MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Allgatherv_c", kAllgatherv, comm,
      FillAllgathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int MPI_Iallgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Iallgatherv_c", kAllgatherv, comm, request,
      FillAllgathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int MPI_Allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                          MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Allgatherv_init_c", kAllgatherv, comm, info, request,
      FillAllgathervC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int MPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Alltoallv_c", kAlltoallv, comm,
                     FillAlltoallvC(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                    recvcounts, rdispls, recvtype));
}

int MPI_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ialltoallv_c", kAlltoallv, comm, request,
                        FillAlltoallvC(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                       recvcounts, rdispls, recvtype));
}

int MPI_Alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Alltoallv_init_c", kAlltoallv, comm, info, request,
                       FillAlltoallvC(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                      recvcounts, rdispls, recvtype));
}

int MPI_Alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Alltoallw_c", kAlltoallw, comm,
                     FillAlltoallwC(c, &a, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                    recvcounts, rdispls, recvtypes));
}

int MPI_Ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                     MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ialltoallw_c", kAlltoallw, comm, request,
                        FillAlltoallwC(c, &a, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                       recvcounts, rdispls, recvtypes));
}

int MPI_Alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Alltoallw_init_c", kAlltoallw, comm, info, request,
                       FillAlltoallwC(c, &a, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                      recvcounts, rdispls, recvtypes));
}

int MPI_Reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Reduce_scatter_c", kReduceScatter, comm,
                     FillReduceScatterC(c, &a, sendbuf, recvbuf, recvcounts, datatype, op));
}

int MPI_Ireduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ireduce_scatter_c", kReduceScatter, comm, request,
                        FillReduceScatterC(c, &a, sendbuf, recvbuf, recvcounts, datatype, op));
}

int MPI_Reduce_scatter_init_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                              MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Reduce_scatter_init_c", kReduceScatter, comm, info, request,
                       FillReduceScatterC(c, &a, sendbuf, recvbuf, recvcounts, datatype, op));
}

}  // extern "C"
