// MPI-IO: the file handle table, MPI_File_open / close / delete and the
// file error handlers. Opening is collective: rank 0 of the communicator
// creates the file when asked (so MPI_MODE_EXCL has one winner), the others
// open it after hearing rank 0's verdict, and one agreed error class ends
// the call on every member alike.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "api/file_internal.h"
#include "core/log.h"

namespace nicq::api {
namespace {

struct FileSlot {
  std::atomic<ApiFile*> f{nullptr};
};
using FileTable = dtype::SlotTable<FileSlot, 6, 1 << 12>;
FileTable& Files() {
  static auto* t = new FileTable(1);  // index 0 is MPI_FILE_NULL
  return *t;
}
std::atomic<int> g_null_errhandler{MPI_ERRORS_RETURN};

// The open files in the order they were opened (MPI_Finalize closes what
// is left in that order: the order every member's collective opens
// already agreed on, so the collective closes cannot wait on each other).
struct OpenFiles {
  std::mutex mu;
  std::uint64_t next = 0;
  std::map<std::uint64_t, ApiFile*> by_open;
};
OpenFiles& Open() {
  static auto* o = new OpenFiles;
  return *o;
}

std::string Str(long long v) {
  return std::to_string(v);
}

constexpr int kAccessBits = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY;
constexpr int kKnownBits = kAccessBits | MPI_MODE_CREATE | MPI_MODE_EXCL |
                           MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_SEQUENTIAL |
                           MPI_MODE_APPEND;

bool AmodeArg(Call& c, int amode) {
  const int access = amode & kAccessBits;
  if (!c.Check((amode & ~kKnownBits) == 0, io::kAmode, "amode " + Str(amode) + " has unknown bits"))
    return false;
  if (!c.Check(access == MPI_MODE_RDONLY || access == MPI_MODE_RDWR || access == MPI_MODE_WRONLY,
               io::kAmode,
               "amode " + Str(amode) +
                   " must hold exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY"))
    return false;
  if (!c.Check(access != MPI_MODE_RDONLY || (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)) == 0,
               io::kAmode, "amode: MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL"))
    return false;
  return c.Check(access != MPI_MODE_RDWR || (amode & MPI_MODE_SEQUENTIAL) == 0, io::kAmode,
                 "amode: MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL");
}

// A file this open created (rank 0) goes again when the open fails.
void RemoveIfCreated(const std::string& path, bool* created) {
  if (!*created) return;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    NICQ_LOG(kWarn, kApi, "MPI_File_open: cannot remove '%s', created by the failed open: %s",
             path.c_str(), std::strerror(errno));
  *created = false;
}

// Opens this member's descriptor; rank 0 alone creates (*created: it made
// the file). Returns the error class every member agreed on (0: all
// opened); on a failure no member keeps a descriptor and a file this open
// created is removed again.
int OpenCollective(Call& c, ApiFile* f, const std::string& path, int amode, bool* created) {
  io::OpenFlags flags;
  const int access = amode & kAccessBits;
  flags.read = access != MPI_MODE_WRONLY;
  flags.write = access != MPI_MODE_RDONLY;
  Status mine;
  int root_class = 0;
  if (f->rank == 0) {
    flags.create = (amode & MPI_MODE_CREATE) != 0;
    flags.exclusive = (amode & MPI_MODE_EXCL) != 0;
    mine = io::OpenPath(path, flags, &f->io.fd, created);
    root_class = static_cast<int>(mine.code());
  }
  if (PMPI_Bcast(&root_class, 1, MPI_INT, 0, f->comm) != MPI_SUCCESS) root_class = MPI_ERR_OTHER;
  if (f->rank != 0) {
    if (root_class != 0)
      mine = Error(static_cast<Code>(root_class),
                   "rank 0 of the communicator could not open '" + path + "'");
    else
      mine = io::OpenPath(path, flags, &f->io.fd);
  }
  const int agreed = AgreeOnClass(f->comm, mine.code());
  if (agreed != 0) {
    if (f->io.fd >= 0) ::close(f->io.fd);
    f->io.fd = -1;
    RemoveIfCreated(path, created);
    (void)c.Check(false, static_cast<Code>(agreed),
                  mine.ok() ? "another member of the communicator could not open '" + path + "'"
                            : mine.message());
  }
  return agreed;
}

// The open's steps after every member has its descriptor, each of which can
// fail on one member alone (the handle table, the shared pointer's
// window): agreed one at a time, so that all members go on or all undo.
// Returns the agreed class; on a failure c holds it and f is undone back
// to its descriptor (which the caller closes).
int FinishOpen(Call& c, ApiFile* f, const std::string& path) {
  Status st;
  if (RegisterFile(f) == 0) st = Error(Code::kNoMem, "file table is full");
  int agreed = AgreeOnClass(f->comm, st.code());
  if (agreed == 0) {
    st = OpenSharedPointer(f);
    agreed = AgreeOnClass(f->comm, st.code());
  }
  if (agreed == 0) return 0;
  // A member without the window cannot join a collective free: each
  // member drops its own, never used.
  DiscardNewWin(&f->shared_win);
  if (f->handle != 0) UnregisterFile(f);
  (void)c.Check(false, static_cast<Code>(agreed),
                st.ok()
                    ? "another member of the communicator could not finish opening '" + path + "'"
                    : st.message());
  return agreed;
}

}  // namespace

ApiFile* LookupFile(MPI_File handle) {
  if (KindOf(handle) != NICQ_KIND_FILE || IndexOf(handle) == 0) return nullptr;
  const FileSlot* s = Files().Get(IndexOf(handle));
  return s ? s->f.load(std::memory_order_acquire) : nullptr;
}

bool FileArg(Call& c, MPI_File handle, ApiFile** out) {
  *out = LookupFile(handle);
  return *out != nullptr ||
         c.Check(false, io::kFile,
                 handle == MPI_FILE_NULL ? std::string("file handle is MPI_FILE_NULL")
                                         : "closed or invalid file handle " + Str(handle));
}

int RegisterFile(ApiFile* f) {
  const int index = Files().Alloc();
  if (index < 0) return 0;
  f->handle = NICQ_HANDLE(NICQ_KIND_FILE, index);
  {
    std::lock_guard<std::mutex> lock(Open().mu);
    f->open_seq = Open().next++;
    Open().by_open.emplace(f->open_seq, f);
  }
  Files().Get(index)->f.store(f, std::memory_order_release);
  return f->handle;
}

void UnregisterFile(ApiFile* f) {
  const int index = IndexOf(f->handle);
  Files().Get(index)->f.store(nullptr, std::memory_order_release);
  Files().Free(index);
  std::lock_guard<std::mutex> lock(Open().mu);
  Open().by_open.erase(f->open_seq);
}

void CloseFilesLeftOpen() {
  std::vector<std::pair<MPI_File, std::string>> left;
  {
    std::lock_guard<std::mutex> lock(Open().mu);
    for (const auto& [seq, f] : Open().by_open) left.emplace_back(f->handle, f->io.path);
  }
  for (auto& [handle, path] : left) {
    NICQ_LOG(kWarn, kApi, "MPI_Finalize: file '%s' is still open: closing it", path.c_str());
    // Errors are returned here, not raised: the job is finalizing anyway.
    if (ApiFile* f = LookupFile(handle)) f->errhandler = MPI_ERRORS_RETURN;
    if (int rc = PMPI_File_close(&handle); rc != MPI_SUCCESS)
      NICQ_LOG(kWarn, kApi, "MPI_Finalize: closing '%s': %s", path.c_str(), MessageFor(rc).c_str());
  }
}

int NullFileErrhandler() {
  return g_null_errhandler.load(std::memory_order_relaxed);
}

int FileFail(Call& c, ApiFile* f) {
  if (c.error_class() == Code::kOk) return MPI_SUCCESS;
  return InvokeFileErrhandler(f ? f->handle : MPI_FILE_NULL,
                              f ? f->errhandler : NullFileErrhandler(),
                              RecordError(c.error_class(), c.error_message()));
}

int FileFail(Call& c, ApiFile* f, const Status& st) {
  if (st.ok()) return MPI_SUCCESS;
  (void)c.Check(false, st.code(), st.message());
  return FileFail(c, f);
}

int AgreeOnClass(MPI_Comm comm, Code mine) {
  int cls = static_cast<int>(mine), agreed = 0;
  if (PMPI_Allreduce(&cls, &agreed, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return MPI_ERR_OTHER;
  return agreed;
}

bool AgreeArgs(Call& c, ApiFile* f, bool mine_ok) {
  const int agreed = AgreeOnClass(f->comm, mine_ok ? Code::kOk : c.error_class());
  if (agreed == 0) return true;
  if (mine_ok)
    (void)c.Check(false, static_cast<Code>(agreed),
                  "another member of the file's communicator refused its arguments");
  return false;
}

}  // namespace nicq::api

using namespace nicq;
using api::ApiFile;
using api::Call;

extern "C" {

int MPI_File_open(MPI_Comm comm, const char* filename, int amode, MPI_Info info, MPI_File* fh) {
  Call c("MPI_File_open");
  Comm* cm = nullptr;
  api::Hints hints;
  int inter = 0;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(filename, "filename") ||
      !c.NotNull(fh, "fh") || !api::InfoPairs(c, info, &hints) || !api::AmodeArg(c, amode))
    return api::FileFail(c, nullptr);
  PMPI_Comm_test_inter(comm, &inter);
  if (!c.Check(!inter, Code::kComm, "comm is an intercommunicator"))
    return api::FileFail(c, nullptr);
  auto* f = new ApiFile;
  if (PMPI_Comm_dup(comm, &f->comm) != MPI_SUCCESS) {
    delete f;
    (void)c.Check(false, Code::kOther, "cannot duplicate comm");
    return api::FileFail(c, nullptr);
  }
  PMPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
  PMPI_Comm_rank(f->comm, &f->rank);
  const std::string path = io::LocalPath(filename);
  bool created = false;
  if (api::OpenCollective(c, f, path, amode, &created) != 0) {
    PMPI_Comm_free(&f->comm);
    delete f;
    return api::FileFail(c, nullptr);
  }
  f->io.path = path;
  f->io.amode = amode;
  f->io.readable = (amode & MPI_MODE_WRONLY) == 0;
  f->io.writable = (amode & MPI_MODE_RDONLY) == 0;
  f->delete_on_close = (amode & MPI_MODE_DELETE_ON_CLOSE) != 0;
  f->errhandler = api::NullFileErrhandler();
  f->hints = std::move(hints);
  io::SetView(&f->io, 0, dtype::Lookup(MPI_BYTE), dtype::Lookup(MPI_BYTE), "native");
  if (api::FinishOpen(c, f, path) != 0) {
    (void)io::Close(&f->io);
    api::RemoveIfCreated(path, &created);
    PMPI_Comm_free(&f->comm);
    delete f;
    return api::FileFail(c, nullptr);
  }
  if (amode & MPI_MODE_APPEND) {
    std::int64_t size = 0;
    if (io::Size(f->io, &size).ok()) f->io.position = size;
    if (f->rank == 0) (void)api::SetSharedPointer(f, f->io.position);
    PMPI_Barrier(f->comm);
  }
  *fh = f->handle;
  return MPI_SUCCESS;
}

int MPI_File_close(MPI_File* fh) {
  Call c("MPI_File_close");
  ApiFile* f = nullptr;
  if (!c.Init() || !c.NotNull(fh, "fh") || !api::FileArg(c, *fh, &f))
    return api::FileFail(c, nullptr);
  Status st = io::Close(&f->io);
  // Every member has closed before the file goes (MPI_MODE_DELETE_ON_CLOSE),
  // and it is gone on every member's return.
  PMPI_Barrier(f->comm);
  if (f->delete_on_close) {
    int deleted = 0;
    if (f->rank == 0) deleted = ::unlink(f->io.path.c_str()) == 0 || errno == ENOENT ? 0 : errno;
    PMPI_Bcast(&deleted, 1, MPI_INT, 0, f->comm);
    if (deleted != 0 && st.ok()) st = io::ErrnoStatus(deleted, "cannot delete", f->io.path);
  }
  api::UnregisterFile(f);
  api::CloseSharedPointer(f);
  PMPI_Comm_free(&f->comm);
  const int errhandler = f->errhandler;
  const int handle = f->handle;
  delete f;
  *fh = MPI_FILE_NULL;
  if (st.ok()) return MPI_SUCCESS;
  (void)c.Check(false, st.code(), st.message());
  return api::InvokeFileErrhandler(handle, errhandler,
                                   api::RecordError(c.error_class(), c.error_message()));
}

int MPI_File_delete(const char* filename, MPI_Info info) {
  Call c("MPI_File_delete");
  api::Hints hints;
  if (!c.Init() || !c.NotNull(filename, "filename") || !api::InfoPairs(c, info, &hints))
    return api::FileFail(c, nullptr);
  const std::string path = io::LocalPath(filename);
  if (::unlink(path.c_str()) != 0)
    return api::FileFail(c, nullptr, io::ErrnoStatus(errno, "cannot delete", path));
  return MPI_SUCCESS;
}

int MPI_File_create_errhandler(MPI_File_errhandler_function* fn, MPI_Errhandler* errhandler) {
  Call c("MPI_File_create_errhandler");
  if (!c.NotNull(reinterpret_cast<const void*>(fn), "file_errhandler_fn") ||
      !c.NotNull(errhandler, "errhandler"))
    return c.Fail();
  return api::NewFileErrhandler(c, fn, errhandler);
}

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  Call c("MPI_File_set_errhandler");
  ApiFile* f = nullptr;
  if (!c.Init() || (file != MPI_FILE_NULL && !api::FileArg(c, file, &f)))
    return api::FileFail(c, f);
  if (!c.Check(api::IsFileErrhandler(errhandler), Code::kArg,
               "errhandler " + std::to_string(errhandler) + " is not a file error handler"))
    return api::FileFail(c, f);
  if (f)
    f->errhandler = errhandler;
  else
    api::g_null_errhandler.store(errhandler, std::memory_order_relaxed);
  return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  Call c("MPI_File_get_errhandler");
  ApiFile* f = nullptr;
  if (!c.Init() || (file != MPI_FILE_NULL && !api::FileArg(c, file, &f)) ||
      !c.NotNull(errhandler, "errhandler"))
    return api::FileFail(c, f);
  *errhandler = f ? f->errhandler : api::NullFileErrhandler();
  return MPI_SUCCESS;
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode) {
  Call c("MPI_File_call_errhandler");
  ApiFile* f = nullptr;
  if (!c.Init() || (fh != MPI_FILE_NULL && !api::FileArg(c, fh, &f))) return api::FileFail(c, f);
  api::InvokeFileErrhandler(fh, f ? f->errhandler : api::NullFileErrhandler(), errorcode);
  return MPI_SUCCESS;
}

}  // extern "C"
