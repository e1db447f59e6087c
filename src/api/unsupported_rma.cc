// One-sided calls nicq declares so that programs written for a full MPI
// compile and link (windows are not implemented): each returns
// MPI_ERR_UNSUPPORTED_OPERATION with a message naming the call, through the
// error handler of the call's communicator (MPI_COMM_WORLD's when it has
// none). docs/mpi-api.md lists them.
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

int MPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  return Unsupported("MPI_Put_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  return Unsupported("MPI_Get_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return Unsupported("MPI_Accumulate_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void* result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return Unsupported("MPI_Get_accumulate", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                         MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win) {
  return Unsupported("MPI_Get_accumulate_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request* request) {
  return Unsupported("MPI_Rput", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Rput_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return Unsupported("MPI_Rput_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request* request) {
  return Unsupported("MPI_Rget", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Rget_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return Unsupported("MPI_Rget_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return Unsupported("MPI_Raccumulate", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return Unsupported("MPI_Raccumulate_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  return Unsupported("MPI_Rget_accumulate", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win, MPI_Request* request) {
  return Unsupported("MPI_Rget_accumulate_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  return Unsupported("MPI_Fetch_and_op", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
  return Unsupported("MPI_Compare_and_swap", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void* baseptr, MPI_Win* win) {
  return Unsupported("MPI_Win_allocate_c", comm, "one-sided communication (windows)");
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void* baseptr, MPI_Win* win) {
  return Unsupported("MPI_Win_allocate_shared", comm, "one-sided communication (windows)");
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                              void* baseptr, MPI_Win* win) {
  return Unsupported("MPI_Win_allocate_shared_c", comm, "one-sided communication (windows)");
}

int MPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     MPI_Win* win) {
  return Unsupported("MPI_Win_create_c", comm, "one-sided communication (windows)");
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  return Unsupported("MPI_Win_shared_query", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit,
                           void* baseptr) {
  return Unsupported("MPI_Win_shared_query_c", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  return Unsupported("MPI_Win_get_group", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
  return Unsupported("MPI_Win_set_info", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  return Unsupported("MPI_Win_get_info", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  return Unsupported("MPI_Win_start", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_complete(MPI_Win win) {
  return Unsupported("MPI_Win_complete", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  return Unsupported("MPI_Win_post", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_wait(MPI_Win win) {
  return Unsupported("MPI_Win_wait", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_test(MPI_Win win, int* flag) {
  return Unsupported("MPI_Win_test", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  return Unsupported("MPI_Win_lock_all", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_unlock_all(MPI_Win win) {
  return Unsupported("MPI_Win_unlock_all", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_flush_all(MPI_Win win) {
  return Unsupported("MPI_Win_flush_all", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
  return Unsupported("MPI_Win_flush_local", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_flush_local_all(MPI_Win win) {
  return Unsupported("MPI_Win_flush_local_all", MPI_COMM_NULL, "one-sided communication (windows)");
}

int MPI_Win_sync(MPI_Win win) {
  return Unsupported("MPI_Win_sync", MPI_COMM_NULL, "one-sided communication (windows)");
}

}  // extern "C"
