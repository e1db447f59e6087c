// Attributes cached on communicators: user keyvals with copy/delete
// callbacks (run on MPI_Comm_dup / MPI_Comm_free as MPI specifies) and the
// predefined keys of MPI_COMM_WORLD (MPI_TAG_UB, MPI_HOST, ...).
#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/api_internal.h"
#include "dtype/slot_table.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

namespace {

// Keyval indices below this are predefined keys (1..7) or window keys (16..20).
constexpr int kFirstUserKeyval = 32;

struct Keyval {
  MPI_Comm_copy_attr_function* copy = nullptr;
  MPI_Comm_delete_attr_function* del = nullptr;
  void* extra_state = nullptr;
  bool freed = false;  // MPI_Comm_free_keyval done; lives while attributes use it
  int uses = 0;        // attributes currently set with this key
};

struct Attr {
  int keyval;
  void* value;
};

// One lock guards the keyval table and every communicator's attribute list;
// user callbacks run without it (they may call attribute functions).
struct AttrState {
  std::mutex mu;
  dtype::SlotTable<Keyval, 8, 64> keyvals{kFirstUserKeyval};
  std::unordered_map<const Comm*, std::vector<Attr>> by_comm;  // in order of setting
};
AttrState& State() {
  static auto* s = new AttrState();
  return *s;
}

std::string Str(long long v) {
  return std::to_string(v);
}

// The live keyval behind a handle (caller holds the lock), or nullptr.
Keyval* FindKeyval(int handle) {
  if (api::KindOf(handle) != NICQ_KIND_KEYVAL || api::IndexOf(handle) < kFirstUserKeyval)
    return nullptr;
  Keyval* k = State().keyvals.Get(api::IndexOf(handle));
  return k && !k->freed ? k : nullptr;
}

// Drops one use of a keyval; the slot goes back once it is freed and unused.
void ReleaseKeyval(int handle) {
  Keyval* k = State().keyvals.Get(api::IndexOf(handle));
  if (k && --k->uses == 0 && k->freed) State().keyvals.Free(api::IndexOf(handle));
}

bool IsPredefinedKey(int keyval) {
  return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

int UserKeyvalArg(Call& c, int keyval) {
  if (IsPredefinedKey(keyval))
    return c.Check(false, Code(MPI_ERR_KEYVAL),
                   "keyval " + Str(keyval) + " is predefined (read-only)");
  return c.Check(FindKeyval(keyval) != nullptr, Code(MPI_ERR_KEYVAL),
                 "invalid or freed keyval " + Str(keyval));
}

// Runs the delete callback of one attribute (lock not held).
int RunDelete(Call& c, int comm_handle, const Keyval& k, const Attr& a) {
  if (!k.del) return MPI_SUCCESS;
  int rc = k.del(comm_handle, a.keyval, a.value, k.extra_state);
  if (rc == MPI_SUCCESS) return MPI_SUCCESS;
  return c.Fail(Code(MPI_ERR_OTHER),
                "the delete callback of keyval " + Str(a.keyval) + " returned error " + Str(rc));
}

// Predefined values live for the whole job: MPI hands out pointers to them.
int* PredefinedValue(int keyval) {
  static int tag_ub, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0, appnum = 0,
                     universe, lastcode = MPI_ERR_LASTCODE;
  switch (keyval) {
    case MPI_TAG_UB:
      tag_ub = rt::TagUpperBound();
      return &tag_ub;
    case MPI_HOST:
      return &host;
    case MPI_IO:
      return &io;
    case MPI_WTIME_IS_GLOBAL:
      return &wtime_global;
    case MPI_APPNUM:
      return &appnum;
    case MPI_UNIVERSE_SIZE:
      universe = rt::WorldSize();
      return &universe;
    case MPI_LASTUSEDCODE:
      return &lastcode;
  }
  return nullptr;
}

}  // namespace

namespace nicq::api {

int CopyCommAttrs(Call& c, int parent_handle, Comm* parent, int child_handle, Comm* child) {
  std::vector<Attr> src;
  {
    std::lock_guard<std::mutex> lock(State().mu);
    auto it = State().by_comm.find(parent);
    if (it == State().by_comm.end()) return MPI_SUCCESS;
    src = it->second;
  }
  std::vector<Attr> copied;
  std::vector<Keyval> copied_keys;  // to undo with the right delete callbacks
  for (const Attr& a : src) {
    Keyval k;
    {
      std::lock_guard<std::mutex> lock(State().mu);
      Keyval* live = State().keyvals.Get(IndexOf(a.keyval));
      if (!live) continue;
      k = *live;
    }
    if (!k.copy) continue;  // MPI_COMM_NULL_COPY_FN
    void* out = nullptr;
    int flag = 0;
    int rc = k.copy(parent_handle, a.keyval, k.extra_state, a.value, &out, &flag);
    if (rc != MPI_SUCCESS) {
      // Undo what was copied so far: the duplicate never existed.
      for (std::size_t i = 0; i < copied.size(); ++i)
        if (copied_keys[i].del)
          copied_keys[i].del(child_handle, copied[i].keyval, copied[i].value,
                             copied_keys[i].extra_state);
      return c.Fail(Code(MPI_ERR_OTHER),
                    "the copy callback of keyval " + Str(a.keyval) + " returned error " + Str(rc));
    }
    if (flag) {
      copied.push_back({a.keyval, out});
      copied_keys.push_back(k);
    }
  }
  std::lock_guard<std::mutex> lock(State().mu);
  for (const Attr& a : copied)
    if (Keyval* k = State().keyvals.Get(IndexOf(a.keyval))) ++k->uses;
  if (!copied.empty()) State().by_comm[child] = std::move(copied);
  return MPI_SUCCESS;
}

int DeleteCommAttrs(Call& c, int handle, Comm* comm) {
  for (;;) {
    Attr a;
    Keyval k;
    {
      std::lock_guard<std::mutex> lock(State().mu);
      auto it = State().by_comm.find(comm);
      if (it == State().by_comm.end()) return MPI_SUCCESS;
      if (it->second.empty()) {
        State().by_comm.erase(it);
        return MPI_SUCCESS;
      }
      a = it->second.back();  // the latest set first, as at MPI_Finalize
      k = *State().keyvals.Get(IndexOf(a.keyval));
    }
    if (int rc = RunDelete(c, handle, k, a); rc != MPI_SUCCESS) return rc;
    std::lock_guard<std::mutex> lock(State().mu);
    auto& list = State().by_comm[comm];
    auto it =
        std::find_if(list.begin(), list.end(), [&](const Attr& x) { return x.keyval == a.keyval; });
    if (it != list.end()) list.erase(it);
    ReleaseKeyval(a.keyval);
  }
}

}  // namespace nicq::api

extern "C" {

int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_COMM_DUP_FN(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*) {
  return MPI_SUCCESS;
}
int MPI_WIN_NULL_COPY_FN(MPI_Win, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_WIN_DUP_FN(MPI_Win, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_WIN_NULL_DELETE_FN(MPI_Win, int, void*, void*) {
  return MPI_SUCCESS;
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn,
                           MPI_Comm_delete_attr_function* delete_fn, int* comm_keyval,
                           void* extra_state) {
  Call c("MPI_Comm_create_keyval");
  if (!c.NotNull(comm_keyval, "comm_keyval")) return c.Fail();
  std::lock_guard<std::mutex> lock(State().mu);
  int index = State().keyvals.Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "keyval table is full");
  Keyval* k = State().keyvals.Get(index);
  // The null callbacks are stored as "none" so dup skips them cheaply.
  *k = Keyval{copy_fn == MPI_COMM_NULL_COPY_FN ? nullptr : copy_fn,
              delete_fn == MPI_COMM_NULL_DELETE_FN ? nullptr : delete_fn, extra_state, false, 1};
  *comm_keyval = NICQ_HANDLE(NICQ_KIND_KEYVAL, index);
  return MPI_SUCCESS;
}

int MPI_Comm_free_keyval(int* comm_keyval) {
  Call c("MPI_Comm_free_keyval");
  if (!c.NotNull(comm_keyval, "comm_keyval")) return c.Fail();
  std::lock_guard<std::mutex> lock(State().mu);
  if (!UserKeyvalArg(c, *comm_keyval)) return c.Fail();
  FindKeyval(*comm_keyval)->freed = true;
  ReleaseKeyval(*comm_keyval);  // the creation's own use
  *comm_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  Call c("MPI_Comm_set_attr");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return c.Fail();
  Attr old{0, nullptr};
  Keyval k;
  {
    std::lock_guard<std::mutex> lock(State().mu);
    if (!UserKeyvalArg(c, comm_keyval)) return c.Fail();
    auto& list = State().by_comm[cm];
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const Attr& a) { return a.keyval == comm_keyval; });
    if (it == list.end()) {
      list.push_back({comm_keyval, attribute_val});
      ++FindKeyval(comm_keyval)->uses;
      return MPI_SUCCESS;
    }
    old = *it;
    k = *FindKeyval(comm_keyval);
  }
  // Replacing a value deletes the old one first; if that fails nothing changes.
  if (int rc = RunDelete(c, comm, k, old); rc != MPI_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(State().mu);
  for (Attr& a : State().by_comm[cm])
    if (a.keyval == comm_keyval) a.value = attribute_val;
  return MPI_SUCCESS;
}

int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  Call c("MPI_Comm_get_attr");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(attribute_val, "attribute_val") ||
      !c.NotNull(flag, "flag"))
    return c.Fail();
  if (int* value = PredefinedValue(comm_keyval)) {
    *static_cast<int**>(attribute_val) = value;
    *flag = 1;
    return MPI_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(State().mu);
  if (!c.Check(FindKeyval(comm_keyval) != nullptr, Code(MPI_ERR_KEYVAL),
               "invalid or freed keyval " + Str(comm_keyval)))
    return c.Fail();
  *flag = 0;
  auto it = State().by_comm.find(cm);
  if (it == State().by_comm.end()) return MPI_SUCCESS;
  for (const Attr& a : it->second) {
    if (a.keyval != comm_keyval) continue;
    *static_cast<void**>(attribute_val) = a.value;
    *flag = 1;
  }
  return MPI_SUCCESS;
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  Call c("MPI_Comm_delete_attr");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return c.Fail();
  Attr a{0, nullptr};
  Keyval k;
  {
    std::lock_guard<std::mutex> lock(State().mu);
    if (!UserKeyvalArg(c, comm_keyval)) return c.Fail();
    auto& list = State().by_comm[cm];
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const Attr& x) { return x.keyval == comm_keyval; });
    if (!c.Check(it != list.end(), Code(MPI_ERR_KEYVAL),
                 "keyval " + Str(comm_keyval) + " has no value on this communicator"))
      return c.Fail();
    a = *it;
    k = *FindKeyval(comm_keyval);
  }
  if (int rc = RunDelete(c, comm, k, a); rc != MPI_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(State().mu);
  auto& list = State().by_comm[cm];
  auto it = std::find_if(list.begin(), list.end(),
                         [&](const Attr& x) { return x.keyval == comm_keyval; });
  if (it != list.end()) {
    list.erase(it);
    ReleaseKeyval(comm_keyval);
  }
  return MPI_SUCCESS;
}

}  // extern "C"
