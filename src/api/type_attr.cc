// Attributes cached on datatypes: user keyvals with copy callbacks (run by
// MPI_Type_dup) and delete callbacks (run by MPI_Type_delete_attr, on
// replacement, and when the handle is freed).
#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/type_internal.h"
#include "dtype/slot_table.h"

using namespace nicq;
using api::AnyTypeArg;
using api::Call;

namespace {

// Type keyvals live in their own index range, so a communicator keyval
// passed to a type call is reported, not taken for a type keyval.
constexpr int kFirstTypeKeyval = 1 << 15;

struct Keyval {
  MPI_Type_copy_attr_function* copy = nullptr;
  MPI_Type_delete_attr_function* del = nullptr;
  void* extra_state = nullptr;
  bool freed = false;
  int uses = 0;  // the creation, plus every attribute set with it
};

struct Attr {
  int keyval;
  void* value;
};

// One lock for keyvals and attribute lists; callbacks run without it.
struct State {
  std::mutex mu;
  dtype::SlotTable<Keyval> keyvals{kFirstTypeKeyval};
  std::unordered_map<int, std::vector<Attr>> by_type;
};
void DropAttrsOnRelease(int handle);

State& S() {
  static auto* s = [] {
    dtype::SetReleaseHook(DropAttrsOnRelease);
    return new State();
  }();
  return *s;
}

std::string Str(long long v) {
  return std::to_string(v);
}

Keyval* FindKeyval(int h) {
  if (api::KindOf(h) != NICQ_KIND_KEYVAL || api::IndexOf(h) < kFirstTypeKeyval) return nullptr;
  Keyval* k = S().keyvals.Get(api::IndexOf(h));
  return k && !k->freed ? k : nullptr;
}

void ReleaseKeyval(int h) {
  Keyval* k = S().keyvals.Get(api::IndexOf(h));
  if (k && --k->uses == 0 && k->freed) S().keyvals.Free(api::IndexOf(h));
}

bool KeyvalArg(Call& c, int h) {
  return c.Check(FindKeyval(h) != nullptr, Code(MPI_ERR_KEYVAL),
                 "invalid or freed datatype keyval " + Str(h));
}

int RunDelete(Call& c, MPI_Datatype type, const Keyval& k, const Attr& a) {
  if (!k.del) return MPI_SUCCESS;
  int rc = k.del(type, a.keyval, a.value, k.extra_state);
  if (rc == MPI_SUCCESS) return MPI_SUCCESS;
  return c.Fail(Code(MPI_ERR_OTHER),
                "the delete callback of keyval " + Str(a.keyval) + " returned error " + Str(rc));
}

// A type destroyed while attributes remain (its handle was freed while a
// request or another type still used it): delete them now, errors ignored.
// No MPI call is there to report a failing callback, so its result is dropped.
void DropAttrsOnRelease(int handle) {
  std::vector<std::pair<Attr, Keyval>> attrs;
  {
    std::lock_guard<std::mutex> lock(S().mu);
    auto it = S().by_type.find(handle);
    if (it == S().by_type.end()) return;
    for (const Attr& a : it->second) attrs.push_back({a, *S().keyvals.Get(api::IndexOf(a.keyval))});
    S().by_type.erase(it);
  }
  for (auto& [a, k] : attrs) {
    if (k.del) (void)k.del(handle, a.keyval, a.value, k.extra_state);
    std::lock_guard<std::mutex> lock(S().mu);
    ReleaseKeyval(a.keyval);
  }
}

}  // namespace

namespace nicq::api {

int CopyTypeAttrs(Call& c, MPI_Datatype from, MPI_Datatype to) {
  std::vector<std::pair<Attr, Keyval>> to_copy;
  {
    std::lock_guard<std::mutex> lock(S().mu);
    auto it = S().by_type.find(from);
    if (it == S().by_type.end()) return MPI_SUCCESS;
    for (const Attr& a : it->second) to_copy.push_back({a, *S().keyvals.Get(IndexOf(a.keyval))});
  }
  std::vector<Attr> copied;
  for (auto& [a, k] : to_copy) {
    if (!k.copy) continue;
    void* out = nullptr;
    int flag = 0;
    int rc = k.copy(from, a.keyval, k.extra_state, a.value, &out, &flag);
    if (rc != MPI_SUCCESS) {
      // Undo the copies made so far: the new type is dropped by the caller.
      for (const Attr& done : copied) {
        std::lock_guard<std::mutex> lock(S().mu);
        ReleaseKeyval(done.keyval);
      }
      return c.Fail(Code(MPI_ERR_OTHER),
                    "the copy callback of keyval " + Str(a.keyval) + " returned error " + Str(rc));
    }
    if (!flag) continue;
    std::lock_guard<std::mutex> lock(S().mu);
    ++S().keyvals.Get(IndexOf(a.keyval))->uses;
    copied.push_back({a.keyval, out});
  }
  if (!copied.empty()) {
    std::lock_guard<std::mutex> lock(S().mu);
    S().by_type[to] = std::move(copied);
  }
  return MPI_SUCCESS;
}

int DeleteTypeAttrs(Call& c, MPI_Datatype type) {
  for (;;) {
    Attr a{0, nullptr};
    Keyval k;
    {
      std::lock_guard<std::mutex> lock(S().mu);
      auto it = S().by_type.find(type);
      if (it == S().by_type.end() || it->second.empty()) {
        if (it != S().by_type.end()) S().by_type.erase(it);
        return MPI_SUCCESS;
      }
      a = it->second.back();
      k = *S().keyvals.Get(IndexOf(a.keyval));
    }
    if (int rc = RunDelete(c, type, k, a); rc != MPI_SUCCESS) return rc;
    std::lock_guard<std::mutex> lock(S().mu);
    auto& list = S().by_type[type];
    auto it =
        std::find_if(list.begin(), list.end(), [&](const Attr& x) { return x.keyval == a.keyval; });
    if (it != list.end()) list.erase(it);
    ReleaseKeyval(a.keyval);
  }
}

}  // namespace nicq::api

extern "C" {

int MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int MPI_TYPE_DUP_FN(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void*, void*) {
  return MPI_SUCCESS;
}

int MPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                           MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                           void* extra_state) {
  Call c("MPI_Type_create_keyval");
  if (!c.NotNull(type_keyval, "type_keyval")) return c.Fail();
  std::lock_guard<std::mutex> lock(S().mu);
  int index = S().keyvals.Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "datatype keyval table is full");
  *S().keyvals.Get(index) =
      Keyval{type_copy_attr_fn == MPI_TYPE_NULL_COPY_FN ? nullptr : type_copy_attr_fn,
             type_delete_attr_fn == MPI_TYPE_NULL_DELETE_FN ? nullptr : type_delete_attr_fn,
             extra_state, false, 1};
  *type_keyval = NICQ_HANDLE(NICQ_KIND_KEYVAL, index);
  return MPI_SUCCESS;
}

int MPI_Type_free_keyval(int* type_keyval) {
  Call c("MPI_Type_free_keyval");
  if (!c.NotNull(type_keyval, "type_keyval")) return c.Fail();
  std::lock_guard<std::mutex> lock(S().mu);
  if (!KeyvalArg(c, *type_keyval)) return c.Fail();
  FindKeyval(*type_keyval)->freed = true;
  ReleaseKeyval(*type_keyval);
  *type_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  Call c("MPI_Type_set_attr");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t)) return c.Fail();
  Attr old{0, nullptr};
  Keyval k;
  {
    std::lock_guard<std::mutex> lock(S().mu);
    if (!KeyvalArg(c, type_keyval)) return c.Fail();
    auto& list = S().by_type[datatype];
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const Attr& a) { return a.keyval == type_keyval; });
    if (it == list.end()) {
      list.push_back({type_keyval, attribute_val});
      ++FindKeyval(type_keyval)->uses;
      return MPI_SUCCESS;
    }
    old = *it;
    k = *FindKeyval(type_keyval);
  }
  if (int rc = RunDelete(c, datatype, k, old); rc != MPI_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(S().mu);
  for (Attr& a : S().by_type[datatype])
    if (a.keyval == type_keyval) a.value = attribute_val;
  return MPI_SUCCESS;
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  Call c("MPI_Type_get_attr");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(attribute_val, "attribute_val") ||
      !c.NotNull(flag, "flag"))
    return c.Fail();
  std::lock_guard<std::mutex> lock(S().mu);
  if (!KeyvalArg(c, type_keyval)) return c.Fail();
  *flag = 0;
  auto it = S().by_type.find(datatype);
  if (it == S().by_type.end()) return MPI_SUCCESS;
  for (const Attr& a : it->second) {
    if (a.keyval != type_keyval) continue;
    *static_cast<void**>(attribute_val) = a.value;
    *flag = 1;
  }
  return MPI_SUCCESS;
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  Call c("MPI_Type_delete_attr");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t)) return c.Fail();
  Attr a{0, nullptr};
  Keyval k;
  {
    std::lock_guard<std::mutex> lock(S().mu);
    if (!KeyvalArg(c, type_keyval)) return c.Fail();
    auto& list = S().by_type[datatype];
    auto it = std::find_if(list.begin(), list.end(),
                           [&](const Attr& x) { return x.keyval == type_keyval; });
    if (!c.Check(it != list.end(), Code(MPI_ERR_KEYVAL),
                 "keyval " + Str(type_keyval) + " has no value on this datatype"))
      return c.Fail();
    a = *it;
    k = *FindKeyval(type_keyval);
  }
  if (int rc = RunDelete(c, datatype, k, a); rc != MPI_SUCCESS) return rc;
  std::lock_guard<std::mutex> lock(S().mu);
  auto& list = S().by_type[datatype];
  auto it = std::find_if(list.begin(), list.end(),
                         [&](const Attr& x) { return x.keyval == type_keyval; });
  if (it != list.end()) {
    list.erase(it);
    ReleaseKeyval(type_keyval);
  }
  return MPI_SUCCESS;
}

}  // extern "C"
