// Large-count (MPI_Count) forms of the point-to-point calls. They share the
// int forms' bodies (api/p2p_calls.h), which count in 64 bits: a count above
// INT_MAX moves that many items, a negative one is MPI_ERR_COUNT.
#include <climits>

#include "api/api_internal.h"
#include "api/p2p_calls.h"

using namespace nicq;

extern "C" {

int MPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  return api::SendCall("MPI_Send_c", SendMode::kStandard, buf, count, datatype, dest, tag, comm);
}
int MPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm) {
  return api::SendCall("MPI_Bsend_c", SendMode::kBuffered, buf, count, datatype, dest, tag, comm);
}
int MPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm) {
  return api::SendCall("MPI_Ssend_c", SendMode::kSynchronous, buf, count, datatype, dest, tag,
                       comm);
}
int MPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm) {
  return api::SendCall("MPI_Rsend_c", SendMode::kReady, buf, count, datatype, dest, tag, comm);
}

int MPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Isend_c", SendMode::kStandard, false, buf, count, datatype, dest, tag,
                        comm, request);
}
int MPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Ibsend_c", SendMode::kBuffered, false, buf, count, datatype, dest, tag,
                        comm, request);
}
int MPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Issend_c", SendMode::kSynchronous, false, buf, count, datatype, dest,
                        tag, comm, request);
}
int MPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Irsend_c", SendMode::kReady, false, buf, count, datatype, dest, tag,
                        comm, request);
}

int MPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Send_init_c", SendMode::kStandard, true, buf, count, datatype, dest,
                        tag, comm, request);
}
int MPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Bsend_init_c", SendMode::kBuffered, true, buf, count, datatype, dest,
                        tag, comm, request);
}
int MPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Ssend_init_c", SendMode::kSynchronous, true, buf, count, datatype,
                        dest, tag, comm, request);
}
int MPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Rsend_init_c", SendMode::kReady, true, buf, count, datatype, dest, tag,
                        comm, request);
}

int MPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
               MPI_Comm comm, MPI_Status* status) {
  return api::RecvCall("MPI_Recv_c", buf, count, datatype, source, tag, comm, status);
}
int MPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Request* request) {
  return api::IrecvCall("MPI_Irecv_c", false, buf, count, datatype, source, tag, comm, request);
}
int MPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  return api::IrecvCall("MPI_Recv_init_c", true, buf, count, datatype, source, tag, comm, request);
}

int MPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return api::SendrecvCall("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, status, false, nullptr);
}
int MPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return api::SendrecvReplaceCall("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag,
                                  source, recvtag, comm, status, false, nullptr);
}
int MPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  return api::SendrecvCall("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, MPI_STATUS_IGNORE, true,
                           request);
}
int MPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Request* request) {
  return api::SendrecvReplaceCall("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag,
                                  source, recvtag, comm, MPI_STATUS_IGNORE, true, request);
}

int MPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  api::Call c("MPI_Get_count_c");
  dtype::Type* t = datatype == MPI_DATATYPE_NULL ? nullptr : dtype::Lookup(datatype);
  if (!c.NotNull(status != MPI_STATUS_IGNORE ? status : nullptr, "status") ||
      !c.Check(t != nullptr, Code::kType, "invalid datatype " + std::to_string(datatype)) ||
      !c.NotNull(count, "count"))
    return c.Fail();
  const std::int64_t n = dtype::CountFromBytes(*t, status->nicq_count);
  *count = n < 0 ? MPI_UNDEFINED : n;
  return MPI_SUCCESS;
}

}  // extern "C"
