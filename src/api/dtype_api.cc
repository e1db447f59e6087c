// MPI entry points for datatype sizes, packing, status queries and reduction
// operations (constructors are in type_create.cc).
#include <climits>
#include <string>
#include <vector>

#include "api/type_internal.h"
#include "dtype/reduce.h"

using namespace nicq;
using api::Call;

namespace {

// Any live datatype, committed or not (size/extent queries accept both).
bool AnyType(Call& c, MPI_Datatype h, dtype::Type** out, const char* what = "datatype") {
  if (h == MPI_DATATYPE_NULL)
    return c.Check(false, Code::kType, std::string(what) + " is MPI_DATATYPE_NULL");
  *out = dtype::Lookup(h);
  if (*out) return true;
  return c.Check(
      false, Code::kType,
      std::string("invalid ") + what + " " + std::to_string(h) + " " + dtype::TypeName(h));
}

bool StatusArg(Call& c, const MPI_Status* s) {
  if (s != nullptr && s != MPI_STATUS_IGNORE) return true;
  return c.Check(false, Code::kArg, "status is NULL or MPI_STATUS_IGNORE");
}

}  // namespace

extern "C" {

int MPI_Type_size(MPI_Datatype datatype, int* size) {
  Call c("MPI_Type_size");
  dtype::Type* t;
  if (!AnyType(c, datatype, &t) || !c.NotNull(size, "size")) return c.Fail();
  *size = t->size > INT_MAX ? MPI_UNDEFINED : static_cast<int>(t->size);
  return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  Call c("MPI_Type_size_x");
  dtype::Type* t;
  if (!AnyType(c, datatype, &t) || !c.NotNull(size, "size")) return c.Fail();
  *size = t->size;
  return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  Call c("MPI_Type_get_extent");
  dtype::Type* t;
  if (!AnyType(c, datatype, &t) || !c.NotNull(lb, "lb") || !c.NotNull(extent, "extent"))
    return c.Fail();
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  Call c("MPI_Type_get_extent_x");
  dtype::Type* t;
  if (!AnyType(c, datatype, &t) || !c.NotNull(lb, "lb") || !c.NotNull(extent, "extent"))
    return c.Fail();
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  Call c("MPI_Pack_size");
  dtype::Type* t;
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.CountArg(incount, "incount") ||
      !c.TypeArg(datatype, &t) || !c.NotNull(size, "size"))
    return c.Fail();
  std::int64_t n = incount * t->size;
  if (n > INT_MAX) return c.Fail(Code::kCount, "packed size exceeds INT_MAX bytes");
  *size = static_cast<int>(n);
  return MPI_SUCCESS;
}

int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
             int* position, MPI_Comm comm) {
  Call c("MPI_Pack");
  dtype::Type* t;
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.CountArg(incount, "incount") ||
      !c.TypeArg(datatype, &t) || !c.BufferArg(inbuf, incount, t, "inbuf") ||
      !c.NotNull(position, "position") || !c.CountArg(outsize, "outsize"))
    return c.Fail();
  std::int64_t need = incount * t->size;
  if (*position < 0 || *position + need > outsize)
    return c.Fail(Code::kTruncate, "outsize " + std::to_string(outsize) + " cannot hold " +
                                       std::to_string(need) + " more bytes at position " +
                                       std::to_string(*position));
  if (need > 0 && !outbuf) return c.Fail(Code::kBuffer, "outbuf is NULL");
  dtype::Pack(*t, inbuf, incount, static_cast<char*>(outbuf) + *position);
  *position += static_cast<int>(need);
  return MPI_SUCCESS;
}

int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm) {
  Call c("MPI_Unpack");
  dtype::Type* t;
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.CountArg(outcount, "outcount") ||
      !c.TypeArg(datatype, &t) || !c.BufferArg(outbuf, outcount, t, "outbuf") ||
      !c.NotNull(position, "position") || !c.CountArg(insize, "insize"))
    return c.Fail();
  std::int64_t need = outcount * t->size;
  if (*position < 0 || *position + need > insize)
    return c.Fail(Code::kTruncate, "insize " + std::to_string(insize) + " holds fewer than " +
                                       std::to_string(need) + " bytes after position " +
                                       std::to_string(*position));
  if (need > 0 && !inbuf) return c.Fail(Code::kBuffer, "inbuf is NULL");
  dtype::Unpack(*t, static_cast<const char*>(inbuf) + *position, need, outcount, outbuf);
  *position += static_cast<int>(need);
  return MPI_SUCCESS;
}

int MPI_Type_commit(MPI_Datatype* datatype) {
  Call c("MPI_Type_commit");
  dtype::Type* t;
  if (!c.NotNull(datatype, "datatype") || !AnyType(c, *datatype, &t)) return c.Fail();
  return c.Fail(dtype::Commit(*datatype));
}

int MPI_Type_free(MPI_Datatype* datatype) {
  Call c("MPI_Type_free");
  dtype::Type* t;
  if (!c.NotNull(datatype, "datatype") || !AnyType(c, *datatype, &t)) return c.Fail();
  if (t->predefined)
    return c.Fail(Code::kType,
                  std::string("cannot free predefined datatype ") + dtype::TypeName(*datatype));
  // The last reference runs the attributes' delete callbacks here, where a
  // failing one can fail the call; otherwise they run when the last
  // request or derived type using it lets go (type_attr.cc's release hook).
  if (t->refs.load(std::memory_order_acquire) == 1)
    if (int rc = api::DeleteTypeAttrs(c, *datatype); rc != MPI_SUCCESS) return rc;
  return c.Fail(dtype::Free(datatype));
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  Call c("MPI_Get_count");
  dtype::Type* t;
  if (!StatusArg(c, status) || !AnyType(c, datatype, &t) || !c.NotNull(count, "count"))
    return c.Fail();
  std::int64_t n = dtype::CountFromBytes(*t, status->nicq_count);
  *count = n < 0 || n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  Call c("MPI_Get_elements_x");
  dtype::Type* t;
  if (!StatusArg(c, status) || !AnyType(c, datatype, &t) || !c.NotNull(count, "count"))
    return c.Fail();
  std::int64_t n = dtype::ElementsFromBytes(*t, status->nicq_count);
  *count = n < 0 ? MPI_UNDEFINED : n;
  return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  MPI_Count n = 0;
  int rc = PMPI_Get_elements_x(status, datatype, &n);
  if (rc == MPI_SUCCESS) *count = n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  return rc;
}

int MPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  Call c("MPI_Status_set_elements_x");
  dtype::Type* t;
  if (!StatusArg(c, status) || !AnyType(c, datatype, &t) ||
      !c.Check(count >= 0, Code::kCount, "negative count " + std::to_string(count)))
    return c.Fail();
  std::int64_t bytes = dtype::BytesFromElements(*t, count);
  if (bytes < 0) return c.Fail(Code::kArg, "count is not a whole number of elements");
  status->nicq_count = bytes;
  return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return PMPI_Status_set_elements_x(status, datatype, count);
}

int MPI_Status_set_cancelled(MPI_Status* status, int flag) {
  Call c("MPI_Status_set_cancelled");
  if (!StatusArg(c, status)) return c.Fail();
  status->nicq_cancelled = flag != 0;
  return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status* status, int* flag) {
  Call c("MPI_Test_cancelled");
  if (!StatusArg(c, status) || !c.NotNull(flag, "flag")) return c.Fail();
  *flag = status->nicq_cancelled;
  return MPI_SUCCESS;
}

int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  Call c("MPI_Op_create");
  if (!c.NotNull(reinterpret_cast<const void*>(user_fn), "user_fn") || !c.NotNull(op, "op"))
    return c.Fail();
  int h = 0;
  Status st = dtype::OpCreate(reinterpret_cast<dtype::UserFunction>(user_fn), commute != 0, &h);
  if (!st.ok()) return c.Fail(st);
  *op = h;
  return MPI_SUCCESS;
}

int MPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
  Call c("MPI_Op_create_c");
  if (!c.NotNull(reinterpret_cast<const void*>(user_fn), "user_fn") || !c.NotNull(op, "op"))
    return c.Fail();
  int h = 0;
  Status st =
      dtype::OpCreateLarge(reinterpret_cast<dtype::UserFunctionC>(user_fn), commute != 0, &h);
  if (!st.ok()) return c.Fail(st);
  *op = h;
  return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op* op) {
  Call c("MPI_Op_free");
  if (!c.NotNull(op, "op")) return c.Fail();
  const dtype::Op* o = dtype::LookupOp(*op);
  if (!o) return c.Fail(Code::kOp, std::string("invalid op ") + dtype::OpName(*op));
  if (o->predefined)
    return c.Fail(Code::kOp, std::string("cannot free predefined op ") + dtype::OpName(*op));
  return c.Fail(dtype::OpFree(op));
}

int MPI_Op_commutative(MPI_Op op, int* commute) {
  Call c("MPI_Op_commutative");
  const dtype::Op* o = dtype::LookupOp(op);
  if (!c.Check(o != nullptr, Code::kOp, std::string("invalid op ") + dtype::OpName(op)) ||
      !c.NotNull(commute, "commute"))
    return c.Fail();
  *commute = o->commute;
  return MPI_SUCCESS;
}

int MPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                     MPI_Op op) {
  Call c("MPI_Reduce_local");
  dtype::Type* t;
  if (!c.CountArg(count) || !c.TypeArg(datatype, &t) || !c.BufferArg(inbuf, count, t, "inbuf") ||
      !c.BufferArg(inoutbuf, count, t, "inoutbuf"))
    return c.Fail();
  const dtype::Op* o = dtype::LookupOp(op);
  if (!o) return c.Fail(Code::kOp, std::string("invalid op ") + dtype::OpName(op));
  if (!dtype::OpAppliesTo(op, datatype))
    return c.Fail(Code::kOp, std::string(dtype::OpName(op)) + " is not defined for datatype " +
                                 dtype::TypeName(datatype));
  return c.Fail(dtype::Reduce(op, datatype, inbuf, inoutbuf, count));
}

}  // extern "C"
