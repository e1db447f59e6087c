// File I/O handles, views and error handlers (MPI_File_*,
// MPI_Register_datarep): declared so that programs written for a full MPI
// compile and link, not implemented. Each returns
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

int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  return Unsupported("MPI_File_open", comm, "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_close(MPI_File* fh) {
  return Unsupported("MPI_File_close", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_delete(const char* filename, MPI_Info info) {
  return Unsupported("MPI_File_delete", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  return Unsupported("MPI_File_set_size", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  return Unsupported("MPI_File_preallocate", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  return Unsupported("MPI_File_get_size", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_group(MPI_File fh, MPI_Group* group) {
  return Unsupported("MPI_File_get_group", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_amode(MPI_File fh, int* amode) {
  return Unsupported("MPI_File_get_amode", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_set_info(MPI_File fh, MPI_Info info) {
  return Unsupported("MPI_File_set_info", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  return Unsupported("MPI_File_get_info", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char* datarep, MPI_Info info) {
  return Unsupported("MPI_File_set_view", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
                      char* datarep) {
  return Unsupported("MPI_File_get_view", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  return Unsupported("MPI_File_seek", MPI_COMM_NULL, "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  return Unsupported("MPI_File_seek_shared", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  return Unsupported("MPI_File_get_position", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  return Unsupported("MPI_File_get_position_shared", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  return Unsupported("MPI_File_get_byte_offset", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  return Unsupported("MPI_File_get_type_extent", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count* extent) {
  return Unsupported("MPI_File_get_type_extent_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_set_atomicity(MPI_File fh, int flag) {
  return Unsupported("MPI_File_set_atomicity", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_atomicity(MPI_File fh, int* flag) {
  return Unsupported("MPI_File_get_atomicity", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_sync(MPI_File fh) {
  return Unsupported("MPI_File_sync", MPI_COMM_NULL, "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode) {
  return Unsupported("MPI_File_call_errhandler", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_create_errhandler(MPI_File_errhandler_function* file_errhandler_fn,
                               MPI_Errhandler* errhandler) {
  return Unsupported("MPI_File_create_errhandler", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  return Unsupported("MPI_File_set_errhandler", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  return Unsupported("MPI_File_get_errhandler", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_Register_datarep(const char* datarep, MPI_Datarep_conversion_function* read_conversion_fn,
                         MPI_Datarep_conversion_function* write_conversion_fn,
                         MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {
  return Unsupported("MPI_Register_datarep", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

int MPI_Register_datarep_c(const char* datarep,
                           MPI_Datarep_conversion_function_c* read_conversion_fn,
                           MPI_Datarep_conversion_function_c* write_conversion_fn,
                           MPI_Datarep_extent_function* dtype_file_extent_fn, void* extra_state) {
  return Unsupported("MPI_Register_datarep_c", MPI_COMM_NULL,
                     "file I/O (MPI_File_*, MPI_Register_datarep)");
}

}  // extern "C"
