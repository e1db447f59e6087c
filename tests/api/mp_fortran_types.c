/* Fortran's named datatypes used from C: names, sizes and extents, the
 * optional sized types this machine lacks (MPI_DATATYPE_NULL), the
 * same-type pairs MPI_2REAL and MPI_2DOUBLE_PRECISION under MINLOC/MAXLOC
 * (ties go to the smaller index), MPI_LOGICAL's logical operations on its
 * int, MPI_CHARACTER refusing reductions, and external32 packing. The
 * collective sweep (tests/mpi) moves and reduces the others. */
#include <stdint.h>

#include "mp_check.h"

static int rank, size;

static void names_and_sizes(void) {
  const struct {
    MPI_Datatype type;
    const char* name;
    int size;
  } want[] = {
      {MPI_INTEGER, "MPI_INTEGER", 4},
      {MPI_REAL, "MPI_REAL", 4},
      {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8},
      {MPI_COMPLEX, "MPI_COMPLEX", 8},
      {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16},
      {MPI_LOGICAL, "MPI_LOGICAL", 4},
      {MPI_CHARACTER, "MPI_CHARACTER", 1},
      {MPI_2INTEGER, "MPI_2INTEGER", 8},
      {MPI_2REAL, "MPI_2REAL", 8},
      {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16},
      {MPI_INTEGER1, "MPI_INTEGER1", 1},
      {MPI_INTEGER2, "MPI_INTEGER2", 2},
      {MPI_INTEGER4, "MPI_INTEGER4", 4},
      {MPI_INTEGER8, "MPI_INTEGER8", 8},
      {MPI_REAL4, "MPI_REAL4", 4},
      {MPI_REAL8, "MPI_REAL8", 8},
      {MPI_COMPLEX8, "MPI_COMPLEX8", 8},
      {MPI_COMPLEX16, "MPI_COMPLEX16", 16},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0, sz = -1, ni, na, nd, combiner = -1;
    MPI_Aint lb = -1, extent = -1;
    CHECK_OK(MPI_Type_get_name(want[i].type, name, &len));
    CHECK(strcmp(name, want[i].name) == 0, "name %s, expected %s", name, want[i].name);
    CHECK_OK(MPI_Type_size(want[i].type, &sz));
    CHECK_OK(MPI_Type_get_extent(want[i].type, &lb, &extent));
    CHECK(sz == want[i].size && lb == 0 && extent == want[i].size, "%s: size %d extent %ld",
          want[i].name, sz, (long)extent);
    CHECK_OK(MPI_Type_get_envelope(want[i].type, &ni, &na, &nd, &combiner));
    CHECK(combiner == MPI_COMBINER_NAMED, "%s: combiner %d", want[i].name, combiner);
  }
  CHECK(MPI_INTEGER16 == MPI_DATATYPE_NULL && MPI_REAL16 == MPI_DATATYPE_NULL &&
            MPI_COMPLEX32 == MPI_DATATYPE_NULL && MPI_REAL2 == MPI_DATATYPE_NULL,
        "the sized types without a C type here are MPI_DATATYPE_NULL");
}

/* Value r % 3 (so ties on every size above 3) and index 10 + r. */
static void same_type_pairs(void) {
  float rin[4] = {(float)(rank % 3), 10.0f + rank, (float)(-rank), 10.0f + rank}, rout[4];
  CHECK_OK(MPI_Allreduce(rin, rout, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allreduce(rin + 2, rout + 2, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD));
  const int top = size >= 3 ? 2 : size - 1;
  CHECK(rout[0] == (float)top && rout[1] == 10.0f + top, "MPI_2REAL MAXLOC: (%g, %g)", rout[0],
        rout[1]);
  CHECK(rout[2] == (float)(1 - size) && rout[3] == 10.0f + size - 1, "MPI_2REAL MINLOC: (%g, %g)",
        rout[2], rout[3]);
  double din[2] = {(double)(rank % 3), 100.0 + rank}, dout[2];
  CHECK_OK(MPI_Allreduce(din, dout, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK(dout[0] == top && dout[1] == 100.0 + top, "MPI_2DOUBLE_PRECISION MAXLOC: (%g, %g)", dout[0],
        dout[1]);
  /* Equal values everywhere: the smallest index wins. */
  din[0] = 5.0;
  CHECK_OK(MPI_Allreduce(din, dout, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD));
  CHECK(dout[0] == 5.0 && dout[1] == 100.0, "MPI_2DOUBLE_PRECISION tie: (%g, %g)", dout[0],
        dout[1]);
  /* A float index compares as a float: -3.0 is below -1.5, though its bits
   * read as an int are not. */
  float tie[2] = {1.0f, -1.5f * (float)(rank + 1)}, tout[2];
  CHECK_OK(MPI_Allreduce(tie, tout, 1, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD));
  CHECK(tout[0] == 1.0f && tout[1] == -1.5f * (float)size, "MPI_2REAL tie: (%g, %g)", tout[0],
        tout[1]);
  mp_expect_class(MPI_Allreduce(din, dout, 1, MPI_2REAL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP,
                  "MPI_Allreduce");
}

/* Fortran's .TRUE. is any nonzero int; results are 1 or 0. */
static void logical(void) {
  int mine[3] = {rank == 0 ? 7 : 0, 5, rank == 1 ? 3 : 0}, land[3], lor[3], lxor[3];
  CHECK_OK(MPI_Allreduce(mine, land, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allreduce(mine, lor, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allreduce(mine, lxor, 3, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD));
  CHECK(land[0] == 0 && land[1] == 1 && land[2] == 0, "LAND %d %d %d", land[0], land[1], land[2]);
  CHECK(lor[0] == 1 && lor[1] == 1 && lor[2] == 1, "LOR %d %d %d", lor[0], lor[1], lor[2]);
  CHECK(lxor[0] == 1 && lxor[1] == size % 2 && lxor[2] == 1, "LXOR %d %d %d", lxor[0], lxor[1],
        lxor[2]);
  mp_expect_class(MPI_Allreduce(mine, land, 3, MPI_LOGICAL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP,
                  "MPI_Allreduce");
  char c = 'a', d = 0;
  mp_expect_class(MPI_Allreduce(&c, &d, 1, MPI_CHARACTER, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP,
                  "MPI_Allreduce");
  CHECK(d == 0, "a refused reduction wrote its output");
}

/* external32 is big-endian IEEE: a REAL 1.0 is 3f 80 00 00. */
static void external32(void) {
  float re[2] = {1.0f, -2.5f};
  int ints[2] = {0x01020304, -2};
  unsigned char packed[64];
  MPI_Aint pos = 0;
  CHECK_OK(MPI_Pack_external("external32", re, 2, MPI_REAL, packed, sizeof packed, &pos));
  CHECK_OK(MPI_Pack_external("external32", ints, 1, MPI_2INTEGER, packed, sizeof packed, &pos));
  CHECK(pos == 16, "packed %ld bytes", (long)pos);
  const unsigned char head[8] = {0x3f, 0x80, 0, 0, 0x01, 0x02, 0x03, 0x04};
  CHECK(memcmp(packed, head, 4) == 0 && memcmp(packed + 8, head + 4, 4) == 0,
        "external32 bytes %02x %02x %02x %02x", packed[0], packed[1], packed[2], packed[3]);
  float back[2] = {0};
  int iback[2] = {0};
  pos = 0;
  CHECK_OK(MPI_Unpack_external("external32", packed, 16, &pos, back, 2, MPI_REAL));
  CHECK_OK(MPI_Unpack_external("external32", packed, 16, &pos, iback, 1, MPI_2INTEGER));
  CHECK(back[0] == 1.0f && back[1] == -2.5f && iback[0] == 0x01020304 && iback[1] == -2,
        "external32 round trip %g %g %d %d", back[0], back[1], iback[0], iback[1]);
}

int main(int argc, char** argv) {
  mp_init(&argc, &argv, &rank, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  names_and_sizes();
  same_type_pairs();
  logical();
  external32();
  if (rank == 0) printf("Fortran named types OK on %d ranks\n", size);
  CHECK_OK(MPI_Finalize());
  return 0;
}
