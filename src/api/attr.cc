// Attributes cached on communicators: user keyvals with copy/delete
// callbacks (run on MPI_Comm_dup / MPI_Comm_free as MPI specifies; the
// storage is attr_table.h) and the predefined keys of MPI_COMM_WORLD
// (MPI_TAG_UB, MPI_HOST, ...).
#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/api_internal.h"
#include "api/attr_table.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::AttrOutcome;
using api::Call;

namespace {

// Keyval indices below this are predefined keys (1..7) or window keys (16..20).
constexpr int kFirstUserKeyval = 32;

using CommAttrs = api::AttrTable<MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function>;
CommAttrs& Attrs() {
  static auto* table = new CommAttrs(kFirstUserKeyval, 1 << 15);
  return *table;
}

CommAttrs::Object Key(const Comm* comm) {
  return reinterpret_cast<CommAttrs::Object>(comm);
}

int RaiseAttrError(Call& c, const api::AttrOutcome& o) {
  api::RecordAttrError(c, o, "communicator", "keyval");
  return c.Fail();
}

bool IsPredefinedKey(int keyval) {
  return keyval >= MPI_TAG_UB && keyval <= MPI_LASTUSEDCODE;
}

// A user keyval for set and delete: predefined keys are read-only.
bool UserKeyvalArg(Call& c, int keyval) {
  return c.Check(!IsPredefinedKey(keyval), Code(MPI_ERR_KEYVAL),
                 "keyval " + std::to_string(keyval) + " is predefined (read-only)");
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
  const AttrOutcome o = Attrs().CopyAll(Key(parent), parent_handle, Key(child), child_handle);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
}

int DeleteCommAttrs(Call& c, int handle, Comm* comm) {
  const AttrOutcome o = Attrs().DeleteAll(Key(comm), handle);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
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
  const int handle =
      Attrs().CreateKeyval(copy_fn == MPI_COMM_NULL_COPY_FN ? nullptr : copy_fn,
                           delete_fn == MPI_COMM_NULL_DELETE_FN ? nullptr : delete_fn, extra_state);
  if (handle < 0) return c.Fail(Code::kNoMem, "keyval table is full");
  *comm_keyval = handle;
  return MPI_SUCCESS;
}

int MPI_Comm_free_keyval(int* comm_keyval) {
  Call c("MPI_Comm_free_keyval");
  if (!c.NotNull(comm_keyval, "comm_keyval") || !UserKeyvalArg(c, *comm_keyval)) return c.Fail();
  if (!Attrs().FreeKeyval(*comm_keyval))
    return RaiseAttrError(c, {AttrOutcome::Kind::kBadKeyval, *comm_keyval});
  *comm_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  Call c("MPI_Comm_set_attr");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !UserKeyvalArg(c, comm_keyval)) return c.Fail();
  const AttrOutcome o = Attrs().Set(Key(cm), comm, comm_keyval, attribute_val);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
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
  const AttrOutcome o = Attrs().Get(Key(cm), comm_keyval, static_cast<void**>(attribute_val), flag);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  Call c("MPI_Comm_delete_attr");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !UserKeyvalArg(c, comm_keyval)) return c.Fail();
  const AttrOutcome o = Attrs().Delete(Key(cm), comm, comm_keyval);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
}

}  // extern "C"
