// Attributes cached on datatypes: user keyvals with copy callbacks (run by
// MPI_Type_dup) and delete callbacks (run by MPI_Type_delete_attr, on
// replacement, and when the handle is freed); the storage is attr_table.h.
#include "api/attr_table.h"
#include "api/type_internal.h"

using namespace nicq;
using api::AnyTypeArg;
using api::AttrOutcome;
using api::Call;

namespace {

// Datatype keyvals live in their own index range (attr_table.h).
constexpr int kFirstTypeKeyval = 1 << 15;

using TypeAttrs = api::AttrTable<MPI_Type_copy_attr_function, MPI_Type_delete_attr_function>;
void DropAttrsOnRelease(int handle);

TypeAttrs& Attrs() {
  static auto* table = [] {
    dtype::SetReleaseHook(DropAttrsOnRelease);
    return new TypeAttrs(kFirstTypeKeyval, 1 << 16);
  }();
  return *table;
}

TypeAttrs::Object Key(MPI_Datatype type) {
  return static_cast<TypeAttrs::Object>(static_cast<unsigned>(type));
}

int RaiseAttrError(Call& c, const AttrOutcome& o) {
  api::RecordAttrError(c, o, "datatype", "datatype keyval");
  return c.Fail();
}

// A type destroyed while attributes remain (its handle was freed while a
// request or another type still used it): no MPI call is there to report a
// failing delete callback, so its result is dropped.
void DropAttrsOnRelease(int handle) {
  Attrs().DropAll(Key(handle), handle);
}

}  // namespace

namespace nicq::api {

int CopyTypeAttrs(Call& c, MPI_Datatype from, MPI_Datatype to) {
  const AttrOutcome o = Attrs().CopyAll(Key(from), from, Key(to), to);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
}

int DeleteTypeAttrs(Call& c, MPI_Datatype type) {
  const AttrOutcome o = Attrs().DeleteAll(Key(type), type);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
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
  const int handle = Attrs().CreateKeyval(
      type_copy_attr_fn == MPI_TYPE_NULL_COPY_FN ? nullptr : type_copy_attr_fn,
      type_delete_attr_fn == MPI_TYPE_NULL_DELETE_FN ? nullptr : type_delete_attr_fn, extra_state);
  if (handle < 0) return c.Fail(Code::kNoMem, "datatype keyval table is full");
  *type_keyval = handle;
  return MPI_SUCCESS;
}

int MPI_Type_free_keyval(int* type_keyval) {
  Call c("MPI_Type_free_keyval");
  if (!c.NotNull(type_keyval, "type_keyval")) return c.Fail();
  if (!Attrs().FreeKeyval(*type_keyval))
    return RaiseAttrError(c, {AttrOutcome::Kind::kBadKeyval, *type_keyval});
  *type_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  Call c("MPI_Type_set_attr");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t)) return c.Fail();
  const AttrOutcome o = Attrs().Set(Key(datatype), datatype, type_keyval, attribute_val);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  Call c("MPI_Type_get_attr");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(attribute_val, "attribute_val") ||
      !c.NotNull(flag, "flag"))
    return c.Fail();
  const AttrOutcome o =
      Attrs().Get(Key(datatype), type_keyval, static_cast<void**>(attribute_val), flag);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  Call c("MPI_Type_delete_attr");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t)) return c.Fail();
  const AttrOutcome o = Attrs().Delete(Key(datatype), datatype, type_keyval);
  return o.ok() ? MPI_SUCCESS : RaiseAttrError(c, o);
}

}  // extern "C"
