// MPI-IO write entry points: every MPI_File_write* and MPI_File_iwrite*
// form (explicit offset, individual and shared pointer, ordered, collective,
// nonblocking, split collective, large count) on api::RunFileAccess.
#include "api/file_access.h"

using namespace nicq;
using api::Call;

extern "C" {

int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                   MPI_Status* status) {
  Call c("MPI_File_write");
  return api::RunFileAccess(c, api::kWrite, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                    MPI_Request* request) {
  Call c("MPI_File_iwrite");
  return api::RunFileAccess(c, api::kIwrite, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                       MPI_Status* status) {
  Call c("MPI_File_write_all");
  return api::RunFileAccess(c, api::kWrite, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                        MPI_Request* request) {
  Call c("MPI_File_iwrite_all");
  return api::RunFileAccess(c, api::kIwrite, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  Call c("MPI_File_write_all_begin");
  return api::RunFileAccess(c, api::kWriteBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                      MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_write_at");
  return api::RunFileAccess(c, api::kWriteAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                       MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iwrite_at");
  return api::RunFileAccess(c, api::kIwriteAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_write_at_all");
  return api::RunFileAccess(c, api::kWriteAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                           MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iwrite_at_all");
  return api::RunFileAccess(c, api::kIwriteAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                MPI_Datatype datatype) {
  Call c("MPI_File_write_at_all_begin");
  return api::RunFileAccess(c, api::kWriteAtBegin, fh, offset, buf, count, datatype, nullptr,
                            nullptr);
}

int MPI_File_write_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status* status) {
  Call c("MPI_File_write_c");
  return api::RunFileAccess(c, api::kWrite, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Request* request) {
  Call c("MPI_File_iwrite_c");
  return api::RunFileAccess(c, api::kIwrite, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status* status) {
  Call c("MPI_File_write_all_c");
  return api::RunFileAccess(c, api::kWrite, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request* request) {
  Call c("MPI_File_iwrite_all_c");
  return api::RunFileAccess(c, api::kIwrite, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_all_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                               MPI_Datatype datatype) {
  Call c("MPI_File_write_all_begin_c");
  return api::RunFileAccess(c, api::kWriteBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_write_at_c");
  return api::RunFileAccess(c, api::kWriteAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iwrite_at_c");
  return api::RunFileAccess(c, api::kIwriteAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_write_at_all_c");
  return api::RunFileAccess(c, api::kWriteAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iwrite_at_all_c");
  return api::RunFileAccess(c, api::kIwriteAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                                  MPI_Datatype datatype) {
  Call c("MPI_File_write_at_all_begin_c");
  return api::RunFileAccess(c, api::kWriteAtBegin, fh, offset, buf, count, datatype, nullptr,
                            nullptr);
}

int MPI_File_write_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  Call c("MPI_File_write_all_end");
  return api::EndFileAccess(c, fh, status);
}

int MPI_File_write_at_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  Call c("MPI_File_write_at_all_end");
  return api::EndFileAccess(c, fh, status);
}

int MPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  Call c("MPI_File_write_shared");
  return api::RunFileAccess(c, api::kWriteShared, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* status) {
  Call c("MPI_File_write_ordered");
  return api::RunFileAccess(c, api::kWriteOrdered, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  Call c("MPI_File_iwrite_shared");
  return api::RunFileAccess(c, api::kIwriteShared, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  Call c("MPI_File_write_ordered_begin");
  return api::RunFileAccess(c, api::kWriteOrderedBegin, fh, 0, buf, count, datatype, nullptr,
                            nullptr);
}

int MPI_File_write_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  Call c("MPI_File_write_shared_c");
  return api::RunFileAccess(c, api::kWriteShared, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_write_ordered_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status* status) {
  Call c("MPI_File_write_ordered_c");
  return api::RunFileAccess(c, api::kWriteOrdered, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request* request) {
  Call c("MPI_File_iwrite_shared_c");
  return api::RunFileAccess(c, api::kIwriteShared, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_ordered_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                                   MPI_Datatype datatype) {
  Call c("MPI_File_write_ordered_begin_c");
  return api::RunFileAccess(c, api::kWriteOrderedBegin, fh, 0, buf, count, datatype, nullptr,
                            nullptr);
}

int MPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* status) {
  Call c("MPI_File_write_ordered_end");
  return api::EndFileAccess(c, fh, status);
}

}  // extern "C"
