// Datatype layer: predefined sizes/extents, derived constructors, pack/unpack
// of noncontiguous layouts, element counting, reference counting.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "dtype/datatype.h"
#include "mpi.h"

namespace nicq::dtype {
namespace {

TEST(ApiDtypePredefined, SizesAndExtents) {
  struct Case {
    int h;
    std::int64_t size, extent;
  } cases[] = {
      {MPI_CHAR, 1, 1},          {MPI_INT, 4, 4},       {MPI_DOUBLE, 8, 8},
      {MPI_LONG_DOUBLE, 16, 16}, {MPI_C_BOOL, 1, 1},    {MPI_INT64_T, 8, 8},
      {MPI_2INT, 8, 8},          {MPI_FLOAT_INT, 8, 8}, {MPI_DOUBLE_INT, 12, 16},
      {MPI_LONG_INT, 12, 16},    {MPI_SHORT_INT, 6, 8}, {MPI_LONG_DOUBLE_INT, 20, 32},
      {MPI_AINT, 8, 8},          {MPI_COUNT, 8, 8},     {MPI_BYTE, 1, 1},
  };
  for (const Case& c : cases) {
    const Type* t = Lookup(c.h);
    ASSERT_NE(t, nullptr) << TypeName(c.h);
    EXPECT_TRUE(t->predefined && t->committed);
    EXPECT_EQ(t->size, c.size) << TypeName(c.h);
    EXPECT_EQ(t->extent, c.extent) << TypeName(c.h);
    EXPECT_EQ(t->lb, 0);
  }
  EXPECT_EQ(Lookup(MPI_DATATYPE_NULL), nullptr);
  EXPECT_EQ(Lookup(MPI_COMM_WORLD), nullptr);  // wrong handle kind
  EXPECT_EQ(Lookup(NICQ_HANDLE(NICQ_KIND_DATATYPE, 5000)), nullptr);
  EXPECT_STREQ(TypeName(MPI_DOUBLE_INT), "MPI_DOUBLE_INT");
}

TEST(ApiDtypeDerived, VectorLayout) {
  int v = 0;
  ASSERT_TRUE(Vector(3, 2, 4, MPI_INT, &v).ok());
  Type* t = Lookup(v);
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->committed);
  EXPECT_EQ(t->size, 3 * 2 * 4);
  EXPECT_EQ(t->lb, 0);
  EXPECT_EQ(t->extent, (2 * 4 + 2) * 4);  // last block ends at element 10
  ASSERT_EQ(t->blocks.size(), 3u);
  EXPECT_EQ(t->blocks[1].offset, 16);
  EXPECT_EQ(t->blocks[1].length, 8);
  EXPECT_FALSE(t->IsContiguous());
  EXPECT_EQ(t->elements, 6);
  ASSERT_TRUE(Commit(v).ok());
  EXPECT_TRUE(t->committed);
  ASSERT_TRUE(Free(&v).ok());
  EXPECT_EQ(v, MPI_DATATYPE_NULL);
}

TEST(ApiDtypeDerived, ContiguousMergesIntoOneRun) {
  int c = 0;
  ASSERT_TRUE(Contiguous(5, MPI_DOUBLE, &c).ok());
  const Type* t = Lookup(c);
  EXPECT_TRUE(t->IsContiguous());
  EXPECT_EQ(t->size, 40);
  EXPECT_EQ(t->extent, 40);
  EXPECT_EQ(t->unit, 14);  // MPI_DOUBLE's index
  EXPECT_TRUE(Free(&c).ok());
}

TEST(ApiDtypePack, VectorRoundTrip) {
  int v = 0;
  ASSERT_TRUE(Vector(4, 3, 5, MPI_INT, &v).ok());  // 4 blocks of 3 ints, stride 5
  const Type& t = *Lookup(v);
  const int count = 2;
  std::vector<int> src(count * t.extent / 4 + 5);
  std::iota(src.begin(), src.end(), 100);
  std::vector<int> packed(count * 12, -1);
  Pack(t, src.data(), count, packed.data());
  // Item k starts at k*extent; within it, block i holds src[5i .. 5i+2].
  int n = 0;
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(packed[n++], src[k * (t.extent / 4) + 5 * i + j]);
  std::vector<int> dst(src.size(), -7);
  Unpack(t, packed.data(), static_cast<std::int64_t>(packed.size() * 4), count, dst.data());
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) {
        int idx = k * (t.extent / 4) + 5 * i + j;
        if (idx >= static_cast<int>(dst.size())) continue;
        if (j < 3) {
          EXPECT_EQ(dst[idx], src[idx]);
        } else if (!(k == 0 && i == 3)) {  // gaps between blocks stay untouched
          EXPECT_EQ(dst[idx], -7) << idx;
        }
      }
  ASSERT_TRUE(Free(&v).ok());
}

TEST(ApiDtypePack, VectorOfVectorAndPartialUnpack) {
  int inner = 0, outer = 0;
  ASSERT_TRUE(Vector(2, 1, 2, MPI_SHORT, &inner).ok());  // shorts 0 and 2, extent 6
  ASSERT_TRUE(Hvector(3, 1, 16, inner, &outer).ok());    // three of them, 16 bytes apart
  const Type& t = *Lookup(outer);
  EXPECT_EQ(t.size, 12);
  EXPECT_EQ(t.extent, 32 + 6);
  std::vector<short> src(32);
  std::iota(src.begin(), src.end(), 1);
  std::vector<short> packed(6);
  Pack(t, src.data(), 1, packed.data());
  EXPECT_EQ(packed, (std::vector<short>{1, 3, 9, 11, 17, 19}));
  // Only 7 bytes arrived: 3 whole shorts and half of the next.
  std::vector<short> dst(32, 0);
  Unpack(t, packed.data(), 6, 1, dst.data());
  EXPECT_EQ(dst[0], 1);
  EXPECT_EQ(dst[2], 3);
  EXPECT_EQ(dst[8], 9);
  EXPECT_EQ(dst[10], 0);
  EXPECT_EQ(ElementsFromBytes(t, 6), 3);
  EXPECT_EQ(ElementsFromBytes(t, 7), -1);  // not a whole element
  EXPECT_EQ(CountFromBytes(t, 24), 2);
  EXPECT_EQ(CountFromBytes(t, 6), -1);
  EXPECT_EQ(BytesFromElements(t, 8), 16);
  ASSERT_TRUE(Free(&outer).ok());
  ASSERT_TRUE(Free(&inner).ok());
}

TEST(ApiDtypeCount, PairElements) {
  const Type& t = *Lookup(MPI_DOUBLE_INT);
  EXPECT_EQ(t.elements, 2);
  EXPECT_EQ(ElementsFromBytes(t, 12 * 3), 6);
  EXPECT_EQ(ElementsFromBytes(t, 12 + 8), 3);  // one pair and a double
  EXPECT_EQ(CountFromBytes(t, 36), 3);
}

TEST(ApiDtypeLifetime, FreedTypeStaysAliveWhileRetained) {
  int base = LiveDerivedTypes();
  int v = 0;
  ASSERT_TRUE(Contiguous(3, MPI_INT, &v).ok());
  int handle = v;
  Type* t = Lookup(v);
  Retain(t);  // as a pending request would
  ASSERT_TRUE(Free(&v).ok());
  EXPECT_EQ(Lookup(handle), t);  // still usable by the request
  Release(t);
  EXPECT_EQ(Lookup(handle), nullptr);
  EXPECT_EQ(LiveDerivedTypes(), base);
}

TEST(ApiDtypeLifetime, DupCopiesLayoutAndCommitState) {
  int v = 0, d = 0;
  ASSERT_TRUE(Vector(2, 1, 3, MPI_FLOAT, &v).ok());
  ASSERT_TRUE(Commit(v).ok());
  ASSERT_TRUE(Dup(v, &d).ok());
  const Type& a = *Lookup(v);
  const Type& b = *Lookup(d);
  EXPECT_TRUE(b.committed);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.extent, b.extent);
  EXPECT_EQ(a.blocks.size(), b.blocks.size());
  EXPECT_TRUE(Free(&v).ok());
  EXPECT_TRUE(Free(&d).ok());
}

TEST(ApiDtypeErrors, BadArguments) {
  int out = 0;
  EXPECT_EQ(Vector(-1, 1, 1, MPI_INT, &out).code(), Code::kCount);
  EXPECT_EQ(Contiguous(2, MPI_DATATYPE_NULL, &out).code(), Code::kType);
  int predefined = MPI_INT;
  EXPECT_EQ(Free(&predefined).code(), Code::kType);
  EXPECT_EQ(predefined, MPI_INT);
}

TEST(ApiDtypeSpan, CoversAllItems) {
  int v = 0;
  ASSERT_TRUE(Vector(2, 1, 4, MPI_INT, &v).ok());
  char buf[256];
  std::uintptr_t lo, hi;
  Span(*Lookup(v), buf, 3, &lo, &hi);
  EXPECT_EQ(lo, reinterpret_cast<std::uintptr_t>(buf));
  EXPECT_EQ(hi - lo, 2 * 20 + 20u);  // two extents of 20 bytes and one item
  EXPECT_TRUE(Free(&v).ok());
}

}  // namespace
}  // namespace nicq::dtype
