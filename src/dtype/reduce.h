// nicq::dtype reduction operations: kernels for every predefined op on the
// predefined types MPI allows it on, and user ops from MPI_Op_create.
// Handles are mpi.h's MPI_Op values (kind 0x58). Used by MPI_Reduce_local
// now and by the collectives later:
//   dtype::Reduce(MPI_SUM, MPI_DOUBLE, in, inout, n)  // inout[i] = in[i] op inout[i]
#pragma once

#include <atomic>
#include <cstdint>

#include "core/status.h"

namespace nicq::dtype {

inline constexpr int kKindOp = 0x58;
inline constexpr int kFirstUserOp = 32;

using UserFunction = void (*)(void* in, void* inout, int* len, int* datatype);
// MPI_Op_create_c's functions: the same with a large (MPI_Count) length.
using UserFunctionC = void (*)(void* in, void* inout, long long* len, int* datatype);

struct Op {
  int handle = 0;
  bool predefined = false;
  bool commute = true;
  UserFunction fn = nullptr;
  UserFunctionC fn_c = nullptr;  // set instead of fn by MPI_Op_create_c
  // User ops: references (the handle's own, until MPI_Op_free, plus one per
  // operation in flight that uses it), and whether MPI_Op_free was called.
  // A freed op stays callable until the last reference goes (MPI 4.1
  // 6.9.5: pending operations complete normally).
  std::atomic<int> refs{0};
  std::atomic<bool> freed{false};
};

const Op* LookupOp(int handle);  // nullptr: null, freed or not an op handle
// Keeps a user op alive for an operation that outlives its handle (no-op
// for predefined ops); every RetainOp is paired with one ReleaseOp.
void RetainOp(int handle);
void ReleaseOp(int handle);
const char* OpName(int handle);  // "MPI_SUM", "(user op)", ...

// Whether a predefined op has a kernel for this datatype (user ops: always).
// Derived types qualify when built from one predefined type that does.
bool OpAppliesTo(int op, int type);

// inout[i] = in[i] op inout[i] for `count` items of `type`.
Status Reduce(int op, int type, const void* in, void* inout, std::int64_t count);

// inout[i] = in[i] op inout[i] for `count` elements of the predefined type
// index `index` (1..42) and a predefined op other than MPI_REPLACE and
// MPI_NO_OP, without looking either up; false when the op does not apply to
// the type. For callers that apply one element at a time (the one-sided
// compare-and-swap loops, src/rma/direct_atomic.cc).
bool ReduceBasic(int op, int index, const void* in, void* inout, std::int64_t count);

// A reduction resolved once, for schedules that apply the same op and type
// at every step: Reduce() looks up the op and type, checks that they apply
// and picks the layout on every call (~300 instructions for one double).
// valid() only for a predefined op (not MPI_REPLACE / MPI_NO_OP) on a
// contiguous type of one basic unit; otherwise callers use Reduce().
class PreparedReduce {
 public:
  static PreparedReduce For(int op, int type);
  bool valid() const { return units_per_item_ > 0; }
  // inout[i] = in[i] op inout[i] for `count` items.
  void Apply(const void* in, void* inout, std::int64_t count) const;
  // out[i] = in[i] op in2[i]: one pass where the two-operand form needs a
  // copy of in2 into out first. `out` is in2 itself or overlaps neither.
  void Apply(const void* in, const void* in2, void* out, std::int64_t count) const;

 private:
  int op_ = 0, unit_ = 0;
  std::int64_t units_per_item_ = 0;
};

Status OpCreate(UserFunction fn, bool commute, int* out);
Status OpCreateLarge(UserFunctionC fn, bool commute, int* out);
Status OpFree(int* handle);

}  // namespace nicq::dtype
