// Datatype entry points over the fake runtime: true extents, the array and
// block constructors (layouts checked element by element through MPI_Pack),
// envelopes and contents.
#include "type_test_fixture.h"

namespace {

using nicq_type_test::ApiType;
using nicq_type_test::ErrorClass;
using nicq_type_test::ErrorString;

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

// The complex and C++ types through the C API: named, predefined, the sizes
// of their C types, and not freeable.
TEST_F(ApiType, ComplexAndCxxTypesAreNamed) {
  struct Case {
    MPI_Datatype t;
    int size;
    const char* name;
  } cases[] = {
      {MPI_C_COMPLEX, 8, "MPI_C_FLOAT_COMPLEX"},
      {MPI_C_DOUBLE_COMPLEX, 16, "MPI_C_DOUBLE_COMPLEX"},
      {MPI_C_LONG_DOUBLE_COMPLEX, int(2 * sizeof(long double)), "MPI_C_LONG_DOUBLE_COMPLEX"},
      {MPI_CXX_BOOL, int(sizeof(bool)), "MPI_CXX_BOOL"},
      {MPI_CXX_FLOAT_COMPLEX, 8, "MPI_CXX_FLOAT_COMPLEX"},
      {MPI_CXX_DOUBLE_COMPLEX, 16, "MPI_CXX_DOUBLE_COMPLEX"},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, int(2 * sizeof(long double)), "MPI_CXX_LONG_DOUBLE_COMPLEX"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    int size = 0, ni = -1, na = -1, nd = -1, comb = 0;
    MPI_Aint lb = -1, extent = 0;
    ASSERT_EQ(MPI_Type_size(c.t, &size), MPI_SUCCESS);
    EXPECT_EQ(size, c.size);
    ASSERT_EQ(MPI_Type_get_extent(c.t, &lb, &extent), MPI_SUCCESS);
    EXPECT_EQ(lb, 0);
    EXPECT_EQ(extent, c.size);
    ASSERT_EQ(MPI_Type_get_envelope(c.t, &ni, &na, &nd, &comb), MPI_SUCCESS);
    EXPECT_EQ(comb, MPI_COMBINER_NAMED);
    EXPECT_EQ(ni + na + nd, 0);
    // MPI_Type_get_name (memory.cc, outside this binary) is checked in
    // mp_complex.c; the table it reads, in complex_type_test.cc.
    EXPECT_STREQ(nicq::dtype::TypeName(c.t), c.name);
    MPI_Datatype t = c.t;
    EXPECT_EQ(ErrorClass(MPI_Type_free(&t)), MPI_ERR_TYPE);
  }
}

}  // namespace
