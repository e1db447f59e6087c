// File reads and writes (MPI_File_read*, MPI_File_write*, MPI_File_iread*,
// MPI_File_iwrite* and the split collective forms): declared so that
// programs written for a full MPI compile and link, not implemented. Each
// returns MPI_ERR_UNSUPPORTED_OPERATION with a message naming the call,
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

int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  return Unsupported("MPI_File_read", MPI_COMM_NULL, "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  return Unsupported("MPI_File_iread", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                      MPI_Status* status) {
  return Unsupported("MPI_File_read_all", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                       MPI_Request* request) {
  return Unsupported("MPI_File_iread_all", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                     MPI_Status* status) {
  return Unsupported("MPI_File_read_at", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                      MPI_Request* request) {
  return Unsupported("MPI_File_iread_at", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                         MPI_Datatype datatype, MPI_Status* status) {
  return Unsupported("MPI_File_read_at_all", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype datatype, MPI_Request* request) {
  return Unsupported("MPI_File_iread_at_all", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                         MPI_Status* status) {
  return Unsupported("MPI_File_read_shared", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Request* request) {
  return Unsupported("MPI_File_iread_shared", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  return Unsupported("MPI_File_read_ordered", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_read_all_begin", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                               MPI_Datatype datatype) {
  return Unsupported("MPI_File_read_at_all_begin", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_read_ordered_begin", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Status* status) {
  return Unsupported("MPI_File_read_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Request* request) {
  return Unsupported("MPI_File_iread_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Status* status) {
  return Unsupported("MPI_File_read_all_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Request* request) {
  return Unsupported("MPI_File_iread_all_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Status* status) {
  return Unsupported("MPI_File_read_at_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Request* request) {
  return Unsupported("MPI_File_iread_at_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Status* status) {
  return Unsupported("MPI_File_read_at_all_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Request* request) {
  return Unsupported("MPI_File_iread_at_all_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status* status) {
  return Unsupported("MPI_File_read_shared_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iread_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request* request) {
  return Unsupported("MPI_File_iread_shared_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_ordered_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  return Unsupported("MPI_File_read_ordered_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_all_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_read_all_begin_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                                 MPI_Datatype datatype) {
  return Unsupported("MPI_File_read_at_all_begin_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_ordered_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_read_ordered_begin_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  return Unsupported("MPI_File_read_all_end", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  return Unsupported("MPI_File_read_at_all_end", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* status) {
  return Unsupported("MPI_File_read_ordered_end", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                   MPI_Status* status) {
  return Unsupported("MPI_File_write", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                    MPI_Request* request) {
  return Unsupported("MPI_File_iwrite", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                       MPI_Status* status) {
  return Unsupported("MPI_File_write_all", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                        MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_all", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                      MPI_Datatype datatype, MPI_Status* status) {
  return Unsupported("MPI_File_write_at", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                       MPI_Datatype datatype, MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_at", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* status) {
  return Unsupported("MPI_File_write_at_all", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                           MPI_Datatype datatype, MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_at_all", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  return Unsupported("MPI_File_write_shared", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_shared", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* status) {
  return Unsupported("MPI_File_write_ordered", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_write_all_begin", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                MPI_Datatype datatype) {
  return Unsupported("MPI_File_write_at_all_begin", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  return Unsupported("MPI_File_write_ordered_begin", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status* status) {
  return Unsupported("MPI_File_write_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status* status) {
  return Unsupported("MPI_File_write_all_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_all_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status* status) {
  return Unsupported("MPI_File_write_at_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_at_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Status* status) {
  return Unsupported("MPI_File_write_at_all_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_at_all_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  return Unsupported("MPI_File_write_shared_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_iwrite_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request* request) {
  return Unsupported("MPI_File_iwrite_shared_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_ordered_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status* status) {
  return Unsupported("MPI_File_write_ordered_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_all_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                               MPI_Datatype datatype) {
  return Unsupported("MPI_File_write_all_begin_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                                  MPI_Datatype datatype) {
  return Unsupported("MPI_File_write_at_all_begin_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_ordered_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                                   MPI_Datatype datatype) {
  return Unsupported("MPI_File_write_ordered_begin_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  return Unsupported("MPI_File_write_all_end", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_at_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  return Unsupported("MPI_File_write_at_all_end", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* status) {
  return Unsupported("MPI_File_write_ordered_end", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

}  // extern "C"
