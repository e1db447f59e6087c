// Reduction kernels: every predefined op on every predefined type, checked
// against expected data; ops that MPI does not define for a type must be
// refused (MPI_ERR_OP) and leave inout unchanged.
#include "dtype/reduce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dtype/datatype.h"
#include "mpi.h"

namespace nicq::dtype {
namespace {

const int kAllOps[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,    MPI_LOR,
                       MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};

// in = {1, 0, 5, 3}, inout = {2, 0, 5, 1}: expected inout after each op.
template <typename T>
std::vector<T> IntExpected(int op) {
  switch (op) {
    case MPI_MAX:
      return {2, 0, 5, 3};
    case MPI_MIN:
      return {1, 0, 5, 1};
    case MPI_SUM:
      return {3, 0, 10, 4};
    case MPI_PROD:
      return {2, 0, 25, 3};
    case MPI_LAND:
      return {1, 0, 1, 1};
    case MPI_LOR:
      return {1, 0, 1, 1};
    case MPI_LXOR:
      return {0, 0, 0, 0};
    case MPI_BAND:
      return {0, 0, 5, 1};
    case MPI_BOR:
      return {3, 0, 5, 3};
    case MPI_BXOR:
      return {3, 0, 0, 2};
    case MPI_REPLACE:
      return {1, 0, 5, 3};
    case MPI_NO_OP:
      return {2, 0, 5, 1};
  }
  return {};
}

// Runs every op on type h (values of C type T); `allowed` lists the ops MPI
// defines for it besides REPLACE and NO_OP.
template <typename T>
void CheckType(int h, std::vector<int> allowed) {
  allowed.push_back(MPI_REPLACE);
  allowed.push_back(MPI_NO_OP);
  for (int op : kAllOps) {
    bool ok = std::find(allowed.begin(), allowed.end(), op) != allowed.end();
    SCOPED_TRACE(std::string(TypeName(h)) + " " + OpName(op));
    EXPECT_EQ(OpAppliesTo(op, h), ok);
    T in[4] = {T(1), T(0), T(5), T(3)};
    T io[4] = {T(2), T(0), T(5), T(1)};
    Status st = Reduce(op, h, in, io, 4);
    if (!ok) {
      EXPECT_EQ(st.code(), Code::kOp);
      EXPECT_NE(st.message().find(OpName(op)), std::string::npos) << st.message();
      EXPECT_EQ(io[0], T(2));
      continue;
    }
    ASSERT_TRUE(st.ok()) << st.message();
    std::vector<T> want = IntExpected<T>(op);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(io[i], want[i]) << "element " << i;
  }
}

const std::vector<int> kIntOps = {MPI_MAX,  MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,
                                  MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR};
const std::vector<int> kFloatOps = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD};

TEST(ApiReduce, IntegerTypes) {
  // MPI_CHAR reduces as C char, as MPICH and Open MPI do (docs/mpi-api.md).
  CheckType<char>(MPI_CHAR, kIntOps);
  CheckType<signed char>(MPI_SIGNED_CHAR, kIntOps);
  CheckType<unsigned char>(MPI_UNSIGNED_CHAR, kIntOps);
  CheckType<short>(MPI_SHORT, kIntOps);
  CheckType<unsigned short>(MPI_UNSIGNED_SHORT, kIntOps);
  CheckType<int>(MPI_INT, kIntOps);
  CheckType<unsigned>(MPI_UNSIGNED, kIntOps);
  CheckType<long>(MPI_LONG, kIntOps);
  CheckType<unsigned long>(MPI_UNSIGNED_LONG, kIntOps);
  CheckType<long long>(MPI_LONG_LONG, kIntOps);
  CheckType<unsigned long long>(MPI_UNSIGNED_LONG_LONG, kIntOps);
  CheckType<std::int8_t>(MPI_INT8_T, kIntOps);
  CheckType<std::int16_t>(MPI_INT16_T, kIntOps);
  CheckType<std::int32_t>(MPI_INT32_T, kIntOps);
  CheckType<std::int64_t>(MPI_INT64_T, kIntOps);
  CheckType<std::uint8_t>(MPI_UINT8_T, kIntOps);
  CheckType<std::uint16_t>(MPI_UINT16_T, kIntOps);
  CheckType<std::uint32_t>(MPI_UINT32_T, kIntOps);
  CheckType<std::uint64_t>(MPI_UINT64_T, kIntOps);
  CheckType<MPI_Aint>(MPI_AINT, kIntOps);
  CheckType<MPI_Count>(MPI_COUNT, kIntOps);
  CheckType<MPI_Offset>(MPI_OFFSET, kIntOps);
}

TEST(ApiReduce, FloatingTypes) {
  CheckType<float>(MPI_FLOAT, kFloatOps);
  CheckType<double>(MPI_DOUBLE, kFloatOps);
  CheckType<long double>(MPI_LONG_DOUBLE, kFloatOps);
  double in[2] = {1.5, -2.25}, io[2] = {0.5, 4.0};
  ASSERT_TRUE(Reduce(MPI_SUM, MPI_DOUBLE, in, io, 2).ok());
  EXPECT_DOUBLE_EQ(io[0], 2.0);
  EXPECT_DOUBLE_EQ(io[1], 1.75);
}

TEST(ApiReduce, ByteAndBool) {
  CheckType<unsigned char>(MPI_BYTE, {MPI_BAND, MPI_BOR, MPI_BXOR});
  for (int op : kAllOps) {
    SCOPED_TRACE(OpName(op));
    bool ok =
        op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR || op == MPI_REPLACE || op == MPI_NO_OP;
    EXPECT_EQ(OpAppliesTo(op, MPI_C_BOOL), ok);
    bool in[4] = {true, false, true, false}, io[4] = {true, true, false, false};
    Status st = Reduce(op, MPI_C_BOOL, in, io, 4);
    EXPECT_EQ(st.ok(), ok);
    if (op == MPI_LAND) {
      EXPECT_TRUE(io[0] && !io[1] && !io[2] && !io[3]);
    }
    if (op == MPI_LOR) {
      EXPECT_TRUE(io[0] && io[1] && io[2] && !io[3]);
    }
    if (op == MPI_LXOR) {
      EXPECT_TRUE(!io[0] && io[1] && io[2] && !io[3]);
    }
  }
}

TEST(ApiReduce, WideTextAndPackedTypesHaveNoArithmetic) {
  for (int h : {MPI_WCHAR, MPI_PACKED})
    for (int op : kAllOps)
      EXPECT_EQ(OpAppliesTo(op, h), op == MPI_REPLACE || op == MPI_NO_OP)
          << TypeName(h) << " " << OpName(op);
}

template <typename V>
struct Pair {
  V v;
  int i;
};

template <typename V>
void CheckPair(int h) {
  SCOPED_TRACE(TypeName(h));
  for (int op : kAllOps) {
    bool ok = op == MPI_MINLOC || op == MPI_MAXLOC || op == MPI_REPLACE || op == MPI_NO_OP;
    EXPECT_EQ(OpAppliesTo(op, h), ok) << OpName(op);
  }
  // Ties go to the smaller index.
  Pair<V> in[3] = {{V(5), 1}, {V(2), 7}, {V(4), 0}};
  Pair<V> io[3] = {{V(3), 2}, {V(2), 3}, {V(4), 9}};
  ASSERT_TRUE(Reduce(MPI_MAXLOC, h, in, io, 3).ok());
  EXPECT_EQ(io[0].v, V(5));
  EXPECT_EQ(io[0].i, 1);
  EXPECT_EQ(io[1].i, 3);
  EXPECT_EQ(io[2].i, 0);
  Pair<V> in2[2] = {{V(1), 4}, {V(9), 1}};
  Pair<V> io2[2] = {{V(3), 2}, {V(9), 6}};
  ASSERT_TRUE(Reduce(MPI_MINLOC, h, in2, io2, 2).ok());
  EXPECT_EQ(io2[0].v, V(1));
  EXPECT_EQ(io2[0].i, 4);
  EXPECT_EQ(io2[1].i, 1);
  EXPECT_EQ(Reduce(MPI_SUM, h, in, io, 3).code(), Code::kOp);
}

TEST(ApiReduce, CharSumWrapsAsCChar) {
  char in[3] = {100, -3, 1}, io[3] = {100, 5, -1};
  ASSERT_TRUE(Reduce(MPI_SUM, MPI_CHAR, in, io, 3).ok());
  EXPECT_EQ(io[0], static_cast<char>(200));
  EXPECT_EQ(io[1], 2);
  EXPECT_EQ(io[2], 0);
}

TEST(ApiReduce, PairTypes) {
  CheckPair<float>(MPI_FLOAT_INT);
  CheckPair<double>(MPI_DOUBLE_INT);
  CheckPair<long>(MPI_LONG_INT);
  CheckPair<int>(MPI_2INT);
  CheckPair<long double>(MPI_LONG_DOUBLE_INT);
  struct ShortInt {
    short v;
    int i;
  } in[1] = {{7, 3}}, io[1] = {{7, 1}};
  ASSERT_TRUE(Reduce(MPI_MAXLOC, MPI_SHORT_INT, in, io, 1).ok());
  EXPECT_EQ(io[0].i, 1);
}

TEST(ApiReduce, SignedOverflowWraps) {
  int in[1] = {INT_MAX}, io[1] = {1};
  ASSERT_TRUE(Reduce(MPI_SUM, MPI_INT, in, io, 1).ok());
  EXPECT_EQ(io[0], INT_MIN);
  long long a[1] = {LLONG_MAX}, b[1] = {2};
  ASSERT_TRUE(Reduce(MPI_PROD, MPI_LONG_LONG, a, b, 1).ok());
  EXPECT_EQ(b[0], -2);
}

// Narrow unsigned products widen to unsigned int, not to a signed int that
// 65535 * 65535 would overflow (UBSan reports it in the sanitizer run).
TEST(ApiReduce, NarrowProductsWrap) {
  unsigned short in[1] = {65535}, io[1] = {65535};
  ASSERT_TRUE(Reduce(MPI_PROD, MPI_UNSIGNED_SHORT, in, io, 1).ok());
  EXPECT_EQ(io[0], 1);
  short sin[1] = {-32768}, sio[1] = {-1};
  ASSERT_TRUE(Reduce(MPI_PROD, MPI_SHORT, sin, sio, 1).ok());
  EXPECT_EQ(sio[0], -32768);
}

// The element-wise kernels are vectorized: every element of a long vector,
// and of a length that leaves a scalar tail, gets its own result.
TEST(ApiReduce, LongVectorsEveryElement) {
  for (int n : {1, 7, 1021, 4099}) {
    std::vector<float> fin(n), fio(n);
    std::vector<int> iin(n), iio(n);
    for (int i = 0; i < n; ++i) {
      fin[i] = static_cast<float>(i);
      fio[i] = 0.5f * static_cast<float>(i);
      iin[i] = i;
      iio[i] = 3 * i - n;
    }
    ASSERT_TRUE(Reduce(MPI_SUM, MPI_FLOAT, fin.data(), fio.data(), n).ok());
    ASSERT_TRUE(Reduce(MPI_MAX, MPI_INT, iin.data(), iio.data(), n).ok());
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(fio[i], 1.5f * static_cast<float>(i)) << "n " << n << " element " << i;
      ASSERT_EQ(iio[i], std::max(i, 3 * i - n)) << "n " << n << " element " << i;
    }
  }
}

// The three-operand form (out = in op in2, in one pass) gives the bytes of
// the two-operand form on a copy of in2, and leaves in2 alone; with out
// being in2 it is the two-operand form.
TEST(ApiReduce, ThreeOperandFormMatchesTwoOperand) {
  struct Case {
    int op, type;
    std::size_t item;
  };
  const Case cases[] = {
      {MPI_SUM, MPI_FLOAT, sizeof(float)},     {MPI_MAX, MPI_INT, sizeof(int)},
      {MPI_PROD, MPI_DOUBLE, sizeof(double)},  {MPI_BXOR, MPI_UINT8_T, 1},
      {MPI_MINLOC, MPI_2INT, 2 * sizeof(int)}, {MPI_SUM, MPI_C_DOUBLE_COMPLEX, 16}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(TypeName(c.type)) + " " + OpName(c.op));
    const PreparedReduce red = PreparedReduce::For(c.op, c.type);
    ASSERT_TRUE(red.valid());
    for (int n : {1, 5, 1027}) {
      const std::size_t bytes = std::size_t(n) * c.item;
      std::vector<std::uint8_t> a(bytes), b(bytes), two(bytes), three(bytes, 0xa5);
      for (std::size_t i = 0; i < bytes; ++i) {
        a[i] = std::uint8_t(i * 7 + 3);
        b[i] = std::uint8_t(i * 13 + 1);
      }
      // Pair values must compare as numbers: keep the floats finite.
      if (c.type == MPI_C_DOUBLE_COMPLEX || c.type == MPI_DOUBLE) {
        for (std::size_t i = 0; i < bytes / 8; ++i) {
          const double x = 0.25 * double(i) + 1, y = 1.5 - 0.125 * double(i);
          std::memcpy(&a[i * 8], &x, 8);
          std::memcpy(&b[i * 8], &y, 8);
        }
      } else if (c.type == MPI_FLOAT) {
        for (std::size_t i = 0; i < bytes / 4; ++i) {
          const float x = 0.1f * float(i), y = 3e6f - float(i);
          std::memcpy(&a[i * 4], &x, 4);
          std::memcpy(&b[i * 4], &y, 4);
        }
      }
      const std::vector<std::uint8_t> b_before = b;
      two = b;
      red.Apply(a.data(), two.data(), n);
      red.Apply(a.data(), b.data(), three.data(), n);
      EXPECT_EQ(b, b_before) << "n " << n;
      EXPECT_EQ(three, two) << "n " << n;
      red.Apply(a.data(), b.data(), b.data(), n);  // out = in2: in place
      EXPECT_EQ(b, two) << "n " << n;
    }
  }
}

TEST(ApiReduce, DerivedTypes) {
  int contig = 0, vec = 0, pairs = 0;
  ASSERT_TRUE(Contiguous(3, MPI_INT, &contig).ok());
  int in[6] = {1, 2, 3, 4, 5, 6}, io[6] = {10, 20, 30, 40, 50, 60};
  ASSERT_TRUE(Reduce(MPI_SUM, contig, in, io, 2).ok());
  EXPECT_EQ(io[5], 66);
  // A vector reduces only its blocks: elements 0 and 2 of each item.
  ASSERT_TRUE(Vector(2, 1, 2, MPI_INT, &vec).ok());
  int vin[3] = {1, 1, 1}, vio[3] = {5, 5, 5};
  ASSERT_TRUE(Reduce(MPI_MAX, vec, vin, vio, 1).ok());
  ASSERT_TRUE(Reduce(MPI_SUM, vec, vin, vio, 1).ok());
  EXPECT_EQ(vio[0], 6);
  EXPECT_EQ(vio[1], 5);
  EXPECT_EQ(vio[2], 6);
  ASSERT_TRUE(Contiguous(2, MPI_2INT, &pairs).ok());
  EXPECT_TRUE(OpAppliesTo(MPI_MAXLOC, pairs));
  EXPECT_FALSE(OpAppliesTo(MPI_SUM, pairs));
  int pin[4] = {9, 0, 1, 1}, pio[4] = {3, 5, 2, 2};
  ASSERT_TRUE(Reduce(MPI_MAXLOC, pairs, pin, pio, 1).ok());
  EXPECT_EQ(pio[0], 9);
  EXPECT_EQ(pio[1], 0);
  EXPECT_EQ(pio[2], 2);
  EXPECT_EQ(pio[3], 2);
  for (int* h : {&contig, &vec, &pairs}) EXPECT_TRUE(Free(h).ok());
}

void Concat(void* in, void* inout, int* len, int* type) {
  // Non-commutative: inout = in * 10 + inout (digit concatenation).
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] * 10 + b[i];
  EXPECT_EQ(*type, MPI_INT);
}

TEST(ApiReduce, UserOps) {
  int op = 0;
  ASSERT_TRUE(OpCreate(Concat, false, &op).ok());
  const Op* o = LookupOp(op);
  ASSERT_NE(o, nullptr);
  EXPECT_FALSE(o->commute);
  EXPECT_TRUE(OpAppliesTo(op, MPI_INT));
  int in[2] = {1, 2}, io[2] = {3, 4};
  ASSERT_TRUE(Reduce(op, MPI_INT, in, io, 2).ok());
  EXPECT_EQ(io[0], 13);
  EXPECT_EQ(io[1], 24);
  ASSERT_TRUE(OpFree(&op).ok());
  EXPECT_EQ(op, MPI_OP_NULL);
  int predefined = MPI_SUM;
  EXPECT_EQ(OpFree(&predefined).code(), Code::kOp);
  EXPECT_EQ(Reduce(MPI_OP_NULL, MPI_INT, in, io, 2).code(), Code::kOp);
}

}  // namespace
}  // namespace nicq::dtype
