// MPI-IO reads and writes: one path for every form. The data moves at the
// call: the collective forms need no exchange (each member's view says
// where its data goes), the nonblocking ones return a completed request
// whose status holds the byte count, and _begin keeps the count for _end.
#include <string>

#include "api/file_access.h"

namespace nicq::api {
namespace {

void FileStatus(MPI_Status* status, std::int64_t bytes) {
  RequestStatus rs;
  rs.source = MPI_ANY_SOURCE;
  rs.tag = MPI_ANY_TAG;
  rs.bytes = static_cast<std::size_t>(bytes);
  api::FillStatus(status, rs);
}

// RunFileAccess's argument checks, recorded on c; *t is the memory type.
bool AccessArgs(Call& c, const FileAccess& a, const ApiFile* f, MPI_Offset offset, const void* buf,
                std::int64_t count, MPI_Datatype datatype, const MPI_Request* request,
                dtype::Type** t) {
  if (!c.CountArg(count) || !c.TypeArg(datatype, t) || !c.BufferArg(buf, count, *t)) return false;
  const std::int64_t etype_size = f->io.etype->size;
  const bool shared = a.where == Where::kShared || a.where == Where::kOrdered;
  return c.Check(a.where != Where::kExplicit || offset >= 0, Code::kArg,
                 "negative offset " + std::to_string(offset)) &&
         c.Check(shared || (f->io.amode & MPI_MODE_SEQUENTIAL) == 0, Code::kUnsupportedOperation,
                 "the file was opened MPI_MODE_SEQUENTIAL (only the shared file pointer may be "
                 "used)") &&
         c.Check(!a.write || f->io.writable, io::kReadOnly,
                 "the file was opened MPI_MODE_RDONLY") &&
         c.Check(a.write || f->io.readable, io::kAccess, "the file was opened MPI_MODE_WRONLY") &&
         c.Check((count * (*t)->size) % etype_size == 0, Code::kType,
                 "count " + std::to_string(count) + " of " + dtype::TypeName(datatype) +
                     " is not a whole number of the view's etypes") &&
         c.Check(
             !f->io.external32 || io::FitsExternalScale(**t, f->io.ext_bytes, f->io.native_bytes),
             io::kUnsupportedDatarep,
             std::string("datarep \"external32\": ") + dtype::TypeName(datatype) +
                 "'s elements are not as much narrower there than in memory as the view's "
                 "(each access's elements must scale as the view's do)") &&
         c.Check(a.form != Form::kNonblocking || request != nullptr, Code::kArg,
                 "request is NULL") &&
         c.Check(a.form != Form::kBegin || !f->split_active, Code::kOther,
                 "a split collective is already active on this file");
}

}  // namespace

int RunFileAccess(Call& c, const FileAccess& a, MPI_File fh, MPI_Offset offset, const void* buf,
                  std::int64_t count, MPI_Datatype datatype, MPI_Status* status,
                  MPI_Request* request) {
  ApiFile* f = nullptr;
  dtype::Type* t = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f)) return api::FileFail(c, f);
  const bool ok = AccessArgs(c, a, f, offset, buf, count, datatype, request, &t);
  // The ordered forms are collective (a scan of the members' counts): every
  // member's verdict on its arguments is agreed before it.
  if (a.where == Where::kOrdered ? !api::AgreeArgs(c, f, ok) : !ok) return api::FileFail(c, f);
  const std::int64_t etype_size = f->io.etype->size;
  const bool shared = a.where == Where::kShared || a.where == Where::kOrdered;
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

int EndFileAccess(Call& c, MPI_File fh, MPI_Status* status) {
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) ||
      !c.Check(f->split_active, Code::kOther, "no split collective was begun on this file"))
    return api::FileFail(c, f);
  f->split_active = false;
  FileStatus(status, f->split_bytes);
  return MPI_SUCCESS;
}

}  // namespace nicq::api
