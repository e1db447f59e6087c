// Attributes cached on windows: the predefined MPI_WIN_BASE, MPI_WIN_SIZE,
// MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL, and user
// keyvals with delete callbacks (run by MPI_Win_delete_attr, on
// replacement, and by MPI_Win_free). Windows are never duplicated, so copy
// callbacks are kept but never called.
#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/win_internal.h"

using namespace nicq;
using api::Call;

namespace {

// Window keyvals live in their own index range, so a communicator or type
// keyval passed to a window call is reported, not taken for a window's.
constexpr int kFirstWinKeyval = 1 << 16;

struct Keyval {
  MPI_Win_copy_attr_function* copy = nullptr;
  MPI_Win_delete_attr_function* del = nullptr;
  void* extra_state = nullptr;
  bool freed = false;  // keyval slots are not reused: attributes may outlive the free
};

struct Attr {
  int keyval;
  void* value;
};

// The values the predefined attributes point to, per window.
struct Predefined {
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  int flavor = 0;
  int model = MPI_WIN_UNIFIED;
};

struct State {
  std::mutex mu;
  std::vector<Keyval> keyvals;  // index - kFirstWinKeyval
  std::unordered_map<const rma::Window*, std::vector<Attr>> by_win;
  std::unordered_map<const rma::Window*, Predefined> predefined;
};
State& S() {
  static auto* s = new State();
  return *s;
}

std::string Str(long long v) {
  return std::to_string(v);
}

Keyval* FindKeyval(int h) {
  if (api::KindOf(h) != NICQ_KIND_KEYVAL) return nullptr;
  const int i = api::IndexOf(h) - kFirstWinKeyval;
  if (i < 0 || i >= int(S().keyvals.size())) return nullptr;
  Keyval* k = &S().keyvals[std::size_t(i)];
  return k->freed ? nullptr : k;
}

bool IsPredefined(int keyval) {
  return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
         keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

int RunDelete(Call& c, rma::Window* w, const Keyval& k, const Attr& a) {
  if (!k.del) return MPI_SUCCESS;
  int rc = k.del(w->handle, a.keyval, a.value, k.extra_state);
  if (rc == MPI_SUCCESS) return MPI_SUCCESS;
  (void)c.Check(false, Code::kOther,
                "the delete callback of keyval " + Str(a.keyval) + " returned error " + Str(rc));
  return api::WinFail(c, w);
}

// Removes the attribute of `keyval` from w (running its delete callback).
int Remove(Call& c, rma::Window* w, int keyval, bool* found) {
  Attr a{0, nullptr};
  Keyval k;
  {
    std::lock_guard<std::mutex> lock(S().mu);
    auto& list = S().by_win[w];
    auto it =
        std::find_if(list.begin(), list.end(), [&](const Attr& x) { return x.keyval == keyval; });
    *found = it != list.end();
    if (!*found) return MPI_SUCCESS;
    a = *it;
    k = S().keyvals[std::size_t(api::IndexOf(keyval) - kFirstWinKeyval)];
  }
  if (int rc = RunDelete(c, w, k, a); rc != MPI_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(S().mu);
  auto& list = S().by_win[w];
  list.erase(
      std::find_if(list.begin(), list.end(), [&](const Attr& x) { return x.keyval == keyval; }));
  return MPI_SUCCESS;
}

}  // namespace

namespace nicq::api {

int DeleteWinAttrs(Call& c, rma::Window* w) {
  for (;;) {
    int keyval = 0;
    {
      std::lock_guard<std::mutex> lock(S().mu);
      auto it = S().by_win.find(w);
      if (it == S().by_win.end() || it->second.empty()) {
        if (it != S().by_win.end()) S().by_win.erase(it);
        S().predefined.erase(w);
        return MPI_SUCCESS;
      }
      keyval = it->second.back().keyval;
    }
    bool found = false;
    if (int rc = Remove(c, w, keyval, &found); rc != MPI_SUCCESS) return rc;
  }
}

}  // namespace nicq::api

extern "C" {

int MPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                          MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                          void* extra_state) {
  Call c("MPI_Win_create_keyval");
  if (!c.NotNull(win_keyval, "win_keyval")) return c.Fail();
  std::lock_guard<std::mutex> lock(S().mu);
  S().keyvals.push_back(Keyval{
      win_copy_attr_fn, win_delete_attr_fn == MPI_WIN_NULL_DELETE_FN ? nullptr : win_delete_attr_fn,
      extra_state, false});
  *win_keyval = NICQ_HANDLE(NICQ_KIND_KEYVAL, kFirstWinKeyval + int(S().keyvals.size()) - 1);
  return MPI_SUCCESS;
}

int MPI_Win_free_keyval(int* win_keyval) {
  Call c("MPI_Win_free_keyval");
  if (!c.NotNull(win_keyval, "win_keyval")) return c.Fail();
  std::lock_guard<std::mutex> lock(S().mu);
  Keyval* k = FindKeyval(*win_keyval);
  if (!c.Check(k != nullptr, Code(MPI_ERR_KEYVAL),
               "invalid or freed window keyval " + Str(*win_keyval)))
    return c.Fail();
  k->freed = true;  // attributes set with it stay until deleted
  *win_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  Call c("MPI_Win_set_attr");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w)) return api::WinFail(c, w);
  {
    std::lock_guard<std::mutex> lock(S().mu);
    if (!c.Check(FindKeyval(win_keyval) != nullptr, Code(MPI_ERR_KEYVAL),
                 IsPredefined(win_keyval) ? "predefined window attributes cannot be set"
                                          : "invalid or freed window keyval " + Str(win_keyval)))
      return api::WinFail(c, w);
  }
  bool found = false;
  if (int rc = Remove(c, w, win_keyval, &found); rc != MPI_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(S().mu);
  S().by_win[w].push_back(Attr{win_keyval, attribute_val});
  return MPI_SUCCESS;
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  Call c("MPI_Win_get_attr");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w) || !c.NotNull(attribute_val, "attribute_val") ||
      !c.NotNull(flag, "flag"))
    return api::WinFail(c, w);
  std::lock_guard<std::mutex> lock(S().mu);
  if (IsPredefined(win_keyval)) {
    // The attribute's value is a pointer to the property (base: the base itself).
    Predefined& p = S().predefined[w];
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
  if (!c.Check(FindKeyval(win_keyval) != nullptr, Code(MPI_ERR_KEYVAL),
               "invalid or freed window keyval " + Str(win_keyval)))
    return api::WinFail(c, w);
  *flag = 0;
  for (const Attr& a : S().by_win[w])
    if (a.keyval == win_keyval) {
      *static_cast<void**>(attribute_val) = a.value;
      *flag = 1;
    }
  return MPI_SUCCESS;
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  Call c("MPI_Win_delete_attr");
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w)) return api::WinFail(c, w);
  {
    std::lock_guard<std::mutex> lock(S().mu);
    if (!c.Check(FindKeyval(win_keyval) != nullptr, Code(MPI_ERR_KEYVAL),
                 "invalid or freed window keyval " + Str(win_keyval)))
      return api::WinFail(c, w);
  }
  bool found = false;
  return Remove(c, w, win_keyval, &found);
}

}  // extern "C"
