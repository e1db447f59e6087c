// The predefined complex types (MPI_C_*_COMPLEX, MPI_CXX_*_COMPLEX) and
// MPI_CXX_BOOL: layout, names, external32 form, and MPI-4.1's op table on
// them (complex: SUM, PROD, REPLACE, NO_OP; CXX_BOOL: the logical ops).
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "mpi.h"

namespace nicq::dtype {
namespace {

const int kAllOps[] = {MPI_MAX, MPI_MIN,  MPI_SUM,  MPI_PROD,   MPI_LAND,   MPI_BAND,    MPI_LOR,
                       MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP};

TEST(ApiComplexTypes, SizesExtentsNamesAndEnvelope) {
  struct Case {
    int h;
    std::int64_t size;
    const char* name;
  } cases[] = {
      {MPI_C_FLOAT_COMPLEX, 8, "MPI_C_FLOAT_COMPLEX"},
      {MPI_C_DOUBLE_COMPLEX, 16, "MPI_C_DOUBLE_COMPLEX"},
      {MPI_C_LONG_DOUBLE_COMPLEX, 2 * std::int64_t(sizeof(long double)),
       "MPI_C_LONG_DOUBLE_COMPLEX"},
      {MPI_CXX_BOOL, std::int64_t(sizeof(bool)), "MPI_CXX_BOOL"},
      {MPI_CXX_FLOAT_COMPLEX, 8, "MPI_CXX_FLOAT_COMPLEX"},
      {MPI_CXX_DOUBLE_COMPLEX, 16, "MPI_CXX_DOUBLE_COMPLEX"},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, 2 * std::int64_t(sizeof(long double)),
       "MPI_CXX_LONG_DOUBLE_COMPLEX"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Type* t = Lookup(c.h);
    ASSERT_NE(t, nullptr);
    EXPECT_TRUE(t->predefined && t->committed);
    EXPECT_EQ(t->combiner, MPI_COMBINER_NAMED);
    EXPECT_EQ(t->size, c.size);
    EXPECT_EQ(t->extent, c.size);  // no padding: extent = size
    EXPECT_EQ(t->lb, 0);
    EXPECT_EQ(t->elements, 1);  // one complex number is one basic element
    EXPECT_STREQ(TypeName(c.h), c.name);
  }
  EXPECT_EQ(sizeof(std::complex<long double>), 2 * sizeof(long double));
  EXPECT_EQ(MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX);
  // The C and C++ names are distinct handles of the same layout.
  EXPECT_NE(MPI_C_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX);
}

// A struct pads to its parts' alignment: a complex aligns as its real part,
// as `struct { float _Complex c; float x; }` is 12 bytes in C.
TEST(ApiComplexTypes, StructPaddingUsesPartAlignment) {
  std::int64_t blocklens[2] = {1, 1}, disps[2] = {0, 8};
  int types[2] = {MPI_C_FLOAT_COMPLEX, MPI_FLOAT}, t = 0;
  ASSERT_TRUE(Struct("test", 2, blocklens, disps, types, true, &t).ok());
  struct FloatComplexAndFloat {
    std::complex<float> c;
    float x;
  };
  EXPECT_EQ(Lookup(t)->extent, std::int64_t(sizeof(FloatComplexAndFloat)));
  ASSERT_TRUE(Free(&t).ok());
  disps[1] = 16;
  types[0] = MPI_C_DOUBLE_COMPLEX;
  types[1] = MPI_DOUBLE;
  ASSERT_TRUE(Struct("test", 2, blocklens, disps, types, true, &t).ok());
  EXPECT_EQ(Lookup(t)->extent, 24);
  ASSERT_TRUE(Free(&t).ok());
}

// external32: the real then the imaginary part, each big-endian in its
// real type's external size.
TEST(ApiComplexTypes, External32PartByPart) {
  const Type& fc = *Lookup(MPI_C_FLOAT_COMPLEX);
  const Type& dc = *Lookup(MPI_CXX_DOUBLE_COMPLEX);
  const Type& lc = *Lookup(MPI_C_LONG_DOUBLE_COMPLEX);
  EXPECT_EQ(ExternalSize(fc), 8);
  EXPECT_EQ(ExternalSize(dc), 16);
  EXPECT_EQ(ExternalSize(lc), 32);
  EXPECT_EQ(ExternalSize(*Lookup(MPI_CXX_BOOL)), 1);

  std::complex<float> f[2] = {{1.0f, -2.0f}, {0.5f, 3.0f}};
  unsigned char buf[64] = {};
  EXPECT_EQ(FirstUnrepresentable(fc, f, 2), -1);
  PackExternal(fc, f, 2, buf);
  // 1.0f = 3f800000, -2.0f = c0000000, big-endian.
  const unsigned char want[8] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};
  EXPECT_EQ(std::memcmp(buf, want, 8), 0);
  std::complex<float> fback[2];
  UnpackExternal(fc, buf, 2, fback);
  EXPECT_EQ(fback[0], f[0]);
  EXPECT_EQ(fback[1], f[1]);

  std::complex<long double> l[1] = {{1.5L, -0.25L}};
  PackExternal(lc, l, 1, buf);
  EXPECT_EQ(buf[0], 0x3f);  // binary128 1.5: 3fff 8000...
  EXPECT_EQ(buf[1], 0xff);
  EXPECT_EQ(buf[16], 0xbf);  // -0.25: bffd 0000...
  EXPECT_EQ(buf[17], 0xfd);
  std::complex<long double> lback[1];
  UnpackExternal(lc, buf, 1, lback);
  EXPECT_EQ(lback[0], l[0]);
}

// in = {1+2i, -3+0.5i}, inout = {4-1i, 2+2i}: exact in binary floating point.
template <typename T>
void CheckComplex(int h) {
  SCOPED_TRACE(TypeName(h));
  using C = std::complex<T>;
  for (int op : kAllOps) {
    SCOPED_TRACE(OpName(op));
    const bool ok = op == MPI_SUM || op == MPI_PROD || op == MPI_REPLACE || op == MPI_NO_OP;
    EXPECT_EQ(OpAppliesTo(op, h), ok);
    C in[2] = {C(1, 2), C(-3, 0.5)};
    C io[2] = {C(4, -1), C(2, 2)};
    Status st = Reduce(op, h, in, io, 2);
    if (!ok) {
      EXPECT_EQ(st.code(), Code::kOp);
      EXPECT_NE(st.message().find(TypeName(h)), std::string::npos) << st.message();
      EXPECT_EQ(io[0], C(4, -1));  // refused: inout untouched
      EXPECT_EQ(io[1], C(2, 2));
      continue;
    }
    ASSERT_TRUE(st.ok()) << st.message();
    C want[2] = {C(4, -1), C(2, 2)};
    if (op == MPI_SUM) want[0] = C(5, 1), want[1] = C(-1, 2.5);
    // (1+2i)(4-i) = 4 - i + 8i + 2 = 6+7i; (-3+0.5i)(2+2i) = -6 -6i + i - 1 = -7-5i
    if (op == MPI_PROD) want[0] = C(6, 7), want[1] = C(-7, -5);
    if (op == MPI_REPLACE) want[0] = in[0], want[1] = in[1];
    EXPECT_EQ(io[0], want[0]);
    EXPECT_EQ(io[1], want[1]);
  }
}

TEST(ApiComplexTypes, OpTable) {
  CheckComplex<float>(MPI_C_FLOAT_COMPLEX);
  CheckComplex<double>(MPI_C_DOUBLE_COMPLEX);
  CheckComplex<long double>(MPI_C_LONG_DOUBLE_COMPLEX);
  CheckComplex<float>(MPI_CXX_FLOAT_COMPLEX);
  CheckComplex<double>(MPI_CXX_DOUBLE_COMPLEX);
  CheckComplex<long double>(MPI_CXX_LONG_DOUBLE_COMPLEX);
}

// The vectorized loop gives every element its own product, past any tail,
// and a contiguous derived type of complex reduces the same way.
TEST(ApiComplexTypes, LongVectorsAndDerived) {
  for (int n : {1, 7, 1021}) {
    std::vector<std::complex<double>> in(n), io(n);
    for (int i = 0; i < n; ++i) {
      in[i] = {double(i), 1.0};
      io[i] = {2.0, double(-i)};
    }
    ASSERT_TRUE(Reduce(MPI_PROD, MPI_C_DOUBLE_COMPLEX, in.data(), io.data(), n).ok());
    for (int i = 0; i < n; ++i)  // (i + i)(2 - i i) = (2i + i) + (2 - i*i) i
      ASSERT_EQ(io[i], std::complex<double>(3.0 * i, 2.0 - double(i) * i)) << n << " " << i;
  }
  int contig = 0;
  ASSERT_TRUE(Contiguous(2, MPI_C_FLOAT_COMPLEX, &contig).ok());
  ASSERT_TRUE(Commit(contig).ok());
  EXPECT_TRUE(OpAppliesTo(MPI_SUM, contig));
  EXPECT_FALSE(OpAppliesTo(MPI_MAX, contig));
  std::complex<float> in[4] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}};
  std::complex<float> io[4] = {{0, 1}, {0, 1}, {0, 1}, {0, 1}};
  ASSERT_TRUE(Reduce(MPI_PROD, contig, in, io, 2).ok());
  // (k + ki) * i = -k + ki
  for (int k = 0; k < 4; ++k) EXPECT_EQ(io[k], std::complex<float>(-(k + 1), k + 1));
  EXPECT_EQ(Reduce(MPI_MIN, contig, in, io, 2).code(), Code::kOp);
  ASSERT_TRUE(Free(&contig).ok());
}

TEST(ApiComplexTypes, CxxBoolIsLogical) {
  for (int op : kAllOps) {
    SCOPED_TRACE(OpName(op));
    const bool ok =
        op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR || op == MPI_REPLACE || op == MPI_NO_OP;
    EXPECT_EQ(OpAppliesTo(op, MPI_CXX_BOOL), ok);
    bool in[4] = {true, false, true, false}, io[4] = {true, true, false, false};
    Status st = Reduce(op, MPI_CXX_BOOL, in, io, 4);
    ASSERT_EQ(st.ok(), ok) << st.message();
    if (!ok) EXPECT_EQ(st.code(), Code::kOp);
    bool want[4] = {true, true, false, false};
    if (op == MPI_LAND) want[0] = true, want[1] = false, want[2] = false, want[3] = false;
    if (op == MPI_LOR) want[0] = true, want[1] = true, want[2] = true, want[3] = false;
    if (op == MPI_LXOR) want[0] = false, want[1] = true, want[2] = true, want[3] = false;
    if (op == MPI_REPLACE) std::memcpy(want, in, sizeof want);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(io[i], want[i]) << "element " << i;
  }
}

}  // namespace
}  // namespace nicq::dtype
