// The element-wise kernels of MPI's predefined reduction operations, one
// template per class of element type, dispatched on the predefined type.
#include "dtype/reduce_kernels.h"

#include <wchar.h>

#include <cstring>
#include <type_traits>

#include "dtype/datatype.h"
#include "mpi.h"

namespace nicq::dtype {
namespace {

int IndexOf(int handle) {
  return handle & 0xffffff;
}

// Integer arithmetic in an unsigned type so overflow wraps (two's
// complement) instead of being undefined behaviour. Types narrower than
// `unsigned` widen to it first: their unsigned product would otherwise be
// promoted to a signed int and could overflow.
template <typename T>
using WrapType =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <typename T>
T WrapMul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}

enum class Cls { kInt, kFloat, kBool, kByte };

// out[i] = a[i] op b[i]. `out` is `b` itself (the two-operand form,
// inout = in op inout) or a buffer apart from both; `a` never overlaps
// either (MPI forbids aliased buffers, and the engines reduce a received
// copy into the result). restrict lets the compiler vectorize the
// element-wise loops without a runtime overlap check.
template <typename T, typename F>
void Loop(const void* in, const void* in2, void* out, std::int64_t n, F f) {
  const T* __restrict a = static_cast<const T*>(in);
  if (in2 == out) {
    T* __restrict b = static_cast<T*>(out);
    for (std::int64_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
    return;
  }
  const T* __restrict b = static_cast<const T*>(in2);
  T* __restrict o = static_cast<T*>(out);
  for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
}

// Kernel for one value type; false when the op does not apply to the class.
template <typename T, Cls kCls>
bool Kernel(int op, const void* in, const void* in2, void* io, std::int64_t n) {
  constexpr bool arith = kCls == Cls::kInt || kCls == Cls::kFloat;
  constexpr bool logical = kCls == Cls::kInt || kCls == Cls::kBool;
  constexpr bool bitwise = kCls == Cls::kInt || kCls == Cls::kByte;
  switch (IndexOf(op)) {
    case 1:  // MAX
      if constexpr (arith)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return a > b ? a : b; }), true;
      break;
    case 2:  // MIN
      if constexpr (arith)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return a < b ? a : b; }), true;
      break;
    case 3:  // SUM
      if constexpr (kCls == Cls::kInt) return Loop<T>(in, in2, io, n, WrapAdd<T>), true;
      if constexpr (kCls == Cls::kFloat)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return a + b; }), true;
      break;
    case 4:  // PROD
      if constexpr (kCls == Cls::kInt) return Loop<T>(in, in2, io, n, WrapMul<T>), true;
      if constexpr (kCls == Cls::kFloat)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return a * b; }), true;
      break;
    case 5:  // LAND
      if constexpr (logical)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return T(a && b); }), true;
      break;
    case 6:  // BAND
      if constexpr (bitwise)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return T(a & b); }), true;
      break;
    case 7:  // LOR
      if constexpr (logical)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return T(a || b); }), true;
      break;
    case 8:  // BOR
      if constexpr (bitwise)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return T(a | b); }), true;
      break;
    case 9:  // LXOR
      if constexpr (logical)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return T(!a != !b); }), true;
      break;
    case 10:  // BXOR
      if constexpr (bitwise)
        return Loop<T>(in, in2, io, n, [](T a, T b) { return T(a ^ b); }), true;
      break;
  }
  return false;
}

// A complex element as its two parts (the layout of C's `T _Complex` and of
// std::complex<T>). SUM and PROD are written out rather than taken from
// std::complex: its operator* checks for NaN/infinity and calls a library
// routine, which keeps the loop from vectorizing. MPI's PROD is the plain
// (a+bi)(c+di) = (ac-bd) + (ad+bc)i.
template <typename T>
struct Complex {
  T re, im;
};

template <typename T>
bool ComplexKernel(int op, const void* in, const void* in2, void* io, std::int64_t n) {
  using C = Complex<T>;
  if (op == MPI_SUM)
    return Loop<C>(in, in2, io, n, [](C a, C b) { return C{a.re + b.re, a.im + b.im}; }), true;
  if (op == MPI_PROD)
    return Loop<C>(in, in2, io, n,
                   [](C a, C b) {
                     return C{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
                   }),
           true;
  return false;  // MAX, MIN, logical, bitwise: not defined on complex types
}

template <typename V>
struct Pair {
  V v;
  int i;
};

// MINLOC/MAXLOC: the better value wins; on ties the smaller index.
template <typename V>
bool PairKernel(int op, const void* in, const void* in2, void* io, std::int64_t n) {
  bool max = op == MPI_MAXLOC;
  if (!max && op != MPI_MINLOC) return false;
  const auto* a = static_cast<const Pair<V>*>(in);
  const auto* b = static_cast<const Pair<V>*>(in2);
  auto* o = static_cast<Pair<V>*>(io);
  for (std::int64_t k = 0; k < n; ++k) {
    bool take = max ? a[k].v > b[k].v : a[k].v < b[k].v;
    // Value and index only: the struct's padding in inout stays as it was.
    if (take || (a[k].v == b[k].v && a[k].i < b[k].i)) {
      o[k].v = a[k].v;
      o[k].i = a[k].i;
    } else if (b != o) {
      o[k].v = b[k].v;
      o[k].i = b[k].i;
    }
  }
  return true;
}

// MPI_2REAL, MPI_2DOUBLE_PRECISION: the index is of the value's type.
template <typename V>
bool SameTypePairKernel(int op, const void* in, const void* in2, void* io, std::int64_t n) {
  bool max = op == MPI_MAXLOC;
  if (!max && op != MPI_MINLOC) return false;
  const V* a = static_cast<const V*>(in);
  const V* b = static_cast<const V*>(in2);
  V* o = static_cast<V*>(io);
  for (std::int64_t k = 0; k < 2 * n; k += 2) {
    bool take = max ? a[k] > b[k] : a[k] < b[k];
    if (take || (a[k] == b[k] && a[k + 1] < b[k + 1])) {
      o[k] = a[k];
      o[k + 1] = a[k + 1];
    } else if (b != o) {
      o[k] = b[k];
      o[k + 1] = b[k + 1];
    }
  }
  return true;
}

}  // namespace

// Fortran named types: their C twin's kernels, except the logical, the
// character and the same-type pairs, which have their own rules.
static bool ReduceFortran(int op, int index, const void* in, const void* in2, void* io,
                          std::int64_t n) {
  switch (index) {
    case 48:  // MPI_LOGICAL: the logical operations on an int (nonzero is true)
      return Kernel<int, Cls::kBool>(op, in, in2, io, n);
    case 49:  // MPI_CHARACTER: no reductions
      return false;
    case 50:  // MPI_2INTEGER: laid out as MPI_2INT
      return PairKernel<int>(op, in, in2, io, n);
    case 51:  // MPI_2REAL
      return SameTypePairKernel<float>(op, in, in2, io, n);
    case 52:  // MPI_2DOUBLE_PRECISION
      return SameTypePairKernel<double>(op, in, in2, io, n);
    default:
      return ReducePredefined(op, FortranTwin(index), in, in2, io, n);
  }
}

// Dispatch on the predefined type index; false when the op does not apply.
bool ReducePredefined(int op, int index, const void* in, const void* in2, void* io,
                      std::int64_t n) {
  if (index >= kFirstFortranIndex) return ReduceFortran(op, index, in, in2, io, n);
  switch (index) {
    case 1:
      // MPI_CHAR is a character type in the standard's op table, but MPICH
      // and Open MPI reduce it as the C `char` it is, and the standard
      // micro-benchmarks reduce MPI_CHAR by default (docs/mpi-api.md).
      return Kernel<char, Cls::kInt>(op, in, in2, io, n);
    case 2:
    case 18:
      return Kernel<std::int8_t, Cls::kInt>(op, in, in2, io, n);
    case 3:
    case 22:
      return Kernel<std::uint8_t, Cls::kInt>(op, in, in2, io, n);
    case 4:
      return Kernel<std::uint8_t, Cls::kByte>(op, in, in2, io, n);
    case 5:
      return Kernel<short, Cls::kInt>(op, in, in2, io, n);
    case 6:
      return Kernel<unsigned short, Cls::kInt>(op, in, in2, io, n);
    case 7:
      return Kernel<int, Cls::kInt>(op, in, in2, io, n);
    case 8:
      return Kernel<unsigned, Cls::kInt>(op, in, in2, io, n);
    case 9:
      return Kernel<long, Cls::kInt>(op, in, in2, io, n);
    case 10:
      return Kernel<unsigned long, Cls::kInt>(op, in, in2, io, n);
    case 11:
      return Kernel<long long, Cls::kInt>(op, in, in2, io, n);
    case 12:
      return Kernel<unsigned long long, Cls::kInt>(op, in, in2, io, n);
    case 13:
      return Kernel<float, Cls::kFloat>(op, in, in2, io, n);
    case 14:
      return Kernel<double, Cls::kFloat>(op, in, in2, io, n);
    case 15:
      return Kernel<long double, Cls::kFloat>(op, in, in2, io, n);
    case 16:
      return Kernel<bool, Cls::kBool>(op, in, in2, io, n);
    case 19:
      return Kernel<std::int16_t, Cls::kInt>(op, in, in2, io, n);
    case 20:
      return Kernel<std::int32_t, Cls::kInt>(op, in, in2, io, n);
    case 21:
      return Kernel<std::int64_t, Cls::kInt>(op, in, in2, io, n);
    case 23:
      return Kernel<std::uint16_t, Cls::kInt>(op, in, in2, io, n);
    case 24:
      return Kernel<std::uint32_t, Cls::kInt>(op, in, in2, io, n);
    case 25:
      return Kernel<std::uint64_t, Cls::kInt>(op, in, in2, io, n);
    case 26:
      return Kernel<MPI_Aint, Cls::kInt>(op, in, in2, io, n);
    case 27:
      return Kernel<MPI_Count, Cls::kInt>(op, in, in2, io, n);
    case 28:
      return Kernel<MPI_Offset, Cls::kInt>(op, in, in2, io, n);
    case 30:
      return PairKernel<float>(op, in, in2, io, n);
    case 31:
      return PairKernel<double>(op, in, in2, io, n);
    case 32:
      return PairKernel<long>(op, in, in2, io, n);
    case 33:
      return PairKernel<int>(op, in, in2, io, n);
    case 34:
      return PairKernel<short>(op, in, in2, io, n);
    case 35:
      return PairKernel<long double>(op, in, in2, io, n);
    case 36:  // MPI_C_FLOAT_COMPLEX
    case 40:  // MPI_CXX_FLOAT_COMPLEX
      return ComplexKernel<float>(op, in, in2, io, n);
    case 37:  // MPI_C_DOUBLE_COMPLEX
    case 41:  // MPI_CXX_DOUBLE_COMPLEX
      return ComplexKernel<double>(op, in, in2, io, n);
    case 38:  // MPI_C_LONG_DOUBLE_COMPLEX
    case 42:  // MPI_CXX_LONG_DOUBLE_COMPLEX
      return ComplexKernel<long double>(op, in, in2, io, n);
    case 39:  // MPI_CXX_BOOL: a logical type, as MPI_C_BOOL
      return Kernel<bool, Cls::kBool>(op, in, in2, io, n);
    default:
      return false;  // MPI_WCHAR, MPI_PACKED: no reductions
  }
}

bool Applies(int op, int unit) {
  if (op == MPI_REPLACE || op == MPI_NO_OP) return true;
  // Probe the kernel table with an empty range.
  return ReducePredefined(op, unit, nullptr, nullptr, nullptr, 0);
}

}  // namespace nicq::dtype
