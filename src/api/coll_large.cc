// Large-count (MPI_Count) forms of the collectives whose counts are scalars,
// in their three forms (blocking, nonblocking, persistent). nicq's
// collectives move at most INT_MAX items per count argument: each form
// checks that its counts fit in an int and then runs the int form.
#include "api/coll_large.h"

using namespace nicq;
using namespace nicq::coll::capi;

namespace {

// With MPI_IN_PLACE the send count is ignored, so it is not checked.
bool SendCountToInt(api::Call& c, const void* sendbuf, MPI_Count sendcount, int* out) {
  return sendbuf == MPI_IN_PLACE || CountToInt(c, sendcount, "sendcount", out);
}

bool FillBcastC(api::Call& c, coll::Args* a, void* buffer, MPI_Count count, MPI_Datatype datatype,
                int root) {
  int n = 0;
  return CountToInt(c, count, "count", &n) && FillBcast(c, a, buffer, n, datatype, root);
}

bool FillReduceC(api::Call& c, coll::Args* a, const void* sendbuf, void* recvbuf, MPI_Count count,
                 MPI_Datatype datatype, MPI_Op op, int root) {
  int n = 0;
  return CountToInt(c, count, "count", &n) &&
         FillReduce(c, a, sendbuf, recvbuf, n, datatype, op, root);
}

bool FillAllreduceC(api::Call& c, coll::Args* a, const void* sendbuf, void* recvbuf,
                    MPI_Count count, MPI_Datatype datatype, MPI_Op op) {
  int n = 0;
  return CountToInt(c, count, "count", &n) &&
         FillAllreduce(c, a, sendbuf, recvbuf, n, datatype, op);
}

bool FillGatherC(api::Call& c, coll::Args* a, const void* sendbuf, MPI_Count sendcount,
                 MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                 int root) {
  int sn = 0, rn = 0;
  return SendCountToInt(c, sendbuf, sendcount, &sn) && CountToInt(c, recvcount, "recvcount", &rn) &&
         FillGather(c, a, sendbuf, sn, sendtype, recvbuf, rn, recvtype, root);
}

bool FillScatterC(api::Call& c, coll::Args* a, const void* sendbuf, MPI_Count sendcount,
                  MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                  int root) {
  int sn = 0, rn = 0;
  return SendCountToInt(c, sendbuf, sendcount, &sn) &&
         (recvbuf == MPI_IN_PLACE || CountToInt(c, recvcount, "recvcount", &rn)) &&
         FillScatter(c, a, sendbuf, sn, sendtype, recvbuf, rn, recvtype, root);
}

// allgather and alltoall.
bool FillAllgatherC(api::Call& c, coll::Args* a, const void* sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype) {
  int sn = 0, rn = 0;
  return SendCountToInt(c, sendbuf, sendcount, &sn) && CountToInt(c, recvcount, "recvcount", &rn) &&
         FillAllgather(c, a, sendbuf, sn, sendtype, recvbuf, rn, recvtype);
}

bool FillReduceScatterBlockC(api::Call& c, coll::Args* a, const void* sendbuf, void* recvbuf,
                             MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op) {
  int n = 0;
  return CountToInt(c, recvcount, "recvcount", &n) &&
         FillReduceScatterBlock(c, a, sendbuf, recvbuf, n, datatype, op);
}

}  // namespace

extern "C" {

int MPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Bcast_c", kBcast, comm, FillBcastC(c, &a, buffer, count, datatype, root));
}

int MPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ibcast_c", kBcast, comm, request,
                        FillBcastC(c, &a, buffer, count, datatype, root));
}

int MPI_Bcast_init_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Bcast_init_c", kBcast, comm, info, request,
                       FillBcastC(c, &a, buffer, count, datatype, root));
}

int MPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Reduce_c", kReduce, comm,
                     FillReduceC(c, &a, sendbuf, recvbuf, count, datatype, op, root));
}

int MPI_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ireduce_c", kReduce, comm, request,
                        FillReduceC(c, &a, sendbuf, recvbuf, count, datatype, op, root));
}

int MPI_Reduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Reduce_init_c", kReduce, comm, info, request,
                       FillReduceC(c, &a, sendbuf, recvbuf, count, datatype, op, root));
}

int MPI_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Allreduce_c", kAllreduce, comm,
                     FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Iallreduce_c", kAllreduce, comm, request,
                        FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Allreduce_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Allreduce_init_c", kAllreduce, comm, info, request,
                       FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Scan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Scan_c", kScan, comm,
                     FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Iscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Iscan_c", kScan, comm, request,
                        FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Scan_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Scan_init_c", kScan, comm, info, request,
                       FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Exscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Exscan_c", kExscan, comm,
                     FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Iexscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Iexscan_c", kExscan, comm, request,
                        FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Exscan_init_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Exscan_init_c", kExscan, comm, info, request,
                       FillAllreduceC(c, &a, sendbuf, recvbuf, count, datatype, op));
}

int MPI_Gather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Gather_c", kGather, comm,
      FillGatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Igather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Igather_c", kGather, comm, request,
      FillGatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Gather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Gather_init_c", kGather, comm, info, request,
      FillGatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Scatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Scatter_c", kScatter, comm,
      FillScatterC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Iscatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Iscatter_c", kScatter, comm, request,
      FillScatterC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Scatter_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Scatter_init_c", kScatter, comm, info, request,
      FillScatterC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root));
}

int MPI_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Allgather_c", kAllgather, comm,
      FillAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Iallgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Iallgather_c", kAllgather, comm, request,
      FillAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Allgather_init_c", kAllgather, comm, info, request,
      FillAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  NICQ_COLL_BLOCKING(
      "MPI_Alltoall_c", kAlltoall, comm,
      FillAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  NICQ_COLL_NONBLOCKING(
      "MPI_Ialltoall_c", kAlltoall, comm, request,
      FillAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request* request) {
  NICQ_COLL_PERSISTENT(
      "MPI_Alltoall_init_c", kAlltoall, comm, info, request,
      FillAllgatherC(c, &a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype));
}

int MPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  NICQ_COLL_BLOCKING("MPI_Reduce_scatter_block_c", kReduceScatterBlock, comm,
                     FillReduceScatterBlockC(c, &a, sendbuf, recvbuf, recvcount, datatype, op));
}

int MPI_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request* request) {
  NICQ_COLL_NONBLOCKING("MPI_Ireduce_scatter_block_c", kReduceScatterBlock, comm, request,
                        FillReduceScatterBlockC(c, &a, sendbuf, recvbuf, recvcount, datatype, op));
}

int MPI_Reduce_scatter_block_init_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                    MPI_Request* request) {
  NICQ_COLL_PERSISTENT("MPI_Reduce_scatter_block_init_c", kReduceScatterBlock, comm, info, request,
                       FillReduceScatterBlockC(c, &a, sendbuf, recvbuf, recvcount, datatype, op));
}

int MPI_Reduce_local_c(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op) {
  api::Call c("MPI_Reduce_local_c");
  int n = 0;
  if (!CountToInt(c, count, "count", &n)) return c.Fail();
  return PMPI_Reduce_local(inbuf, inoutbuf, n, datatype, op);
}

}  // extern "C"
