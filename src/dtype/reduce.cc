// MPI's reduction operations: the op handles (predefined and user-defined,
// kept alive while an operation in flight holds them), whether an op applies
// to a type, and reductions over any datatype's layout, built on the
// predefined kernels of reduce_kernels.cc.
#include "dtype/reduce.h"

#include <cstring>
#include <string>

#include "dtype/datatype.h"
#include "dtype/reduce_kernels.h"
#include "dtype/slot_table.h"
#include "mpi.h"

namespace nicq::dtype {
namespace {

int IndexOf(int handle) {
  return handle & 0xffffff;
}
int KindOf(int handle) {
  return (static_cast<unsigned>(handle) >> 24) & 0xff;
}

const char* const kOpNames[] = {"MPI_OP_NULL", "MPI_MAX",     "MPI_MIN",  "MPI_SUM",
                                "MPI_PROD",    "MPI_LAND",    "MPI_BAND", "MPI_LOR",
                                "MPI_BOR",     "MPI_LXOR",    "MPI_BXOR", "MPI_MINLOC",
                                "MPI_MAXLOC",  "MPI_REPLACE", "MPI_NO_OP"};
constexpr int kPredefinedOps = 15;

struct OpRegistry {
  Op predefined[kPredefinedOps];
  SlotTable<Op, 6, 64> user{kFirstUserOp};
  OpRegistry() {
    for (int i = 1; i < kPredefinedOps; ++i) {
      predefined[i].handle = NICQ_HANDLE(kKindOp, i);
      predefined[i].predefined = true;
    }
  }
};
OpRegistry& Ops() {
  static OpRegistry* reg = new OpRegistry();
  return *reg;
}

}  // namespace

namespace {

// The op behind a handle, including a user op freed by its handle but still
// held by an operation in flight.
Op* LiveOp(int handle) {
  if (KindOf(handle) != kKindOp) return nullptr;
  int index = IndexOf(handle);
  if (index == 0) return nullptr;
  if (index < kPredefinedOps) return &Ops().predefined[index];
  if (index < kFirstUserOp) return nullptr;
  return Ops().user.Get(index);
}

void RecycleUserOp(Op* o) {
  const int index = IndexOf(o->handle);
  o->fn = nullptr;
  o->fn_c = nullptr;
  o->freed.store(false, std::memory_order_relaxed);
  Ops().user.Free(index);
}

}  // namespace

const Op* LookupOp(int handle) {
  const Op* o = LiveOp(handle);
  return o && !o->freed.load(std::memory_order_acquire) ? o : nullptr;
}

void RetainOp(int handle) {
  Op* o = LiveOp(handle);
  if (o && !o->predefined) o->refs.fetch_add(1, std::memory_order_relaxed);
}

void ReleaseOp(int handle) {
  Op* o = LiveOp(handle);
  if (o && !o->predefined && o->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) RecycleUserOp(o);
}

const char* OpName(int handle) {
  if (KindOf(handle) != kKindOp) return "(not an op handle)";
  int index = IndexOf(handle);
  if (index < kPredefinedOps) return kOpNames[index];
  return LookupOp(handle) ? "(user op)" : "(freed or invalid op)";
}

namespace {
// OpAppliesTo's answers for predefined ops on predefined types, which never
// change (0: not asked yet, 1: no, 2: yes): every reduction's argument check
// asks, and the full look-up is ~130 instructions.
std::atomic<std::uint8_t> g_applies_memo[kPredefinedOps][kPredefinedCount];
bool OpAppliesToUncached(int op, int type);
}  // namespace

bool ReduceBasic(int op, int index, const void* in, void* inout, std::int64_t count) {
  return ReducePredefined(op, index, in, inout, inout, count);
}

bool OpAppliesTo(int op, int type) {
  const int oi = IndexOf(op), ti = IndexOf(type);
  const bool predefined = KindOf(op) == kKindOp && KindOf(type) == kKindDatatype && oi > 0 &&
                          oi < kPredefinedOps && ti > 0 && ti < kPredefinedCount;
  if (!predefined) return OpAppliesToUncached(op, type);
  std::atomic<std::uint8_t>& memo = g_applies_memo[oi][ti];
  const std::uint8_t known = memo.load(std::memory_order_relaxed);
  if (known != 0) return known == 2;
  const bool applies = OpAppliesToUncached(op, type);
  memo.store(applies ? 2 : 1, std::memory_order_relaxed);
  return applies;
}

namespace {
bool OpAppliesToUncached(int op, int type) {
  const Op* o = LookupOp(op);
  const Type* t = Lookup(type);
  if (!o || !t) return false;
  if (!o->predefined) return true;
  if (t->unit == 0) return op == MPI_REPLACE || op == MPI_NO_OP;
  if (IsPairIndex(t->unit) && !t->unit_dense) return op == MPI_REPLACE || op == MPI_NO_OP;
  return Applies(op, t->unit);
}
}  // namespace

Status Reduce(int op, int type, const void* in, void* inout, std::int64_t count) {
  const Op* o = LiveOp(op);
  const Type* t = Lookup(type);
  if (!o) return Error(Code::kOp, std::string("reduce: invalid op ") + OpName(op));
  if (!t) return Error(Code::kType, std::string("reduce: invalid datatype ") + TypeName(type));
  if (count <= 0 || op == MPI_NO_OP) return Status::Ok();
  if (!o->predefined) {
    auto* a = static_cast<char*>(const_cast<void*>(in));
    auto* b = static_cast<char*>(inout);
    int dt = type;
    if (o->fn_c) {
      long long len = count;
      o->fn_c(a, b, &len, &dt);
      return Status::Ok();
    }
    // User functions take an int count; split huge reductions.
    while (count > 0) {
      int len = count > (1 << 30) ? (1 << 30) : static_cast<int>(count);
      o->fn(a, b, &len, &dt);
      a += static_cast<std::int64_t>(len) * t->extent;
      b += static_cast<std::int64_t>(len) * t->extent;
      count -= len;
    }
    return Status::Ok();
  }
  if (op == MPI_REPLACE) {
    // Copy only the data runs: padding in inout stays as it was.
    for (std::int64_t k = 0; k < count; ++k)
      for (const Block& bl : t->blocks)
        std::memcpy(static_cast<char*>(inout) + k * t->extent + bl.offset,
                    static_cast<const char*>(in) + k * t->extent + bl.offset,
                    static_cast<std::size_t>(bl.length));
    return Status::Ok();
  }
  if (!OpAppliesTo(op, type))
    return Error(Code::kOp,
                 std::string("reduce: ") + OpName(op) + " is not defined for " + TypeName(type));
  if (IsPairIndex(t->unit)) {
    // Dense array of pairs: size/unit-size pairs per item.
    std::int64_t per = t->size / BasicSize(t->unit);
    (void)ReducePredefined(op, t->unit, in, inout, inout, count * per);
    return Status::Ok();
  }
  if (t->IsContiguous()) {
    std::int64_t n = count * t->size / BasicSize(t->unit);
    (void)ReducePredefined(op, t->unit, in, inout, inout, n);
    return Status::Ok();
  }
  for (std::int64_t k = 0; k < count; ++k)
    for (const Block& bl : t->blocks) {
      std::int64_t off = k * t->extent + bl.offset;
      (void)ReducePredefined(op, bl.basic, static_cast<const char*>(in) + off,
                             static_cast<char*>(inout) + off, static_cast<char*>(inout) + off,
                             bl.length / BasicSize(bl.basic));
    }
  return Status::Ok();
}

PreparedReduce PreparedReduce::For(int op, int type) {
  PreparedReduce p;
  const Op* o = LookupOp(op);
  const Type* t = Lookup(type);
  if (!o || !t || !o->predefined || op == MPI_NO_OP || op == MPI_REPLACE) return p;
  if (!OpAppliesTo(op, type) || !t->IsContiguous() || t->size <= 0) return p;
  p.op_ = op;
  p.unit_ = t->unit;
  p.units_per_item_ = t->size / BasicSize(t->unit);
  return p;
}

void PreparedReduce::Apply(const void* in, void* inout, std::int64_t count) const {
  if (count > 0) (void)ReducePredefined(op_, unit_, in, inout, inout, count * units_per_item_);
}

void PreparedReduce::Apply(const void* in, const void* in2, void* out, std::int64_t count) const {
  if (count > 0) (void)ReducePredefined(op_, unit_, in, in2, out, count * units_per_item_);
}

Status OpCreate(UserFunction fn, bool commute, int* out) {
  if (!fn) return Error(Code::kArg, "MPI_Op_create: user_fn is NULL");
  int index = Ops().user.Alloc();
  if (index < 0) return Error(Code::kNoMem, "MPI_Op_create: op table is full");
  Op* o = Ops().user.Get(index);
  o->handle = NICQ_HANDLE(kKindOp, index);
  o->predefined = false;
  o->commute = commute;
  o->fn = fn;
  o->fn_c = nullptr;
  o->refs.store(1, std::memory_order_relaxed);  // the handle's own reference
  *out = o->handle;
  return Status::Ok();
}

Status OpCreateLarge(UserFunctionC fn, bool commute, int* out) {
  if (!fn) return Error(Code::kArg, "MPI_Op_create_c: user_fn is NULL");
  NICQ_RETURN_IF_ERROR(OpCreate(reinterpret_cast<UserFunction>(fn), commute, out));
  Op* o = LiveOp(*out);
  o->fn = nullptr;
  o->fn_c = fn;
  return Status::Ok();
}

Status OpFree(int* handle) {
  const Op* o = LookupOp(*handle);
  if (!o) return Error(Code::kOp, std::string("MPI_Op_free: invalid op ") + OpName(*handle));
  if (o->predefined)
    return Error(Code::kOp,
                 std::string("MPI_Op_free: cannot free predefined op ") + OpName(*handle));
  LiveOp(*handle)->freed.store(true, std::memory_order_release);
  ReleaseOp(*handle);  // the handle's own reference
  *handle = MPI_OP_NULL;
  return Status::Ok();
}

}  // namespace nicq::dtype
