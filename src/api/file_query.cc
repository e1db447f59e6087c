// MPI-IO: size, info, atomicity, views and the individual file pointer.
#include <cstring>
#include <string>

#include "api/file_internal.h"

using namespace nicq;
using api::ApiFile;
using api::Call;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

bool IsSequential(const ApiFile* f) {
  return (f->io.amode & MPI_MODE_SEQUENTIAL) != 0;
}

// set_size and preallocate: rank 0 changes the file, every member learns
// its verdict.
int ResizeCollective(Call& c, ApiFile* f, MPI_Offset size, bool preallocate) {
  if (!c.Check(size >= 0, Code::kArg, "negative size " + Str(size)) ||
      !c.Check(f->io.writable, io::kReadOnly, "the file was opened MPI_MODE_RDONLY") ||
      !c.Check(!IsSequential(f), Code::kUnsupportedOperation,
               "the file was opened MPI_MODE_SEQUENTIAL"))
    return api::FileFail(c, f);
  Status mine;
  if (f->rank == 0) mine = preallocate ? io::Preallocate(f->io, size) : io::Truncate(f->io, size);
  int cls = static_cast<int>(mine.code());
  if (PMPI_Bcast(&cls, 1, MPI_INT, 0, f->comm) != MPI_SUCCESS) cls = MPI_ERR_OTHER;
  if (cls == 0) return MPI_SUCCESS;
  if (mine.ok()) mine = Error(static_cast<Code>(cls), "rank 0 could not resize the file");
  return api::FileFail(c, f, mine);
}

// The position in etypes of the first view datum at or after the file's end.
bool EndPosition(Call& c, ApiFile* f, std::int64_t* out) {
  std::int64_t size = 0;
  if (Status st = io::Size(f->io, &size); !st.ok()) return c.Check(false, st.code(), st.message());
  const std::int64_t data = io::DataBytesBefore(f->io, size);
  *out = (data + f->io.etype->size - 1) / f->io.etype->size;
  return true;
}

// The extent of datatype in the file: "native" and "internal" keep the
// memory layout.
int TypeExtent(Call& c, MPI_File fh, MPI_Datatype datatype, const void* out, std::int64_t* e) {
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(out, "extent"))
    return api::FileFail(c, f);
  const dtype::Type* t = datatype == MPI_DATATYPE_NULL ? nullptr : dtype::Lookup(datatype);
  if (!c.Check(t != nullptr, Code::kType, "invalid datatype " + Str(datatype)))
    return api::FileFail(c, f);
  *e = f->io.external32 && t->predefined ? dtype::ExternalSize(*t) : t->extent;
  return MPI_SUCCESS;
}

}  // namespace

// "external32" maps the view onto the file when etype and filetype keep
// their layout there, or are both made of elements narrower by one ratio.
static bool ExternalViewFits(const dtype::Type& et, const dtype::Type& ft) {
  int ext = 1, native = 1;
  if (!io::SameExternalLayout(et) && !dtype::ExternalScale(et, &ext, &native)) return false;
  return io::FitsExternalScale(et, ext, native) && io::FitsExternalScale(ft, ext, native);
}

// MPI_File_set_view's argument checks, recorded on c.
static bool ViewArgs(Call& c, ApiFile* f, MPI_Offset disp, MPI_Datatype etype,
                     MPI_Datatype filetype, const char* datarep, MPI_Info info, dtype::Type** et,
                     dtype::Type** ft) {
  api::Hints hints;
  if (!c.TypeArg(etype, et, "etype") || !c.TypeArg(filetype, ft, "filetype") ||
      !c.NotNull(datarep, "datarep") || !api::InfoPairs(c, info, &hints))
    return false;
  const std::string rep = datarep;
  if (!c.Check(disp >= 0 || (disp == MPI_DISPLACEMENT_CURRENT && IsSequential(f)), Code::kArg,
               "invalid disp " + Str(disp)) ||
      !c.Check((*et)->size > 0, Code::kType, "etype has no data") ||
      !c.Check((*ft)->size > 0 && (*ft)->size % (*et)->size == 0, Code::kType,
               "filetype's size " + Str((*ft)->size) + " is not a positive multiple of etype's " +
                   Str((*et)->size)) ||
      !c.Check(rep == "native" || rep == "internal" || rep == "external32", io::kUnsupportedDatarep,
               "datarep \"" + rep +
                   "\" is not supported (\"native\", \"internal\" and \"external32\" are)") ||
      !c.Check(rep != "external32" || ExternalViewFits(**et, **ft), io::kUnsupportedDatarep,
               "datarep \"external32\" with an etype or filetype whose elements are narrower "
               "there than in memory (MPI_LONG, MPI_WCHAR, ...) is supported only when all "
               "their elements are of one such type"))
    return false;
  std::int64_t prev = 0;
  for (const dtype::Block& b : (*ft)->blocks) {
    if (!c.Check(b.offset >= prev, Code::kType,
                 "filetype's displacements are negative or decreasing"))
      return false;
    prev = b.offset + b.length;
  }
  return c.Check((*ft)->IsContiguous() || (*ft)->extent >= prev, Code::kType,
                 "filetype's data overlaps the next tile (extent " + Str((*ft)->extent) + ")");
}

extern "C" {

int MPI_File_set_size(MPI_File fh, MPI_Offset size) {
  Call c("MPI_File_set_size");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f)) return api::FileFail(c, f);
  return ResizeCollective(c, f, size, false);
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size) {
  Call c("MPI_File_preallocate");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f)) return api::FileFail(c, f);
  return ResizeCollective(c, f, size, true);
}

int MPI_File_get_size(MPI_File fh, MPI_Offset* size) {
  Call c("MPI_File_get_size");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(size, "size")) return api::FileFail(c, f);
  std::int64_t bytes = 0;
  if (Status st = io::Size(f->io, &bytes); !st.ok()) return api::FileFail(c, f, st);
  *size = bytes;
  return MPI_SUCCESS;
}

int MPI_File_get_amode(MPI_File fh, int* amode) {
  Call c("MPI_File_get_amode");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(amode, "amode"))
    return api::FileFail(c, f);
  *amode = f->io.amode;
  return MPI_SUCCESS;
}

int MPI_File_get_group(MPI_File fh, MPI_Group* group) {
  Call c("MPI_File_get_group");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(group, "group"))
    return api::FileFail(c, f);
  return PMPI_Comm_group(f->comm, group);
}

int MPI_File_set_info(MPI_File fh, MPI_Info info) {
  Call c("MPI_File_set_info");
  ApiFile* f = nullptr;
  api::Hints hints;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !api::InfoPairs(c, info, &hints))
    return api::FileFail(c, f);
  for (auto& kv : hints) {
    bool replaced = false;
    for (auto& old : f->hints)
      if (old.first == kv.first) old.second = kv.second, replaced = true;
    if (!replaced) f->hints.push_back(kv);
  }
  return MPI_SUCCESS;
}

int MPI_File_get_info(MPI_File fh, MPI_Info* info_used) {
  Call c("MPI_File_get_info");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(info_used, "info_used"))
    return api::FileFail(c, f);
  return api::NewInfoFrom(c, f->hints, info_used);
}

int MPI_File_set_atomicity(MPI_File fh, int flag) {
  Call c("MPI_File_set_atomicity");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f)) return api::FileFail(c, f);
  f->io.atomic = flag != 0;
  return MPI_SUCCESS;
}

int MPI_File_get_atomicity(MPI_File fh, int* flag) {
  Call c("MPI_File_get_atomicity");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(flag, "flag")) return api::FileFail(c, f);
  *flag = f->io.atomic ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_File_sync(MPI_File fh) {
  Call c("MPI_File_sync");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f)) return api::FileFail(c, f);
  Status st = f->io.writable ? io::Sync(f->io) : Status::Ok();
  PMPI_Barrier(f->comm);
  return api::FileFail(c, f, st);
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char* datarep, MPI_Info info) {
  Call c("MPI_File_set_view");
  ApiFile* f = nullptr;
  dtype::Type *et = nullptr, *ft = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f)) return api::FileFail(c, f);
  // Collective: every member's verdict on its own arguments is agreed first.
  bool ok = ViewArgs(c, f, disp, etype, filetype, datarep, info, &et, &ft);
  if (ok && disp == MPI_DISPLACEMENT_CURRENT) {
    // A sequential file's view starts where the shared pointer is, in bytes
    // of the file under the current view. Read before the agreement below,
    // which rank 0 must pass before it resets the pointer.
    std::int64_t position = 0;
    const Status st = api::SharedFetchAdd(f, 0, &position);
    ok = c.Check(st.ok(), st.code(), st.message());
    disp = io::FileByteOf(f->io, position * f->io.etype->size);
  }
  if (!api::AgreeArgs(c, f, ok)) return api::FileFail(c, f);
  io::SetView(&f->io, disp, et, ft, datarep);
  // The shared pointer restarts at 0 for every member; the verdict on
  // moving it is everyone's.
  Status st = f->rank == 0 ? api::SetSharedPointer(f, 0) : Status::Ok();
  const int agreed = api::AgreeOnClass(f->comm, st.code());
  if (agreed != 0 && st.ok())
    st = Error(static_cast<Code>(agreed), "rank 0 could not reset the shared file pointer");
  return api::FileFail(c, f, st);
}

int MPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype, MPI_Datatype* filetype,
                      char* datarep) {
  Call c("MPI_File_get_view");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(disp, "disp") ||
      !c.NotNull(etype, "etype") || !c.NotNull(filetype, "filetype") ||
      !c.NotNull(datarep, "datarep"))
    return api::FileFail(c, f);
  // Derived types come back as new handles the caller frees (MPI-4.1 14.3).
  MPI_Datatype e = f->io.etype->handle, t = f->io.filetype->handle;
  if (!f->io.etype->predefined) PMPI_Type_dup(e, &e);
  if (!f->io.filetype->predefined) PMPI_Type_dup(t, &t);
  *disp = f->io.disp;
  *etype = e;
  *filetype = t;
  std::strncpy(datarep, f->io.datarep.c_str(), MPI_MAX_DATAREP_STRING - 1);
  datarep[MPI_MAX_DATAREP_STRING - 1] = '\0';
  return MPI_SUCCESS;
}

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  Call c("MPI_File_seek");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) ||
      !c.Check(!IsSequential(f), Code::kUnsupportedOperation,
               "the file was opened MPI_MODE_SEQUENTIAL") ||
      !c.Check(whence == MPI_SEEK_SET || whence == MPI_SEEK_CUR || whence == MPI_SEEK_END,
               Code::kArg, "invalid whence " + Str(whence)))
    return api::FileFail(c, f);
  std::int64_t base = 0;
  if (whence == MPI_SEEK_CUR) base = f->io.position;
  if (whence == MPI_SEEK_END && !EndPosition(c, f, &base)) return api::FileFail(c, f);
  if (!c.Check(base + offset >= 0, Code::kArg,
               "offset " + Str(offset) + " gives the negative position " + Str(base + offset)))
    return api::FileFail(c, f);
  f->io.position = base + offset;
  return MPI_SUCCESS;
}

int MPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  Call c("MPI_File_get_position");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(offset, "offset"))
    return api::FileFail(c, f);
  *offset = f->io.position;
  return MPI_SUCCESS;
}

int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  Call c("MPI_File_get_byte_offset");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(disp, "disp") ||
      !c.Check(offset >= 0, Code::kArg, "negative offset " + Str(offset)))
    return api::FileFail(c, f);
  *disp = io::FileByteOf(f->io, offset * f->io.etype->size);
  return MPI_SUCCESS;
}

int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  Call c("MPI_File_get_type_extent");
  std::int64_t e = 0;
  const int rc = TypeExtent(c, fh, datatype, extent, &e);
  if (rc == MPI_SUCCESS) *extent = e;
  return rc;
}

int MPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count* extent) {
  Call c("MPI_File_get_type_extent_c");
  std::int64_t e = 0;
  const int rc = TypeExtent(c, fh, datatype, extent, &e);
  if (rc == MPI_SUCCESS) *extent = e;
  return rc;
}

}  // extern "C"
