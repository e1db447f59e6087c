// MPI-IO's shared file pointer: one 64-bit counter of etypes in a window
// that rank 0 of the file's communicator exposes (made at open). Each
// shared access takes its place with MPI_Fetch_and_op under a shared
// passive-target lock, so independent accesses never wait on one another
// beyond the atomic; the ordered (collective) forms add up the members'
// counts with MPI_Exscan and move the pointer once, from rank 0.
#include <string>

#include "api/file_internal.h"

namespace nicq::api {
namespace {

Status WindowStatus(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return Status::Ok();
  return Error(Code::kOther,
               std::string("the shared file pointer's window: ") + what + ": " + MessageFor(rc));
}

Status Atomic(ApiFile* f, long long operand, long long* old, MPI_Op op) {
  if (Status st = WindowStatus(PMPI_Win_lock(MPI_LOCK_SHARED, 0, 0, f->shared_win), "MPI_Win_lock");
      !st.ok())
    return st;
  Status st = WindowStatus(PMPI_Fetch_and_op(&operand, old, MPI_LONG_LONG, 0, 0, op, f->shared_win),
                           "MPI_Fetch_and_op");
  Status unlocked = WindowStatus(PMPI_Win_unlock(0, f->shared_win), "MPI_Win_unlock");
  return st.ok() ? unlocked : st;
}

}  // namespace

Status OpenSharedPointer(ApiFile* f) {
  void* base = nullptr;
  const int rc = PMPI_Win_allocate(f->rank == 0 ? sizeof(long long) : 0, sizeof(long long),
                                   MPI_INFO_NULL, f->comm, &base, &f->shared_win);
  if (rc == MPI_SUCCESS) return Status::Ok();
  f->shared_win = MPI_WIN_NULL;
  // The window's own class (MPI_ERR_NO_MEM, ...): the open fails with it.
  int cls = MPI_ERR_OTHER;
  PMPI_Error_class(rc, &cls);
  return Error(static_cast<Code>(cls),
               "the shared file pointer's window: MPI_Win_allocate: " + MessageFor(rc));
}

void CloseSharedPointer(ApiFile* f) {
  if (f->shared_win != MPI_WIN_NULL) PMPI_Win_free(&f->shared_win);
}

Status SharedFetchAdd(ApiFile* f, std::int64_t add, std::int64_t* old) {
  long long got = 0;
  Status st = Atomic(f, add, &got, add == 0 ? MPI_NO_OP : MPI_SUM);
  *old = got;
  return st;
}

Status SetSharedPointer(ApiFile* f, std::int64_t value) {
  long long old = 0;
  return Atomic(f, value, &old, MPI_REPLACE);
}

Status SharedOrdered(ApiFile* f, std::int64_t mine, std::int64_t* at) {
  long long count = mine, before = 0, total = 0, base = 0;
  Status st =
      WindowStatus(PMPI_Exscan(&count, &before, 1, MPI_LONG_LONG, MPI_SUM, f->comm), "MPI_Exscan");
  if (f->rank == 0) before = 0;  // MPI_Exscan leaves rank 0's result undefined
  if (st.ok())
    st = WindowStatus(PMPI_Allreduce(&count, &total, 1, MPI_LONG_LONG, MPI_SUM, f->comm),
                      "MPI_Allreduce");
  int cls = 0;
  if (st.ok() && f->rank == 0) {
    std::int64_t old = 0;
    Status moved = SharedFetchAdd(f, total, &old);
    base = old;
    cls = static_cast<int>(moved.code());
  }
  long long shared[2] = {base, cls};
  if (st.ok()) st = WindowStatus(PMPI_Bcast(shared, 2, MPI_LONG_LONG, 0, f->comm), "MPI_Bcast");
  if (st.ok() && shared[1] != 0)
    st = Error(static_cast<Code>(shared[1]), "rank 0 could not move the shared file pointer");
  *at = shared[0] + before;
  return st;
}

}  // namespace nicq::api

using namespace nicq;
using api::ApiFile;
using api::Call;

extern "C" {

int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  Call c("MPI_File_seek_shared");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f)) return api::FileFail(c, f);
  // Collective: the members agree on their arguments, then rank 0 moves the
  // pointer and every member returns its verdict.
  const bool ok =
      c.Check(whence == MPI_SEEK_SET || whence == MPI_SEEK_CUR || whence == MPI_SEEK_END,
              Code::kArg, "invalid whence " + std::to_string(whence));
  if (!api::AgreeArgs(c, f, ok)) return api::FileFail(c, f);
  Status mine;
  if (f->rank == 0) {
    std::int64_t base = 0;
    if (whence == MPI_SEEK_CUR) mine = api::SharedFetchAdd(f, 0, &base);
    if (whence == MPI_SEEK_END) {
      std::int64_t size = 0;
      mine = io::Size(f->io, &size);
      const std::int64_t data = io::DataBytesBefore(f->io, size);
      base = (data + f->io.etype->size - 1) / f->io.etype->size;
    }
    if (mine.ok() && base + offset < 0)
      mine = Error(Code::kArg, "offset " + std::to_string(offset) +
                                   " gives the negative position " + std::to_string(base + offset));
    if (mine.ok()) mine = api::SetSharedPointer(f, base + offset);
  }
  int cls = static_cast<int>(mine.code());
  if (PMPI_Bcast(&cls, 1, MPI_INT, 0, f->comm) != MPI_SUCCESS) cls = MPI_ERR_OTHER;
  if (cls == 0) return MPI_SUCCESS;
  if (mine.ok())
    mine = Error(static_cast<Code>(cls), "rank 0 could not move the shared file pointer");
  return api::FileFail(c, f, mine);
}

int MPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  Call c("MPI_File_get_position_shared");
  ApiFile* f = nullptr;
  if (!c.Init() || !api::FileArg(c, fh, &f) || !c.NotNull(offset, "offset"))
    return api::FileFail(c, f);
  std::int64_t at = 0;
  if (Status st = api::SharedFetchAdd(f, 0, &at); !st.ok()) return api::FileFail(c, f, st);
  *offset = at;
  return MPI_SUCCESS;
}

}  // extern "C"
