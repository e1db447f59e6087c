// MPI-IO read entry points: every MPI_File_read* and MPI_File_iread* form
// (explicit offset, individual and shared pointer, ordered, collective,
// nonblocking, split collective, large count) on api::RunFileAccess.
#include "api/file_access.h"

using namespace nicq;
using api::Call;

extern "C" {

int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_read");
  return api::RunFileAccess(c, api::kRead, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iread");
  return api::RunFileAccess(c, api::kIread, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                      MPI_Status* status) {
  Call c("MPI_File_read_all");
  return api::RunFileAccess(c, api::kRead, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                       MPI_Request* request) {
  Call c("MPI_File_iread_all");
  return api::RunFileAccess(c, api::kIread, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  Call c("MPI_File_read_all_begin");
  return api::RunFileAccess(c, api::kReadBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                     MPI_Status* status) {
  Call c("MPI_File_read_at");
  return api::RunFileAccess(c, api::kReadAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                      MPI_Request* request) {
  Call c("MPI_File_iread_at");
  return api::RunFileAccess(c, api::kIreadAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                         MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_read_at_all");
  return api::RunFileAccess(c, api::kReadAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iread_at_all");
  return api::RunFileAccess(c, api::kIreadAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                               MPI_Datatype datatype) {
  Call c("MPI_File_read_at_all_begin");
  return api::RunFileAccess(c, api::kReadAtBegin, fh, offset, buf, count, datatype, nullptr,
                            nullptr);
}

int MPI_File_read_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Status* status) {
  Call c("MPI_File_read_c");
  return api::RunFileAccess(c, api::kRead, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Request* request) {
  Call c("MPI_File_iread_c");
  return api::RunFileAccess(c, api::kIread, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Status* status) {
  Call c("MPI_File_read_all_c");
  return api::RunFileAccess(c, api::kRead, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Request* request) {
  Call c("MPI_File_iread_all_c");
  return api::RunFileAccess(c, api::kIread, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_all_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  Call c("MPI_File_read_all_begin_c");
  return api::RunFileAccess(c, api::kReadBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_read_at_c");
  return api::RunFileAccess(c, api::kReadAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iread_at_c");
  return api::RunFileAccess(c, api::kIreadAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_read_at_all_c");
  return api::RunFileAccess(c, api::kReadAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iread_at_all_c");
  return api::RunFileAccess(c, api::kIreadAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                                 MPI_Datatype datatype) {
  Call c("MPI_File_read_at_all_begin_c");
  return api::RunFileAccess(c, api::kReadAtBegin, fh, offset, buf, count, datatype, nullptr,
                            nullptr);
}

int MPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  Call c("MPI_File_read_all_end");
  return api::EndFileAccess(c, fh, status);
}

int MPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  Call c("MPI_File_read_at_all_end");
  return api::EndFileAccess(c, fh, status);
}

int MPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                         MPI_Status* status) {
  Call c("MPI_File_read_shared");
  return api::RunFileAccess(c, api::kReadShared, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  Call c("MPI_File_read_ordered");
  return api::RunFileAccess(c, api::kReadOrdered, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Request* request) {
  Call c("MPI_File_iread_shared");
  return api::RunFileAccess(c, api::kIreadShared, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  Call c("MPI_File_read_ordered_begin");
  return api::RunFileAccess(c, api::kReadOrderedBegin, fh, 0, buf, count, datatype, nullptr,
                            nullptr);
}

int MPI_File_read_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status* status) {
  Call c("MPI_File_read_shared_c");
  return api::RunFileAccess(c, api::kReadShared, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_read_ordered_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  Call c("MPI_File_read_ordered_c");
  return api::RunFileAccess(c, api::kReadOrdered, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request* request) {
  Call c("MPI_File_iread_shared_c");
  return api::RunFileAccess(c, api::kIreadShared, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_ordered_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  Call c("MPI_File_read_ordered_begin_c");
  return api::RunFileAccess(c, api::kReadOrderedBegin, fh, 0, buf, count, datatype, nullptr,
                            nullptr);
}

int MPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* status) {
  Call c("MPI_File_read_ordered_end");
  return api::EndFileAccess(c, fh, status);
}

}  // extern "C"
