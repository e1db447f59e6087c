// MPI-IO reads and writes at an explicit offset or the individual file
// pointer, in their blocking, collective (_all), nonblocking (MPI_File_i*)
// and split collective (_begin/_end) forms. Every form moves its data at
// the call: the collective ones need no exchange (each member's view says
// where its data goes), the nonblocking ones return a completed request
// whose status holds the byte count, and _begin keeps the count for _end.
#include <string>

#include "api/file_internal.h"

using namespace nicq;
using api::ApiFile;
using api::Call;

namespace {

enum class Where { kExplicit, kIndividual, kShared, kOrdered };
enum class Form { kBlocking, kNonblocking, kBegin };

struct Access {
  bool write;
  Where where;
  Form form;
};

void FileStatus(MPI_Status* status, std::int64_t bytes) {
  RequestStatus rs;
  rs.source = MPI_ANY_SOURCE;
  rs.tag = MPI_ANY_TAG;
  rs.bytes = static_cast<std::size_t>(bytes);
  api::FillStatus(status, rs);
}

int Run(Call& c, const Access& a, MPI_File fh, MPI_Offset offset, const void* buf,
        std::int64_t count, MPI_Datatype datatype, MPI_Status* status, MPI_Request* request) {
  ApiFile* f = nullptr;
  dtype::Type* t = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.CountArg(count) || !c.TypeArg(datatype, &t) ||
      !c.BufferArg(buf, count, t))
    return api::FileFail(c, f);
  const std::int64_t etype_size = f->io.etype->size;
  const bool shared = a.where == Where::kShared || a.where == Where::kOrdered;
  if (!c.Check(a.where != Where::kExplicit || offset >= 0, Code::kArg,
               "negative offset " + std::to_string(offset)) ||
      !c.Check(shared || (f->io.amode & MPI_MODE_SEQUENTIAL) == 0, Code::kUnsupportedOperation,
               "the file was opened MPI_MODE_SEQUENTIAL (only the shared file pointer may be "
               "used)") ||
      !c.Check(!a.write || f->io.writable, io::kReadOnly, "the file was opened MPI_MODE_RDONLY") ||
      !c.Check(a.write || f->io.readable, io::kAccess, "the file was opened MPI_MODE_WRONLY") ||
      !c.Check((count * t->size) % etype_size == 0, Code::kType,
               "count " + std::to_string(count) + " of " + dtype::TypeName(datatype) +
                   " is not a whole number of the view's etypes") ||
      !c.Check(a.form != Form::kNonblocking || request != nullptr, Code::kArg, "request is NULL") ||
      !c.Check(a.form != Form::kBegin || !f->split_active, Code::kOther,
               "a split collective is already active on this file"))
    return api::FileFail(c, f);
  std::int64_t at = a.where == Where::kExplicit ? offset : f->io.position;
  if (shared) {
    const std::int64_t etypes = count * t->size / etype_size;
    Status moved = a.where == Where::kShared ? api::SharedFetchAdd(f, etypes, &at)
                                             : api::SharedOrdered(f, etypes, &at);
    if (!moved.ok()) return api::FileFail(c, f, moved);
  }
  std::int64_t bytes = 0;
  Status st = a.write ? io::Write(f->io, at, buf, count, *t, &bytes)
                      : io::Read(f->io, at, const_cast<void*>(buf), count, *t, &bytes);
  if (a.where == Where::kIndividual) f->io.position = at + bytes / etype_size;
  if (!st.ok()) return api::FileFail(c, f, st);
  switch (a.form) {
    case Form::kBlocking:
      FileStatus(status, bytes);
      break;
    case Form::kNonblocking: {
      MPI_Request h = MPI_REQUEST_NULL;
      Request* req = api::AllocEngineRequest(f->comm, c.name(), false, &h);
      if (!req) return c.Check(false, Code::kNoMem, "request table is full"), api::FileFail(c, f);
      req->status.source = MPI_ANY_SOURCE;
      req->status.tag = MPI_ANY_TAG;
      req->status.bytes = static_cast<std::size_t>(bytes);
      req->MarkDone();
      *request = h;
      break;
    }
    case Form::kBegin:
      f->split_active = true;
      f->split_bytes = bytes;
      break;
  }
  return MPI_SUCCESS;
}

int End(Call& c, MPI_File fh, MPI_Status* status) {
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) ||
      !c.Check(f->split_active, Code::kOther, "no split collective was begun on this file"))
    return api::FileFail(c, f);
  f->split_active = false;
  FileStatus(status, f->split_bytes);
  return MPI_SUCCESS;
}

constexpr Access kRead{false, Where::kIndividual, Form::kBlocking};
constexpr Access kIread{false, Where::kIndividual, Form::kNonblocking};
constexpr Access kReadBegin{false, Where::kIndividual, Form::kBegin};
constexpr Access kReadAt{false, Where::kExplicit, Form::kBlocking};
constexpr Access kIreadAt{false, Where::kExplicit, Form::kNonblocking};
constexpr Access kReadAtBegin{false, Where::kExplicit, Form::kBegin};
constexpr Access kWrite{true, Where::kIndividual, Form::kBlocking};
constexpr Access kIwrite{true, Where::kIndividual, Form::kNonblocking};
constexpr Access kWriteBegin{true, Where::kIndividual, Form::kBegin};
constexpr Access kWriteAt{true, Where::kExplicit, Form::kBlocking};
constexpr Access kIwriteAt{true, Where::kExplicit, Form::kNonblocking};
constexpr Access kWriteAtBegin{true, Where::kExplicit, Form::kBegin};
constexpr Access kReadShared{false, Where::kShared, Form::kBlocking};
constexpr Access kIreadShared{false, Where::kShared, Form::kNonblocking};
constexpr Access kReadOrdered{false, Where::kOrdered, Form::kBlocking};
constexpr Access kReadOrderedBegin{false, Where::kOrdered, Form::kBegin};
constexpr Access kWriteShared{true, Where::kShared, Form::kBlocking};
constexpr Access kIwriteShared{true, Where::kShared, Form::kNonblocking};
constexpr Access kWriteOrdered{true, Where::kOrdered, Form::kBlocking};
constexpr Access kWriteOrderedBegin{true, Where::kOrdered, Form::kBegin};

}  // namespace

extern "C" {

int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_read");
  return Run(c, kRead, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iread");
  return Run(c, kIread, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                      MPI_Status* status) {
  Call c("MPI_File_read_all");
  return Run(c, kRead, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                       MPI_Request* request) {
  Call c("MPI_File_iread_all");
  return Run(c, kIread, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  Call c("MPI_File_read_all_begin");
  return Run(c, kReadBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                     MPI_Status* status) {
  Call c("MPI_File_read_at");
  return Run(c, kReadAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count, MPI_Datatype datatype,
                      MPI_Request* request) {
  Call c("MPI_File_iread_at");
  return Run(c, kIreadAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                         MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_read_at_all");
  return Run(c, kReadAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                          MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iread_at_all");
  return Run(c, kIreadAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                               MPI_Datatype datatype) {
  Call c("MPI_File_read_at_all_begin");
  return Run(c, kReadAtBegin, fh, offset, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_read_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Status* status) {
  Call c("MPI_File_read_c");
  return Run(c, kRead, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Request* request) {
  Call c("MPI_File_iread_c");
  return Run(c, kIread, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Status* status) {
  Call c("MPI_File_read_all_c");
  return Run(c, kRead, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_all_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Request* request) {
  Call c("MPI_File_iread_all_c");
  return Run(c, kIread, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_all_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  Call c("MPI_File_read_all_begin_c");
  return Run(c, kReadBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                       MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_read_at_c");
  return Run(c, kReadAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iread_at_c");
  return Run(c, kIreadAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_read_at_all_c");
  return Run(c, kReadAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iread_at_all_c");
  return Run(c, kIreadAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void* buf, MPI_Count count,
                                 MPI_Datatype datatype) {
  Call c("MPI_File_read_at_all_begin_c");
  return Run(c, kReadAtBegin, fh, offset, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  Call c("MPI_File_read_all_end");
  return End(c, fh, status);
}

int MPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  Call c("MPI_File_read_at_all_end");
  return End(c, fh, status);
}

int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                   MPI_Status* status) {
  Call c("MPI_File_write");
  return Run(c, kWrite, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                    MPI_Request* request) {
  Call c("MPI_File_iwrite");
  return Run(c, kIwrite, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                       MPI_Status* status) {
  Call c("MPI_File_write_all");
  return Run(c, kWrite, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                        MPI_Request* request) {
  Call c("MPI_File_iwrite_all");
  return Run(c, kIwrite, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_all_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  Call c("MPI_File_write_all_begin");
  return Run(c, kWriteBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                      MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_write_at");
  return Run(c, kWriteAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                       MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iwrite_at");
  return Run(c, kIwriteAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                          MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_write_at_all");
  return Run(c, kWriteAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                           MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iwrite_at_all");
  return Run(c, kIwriteAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                MPI_Datatype datatype) {
  Call c("MPI_File_write_at_all_begin");
  return Run(c, kWriteAtBegin, fh, offset, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_write_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status* status) {
  Call c("MPI_File_write_c");
  return Run(c, kWrite, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Request* request) {
  Call c("MPI_File_iwrite_c");
  return Run(c, kIwrite, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status* status) {
  Call c("MPI_File_write_all_c");
  return Run(c, kWrite, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_all_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request* request) {
  Call c("MPI_File_iwrite_all_c");
  return Run(c, kIwrite, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_all_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                               MPI_Datatype datatype) {
  Call c("MPI_File_write_all_begin_c");
  return Run(c, kWriteBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_write_at_c");
  return Run(c, kWriteAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iwrite_at_c");
  return Run(c, kIwriteAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Status* status) {
  Call c("MPI_File_write_at_all_c");
  return Run(c, kWriteAt, fh, offset, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Request* request) {
  Call c("MPI_File_iwrite_at_all_c");
  return Run(c, kIwriteAt, fh, offset, buf, count, datatype, nullptr, request);
}

int MPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                                  MPI_Datatype datatype) {
  Call c("MPI_File_write_at_all_begin_c");
  return Run(c, kWriteAtBegin, fh, offset, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_write_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  Call c("MPI_File_write_all_end");
  return End(c, fh, status);
}

int MPI_File_write_at_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  Call c("MPI_File_write_at_all_end");
  return End(c, fh, status);
}

int MPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                         MPI_Status* status) {
  Call c("MPI_File_read_shared");
  return Run(c, kReadShared, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  Call c("MPI_File_read_ordered");
  return Run(c, kReadOrdered, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                          MPI_Request* request) {
  Call c("MPI_File_iread_shared");
  return Run(c, kIreadShared, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_ordered_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  Call c("MPI_File_read_ordered_begin");
  return Run(c, kReadOrderedBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_read_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Status* status) {
  Call c("MPI_File_read_shared_c");
  return Run(c, kReadShared, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_read_ordered_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  Call c("MPI_File_read_ordered_c");
  return Run(c, kReadOrdered, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iread_shared_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Request* request) {
  Call c("MPI_File_iread_shared_c");
  return Run(c, kIreadShared, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_read_ordered_begin_c(MPI_File fh, void* buf, MPI_Count count, MPI_Datatype datatype) {
  Call c("MPI_File_read_ordered_begin_c");
  return Run(c, kReadOrderedBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* status) {
  Call c("MPI_File_read_ordered_end");
  return End(c, fh, status);
}

int MPI_File_write_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                          MPI_Status* status) {
  Call c("MPI_File_write_shared");
  return Run(c, kWriteShared, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_write_ordered(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Status* status) {
  Call c("MPI_File_write_ordered");
  return Run(c, kWriteOrdered, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_shared(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                           MPI_Request* request) {
  Call c("MPI_File_iwrite_shared");
  return Run(c, kIwriteShared, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count, MPI_Datatype datatype) {
  Call c("MPI_File_write_ordered_begin");
  return Run(c, kWriteOrderedBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_write_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status* status) {
  Call c("MPI_File_write_shared_c");
  return Run(c, kWriteShared, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_write_ordered_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status* status) {
  Call c("MPI_File_write_ordered_c");
  return Run(c, kWriteOrdered, fh, 0, buf, count, datatype, status, nullptr);
}

int MPI_File_iwrite_shared_c(MPI_File fh, const void* buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request* request) {
  Call c("MPI_File_iwrite_shared_c");
  return Run(c, kIwriteShared, fh, 0, buf, count, datatype, nullptr, request);
}

int MPI_File_write_ordered_begin_c(MPI_File fh, const void* buf, MPI_Count count,
                                   MPI_Datatype datatype) {
  Call c("MPI_File_write_ordered_begin_c");
  return Run(c, kWriteOrderedBegin, fh, 0, buf, count, datatype, nullptr, nullptr);
}

int MPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* status) {
  Call c("MPI_File_write_ordered_end");
  return End(c, fh, status);
}

}  // extern "C"
