// The C entry points of every collective in its three forms (generated
// shape: each is a Fill* check from coll_fill.cc and a dispatch to the
// blocking, nonblocking or persistent engine path).
#include "api/coll_c_fill.h"

using namespace nicq::coll::capi;

extern "C" {

int MPI_Barrier(MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Barrier", kBarrier, comm, FillBarrier(c, &a));
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ibarrier", kBarrier, comm, request, FillBarrier(c, &a));
}

int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Barrier_init", kBarrier, comm, info, request, FillBarrier(c, &a));
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Bcast", kBcast, comm, FillBcast(c, &a, buffer, count, datatype, root));
}

int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ibcast", kBcast, comm, request,
                        FillBcast(c, &a, buffer, count, datatype, root));
}

int MPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Bcast_init", kBcast, comm, info, request,
                       FillBcast(c, &a, buffer, count, datatype, root));
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Reduce", kReduce, comm,
                     FillReduce(c, &a, sendbuf, recvbuf, count, datatype, op, root));
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ireduce", kReduce, comm, request,
                        FillReduce(c, &a, sendbuf, recvbuf, count, datatype, op, root));
}

int MPI_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Reduce_init", kReduce, comm, info, request,
                       FillReduce(c, &a, sendbuf, recvbuf, count, datatype, op, root));
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Allreduce", kAllreduce, comm,
                     FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Iallreduce", kAllreduce, comm, request,
                        FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Allreduce_init", kAllreduce, comm, info, request,
                       FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Gather", kGather, comm,
      FillGather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Igather", kGather, comm, request,
      FillGather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Gather_init", kGather, comm, info, request,
      FillGather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Gatherv", kGatherv, comm,
                     FillGatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                 recvtype, root));
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Igatherv", kGatherv, comm, request,
                        FillGatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                    displs, recvtype, root));
}

int MPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                     MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Gatherv_init", kGatherv, comm, info, request,
                       FillGatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                   recvtype, root));
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Scatter", kScatter, comm,
      FillScatter(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Iscatter", kScatter, comm, request,
      FillScatter(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Scatter_init", kScatter, comm, info, request,
      FillScatter(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Scatterv", kScatterv, comm,
                     FillScatterv(c, &a, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                  recvtype, root));
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Iscatterv", kScatterv, comm, request,
                        FillScatterv(c, &a, sendbuf, sendcounts, displs, sendtype, recvbuf,
                                     recvcount, recvtype, root));
}

int MPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                      MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Scatterv_init", kScatterv, comm, info, request,
                       FillScatterv(c, &a, sendbuf, sendcounts, displs, sendtype, recvbuf,
                                    recvcount, recvtype, root));
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Allgather", kAllgather, comm,
      FillAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Iallgather", kAllgather, comm, request,
      FillAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Allgather_init", kAllgather, comm, info, request,
      FillAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Allgatherv", kAllgatherv, comm,
      FillAllgatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Iallgatherv", kAllgatherv, comm, request,
      FillAllgatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int MPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Allgatherv_init", kAllgatherv, comm, info, request,
      FillAllgatherv(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype));
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Alltoall", kAlltoall, comm,
      FillAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Ialltoall", kAlltoall, comm, request,
      FillAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Alltoall_init", kAlltoall, comm, info, request,
      FillAllgather(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Alltoallv", kAlltoallv, comm,
                     FillAlltoallv(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                   recvcounts, rdispls, recvtype));
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ialltoallv", kAlltoallv, comm, request,
                        FillAlltoallv(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                      recvcounts, rdispls, recvtype));
}

int MPI_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Alltoallv_init", kAlltoallv, comm, info, request,
                       FillAlltoallv(c, &a, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                     recvcounts, rdispls, recvtype));
}

int MPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                  const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                  const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Alltoallw", kAlltoallw, comm,
                     FillAlltoallw(c, &a, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                   recvcounts, rdispls, recvtypes));
}

int MPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                   MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ialltoallw", kAlltoallw, comm, request,
                        FillAlltoallw(c, &a, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                      recvcounts, rdispls, recvtypes));
}

int MPI_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                       const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                       MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Alltoallw_init", kAlltoallw, comm, info, request,
                       FillAlltoallw(c, &a, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                     recvcounts, rdispls, recvtypes));
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Reduce_scatter_block", kReduceScatterBlock, comm,
                     FillReduceScatterBlock(c, &a, sendbuf, recvbuf, recvcount, datatype, op));
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ireduce_scatter_block", kReduceScatterBlock, comm, request,
                        FillReduceScatterBlock(c, &a, sendbuf, recvbuf, recvcount, datatype, op));
}

int MPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Reduce_scatter_block_init", kReduceScatterBlock, comm, info, request,
                       FillReduceScatterBlock(c, &a, sendbuf, recvbuf, recvcount, datatype, op));
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Reduce_scatter", kReduceScatter, comm,
                     FillReduceScatter(c, &a, sendbuf, recvbuf, recvcounts, datatype, op));
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ireduce_scatter", kReduceScatter, comm, request,
                        FillReduceScatter(c, &a, sendbuf, recvbuf, recvcounts, datatype, op));
}

int MPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Reduce_scatter_init", kReduceScatter, comm, info, request,
                       FillReduceScatter(c, &a, sendbuf, recvbuf, recvcounts, datatype, op));
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Scan", kScan, comm,
                     FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Iscan", kScan, comm, request,
                        FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Scan_init", kScan, comm, info, request,
                       FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Exscan", kExscan, comm,
                     FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Iexscan", kExscan, comm, request,
                        FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Exscan_init", kExscan, comm, info, request,
                       FillAllreduce(c, &a, sendbuf, recvbuf, count, datatype, op));
}

}  // extern "C"
