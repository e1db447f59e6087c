// The shared file pointer reads and writes (MPI_File_read/write_shared,
// _ordered and their nonblocking, split and large-count forms): declared so
// that programs written for a full MPI compile and link, not implemented.
// Each returns MPI_ERR_UNSUPPORTED_OPERATION with a message naming the call,
// through MPI_COMM_WORLD's error handler. docs/mpi-api.md lists them.
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

int MPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                         MPI_Status* status) {
  return Unsupported("MPI_File_read_shared", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Request* request) {
  return Unsupported("MPI_File_iread_shared", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  return Unsupported("MPI_File_read_ordered", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_read_ordered_begin", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_read_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status* status) {
  return Unsupported("MPI_File_read_shared_c", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_iread_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request* request) {
  return Unsupported("MPI_File_iread_shared_c", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_read_ordered_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  return Unsupported("MPI_File_read_ordered_c", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_read_ordered_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_read_ordered_begin_c", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* status) {
  return Unsupported("MPI_File_read_ordered_end", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  return Unsupported("MPI_File_write_shared", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_shared", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* status) {
  return Unsupported("MPI_File_write_ordered", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_write_ordered_begin", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_write_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  return Unsupported("MPI_File_write_shared_c", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_iwrite_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_shared_c", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_write_ordered_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status* status) {
  return Unsupported("MPI_File_write_ordered_c", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_write_ordered_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                                   MPI_Datatype datatype) {
  return Unsupported("MPI_File_write_ordered_begin_c", MPI_COMM_NULL, "the shared file pointer");
}

int MPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* status) {
  return Unsupported("MPI_File_write_ordered_end", MPI_COMM_NULL, "the shared file pointer");
}

}  // extern "C"
