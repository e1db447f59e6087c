// Entry points nicq declares so that programs written for a full MPI compile
// and link, but does not implement: each returns
// MPI_ERR_UNSUPPORTED_OPERATION with a message naming the call, through the
// error handler of the call's communicator (MPI_COMM_WORLD's when the call
// has none). Outputs are left untouched. docs/mpi-api.md lists them.
#include <string>

#include "api/api_internal.h"

using namespace nicq;

namespace {

int Unsupported(const char* call, MPI_Comm comm, const char* feature) {
  api::Call c(call);
  if (comm != MPI_COMM_NULL && api::LookupComm(comm)) c.set_comm_handle(comm);
  return c.Fail(Code::kUnsupportedOperation,
                std::string("not supported: nicq does not implement ") + feature);
}

}  // namespace

extern "C" {

int MPI_Psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return Unsupported("MPI_Psend_init", comm, "partitioned communication");
}

int MPI_Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                   int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return Unsupported("MPI_Precv_init", comm, "partitioned communication");
}

int MPI_Pready(int partition, MPI_Request request) {
  return Unsupported("MPI_Pready", MPI_COMM_NULL, "partitioned communication");
}

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
  return Unsupported("MPI_Pready_range", MPI_COMM_NULL, "partitioned communication");
}

int MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request) {
  return Unsupported("MPI_Pready_list", MPI_COMM_NULL, "partitioned communication");
}

int MPI_Parrived(MPI_Request request, int partition, int* flag) {
  return Unsupported("MPI_Parrived", MPI_COMM_NULL, "partitioned communication");
}

}  // extern "C"
