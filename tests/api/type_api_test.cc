// Datatype entry points over the fake runtime: true extents, the array and
// block constructors (layouts checked element by element through MPI_Pack),
// envelopes and contents, "external32" bytes, large-count forms, type
// attributes.
#include <gtest/gtest.h>

#include <cfloat>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "dtype/datatype.h"
#include "mpi.h"

namespace {

int ErrorClass(int code) {
  int cls = -1;
  EXPECT_EQ(MPI_Error_class(code, &cls), MPI_SUCCESS);
  return cls;
}

std::string ErrorString(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  EXPECT_EQ(MPI_Error_string(code, buf, &len), MPI_SUCCESS);
  return buf;
}

class ApiType : public ::testing::Test {
 protected:
  void SetUp() override {
    int init = 0, fini = 0;
    MPI_Finalized(&fini);
    if (fini) GTEST_SKIP() << "MPI already finalized in this process";
    MPI_Initialized(&init);
    if (!init) {
      ASSERT_EQ(MPI_Init(nullptr, nullptr), MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    live_ = nicq::dtype::LiveDerivedTypes();
  }
  void TearDown() override { EXPECT_EQ(nicq::dtype::LiveDerivedTypes(), live_) << "leaked types"; }

  // The ints that one item of `type` selects from `src`, in type-map order.
  static std::vector<int> PackInts(MPI_Datatype type, const int* src) {
    int size = 0, pos = 0;
    EXPECT_EQ(MPI_Pack_size(1, type, MPI_COMM_WORLD, &size), MPI_SUCCESS);
    std::vector<int> out(static_cast<std::size_t>(size) / sizeof(int));
    EXPECT_EQ(MPI_Pack(src, 1, type, out.data(), size, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(pos, size);
    return out;
  }
  static void Extent(MPI_Datatype t, MPI_Aint* lb, MPI_Aint* ext, MPI_Aint* tlb, MPI_Aint* text) {
    ASSERT_EQ(MPI_Type_get_extent(t, lb, ext), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_get_true_extent(t, tlb, text), MPI_SUCCESS);
  }

  int live_ = 0;
};

TEST_F(ApiType, TrueExtentIgnoresHolesBoundsAndResizing) {
  MPI_Aint lb, ext, tlb, text;
  Extent(MPI_INT, &lb, &ext, &tlb, &text);
  EXPECT_EQ(tlb, 0);
  EXPECT_EQ(text, 4);
  Extent(MPI_DOUBLE_INT, &lb, &ext, &tlb, &text);
  EXPECT_EQ(ext, 16);   // padded like the C struct
  EXPECT_EQ(text, 12);  // the data: a double and an int
  // An int at -6 and two doubles at 16: a hole between, a negative lower
  // bound, and padding (the extent rounds 38 up to the doubles' 8).
  int lens[] = {1, 2};
  MPI_Aint disps[] = {-6, 16};
  MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE}, s, r, v;
  ASSERT_EQ(MPI_Type_create_struct(2, lens, disps, types, &s), MPI_SUCCESS);
  Extent(s, &lb, &ext, &tlb, &text);
  EXPECT_EQ(lb, -6);
  EXPECT_EQ(ext, 40);
  EXPECT_EQ(tlb, -6);
  EXPECT_EQ(text, 38);
  ASSERT_EQ(MPI_Type_create_resized(s, -100, 500, &r), MPI_SUCCESS);
  Extent(r, &lb, &ext, &tlb, &text);
  EXPECT_EQ(lb, -100);
  EXPECT_EQ(ext, 500);
  EXPECT_EQ(tlb, -6);  // resizing moves the bounds, not the data
  EXPECT_EQ(text, 38);
  ASSERT_EQ(MPI_Type_contiguous(2, r, &v), MPI_SUCCESS);
  Extent(v, &lb, &ext, &tlb, &text);
  EXPECT_EQ(lb, -100);
  EXPECT_EQ(ext, 1000);
  EXPECT_EQ(tlb, -6);
  EXPECT_EQ(text, 500 + 38);
  MPI_Count clb, ctext;
  ASSERT_EQ(MPI_Type_get_true_extent_x(v, &clb, &ctext), MPI_SUCCESS);
  EXPECT_EQ(clb, -6);
  EXPECT_EQ(ctext, 538);
  ASSERT_EQ(MPI_Type_get_true_extent_c(r, &clb, &ctext), MPI_SUCCESS);
  EXPECT_EQ(clb, -6);
  EXPECT_EQ(ctext, 38);
  int rc = MPI_Type_get_true_extent(MPI_COMM_WORLD, &tlb, &text);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_TYPE);
  EXPECT_NE(ErrorString(rc).find("MPI_Type_get_true_extent"), std::string::npos);
  for (MPI_Datatype* t : {&v, &r, &s}) ASSERT_EQ(MPI_Type_free(t), MPI_SUCCESS);
}

TEST_F(ApiType, IndexedAndHindexedBlocks) {
  int src[12];
  for (int i = 0; i < 12; ++i) src[i] = 100 + i;
  int disps[] = {0, 5, 9};
  MPI_Datatype ib, hb;
  ASSERT_EQ(MPI_Type_create_indexed_block(3, 2, disps, MPI_INT, &ib), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&ib), MPI_SUCCESS);
  EXPECT_EQ(PackInts(ib, src), (std::vector<int>{100, 101, 105, 106, 109, 110}));
  MPI_Aint lb, ext, tlb, text;
  Extent(ib, &lb, &ext, &tlb, &text);
  EXPECT_EQ(lb, 0);
  EXPECT_EQ(ext, 11 * 4);
  MPI_Aint hdisps[] = {32, 4};  // bytes, out of order
  ASSERT_EQ(MPI_Type_create_hindexed_block(2, 3, hdisps, MPI_INT, &hb), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&hb), MPI_SUCCESS);
  EXPECT_EQ(PackInts(hb, src), (std::vector<int>{108, 109, 110, 101, 102, 103}));
  Extent(hb, &lb, &ext, &tlb, &text);
  EXPECT_EQ(lb, 4);
  EXPECT_EQ(ext, 40);
  int rc = MPI_Type_create_indexed_block(2, -1, disps, MPI_INT, &ib);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_COUNT);
  ASSERT_EQ(MPI_Type_free(&ib), MPI_SUCCESS);  // the failed call left ib as it was
  ASSERT_EQ(MPI_Type_free(&hb), MPI_SUCCESS);
}

TEST_F(ApiType, SubarrayInBothOrders) {
  int a[20];
  for (int i = 0; i < 20; ++i) a[i] = i;
  int sizes[] = {4, 5}, subs[] = {2, 3}, starts[] = {1, 2};
  MPI_Datatype c, f;
  ASSERT_EQ(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &c),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&c), MPI_SUCCESS);
  EXPECT_EQ(PackInts(c, a), (std::vector<int>{7, 8, 9, 12, 13, 14}));  // rows 1-2, cols 2-4
  MPI_Aint lb, ext, tlb, text;
  Extent(c, &lb, &ext, &tlb, &text);
  EXPECT_EQ(lb, 0);
  EXPECT_EQ(ext, 80);  // the whole array
  EXPECT_EQ(tlb, 7 * 4);
  EXPECT_EQ(text, (14 - 7 + 1) * 4);
  ASSERT_EQ(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &f),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&f), MPI_SUCCESS);
  // Column-major: index i + 4j, i in 1..2 fastest, j in 2..4.
  EXPECT_EQ(PackInts(f, a), (std::vector<int>{9, 10, 13, 14, 17, 18}));
  int bad_starts[] = {3, 2};
  MPI_Datatype untouched = MPI_DATATYPE_NULL;
  int rc = MPI_Type_create_subarray(2, sizes, subs, bad_starts, MPI_ORDER_C, MPI_INT, &untouched);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_ARG);
  EXPECT_NE(ErrorString(rc).find("exceeds size"), std::string::npos) << ErrorString(rc);
  EXPECT_EQ(untouched, MPI_DATATYPE_NULL);
  rc = MPI_Type_create_subarray(2, sizes, subs, starts, 99, MPI_INT, &untouched);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_ARG);
  ASSERT_EQ(MPI_Type_free(&c), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_free(&f), MPI_SUCCESS);
}

TEST_F(ApiType, DarrayBlockCyclicCoversEveryElementOnce) {
  int a[32];
  for (int i = 0; i < 32; ++i) a[i] = i;
  int gsizes[] = {4, 8}, distribs[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
      dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[] = {2, 2};
  std::vector<int> seen(32, 0);
  for (int rank = 0; rank < 4; ++rank) {
    MPI_Datatype d;
    ASSERT_EQ(MPI_Type_create_darray(4, rank, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C,
                                     MPI_INT, &d),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_commit(&d), MPI_SUCCESS);
    std::vector<int> mine = PackInts(d, a);
    for (int v : mine) ++seen[v];
    if (rank == 3) {  // grid coords (1,1): rows 2-3, column blocks {2,3} and {6,7}
      EXPECT_EQ(mine, (std::vector<int>{18, 19, 22, 23, 26, 27, 30, 31}));
    }
    MPI_Aint lb, ext, tlb, text;
    Extent(d, &lb, &ext, &tlb, &text);
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(ext, 32 * 4);
    ASSERT_EQ(MPI_Type_free(&d), MPI_SUCCESS);
  }
  for (int i = 0; i < 32; ++i) EXPECT_EQ(seen[i], 1) << "element " << i;
  // Fortran order, cyclic rows over 2 processes, no distribution of columns.
  int g2[] = {4, 6}, dist2[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE},
      darg2[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, p2[] = {2, 1};
  MPI_Datatype f;
  ASSERT_EQ(MPI_Type_create_darray(2, 1, 2, g2, dist2, darg2, p2, MPI_ORDER_FORTRAN, MPI_INT, &f),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&f), MPI_SUCCESS);
  EXPECT_EQ(PackInts(f, a), (std::vector<int>{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}));
  ASSERT_EQ(MPI_Type_free(&f), MPI_SUCCESS);
  int bad_p[] = {1, 2};  // MPI_DISTRIBUTE_NONE over 2 processes
  int rc = MPI_Type_create_darray(2, 0, 2, g2, dist2, darg2, bad_p, MPI_ORDER_C, MPI_INT, &f);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_ARG);
  EXPECT_NE(ErrorString(rc).find("MPI_DISTRIBUTE_NONE"), std::string::npos);
  int small_darg[] = {1, MPI_DISTRIBUTE_DFLT_DARG};  // block 1 x 2 processes < 4 rows
  int dist3[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE};
  rc = MPI_Type_create_darray(2, 0, 2, g2, dist3, small_darg, p2, MPI_ORDER_C, MPI_INT, &f);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_ARG);
}

TEST_F(ApiType, EnvelopeAndContents) {
  int disps[] = {0, 5, 9};
  MPI_Datatype base, ib;
  ASSERT_EQ(MPI_Type_contiguous(2, MPI_SHORT, &base), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_indexed_block(3, 2, disps, base, &ib), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_free(&base), MPI_SUCCESS);  // ib keeps it alive
  int ni, na, nd, comb;
  ASSERT_EQ(MPI_Type_get_envelope(ib, &ni, &na, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_INDEXED_BLOCK);
  EXPECT_EQ(ni, 5);
  EXPECT_EQ(na, 0);
  EXPECT_EQ(nd, 1);
  int ints[5];
  MPI_Aint addrs[1];
  MPI_Datatype types[1];
  ASSERT_EQ(MPI_Type_get_contents(ib, 5, 0, 1, ints, addrs, types), MPI_SUCCESS);
  EXPECT_EQ(std::vector<int>(ints, ints + 5), (std::vector<int>{3, 2, 0, 5, 9}));
  // The returned derived type is the user's to query and free.
  ASSERT_EQ(MPI_Type_get_envelope(types[0], &ni, &na, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_CONTIGUOUS);
  ASSERT_EQ(MPI_Type_get_contents(types[0], 1, 0, 1, ints, addrs, &base), MPI_SUCCESS);
  EXPECT_EQ(ints[0], 2);
  EXPECT_EQ(base, MPI_SHORT);  // predefined: handed out as is
  ASSERT_EQ(MPI_Type_free(&types[0]), MPI_SUCCESS);
  int rc = MPI_Type_get_contents(ib, 4, 0, 1, ints, addrs, types);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_ARG);
  EXPECT_NE(ErrorString(rc).find("max_integers"), std::string::npos);
  ASSERT_EQ(MPI_Type_free(&ib), MPI_SUCCESS);

  // Subarray, darray, hvector, resized, struct, dup: each records its arguments.
  int sizes[] = {4, 5}, subs[] = {2, 3}, starts[] = {1, 2};
  MPI_Datatype sa;
  ASSERT_EQ(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &sa),
            MPI_SUCCESS);
  int sint[8];
  ASSERT_EQ(MPI_Type_get_envelope(sa, &ni, &na, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_SUBARRAY);
  ASSERT_EQ(ni, 8);
  ASSERT_EQ(MPI_Type_get_contents(sa, 8, 0, 1, sint, addrs, types), MPI_SUCCESS);
  EXPECT_EQ(std::vector<int>(sint, sint + 8),
            (std::vector<int>{2, 4, 5, 2, 3, 1, 2, MPI_ORDER_FORTRAN}));
  EXPECT_EQ(types[0], MPI_INT);
  ASSERT_EQ(MPI_Type_free(&sa), MPI_SUCCESS);

  MPI_Datatype hv, rs, dup;
  ASSERT_EQ(MPI_Type_create_hvector(3, 2, -24, MPI_DOUBLE, &hv), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_resized(hv, -8, 100, &rs), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_dup(rs, &dup), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_envelope(hv, &ni, &na, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_HVECTOR);
  EXPECT_EQ(ni * 10 + na, 21);
  ASSERT_EQ(MPI_Type_get_contents(hv, 2, 1, 1, ints, addrs, types), MPI_SUCCESS);
  EXPECT_EQ(ints[0], 3);
  EXPECT_EQ(ints[1], 2);
  EXPECT_EQ(addrs[0], -24);
  MPI_Aint ra[2];
  ASSERT_EQ(MPI_Type_get_envelope(rs, &ni, &na, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_RESIZED);
  ASSERT_EQ(MPI_Type_get_contents(rs, 0, 2, 1, ints, ra, types), MPI_SUCCESS);
  EXPECT_EQ(ra[0], -8);
  EXPECT_EQ(ra[1], 100);
  EXPECT_EQ(types[0], hv);
  ASSERT_EQ(MPI_Type_free(&types[0]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_DUP);
  EXPECT_EQ(ni + na + nd * 10, 10);
  for (MPI_Datatype* t : {&dup, &rs, &hv}) ASSERT_EQ(MPI_Type_free(t), MPI_SUCCESS);

  ASSERT_EQ(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_NAMED);
  EXPECT_EQ(ni + na + nd, 0);
  rc = MPI_Type_get_contents(MPI_DOUBLE, 0, 0, 0, ints, addrs, types);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_TYPE);
}

TEST_F(ApiType, LargeCountConstructorsAndQueries) {
  MPI_Datatype v;
  ASSERT_EQ(MPI_Type_vector_c(3, 2, 4, MPI_INT, &v), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&v), MPI_SUCCESS);
  MPI_Count ni, na, nc, nd, size, lb, ext;
  int comb;
  ASSERT_EQ(MPI_Type_get_envelope_c(v, &ni, &na, &nc, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_VECTOR);
  EXPECT_EQ(ni, 0);
  EXPECT_EQ(na, 0);
  EXPECT_EQ(nc, 3);
  EXPECT_EQ(nd, 1);
  MPI_Count counts[3];
  MPI_Datatype old;
  ASSERT_EQ(MPI_Type_get_contents_c(v, 0, 0, 3, 1, nullptr, nullptr, counts, &old), MPI_SUCCESS);
  EXPECT_EQ(counts[0] * 100 + counts[1] * 10 + counts[2], 324);
  EXPECT_EQ(old, MPI_INT);
  int i4, a4, d4, c4;
  int rc = MPI_Type_get_envelope(v, &i4, &a4, &d4, &c4);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_TYPE);  // the int form cannot describe it
  ASSERT_EQ(MPI_Type_size_c(v, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 24);
  ASSERT_EQ(MPI_Type_get_extent_c(v, &lb, &ext), MPI_SUCCESS);
  EXPECT_EQ(lb, 0);
  EXPECT_EQ(ext, 40);

  int src[24];
  for (int i = 0; i < 24; ++i) src[i] = i;
  MPI_Count psize = 0, pos = 0;
  ASSERT_EQ(MPI_Pack_size_c(2, v, MPI_COMM_WORLD, &psize), MPI_SUCCESS);
  EXPECT_EQ(psize, 48);
  int packed[12];
  ASSERT_EQ(MPI_Pack_c(src, 2, v, packed, psize, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(pos, 48);
  // Items at 0 and 10 ints; blocks of 2 every 4.
  EXPECT_EQ(std::vector<int>(packed, packed + 12),
            (std::vector<int>{0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19}));
  int back[24] = {};
  pos = 0;
  ASSERT_EQ(MPI_Unpack_c(packed, psize, &pos, back, 2, v, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(pos, 48);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(back[i], (i % 10) % 4 < 2 ? i : 0) << i;
  pos = 8;
  rc = MPI_Pack_c(src, 2, v, packed, psize, &pos, MPI_COMM_WORLD);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_TRUNCATE);
  EXPECT_EQ(pos, 8);

  MPI_Count sizes[] = {3, 4}, subs[] = {2, 2}, starts[] = {1, 1};
  MPI_Datatype sa, st, rs, ib;
  ASSERT_EQ(MPI_Type_create_subarray_c(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sa),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&sa), MPI_SUCCESS);
  EXPECT_EQ(PackInts(sa, src), (std::vector<int>{5, 6, 9, 10}));
  ASSERT_EQ(MPI_Type_get_envelope_c(sa, &ni, &na, &nc, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(ni, 2);  // ndims, order
  EXPECT_EQ(nc, 6);
  MPI_Count lens[] = {1, 2}, disps[] = {8, 0};
  MPI_Datatype types[] = {MPI_INT, MPI_SHORT};
  ASSERT_EQ(MPI_Type_create_struct_c(2, lens, disps, types, &st), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_resized_c(st, 0, 16, &rs), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_extent_c(rs, &lb, &ext), MPI_SUCCESS);
  EXPECT_EQ(ext, 16);
  ASSERT_EQ(MPI_Type_size_c(st, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 8);
  MPI_Count idisps[] = {3, 0};
  ASSERT_EQ(MPI_Type_create_indexed_block_c(2, 1, idisps, MPI_INT, &ib), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&ib), MPI_SUCCESS);
  EXPECT_EQ(PackInts(ib, src), (std::vector<int>{3, 0}));
  rc = MPI_Type_contiguous_c(-1, MPI_INT, &ib);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_COUNT);
  for (MPI_Datatype* t : {&v, &sa, &st, &rs, &ib}) ASSERT_EQ(MPI_Type_free(t), MPI_SUCCESS);
}

struct Mixed {
  int i;
  short s;
  long l;
  double d;
  char c;
  long double ld;
  wchar_t w;
  float f;
};

TEST_F(ApiType, External32IsBigEndianWithFixedSizes) {
  int lens[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  MPI_Aint disps[8] = {offsetof(Mixed, i), offsetof(Mixed, s), offsetof(Mixed, l),
                       offsetof(Mixed, d), offsetof(Mixed, c), offsetof(Mixed, ld),
                       offsetof(Mixed, w), offsetof(Mixed, f)};
  MPI_Datatype types[8] = {MPI_INT,  MPI_SHORT,       MPI_LONG,  MPI_DOUBLE,
                           MPI_CHAR, MPI_LONG_DOUBLE, MPI_WCHAR, MPI_FLOAT};
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_create_struct(8, lens, disps, types, &t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
  MPI_Aint size = 0;
  ASSERT_EQ(MPI_Pack_external_size("external32", 2, t, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 2 * (4 + 2 + 4 + 8 + 1 + 16 + 2 + 4));
  Mixed in[2] = {{0x01020304, 0x0506, -2, 1.0, 'A', 1.0L, L'Z', -2.5f},
                 {-1, -3, 0x11223344, -0.5, 'z', 3.75L, 0x263a, 1.0f}};
  std::vector<unsigned char> buf(static_cast<std::size_t>(size) + 4, 0xee);
  MPI_Aint pos = 0;
  ASSERT_EQ(MPI_Pack_external("external32", in, 2, t, buf.data(), size, &pos), MPI_SUCCESS);
  EXPECT_EQ(pos, size);
  const std::vector<unsigned char> first = {
      0x01, 0x02, 0x03, 0x04,                                      // int
      0x05, 0x06,                                                  // short
      0xff, 0xff, 0xff, 0xfe,                                      // long: 4 bytes
      0x3f, 0xf0, 0,    0,    0, 0, 0, 0,                          // double 1.0
      'A',                                                         // char
      0x3f, 0xff, 0,    0,    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // binary128 1.0
      0x00, 0x5a,                                                  // wchar: 2 bytes
      0xc0, 0x20, 0x00, 0x00,                                      // float -2.5
  };
  EXPECT_EQ(std::vector<unsigned char>(buf.begin(), buf.begin() + 41), first);
  const std::vector<unsigned char> ld_375 = {0x40, 0x00, 0xe0, 0, 0, 0, 0, 0,
                                             0,    0,    0,    0, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<unsigned char>(buf.begin() + 41 + 19, buf.begin() + 41 + 35), ld_375);
  EXPECT_EQ(buf[static_cast<std::size_t>(size)], 0xee);  // nothing past the end

  Mixed out[2];
  std::memset(out, 0, sizeof out);
  pos = 0;
  ASSERT_EQ(MPI_Unpack_external("external32", buf.data(), size, &pos, out, 2, t), MPI_SUCCESS);
  EXPECT_EQ(pos, size);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(out[k].i, in[k].i);
    EXPECT_EQ(out[k].s, in[k].s);
    EXPECT_EQ(out[k].l, in[k].l);  // sign-extended back from 4 bytes
    EXPECT_EQ(out[k].d, in[k].d);
    EXPECT_EQ(out[k].c, in[k].c);
    EXPECT_EQ(out[k].ld, in[k].ld);
    EXPECT_EQ(out[k].w, in[k].w);
    EXPECT_EQ(out[k].f, in[k].f);
  }

  // Errors: a short buffer leaves the position alone; other representations are refused.
  pos = 3;
  int rc = MPI_Pack_external("external32", in, 2, t, buf.data(), size, &pos);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_TRUNCATE);
  EXPECT_EQ(pos, 3);
  rc = MPI_Pack_external("native", in, 1, t, buf.data(), size, &pos);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_ARG);
  EXPECT_NE(ErrorString(rc).find("external32"), std::string::npos);

  MPI_Count csize = 0, cpos = 0;
  ASSERT_EQ(MPI_Pack_external_size_c("external32", 1, MPI_DOUBLE_INT, &csize), MPI_SUCCESS);
  EXPECT_EQ(csize, 12);
  struct {
    double v;
    int i;
  } pair = {2.0, 7}, pair_back = {0, 0};
  unsigned char pb[12];
  ASSERT_EQ(MPI_Pack_external_c("external32", &pair, 1, MPI_DOUBLE_INT, pb, 12, &cpos),
            MPI_SUCCESS);
  EXPECT_EQ(cpos, 12);
  const unsigned char want[12] = {0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
  EXPECT_EQ(std::memcmp(pb, want, 12), 0);
  cpos = 0;
  ASSERT_EQ(MPI_Unpack_external_c("external32", pb, 12, &cpos, &pair_back, 1, MPI_DOUBLE_INT),
            MPI_SUCCESS);
  EXPECT_EQ(pair_back.v, 2.0);
  EXPECT_EQ(pair_back.i, 7);
  ASSERT_EQ(MPI_Type_free(&t), MPI_SUCCESS);
}

TEST_F(ApiType, MatchSizeAndValueIndex) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_INT32_T);
  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DOUBLE);
  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_FLOAT);
  t = MPI_INT;
  EXPECT_EQ(ErrorClass(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t)), MPI_ERR_ARG);
  EXPECT_EQ(ErrorClass(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t)), MPI_ERR_ARG);
  EXPECT_EQ(ErrorClass(MPI_Type_match_size(7, 4, &t)), MPI_ERR_ARG);
  EXPECT_EQ(t, MPI_INT);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DOUBLE_INT);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_SHORT, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_SHORT_INT);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DATATYPE_NULL);
}

int g_deleted = 0;
int CountDelete(MPI_Datatype, int, void* value, void* extra) {
  g_deleted += *static_cast<int*>(value) * *static_cast<int*>(extra);
  return MPI_SUCCESS;
}

TEST_F(ApiType, AttributesCopyOnDupDeleteOnFree) {
  int extra = 1, k = MPI_KEYVAL_INVALID, nocopy = MPI_KEYVAL_INVALID;
  ASSERT_EQ(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, CountDelete, &k, &extra), MPI_SUCCESS);
  ASSERT_EQ(
      MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &nocopy, nullptr),
      MPI_SUCCESS);
  MPI_Datatype t, d;
  ASSERT_EQ(MPI_Type_contiguous(3, MPI_INT, &t), MPI_SUCCESS);
  int v1 = 10, v2 = 100, other = 5;
  ASSERT_EQ(MPI_Type_set_attr(t, k, &v1), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_set_attr(t, nocopy, &other), MPI_SUCCESS);
  g_deleted = 0;
  ASSERT_EQ(MPI_Type_set_attr(t, k, &v2), MPI_SUCCESS);  // replacing deletes the old value
  EXPECT_EQ(g_deleted, 10);
  ASSERT_EQ(MPI_Type_dup(t, &d), MPI_SUCCESS);
  void* got = nullptr;
  int flag = 0;
  ASSERT_EQ(MPI_Type_get_attr(d, k, &got, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(got, &v2);
  ASSERT_EQ(MPI_Type_get_attr(d, nocopy, &got, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);                                // the null copy function does not copy
  ASSERT_EQ(MPI_Type_free_keyval(&k), MPI_SUCCESS);  // still usable by the attributes set
  EXPECT_EQ(k, MPI_KEYVAL_INVALID);
  g_deleted = 0;
  ASSERT_EQ(MPI_Type_free(&t), MPI_SUCCESS);
  EXPECT_EQ(g_deleted, 0);  // d was made from t and keeps it (and its attributes) alive
  ASSERT_EQ(MPI_Type_free(&d), MPI_SUCCESS);
  EXPECT_EQ(g_deleted, 200);
  // A handle freed while a derived type still uses it keeps its attributes
  // until the last user goes.
  MPI_Datatype inner, outer;
  int k2 = MPI_KEYVAL_INVALID;
  ASSERT_EQ(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, CountDelete, &k2, &extra), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_contiguous(2, MPI_INT, &inner), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_set_attr(inner, k2, &v1), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_vector(2, 1, 3, inner, &outer), MPI_SUCCESS);
  g_deleted = 0;
  MPI_Datatype inner_handle = inner;
  ASSERT_EQ(MPI_Type_free(&inner), MPI_SUCCESS);
  EXPECT_EQ(g_deleted, 0);
  ASSERT_EQ(MPI_Type_free(&outer), MPI_SUCCESS);
  EXPECT_EQ(g_deleted, 10);
  MPI_Datatype reuse[2];  // the slots come back without the old attribute
  for (MPI_Datatype& r : reuse) ASSERT_EQ(MPI_Type_contiguous(3, MPI_INT, &r), MPI_SUCCESS);
  EXPECT_TRUE(reuse[0] == inner_handle || reuse[1] == inner_handle);
  for (MPI_Datatype& r : reuse) {
    ASSERT_EQ(MPI_Type_get_attr(r, k2, &got, &flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 0);
    ASSERT_EQ(MPI_Type_free(&r), MPI_SUCCESS);
  }
  ASSERT_EQ(MPI_Type_free_keyval(&k2), MPI_SUCCESS);
  // Predefined types carry attributes too; a communicator keyval is refused.
  ASSERT_EQ(MPI_Type_set_attr(MPI_INT, nocopy, &other), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_delete_attr(MPI_INT, nocopy), MPI_SUCCESS);
  EXPECT_EQ(ErrorClass(MPI_Type_delete_attr(MPI_INT, nocopy)), MPI_ERR_KEYVAL);
  int ck = MPI_KEYVAL_INVALID;
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, nullptr),
            MPI_SUCCESS);
  int rc = MPI_Type_get_attr(MPI_INT, ck, &got, &flag);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_KEYVAL);
  EXPECT_NE(ErrorString(rc).find("MPI_Type_get_attr"), std::string::npos);
  ASSERT_EQ(MPI_Comm_free_keyval(&ck), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_free_keyval(&nocopy), MPI_SUCCESS);
}

}  // namespace
