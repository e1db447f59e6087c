// User data representations (MPI_Register_datarep, MPI_Register_datarep_c):
// declared so that programs written for a full MPI compile and link, not
// implemented. Each returns MPI_ERR_UNSUPPORTED_OPERATION with a message
// naming the call, through MPI_COMM_WORLD's error handler. docs/mpi-api.md
// lists them; the rest of file I/O is in src/api/file*.cc.
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

int MPI_Register_datarep(const char* datarep, MPI_Datarep_conversion_function* read_conversion_fn,
                         MPI_Datarep_conversion_function* write_conversion_fn,
                         MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {
  return Unsupported("MPI_Register_datarep", MPI_COMM_NULL,
                     "user data representations (MPI_Register_datarep)");
}

int MPI_Register_datarep_c(const char* datarep,
                           MPI_Datarep_conversion_function_c* read_conversion_fn,
                           MPI_Datarep_conversion_function_c* write_conversion_fn,
                           MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {
  return Unsupported("MPI_Register_datarep_c", MPI_COMM_NULL,
                     "user data representations (MPI_Register_datarep)");
}

}  // extern "C"
