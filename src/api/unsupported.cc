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

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win* win) {
  return Unsupported("MPI_Win_create", comm, "one-sided windows");
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  return Unsupported("MPI_Win_allocate", comm, "one-sided windows");
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return Unsupported("MPI_Win_create_dynamic", comm, "one-sided windows");
}

int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  return Unsupported("MPI_Win_attach", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_detach(MPI_Win win, const void* base) {
  return Unsupported("MPI_Win_detach", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_free(MPI_Win* win) {
  return Unsupported("MPI_Win_free", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                          MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                          void* extra_state) {
  return Unsupported("MPI_Win_create_keyval", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_free_keyval(int* win_keyval) {
  return Unsupported("MPI_Win_free_keyval", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  return Unsupported("MPI_Win_get_attr", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  return Unsupported("MPI_Win_set_attr", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_fence(int assert, MPI_Win win) {
  return Unsupported("MPI_Win_fence", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  return Unsupported("MPI_Win_lock", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  return Unsupported("MPI_Win_unlock", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Win_flush(int rank, MPI_Win win) {
  return Unsupported("MPI_Win_flush", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win) {
  return Unsupported("MPI_Put", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  return Unsupported("MPI_Get", MPI_COMM_NULL, "one-sided windows");
}

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return Unsupported("MPI_Accumulate", MPI_COMM_NULL, "one-sided windows");
}

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
