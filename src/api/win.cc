// Window objects: creation (the four flavors and their _c forms), freeing,
// dynamic regions, shared-memory queries, group, info, name and error
// handlers. Communication and synchronization are in win_ops.cc and
// win_sync.cc, attributes in win_attr.cc.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api/api_more.h"
#include "api/win_internal.h"

using namespace nicq;
using api::Call;

namespace {

api::WinTable& Table() {
  return api::Wins();
}

// The window's handle, or MPI_WIN_NULL when the table is full.
int Register(rma::Window* w) {
  const int index = Table().Alloc();
  if (index < 0) return MPI_WIN_NULL;
  Table().Get(index)->w.store(w, std::memory_order_release);
  w->handle = NICQ_HANDLE(NICQ_KIND_WIN, index);
  return w->handle;
}

std::string Str(long long v) {
  return std::to_string(v);
}

// Collective creation shared by every flavor and form.
int CreateWin(Call& c, rma::Flavor flavor, void* base, MPI_Aint size, MPI_Aint disp_unit,
              MPI_Info info, MPI_Comm comm, MPI_Win* win, void* baseptr) {
  Comm* cm = nullptr;
  api::Hints hints;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(win, "win") ||
      !c.Check(!cm->inter, Code::kComm, "comm must be an intracommunicator") ||
      !c.Check(size >= 0, Code::kSize, "negative window size " + Str(size)) ||
      !c.Check(disp_unit > 0, Code::kDisp, "disp_unit must be positive, not " + Str(disp_unit)) ||
      !c.Check(baseptr != nullptr ||
                   (flavor != rma::Flavor::kAllocate && flavor != rma::Flavor::kShared),
               Code::kArg, "baseptr is NULL") ||
      !api::InfoPairs(c, info, &hints))
    return c.Fail();
  bool noncontig = false;
  std::int64_t granularity = 0;
  for (auto& [k, v] : hints) {
    if (k == "alloc_shared_noncontig") noncontig = v == "true";
    // A hint: a value that is not a number is ignored.
    if (k == "mpi_accumulate_granularity") granularity = std::strtoll(v.c_str(), nullptr, 10);
  }
  rma::Window* w = nullptr;
  Status st = rma::Create(cm, flavor, base, size, disp_unit, noncontig, &w);
  if (!st.ok()) return c.Fail(st);
  rma::SetAccumulateGranularity(w, granularity);
  w->errhandler = MPI_ERRORS_ARE_FATAL;
  w->comm_handle = comm;
  w->hints = std::move(hints);
  *win = Register(w);
  if (*win == MPI_WIN_NULL) {
    // A million live windows: the members' tables fill alike, so they all free it.
    (void)rma::Free(w);
    return c.Fail(Code::kNoMem, "window table is full");
  }
  if (baseptr) *static_cast<void**>(baseptr) = w->base;
  return MPI_SUCCESS;
}

}  // namespace

namespace nicq::api {

bool WinArgFailed(Call& c, MPI_Win handle) {
  return c.Check(false, Code::kWin,
                 handle == MPI_WIN_NULL ? std::string("window is MPI_WIN_NULL")
                                        : "freed or invalid window " + Str(handle));
}

void DiscardNewWin(MPI_Win* win) {
  rma::Window* w = LookupWin(*win);
  if (!w) return;
  const int index = IndexOf(*win);
  Table().Get(index)->w.store(nullptr, std::memory_order_release);
  Table().Free(index);
  rma::Discard(w);
  *win = MPI_WIN_NULL;
}

int WinFail(Call& c, rma::Window* w) {
  if (c.error_class() == Code::kOk) return MPI_SUCCESS;
  if (!w) return c.Fail();
  return InvokeWinErrhandler(w->handle, w->errhandler,
                             RecordError(c.error_class(), c.error_message()));
}

int WinFail(Call& c, rma::Window* w, const Status& st) {
  if (st.ok()) return MPI_SUCCESS;
  // rma:: names the call too ("MPI_Win_unlock: ..."); the Call prefix says it once.
  std::string msg = st.message();
  const std::string prefix = std::string(c.name()) + ": ";
  if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
  (void)c.Check(false, st.code(), msg);
  return WinFail(c, w);
}

}  // namespace nicq::api

extern "C" {

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                   MPI_Win* win) {
  Call c("MPI_Win_create");
  return CreateWin(c, rma::Flavor::kCreate, base, size, disp_unit, info, comm, win, nullptr);
}

int MPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     MPI_Win* win) {
  Call c("MPI_Win_create_c");
  return CreateWin(c, rma::Flavor::kCreate, base, size, disp_unit, info, comm, win, nullptr);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  Call c("MPI_Win_allocate");
  return CreateWin(c, rma::Flavor::kAllocate, nullptr, size, disp_unit, info, comm, win, baseptr);
}

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void* baseptr, MPI_Win* win) {
  Call c("MPI_Win_allocate_c");
  return CreateWin(c, rma::Flavor::kAllocate, nullptr, size, disp_unit, info, comm, win, baseptr);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void* baseptr, MPI_Win* win) {
  Call c("MPI_Win_allocate_shared");
  return CreateWin(c, rma::Flavor::kShared, nullptr, size, disp_unit, info, comm, win, baseptr);
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                              void* baseptr, MPI_Win* win) {
  Call c("MPI_Win_allocate_shared_c");
  return CreateWin(c, rma::Flavor::kShared, nullptr, size, disp_unit, info, comm, win, baseptr);
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  Call c("MPI_Win_create_dynamic");
  return CreateWin(c, rma::Flavor::kDynamic, nullptr, 0, 1, info, comm, win, nullptr);
}

int MPI_Win_free(MPI_Win* win) {
  Call c("MPI_Win_free");
  rma::Window* w = nullptr;
  if (!c.Init() || !c.NotNull(win, "win") || !api::WinArg(c, *win, &w)) return c.Fail();
  if (Status st = rma::CheckFreeable(w); !st.ok()) return api::WinFail(c, w, st);
  if (int rc = api::DeleteWinAttrs(c, w); rc != MPI_SUCCESS) return rc;
  Status st = rma::Free(w);
  if (!st.ok()) return api::WinFail(c, w, st);
  // rma::Free destroyed the window; the table still maps the handle to it.
  const int index = api::IndexOf(*win);
  Table().Get(index)->w.store(nullptr, std::memory_order_release);
  Table().Free(index);
  *win = MPI_WIN_NULL;
  return MPI_SUCCESS;
}

int MPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  Call c("MPI_Win_attach");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) ||
      !c.Check(size >= 0, Code::kSize, "negative size " + Str(size)) ||
      !c.Check(base != nullptr || size == 0, Code::kArg, "base is NULL"))
    return api::WinFail(c, w);
  return api::WinFail(c, w, rma::Attach(w, base, size));
}

int MPI_Win_detach(MPI_Win win, const void* base) {
  Call c("MPI_Win_detach");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w)) return api::WinFail(c, w);
  return api::WinFail(c, w, rma::Detach(w, base));
}

int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit,
                           void* baseptr) {
  Call c("MPI_Win_shared_query_c");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) || !c.NotNull(size, "size") ||
      !c.NotNull(disp_unit, "disp_unit") || !c.NotNull(baseptr, "baseptr"))
    return api::WinFail(c, w);
  std::int64_t s = 0, u = 0;
  void* b = nullptr;
  Status st = rma::SharedQuery(w, rank, &s, &u, &b);
  if (!st.ok()) return api::WinFail(c, w, st);
  *size = s;
  *disp_unit = u;
  *static_cast<void**>(baseptr) = b;
  return MPI_SUCCESS;
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  MPI_Aint u = 0;
  int rc = PMPI_Win_shared_query_c(win, rank, size, &u, baseptr);
  if (rc == MPI_SUCCESS && disp_unit) *disp_unit = int(u);
  return rc;
}

int MPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  Call c("MPI_Win_get_group");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) || !c.NotNull(group, "group"))
    return api::WinFail(c, w);
  return api::NewGroup(c, w->comm->world_ranks, group);
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info) {
  Call c("MPI_Win_set_info");
  rma::Window* w = nullptr;
  api::Hints hints;
  if (!c.Init() || !api::WinArg(c, win, &w) || !api::InfoPairs(c, info, &hints))
    return api::WinFail(c, w);
  for (auto& kv : hints) {
    auto it = std::find_if(w->hints.begin(), w->hints.end(),
                           [&](const auto& h) { return h.first == kv.first; });
    if (it != w->hints.end())
      it->second = kv.second;
    else
      w->hints.push_back(kv);
  }
  return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  Call c("MPI_Win_get_info");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) || !c.NotNull(info_used, "info_used"))
    return api::WinFail(c, w);
  api::Hints used = w->hints;
  for (auto& kv : rma::PathInfo(w)) used.push_back(std::move(kv));
  return api::NewInfoFrom(c, used, info_used);
}

int MPI_Win_set_name(MPI_Win win, const char* win_name) {
  Call c("MPI_Win_set_name");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) || !c.NotNull(win_name, "win_name"))
    return api::WinFail(c, w);
  w->name.assign(win_name, strnlen(win_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  Call c("MPI_Win_get_name");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) || !c.NotNull(win_name, "win_name") ||
      !c.NotNull(resultlen, "resultlen"))
    return api::WinFail(c, w);
  std::memcpy(win_name, w->name.c_str(), w->name.size() + 1);
  *resultlen = int(w->name.size());
  return MPI_SUCCESS;
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                              MPI_Errhandler* errhandler) {
  Call c("MPI_Win_create_errhandler");
  if (!c.Init() || !c.NotNull(reinterpret_cast<void*>(win_errhandler_fn), "win_errhandler_fn") ||
      !c.NotNull(errhandler, "errhandler"))
    return c.Fail();
  return api::NewWinErrhandler(c, win_errhandler_fn, errhandler);
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  Call c("MPI_Win_set_errhandler");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w)) return api::WinFail(c, w);
  if (!c.Check(api::IsWinErrhandler(errhandler), Code::kArg,
               "errhandler " + Str(errhandler) + " was not made by MPI_Win_create_errhandler"))
    return api::WinFail(c, w);
  w->errhandler = errhandler;
  return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  Call c("MPI_Win_get_errhandler");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) || !c.NotNull(errhandler, "errhandler"))
    return api::WinFail(c, w);
  *errhandler = w->errhandler;
  return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  Call c("MPI_Win_call_errhandler");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w)) return api::WinFail(c, w);
  api::InvokeWinErrhandler(win, w->errhandler, errorcode);
  return MPI_SUCCESS;
}

}  // extern "C"
