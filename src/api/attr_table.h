// Attribute caching (MPI 4.1 section 7.7) shared by communicators,
// datatypes and windows: keyvals with their copy and delete callbacks, and
// per object the attributes in the order they were set.
//
// One lock guards the keyval table and every object's list; user callbacks
// run without it, since they may call attribute functions themselves. A
// keyval lives while it is not freed or while attributes still use it (MPI:
// freeing a keyval leaves the attributes set with it in place), so its slot
// is reused only once both are over. Each object kind has its own range of
// keyval indices, so a communicator keyval passed to a datatype call is
// reported, not taken for a datatype's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/api_internal.h"
#include "dtype/slot_table.h"

namespace nicq::api {

// What an attribute operation found; the caller turns it into the MPI error
// that names its call, object kind and argument.
struct AttrOutcome {
  enum class Kind : std::uint8_t {
    kOk,
    kBadKeyval,     // not a live keyval of this object kind
    kNotSet,        // the keyval has no value on this object
    kCopyFailed,    // the keyval's copy callback returned `rc`
    kDeleteFailed,  // the keyval's delete callback returned `rc`
  };
  Kind kind = Kind::kOk;
  int keyval = 0;
  int rc = MPI_SUCCESS;
  bool ok() const { return kind == Kind::kOk; }
};

// Records the MPI error for a failed outcome on c (the caller raises it on
// its object's error handler): `object` names the kind ("communicator"),
// `keyval_words` how its keyvals are called ("keyval", "datatype keyval").
inline void RecordAttrError(Call& c, const AttrOutcome& o, const char* object,
                            const char* keyval_words) {
  const std::string key = std::to_string(o.keyval);
  switch (o.kind) {
    case AttrOutcome::Kind::kOk:
      return;
    case AttrOutcome::Kind::kBadKeyval:
      (void)c.Check(false, Code(MPI_ERR_KEYVAL),
                    std::string("invalid or freed ") + keyval_words + " " + key);
      return;
    case AttrOutcome::Kind::kNotSet:
      (void)c.Check(false, Code(MPI_ERR_KEYVAL),
                    "keyval " + key + " has no value on this " + object);
      return;
    case AttrOutcome::Kind::kCopyFailed:
    case AttrOutcome::Kind::kDeleteFailed:
      (void)c.Check(false, Code(MPI_ERR_OTHER),
                    std::string("the ") +
                        (o.kind == AttrOutcome::Kind::kCopyFailed ? "copy" : "delete") +
                        " callback of keyval " + key + " returned error " + std::to_string(o.rc));
      return;
  }
}

// CopyFn and DeleteFn are the C callback types of one object kind
// (MPI_Comm_copy_attr_function, ...); every handle is an int.
template <typename CopyFn, typename DeleteFn>
class AttrTable {
 public:
  using Object = std::uintptr_t;  // a pointer or handle naming the object

  // Keyval indices [first, limit) belong to this kind.
  AttrTable(int first, int limit) : keyvals_(first), first_(first), limit_(limit) {}

  // A new keyval's handle, or -1 when the range is full. Null callbacks are
  // stored as none, so a dup skips them cheaply.
  int CreateKeyval(CopyFn* copy, DeleteFn* del, void* extra_state) {
    std::lock_guard<std::mutex> lock(mu_);
    const int index = keyvals_.Alloc();
    if (index < 0) return -1;
    if (index >= limit_) {
      keyvals_.Free(index);
      return -1;
    }
    *keyvals_.Get(index) = Keyval{copy, del, extra_state, false, 1};
    return NICQ_HANDLE(NICQ_KIND_KEYVAL, index);
  }

  bool IsKeyval(int handle) {
    std::lock_guard<std::mutex> lock(mu_);
    return Find(handle) != nullptr;
  }

  // False when `handle` is not a live keyval of this kind.
  bool FreeKeyval(int handle) {
    std::lock_guard<std::mutex> lock(mu_);
    Keyval* k = Find(handle);
    if (!k) return false;
    k->freed = true;
    Release(handle);  // the creation's own use
    return true;
  }

  // Sets or replaces; a replaced value's delete callback runs first, and if
  // it fails nothing changes.
  AttrOutcome Set(Object obj, int obj_handle, int keyval, void* value) {
    Attr old{0, nullptr};
    Keyval k;
    {
      std::lock_guard<std::mutex> lock(mu_);
      Keyval* live = Find(keyval);
      if (!live) return {AttrOutcome::Kind::kBadKeyval, keyval};
      auto& list = by_object_[obj];
      auto it = Position(list, keyval);
      if (it == list.end()) {
        list.push_back({keyval, value});
        ++live->uses;
        return {};
      }
      old = *it;
      k = *live;
    }
    if (AttrOutcome out = RunDelete(obj_handle, k, old); !out.ok()) return out;
    std::lock_guard<std::mutex> lock(mu_);
    auto& list = by_object_[obj];
    if (auto it = Position(list, keyval); it != list.end()) it->value = value;
    return {};
  }

  // *flag 0 when the keyval has no value on obj.
  AttrOutcome Get(Object obj, int keyval, void** value, int* flag) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!Find(keyval)) return {AttrOutcome::Kind::kBadKeyval, keyval};
    *flag = 0;
    auto found = by_object_.find(obj);
    if (found == by_object_.end()) return {};
    if (auto it = Position(found->second, keyval); it != found->second.end()) {
      *value = it->value;
      *flag = 1;
    }
    return {};
  }

  AttrOutcome Delete(Object obj, int obj_handle, int keyval) {
    Attr a{0, nullptr};
    Keyval k;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!Find(keyval)) return {AttrOutcome::Kind::kBadKeyval, keyval};
      auto found = by_object_.find(obj);
      if (found == by_object_.end()) return {AttrOutcome::Kind::kNotSet, keyval};
      auto it = Position(found->second, keyval);
      if (it == found->second.end()) return {AttrOutcome::Kind::kNotSet, keyval};
      a = *it;
      k = *keyvals_.Get(IndexOf(keyval));
    }
    if (AttrOutcome out = RunDelete(obj_handle, k, a); !out.ok()) return out;
    Erase(obj, keyval);
    return {};
  }

  // Runs the copy callbacks of `from`'s attributes for a duplicate `to`.
  // When one fails, the copies made so far are deleted again (the duplicate
  // never existed) and the failure is returned.
  AttrOutcome CopyAll(Object from, int from_handle, Object to, int to_handle) {
    std::vector<std::pair<Attr, Keyval>> source;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto found = by_object_.find(from);
      if (found == by_object_.end()) return {};
      for (const Attr& a : found->second) source.push_back({a, *keyvals_.Get(IndexOf(a.keyval))});
    }
    std::vector<std::pair<Attr, Keyval>> copied;
    for (auto& [a, k] : source) {
      if (!k.copy) continue;
      void* out = nullptr;
      int flag = 0;
      const int rc = k.copy(from_handle, a.keyval, k.extra_state, a.value, &out, &flag);
      if (rc != MPI_SUCCESS) {
        for (auto& [done, dk] : copied)
          if (dk.del) (void)dk.del(to_handle, done.keyval, done.value, dk.extra_state);
        return {AttrOutcome::Kind::kCopyFailed, a.keyval, rc};
      }
      if (flag) copied.push_back({{a.keyval, out}, k});
    }
    if (copied.empty()) return {};
    std::lock_guard<std::mutex> lock(mu_);
    auto& list = by_object_[to];
    for (auto& [a, k] : copied) {
      ++keyvals_.Get(IndexOf(a.keyval))->uses;
      list.push_back(a);
    }
    return {};
  }

  // Deletes every attribute of obj, the latest set first (as at
  // MPI_Finalize); stops at the first failing callback and returns it.
  AttrOutcome DeleteAll(Object obj, int obj_handle) {
    for (;;) {
      Attr a{0, nullptr};
      Keyval k;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto found = by_object_.find(obj);
        if (found == by_object_.end()) return {};
        if (found->second.empty()) {
          by_object_.erase(found);
          return {};
        }
        a = found->second.back();
        k = *keyvals_.Get(IndexOf(a.keyval));
      }
      if (AttrOutcome out = RunDelete(obj_handle, k, a); !out.ok()) return out;
      Erase(obj, a.keyval);
    }
  }

  // For an object destroyed with no MPI call to report a failing callback:
  // deletes everything, callback errors ignored.
  void DropAll(Object obj, int obj_handle) {
    for (;;) {
      if (AttrOutcome out = DeleteAll(obj, obj_handle); out.ok())
        return;
      else
        Erase(obj, out.keyval);
    }
  }

 private:
  struct Keyval {
    CopyFn* copy = nullptr;
    DeleteFn* del = nullptr;
    void* extra_state = nullptr;
    bool freed = false;
    int uses = 0;  // the creation (until freed), plus every attribute set with it
  };
  struct Attr {
    int keyval;
    void* value;
  };

  // The live keyval behind a handle (lock held), or nullptr.
  Keyval* Find(int handle) const {
    if (KindOf(handle) != NICQ_KIND_KEYVAL) return nullptr;
    const int index = IndexOf(handle);
    if (index < first_ || index >= limit_) return nullptr;
    Keyval* k = keyvals_.Get(index);
    return k && !k->freed ? k : nullptr;
  }

  // Drops one use (lock held); the slot goes back once freed and unused.
  void Release(int handle) {
    Keyval* k = keyvals_.Get(IndexOf(handle));
    if (k && --k->uses == 0 && k->freed) keyvals_.Free(IndexOf(handle));
  }

  static typename std::vector<Attr>::iterator Position(std::vector<Attr>& list, int keyval) {
    return std::find_if(list.begin(), list.end(),
                        [keyval](const Attr& a) { return a.keyval == keyval; });
  }

  static AttrOutcome RunDelete(int obj_handle, const Keyval& k, const Attr& a) {
    if (!k.del) return {};
    const int rc = k.del(obj_handle, a.keyval, a.value, k.extra_state);
    if (rc == MPI_SUCCESS) return {};
    return {AttrOutcome::Kind::kDeleteFailed, a.keyval, rc};
  }

  void Erase(Object obj, int keyval) {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = by_object_.find(obj);
    if (found == by_object_.end()) return;
    auto& list = found->second;
    if (auto it = Position(list, keyval); it != list.end()) {
      list.erase(it);
      Release(keyval);
    }
    if (list.empty()) by_object_.erase(found);
  }

  std::mutex mu_;
  dtype::SlotTable<Keyval> keyvals_;
  const int first_, limit_;
  std::unordered_map<Object, std::vector<Attr>> by_object_;
};

}  // namespace nicq::api
