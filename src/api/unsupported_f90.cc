// The Fortran 90 parameterized types: declared so that programs written for
// a full MPI compile and link, not implemented. Each returns
// MPI_ERR_UNSUPPORTED_OPERATION with a message naming the call.
// docs/mpi-api.md lists them.
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

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  return Unsupported("MPI_Type_create_f90_real", MPI_COMM_NULL,
                     "Fortran 90 parameterized datatypes");
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  return Unsupported("MPI_Type_create_f90_complex", MPI_COMM_NULL,
                     "Fortran 90 parameterized datatypes");
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  return Unsupported("MPI_Type_create_f90_integer", MPI_COMM_NULL,
                     "Fortran 90 parameterized datatypes");
}

}  // extern "C"
