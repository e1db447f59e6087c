#include "dtype/datatype.h"

#include <wchar.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <string>

#include "dtype/predefined.h"
#include "dtype/slot_table.h"
#include "dtype/type_builder.h"
#include "mpi.h"

namespace nicq::dtype {

std::atomic<Type*> g_predefined_types{nullptr};

namespace {

template <typename V>
struct Pair {
  V v;
  int i;
};
struct ShortInt {
  short v;
  int i;
};

struct PredefinedInfo {
  const char* name;
  std::int64_t size;    // bytes of data
  std::int64_t extent;  // sizeof the C type
  // Pair types: value type index and offset of the int.
  int value_index;
  std::int64_t int_offset;
  // Fortran types: the C type index whose layout and kernels it shares (a
  // pair's index part is then of the value's type, not an int).
  int c_index = 0;
};

// Indexed by NICQ_DT(i); entry 0 is MPI_DATATYPE_NULL.
const PredefinedInfo kInfo[kPredefinedCount] = {
    {"MPI_DATATYPE_NULL", 0, 0, 0, 0},
    {"MPI_CHAR", 1, 1, 0, 0},
    {"MPI_SIGNED_CHAR", 1, 1, 0, 0},
    {"MPI_UNSIGNED_CHAR", 1, 1, 0, 0},
    {"MPI_BYTE", 1, 1, 0, 0},
    {"MPI_SHORT", sizeof(short), sizeof(short), 0, 0},
    {"MPI_UNSIGNED_SHORT", sizeof(short), sizeof(short), 0, 0},
    {"MPI_INT", sizeof(int), sizeof(int), 0, 0},
    {"MPI_UNSIGNED", sizeof(unsigned), sizeof(unsigned), 0, 0},
    {"MPI_LONG", sizeof(long), sizeof(long), 0, 0},
    {"MPI_UNSIGNED_LONG", sizeof(long), sizeof(long), 0, 0},
    {"MPI_LONG_LONG", sizeof(long long), sizeof(long long), 0, 0},
    {"MPI_UNSIGNED_LONG_LONG", sizeof(long long), sizeof(long long), 0, 0},
    {"MPI_FLOAT", sizeof(float), sizeof(float), 0, 0},
    {"MPI_DOUBLE", sizeof(double), sizeof(double), 0, 0},
    {"MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double), 0, 0},
    {"MPI_C_BOOL", sizeof(bool), sizeof(bool), 0, 0},
    {"MPI_WCHAR", sizeof(wchar_t), sizeof(wchar_t), 0, 0},
    {"MPI_INT8_T", 1, 1, 0, 0},
    {"MPI_INT16_T", 2, 2, 0, 0},
    {"MPI_INT32_T", 4, 4, 0, 0},
    {"MPI_INT64_T", 8, 8, 0, 0},
    {"MPI_UINT8_T", 1, 1, 0, 0},
    {"MPI_UINT16_T", 2, 2, 0, 0},
    {"MPI_UINT32_T", 4, 4, 0, 0},
    {"MPI_UINT64_T", 8, 8, 0, 0},
    {"MPI_AINT", sizeof(MPI_Aint), sizeof(MPI_Aint), 0, 0},
    {"MPI_COUNT", sizeof(MPI_Count), sizeof(MPI_Count), 0, 0},
    {"MPI_OFFSET", sizeof(MPI_Offset), sizeof(MPI_Offset), 0, 0},
    {"MPI_PACKED", 1, 1, 0, 0},
    {"MPI_FLOAT_INT", sizeof(float) + sizeof(int), sizeof(Pair<float>), 13,
     offsetof(Pair<float>, i)},
    {"MPI_DOUBLE_INT", sizeof(double) + sizeof(int), sizeof(Pair<double>), 14,
     offsetof(Pair<double>, i)},
    {"MPI_LONG_INT", sizeof(long) + sizeof(int), sizeof(Pair<long>), 9, offsetof(Pair<long>, i)},
    {"MPI_2INT", 2 * sizeof(int), sizeof(Pair<int>), 7, offsetof(Pair<int>, i)},
    {"MPI_SHORT_INT", sizeof(short) + sizeof(int), sizeof(ShortInt), 5, offsetof(ShortInt, i)},
    {"MPI_LONG_DOUBLE_INT", sizeof(long double) + sizeof(int), sizeof(Pair<long double>), 15,
     offsetof(Pair<long double>, i)},
    // Complex: two parts, no padding (C's `_Complex T` is `T[2]` in layout).
    {"MPI_C_FLOAT_COMPLEX", 2 * sizeof(float), 2 * sizeof(float), 0, 0},
    {"MPI_C_DOUBLE_COMPLEX", 2 * sizeof(double), 2 * sizeof(double), 0, 0},
    {"MPI_C_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), 2 * sizeof(long double), 0, 0},
    {"MPI_CXX_BOOL", sizeof(bool), sizeof(bool), 0, 0},
    {"MPI_CXX_FLOAT_COMPLEX", 2 * sizeof(float), 2 * sizeof(float), 0, 0},
    {"MPI_CXX_DOUBLE_COMPLEX", 2 * sizeof(double), 2 * sizeof(double), 0, 0},
    {"MPI_CXX_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double), 2 * sizeof(long double), 0, 0},
    {"MPI_INTEGER", sizeof(int), sizeof(int), 0, 0, 7},
    {"MPI_REAL", sizeof(float), sizeof(float), 0, 0, 13},
    {"MPI_DOUBLE_PRECISION", sizeof(double), sizeof(double), 0, 0, 14},
    {"MPI_COMPLEX", 2 * sizeof(float), 2 * sizeof(float), 0, 0, 36},
    {"MPI_DOUBLE_COMPLEX", 2 * sizeof(double), 2 * sizeof(double), 0, 0, 37},
    {"MPI_LOGICAL", sizeof(int), sizeof(int), 0, 0, 7},
    {"MPI_CHARACTER", 1, 1, 0, 0, 1},
    {"MPI_2INTEGER", 2 * sizeof(int), 2 * sizeof(int), 7, sizeof(int), 7},
    {"MPI_2REAL", 2 * sizeof(float), 2 * sizeof(float), 13, sizeof(float), 13},
    {"MPI_2DOUBLE_PRECISION", 2 * sizeof(double), 2 * sizeof(double), 14, sizeof(double), 14},
    {"MPI_INTEGER1", 1, 1, 0, 0, 18},
    {"MPI_INTEGER2", 2, 2, 0, 0, 19},
    {"MPI_INTEGER4", 4, 4, 0, 0, 20},
    {"MPI_INTEGER8", 8, 8, 0, 0, 21},
    {"MPI_REAL4", 4, 4, 0, 0, 13},
    {"MPI_REAL8", 8, 8, 0, 0, 14},
    {"MPI_COMPLEX8", 8, 8, 0, 0, 36},
    {"MPI_COMPLEX16", 16, 16, 0, 0, 37},
};
static_assert(MPI_COMPLEX16 == NICQ_HANDLE(kKindDatatype, kPredefinedCount - 1));
static_assert(NICQ_DT_PREDEFINED_COUNT == kPredefinedCount);

int KindOf(int handle) {
  return (static_cast<unsigned>(handle) >> 24) & 0xff;
}
int IndexOf(int handle) {
  return handle & 0xffffff;
}

struct Registry {
  Type predefined[kPredefinedCount];
  SlotTable<Type> user{kFirstUserIndex};

  Registry() {
    for (int i = 1; i < kPredefinedCount; ++i) {
      Type& t = predefined[i];
      const PredefinedInfo& in = kInfo[i];
      t.handle = NICQ_HANDLE(kKindDatatype, i);
      t.predefined = true;
      t.committed = true;
      t.combiner = MPI_COMBINER_NAMED;
      t.size = in.size;
      t.extent = in.extent;
      t.unit = i;
      t.unit_dense = true;
      if (in.c_index) {
        // A Fortran type: the runs of its C twin (a pair: both parts).
        AddBlock(t.blocks, 0, in.size, in.c_index);
        t.elements = in.value_index ? 2 : 1;
      } else if (in.value_index) {
        AddBlock(t.blocks, 0, kInfo[in.value_index].size, in.value_index);
        AddBlock(t.blocks, in.int_offset, sizeof(int), 7);
        t.elements = 2;
      } else {
        AddBlock(t.blocks, 0, in.size, i);
        t.elements = 1;
      }
    }
  }
};

Registry& Reg() {
  static Registry* reg = [] {
    auto* r = new Registry();  // never destroyed: handles outlive statics
    g_predefined_types.store(r->predefined, std::memory_order_release);
    return r;
  }();
  return *reg;
}

}  // namespace

// (type_builder.h)
Type* NewType(int* handle) {
  int index = Reg().user.Alloc();
  if (index < 0) return nullptr;
  Type* t = Reg().user.Get(index);
  t->handle = NICQ_HANDLE(kKindDatatype, index);
  t->predefined = false;
  t->committed = false;
  t->size = t->lb = t->extent = t->elements = 0;
  t->blocks.clear();
  t->unit = 0;
  t->unit_dense = false;
  t->combiner = 0;
  t->contents = Contents{};
  t->large = false;
  t->name.clear();
  t->refs.store(1, std::memory_order_relaxed);
  *handle = t->handle;
  return t;
}

Status BadOld(const char* call, int old) {
  return Error(Code::kType, std::string(call) + ": invalid oldtype " + TypeName(old));
}

bool IsPairIndex(int index) {
  return index > 0 && index < kPredefinedCount && kInfo[index].value_index != 0;
}
int FortranTwin(int index) {
  return index > 0 && index < kPredefinedCount ? kInfo[index].c_index : 0;
}
int ComplexPartIndex(int index) {
  if (const int twin = FortranTwin(index); twin && !IsPairIndex(index)) index = twin;
  switch (index) {
    case 36:  // MPI_C_FLOAT_COMPLEX
    case 40:  // MPI_CXX_FLOAT_COMPLEX
      return 13;
    case 37:  // MPI_C_DOUBLE_COMPLEX
    case 41:  // MPI_CXX_DOUBLE_COMPLEX
      return 14;
    case 38:  // MPI_C_LONG_DOUBLE_COMPLEX
    case 42:  // MPI_CXX_LONG_DOUBLE_COMPLEX
      return 15;
    default:
      return 0;
  }
}
std::int64_t BasicSize(int index) {
  return index > 0 && index < kPredefinedCount ? kInfo[index].size : 0;
}

const char* TypeName(int handle) {
  if (handle == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  if (KindOf(handle) != kKindDatatype) return "(not a datatype handle)";
  int index = IndexOf(handle);
  if (index < kPredefinedCount) return kInfo[index].name;
  return Lookup(handle) ? "(derived datatype)" : "(freed or invalid datatype)";
}

Type* Lookup(int handle) {
  if (KindOf(handle) != kKindDatatype) return nullptr;
  int index = IndexOf(handle);
  if (index == 0) return nullptr;
  if (index < kPredefinedCount) return &Reg().predefined[index];
  if (index < kFirstUserIndex) return nullptr;
  return Reg().user.Get(index);
}

Status Commit(int handle) {
  Type* t = Lookup(handle);
  if (!t)
    return Error(Code::kType, std::string("MPI_Type_commit: invalid datatype ") + TypeName(handle));
  t->committed = true;
  return Status::Ok();
}

Status Free(int* handle) {
  Type* t = Lookup(*handle);
  if (!t)
    return Error(Code::kType, std::string("MPI_Type_free: invalid datatype ") + TypeName(*handle));
  if (t->predefined)
    return Error(Code::kType, std::string("MPI_Type_free: cannot free predefined datatype ") +
                                  TypeName(*handle));
  *handle = MPI_DATATYPE_NULL;
  Release(t);
  return Status::Ok();
}

void Retain(Type* t) {
  if (!t->predefined) t->refs.fetch_add(1, std::memory_order_relaxed);
}

namespace {
std::atomic<ReleaseHook> g_release_hook{nullptr};
}  // namespace

void SetReleaseHook(ReleaseHook hook) {
  g_release_hook.store(hook, std::memory_order_release);
}

void Release(Type* t) {
  if (t->predefined) return;
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    int index = IndexOf(t->handle);
    if (ReleaseHook hook = g_release_hook.load(std::memory_order_acquire)) hook(t->handle);
    t->blocks.clear();
    std::vector<int> parts;
    parts.swap(t->contents.types);
    for (int h : parts)
      if (Type* p = Lookup(h)) Release(p);
    Reg().user.Free(index);
  }
}

int LiveDerivedTypes() {
  return Reg().user.LiveCount();
}

}  // namespace nicq::dtype
