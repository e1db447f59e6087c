// Datatype entry points over the fake runtime: large-count (_c) forms,
// "external32" bytes, size matching, type attributes.
#include <cstddef>
#include <cstring>

#include "type_test_fixture.h"

namespace {

using nicq_type_test::ApiType;
using nicq_type_test::ErrorClass;
using nicq_type_test::ErrorString;

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

TEST_F(ApiType, LargeCountContentsOfEveryConstructor) {
  MPI_Count lens[] = {2, 1}, disps[] = {3, 0}, hdisps[] = {16, 0};
  int src[12];
  for (int i = 0; i < 12; ++i) src[i] = i;
  MPI_Datatype ix, hx, hb, hv, cg;
  ASSERT_EQ(MPI_Type_indexed_c(2, lens, disps, MPI_INT, &ix), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_hindexed_c(2, lens, hdisps, MPI_INT, &hx), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_hindexed_block_c(2, 2, hdisps, MPI_INT, &hb), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_hvector_c(2, 1, 12, MPI_INT, &hv), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_contiguous_c(3, MPI_INT, &cg), MPI_SUCCESS);
  for (MPI_Datatype* t : {&ix, &hx, &hb, &hv, &cg}) ASSERT_EQ(MPI_Type_commit(t), MPI_SUCCESS);
  EXPECT_EQ(PackInts(ix, src), (std::vector<int>{3, 4, 0}));
  EXPECT_EQ(PackInts(hx, src), (std::vector<int>{4, 5, 0}));
  EXPECT_EQ(PackInts(hb, src), (std::vector<int>{4, 5, 0, 1}));
  EXPECT_EQ(PackInts(hv, src), (std::vector<int>{0, 3}));
  EXPECT_EQ(PackInts(cg, src), (std::vector<int>{0, 1, 2}));
  struct Want {
    MPI_Datatype t;
    int combiner;
    std::vector<MPI_Count> counts;
  } wants[] = {
      {ix, MPI_COMBINER_INDEXED, {2, 2, 1, 3, 0}},
      {hx, MPI_COMBINER_HINDEXED, {2, 2, 1, 16, 0}},
      {hb, MPI_COMBINER_HINDEXED_BLOCK, {2, 2, 16, 0}},
      {hv, MPI_COMBINER_HVECTOR, {2, 1, 12}},
      {cg, MPI_COMBINER_CONTIGUOUS, {3}},
  };
  for (const Want& w : wants) {
    MPI_Count ni, na, nc, nd;
    int comb;
    ASSERT_EQ(MPI_Type_get_envelope_c(w.t, &ni, &na, &nc, &nd, &comb), MPI_SUCCESS);
    EXPECT_EQ(comb, w.combiner);
    EXPECT_EQ(ni + na, 0);
    EXPECT_EQ(nd, 1);
    std::vector<MPI_Count> counts(static_cast<std::size_t>(nc));
    MPI_Datatype old;
    ASSERT_EQ(MPI_Type_get_contents_c(w.t, 0, 0, nc, 1, nullptr, nullptr, counts.data(), &old),
              MPI_SUCCESS);
    EXPECT_EQ(counts, w.counts) << "combiner " << w.combiner;
    EXPECT_EQ(old, MPI_INT);
  }
  // darray_c: the global sizes are large counts, the rest ints.
  MPI_Count gsizes[] = {4, 6};
  int distribs[] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE},
      dargs[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, psizes[] = {2, 1};
  MPI_Datatype da;
  ASSERT_EQ(
      MPI_Type_create_darray_c(2, 0, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &da),
      MPI_SUCCESS);
  MPI_Count ni, na, nc, nd;
  int comb;
  ASSERT_EQ(MPI_Type_get_envelope_c(da, &ni, &na, &nc, &nd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_DARRAY);
  EXPECT_EQ(ni, 3 + 3 * 2 + 1);
  EXPECT_EQ(nc, 2);
  MPI_Count size = 0;
  ASSERT_EQ(MPI_Type_size_c(da, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 2 * 6 * 4);  // rows 0 and 2, all six columns
  for (MPI_Datatype* t : {&ix, &hx, &hb, &hv, &cg, &da}) ASSERT_EQ(MPI_Type_free(t), MPI_SUCCESS);
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

  // A long beyond 32 bits has no external32 form: refused, nothing written.
  Mixed wide = in[0];
  wide.l = 1L << 40;
  std::vector<unsigned char> untouched(buf.size(), 0x5c);
  pos = 0;
  rc = MPI_Pack_external("external32", &wide, 1, t, untouched.data(), size, &pos);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_CONVERSION);
  EXPECT_NE(ErrorString(rc).find("element 2"), std::string::npos) << ErrorString(rc);
  EXPECT_EQ(pos, 0);
  EXPECT_EQ(untouched, std::vector<unsigned char>(buf.size(), 0x5c));
  wide.l = -(1L << 31);  // the most negative 32-bit value still fits
  ASSERT_EQ(MPI_Pack_external("external32", &wide, 1, t, untouched.data(), size, &pos),
            MPI_SUCCESS);
  EXPECT_EQ(untouched[6], 0x80);
  EXPECT_EQ(untouched[9], 0x00);

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

TEST_F(ApiType, F90ParameterizedTypesPickTheNarrowestFit) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  int size = 0;
  auto size_of = [&](MPI_Datatype d) {
    EXPECT_EQ(MPI_Type_size(d, &size), MPI_SUCCESS);
    return size;
  };
  ASSERT_EQ(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_FLOAT);
  EXPECT_EQ(size_of(t), 4);
  ASSERT_EQ(MPI_Type_create_f90_real(7, MPI_UNDEFINED, &t), MPI_SUCCESS);
  EXPECT_EQ(size_of(t), 8);  // float has 6 digits: one more needs double
  ASSERT_EQ(MPI_Type_create_f90_real(15, 307, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DOUBLE);
  EXPECT_EQ(size_of(t), 8);
  ASSERT_EQ(MPI_Type_create_f90_real(MPI_UNDEFINED, 37, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_FLOAT);
  ASSERT_EQ(MPI_Type_create_f90_real(MPI_UNDEFINED, 38, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DOUBLE);  // float's range is 37 (its smallest normal is 1e-37)
  ASSERT_EQ(MPI_Type_create_f90_real(16, MPI_UNDEFINED, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_LONG_DOUBLE);
  ASSERT_EQ(MPI_Type_create_f90_integer(2, &t), MPI_SUCCESS);
  EXPECT_EQ(size_of(t), 1);
  ASSERT_EQ(MPI_Type_create_f90_integer(3, &t), MPI_SUCCESS);
  EXPECT_EQ(size_of(t), 2);
  ASSERT_EQ(MPI_Type_create_f90_integer(9, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_INT32_T);
  EXPECT_EQ(size_of(t), 4);
  ASSERT_EQ(MPI_Type_create_f90_integer(10, &t), MPI_SUCCESS);
  EXPECT_EQ(size_of(t), 8);
  ASSERT_EQ(MPI_Type_create_f90_integer(18, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_INT64_T);
  // Nothing fits, or nothing was asked: MPI_ERR_ARG and newtype untouched.
  t = MPI_BYTE;
  EXPECT_EQ(ErrorClass(MPI_Type_create_f90_integer(19, &t)), MPI_ERR_ARG);
  EXPECT_EQ(ErrorClass(MPI_Type_create_f90_integer(MPI_UNDEFINED, &t)), MPI_ERR_ARG);
  EXPECT_EQ(ErrorClass(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t)), MPI_ERR_ARG);
  EXPECT_EQ(ErrorClass(MPI_Type_create_f90_real(MPI_UNDEFINED, 5000, &t)), MPI_ERR_ARG);
  EXPECT_EQ(ErrorClass(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t)), MPI_ERR_ARG);
  EXPECT_EQ(ErrorClass(MPI_Type_create_f90_complex(40, 10, &t)), MPI_ERR_ARG);
  EXPECT_EQ(t, MPI_BYTE);
  // Complex: the C complex type over the real kind that fits.
  ASSERT_EQ(MPI_Type_create_f90_complex(6, 10, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_C_FLOAT_COMPLEX);
  EXPECT_EQ(size_of(t), 8);
  ASSERT_EQ(MPI_Type_create_f90_complex(15, MPI_UNDEFINED, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_C_DOUBLE_COMPLEX);
  EXPECT_EQ(size_of(t), 16);
  ASSERT_EQ(MPI_Type_create_f90_complex(16, MPI_UNDEFINED, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_C_LONG_DOUBLE_COMPLEX);
  // The handle is the predefined type: named, usable at once.
  int ni, na, nd, combiner = 0;
  ASSERT_EQ(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner), MPI_SUCCESS);
  EXPECT_EQ(combiner, MPI_COMBINER_NAMED);
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
  EXPECT_EQ(ErrorClass(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 4, &t)), MPI_ERR_ARG);
  EXPECT_EQ(ErrorClass(MPI_Type_match_size(7, 4, &t)), MPI_ERR_ARG);
  EXPECT_EQ(t, MPI_INT);
  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 8, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_C_FLOAT_COMPLEX);
  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_C_DOUBLE_COMPLEX);
  ASSERT_EQ(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, int(2 * sizeof(long double)), &t),
            MPI_SUCCESS);
  EXPECT_EQ(
      t, sizeof(long double) == sizeof(double) ? MPI_C_DOUBLE_COMPLEX : MPI_C_LONG_DOUBLE_COMPLEX);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DOUBLE_INT);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_SHORT, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_SHORT_INT);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DATATYPE_NULL);
  // Fortran's pairs: the index has the value's type.
  ASSERT_EQ(MPI_Type_get_value_index(MPI_REAL, MPI_REAL, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_2REAL);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_2DOUBLE_PRECISION);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_INTEGER, MPI_INTEGER, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_2INTEGER);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_REAL, MPI_INT, &t), MPI_SUCCESS);
  EXPECT_EQ(t, MPI_DATATYPE_NULL);
  ASSERT_EQ(MPI_Type_get_value_index(MPI_DOUBLE, MPI_DOUBLE, &t), MPI_SUCCESS);
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
