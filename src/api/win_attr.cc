// Attributes cached on windows: the predefined MPI_WIN_BASE, MPI_WIN_SIZE,
// MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL, and user
// keyvals with delete callbacks (run by MPI_Win_delete_attr, on
// replacement, and by MPI_Win_free; the storage is attr_table.h). Windows
// are never duplicated, so copy callbacks are kept but never called.
#include <mutex>
#include <string>
#include <unordered_map>

#include "api/attr_table.h"
#include "api/win_internal.h"

using namespace nicq;
using api::AttrOutcome;
using api::Call;

namespace {

// Window keyvals live in their own index range (attr_table.h).
constexpr int kFirstWinKeyval = 1 << 16;

using WinAttrs = api::AttrTable<MPI_Win_copy_attr_function, MPI_Win_delete_attr_function>;
WinAttrs& Attrs() {
  static auto* table = new WinAttrs(kFirstWinKeyval, 3 << 15);
  return *table;
}

WinAttrs::Object Key(const rma::Window* w) {
  return reinterpret_cast<WinAttrs::Object>(w);
}

// The values the predefined attributes point to, per window.
struct Predefined {
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  int flavor = 0;
  int model = MPI_WIN_UNIFIED;
};

struct PredefinedValues {
  std::mutex mu;
  std::unordered_map<const rma::Window*, Predefined> by_win;
};
PredefinedValues& Values() {
  static auto* values = new PredefinedValues();
  return *values;
}

bool IsPredefined(int keyval) {
  return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
         keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

// Raises on the window's error handler.
int RaiseAttrError(Call& c, rma::Window* w, const AttrOutcome& o) {
  api::RecordAttrError(c, o, "window", "window keyval");
  return api::WinFail(c, w);
}

}  // namespace

namespace nicq::api {

int DeleteWinAttrs(Call& c, rma::Window* w) {
  const AttrOutcome o = Attrs().DeleteAll(Key(w), w->handle);
  if (!o.ok()) return RaiseAttrError(c, w, o);
  std::lock_guard<std::mutex> lock(Values().mu);
  Values().by_win.erase(w);
  return MPI_SUCCESS;
}

}  // namespace nicq::api

extern "C" {

int MPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                          MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                          void* extra_state) {
  Call c("MPI_Win_create_keyval");
  if (!c.NotNull(win_keyval, "win_keyval")) return c.Fail();
  const int handle = Attrs().CreateKeyval(
      win_copy_attr_fn == MPI_WIN_NULL_COPY_FN ? nullptr : win_copy_attr_fn,
      win_delete_attr_fn == MPI_WIN_NULL_DELETE_FN ? nullptr : win_delete_attr_fn, extra_state);
  if (handle < 0) return c.Fail(Code::kNoMem, "window keyval table is full");
  *win_keyval = handle;
  return MPI_SUCCESS;
}

int MPI_Win_free_keyval(int* win_keyval) {
  Call c("MPI_Win_free_keyval");
  if (!c.NotNull(win_keyval, "win_keyval")) return c.Fail();
  if (!Attrs().FreeKeyval(*win_keyval)) {
    api::RecordAttrError(c, {AttrOutcome::Kind::kBadKeyval, *win_keyval}, "window",
                         "window keyval");
    return c.Fail();
  }
  *win_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  Call c("MPI_Win_set_attr");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w)) return api::WinFail(c, w);
  if (!c.Check(!IsPredefined(win_keyval), Code(MPI_ERR_KEYVAL),
               "predefined window attributes cannot be set"))
    return api::WinFail(c, w);
  const AttrOutcome o = Attrs().Set(Key(w), w->handle, win_keyval, attribute_val);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, w, o);
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  Call c("MPI_Win_get_attr");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) || !c.NotNull(attribute_val, "attribute_val") ||
      !c.NotNull(flag, "flag"))
    return api::WinFail(c, w);
  if (IsPredefined(win_keyval)) {
    // The attribute's value is a pointer to the property (base: the base itself).
    std::lock_guard<std::mutex> lock(Values().mu);
    Predefined& p = Values().by_win[w];
    p.base = w->base;
    p.size = w->bytes;
    p.disp_unit = int(w->disp_unit);
    p.flavor = int(w->flavor);
    p.model = MPI_WIN_UNIFIED;
    void* v = win_keyval == MPI_WIN_BASE            ? p.base
              : win_keyval == MPI_WIN_SIZE          ? static_cast<void*>(&p.size)
              : win_keyval == MPI_WIN_DISP_UNIT     ? static_cast<void*>(&p.disp_unit)
              : win_keyval == MPI_WIN_CREATE_FLAVOR ? static_cast<void*>(&p.flavor)
                                                    : static_cast<void*>(&p.model);
    *static_cast<void**>(attribute_val) = v;
    *flag = 1;
    return MPI_SUCCESS;
  }
  const AttrOutcome o = Attrs().Get(Key(w), win_keyval, static_cast<void**>(attribute_val), flag);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, w, o);
}

// Deleting a keyval that has no value on the window is not an error.
int MPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  Call c("MPI_Win_delete_attr");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w)) return api::WinFail(c, w);
  const AttrOutcome o = Attrs().Delete(Key(w), w->handle, win_keyval);
  if (o.ok() || o.kind == AttrOutcome::Kind::kNotSet) return MPI_SUCCESS;
  return RaiseAttrError(c, w, o);
}

}  // extern "C"
