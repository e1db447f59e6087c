/* The predefined complex types and MPI_CXX_BOOL across processes: allreduce
 * SUM and PROD on MPI_C_DOUBLE_COMPLEX (short and long vectors, so both the
 * small and the pipelined algorithms run), reduce on MPI_C_FLOAT_COMPLEX,
 * send/recv of MPI_C_LONG_DOUBLE_COMPLEX, allreduce LOR on MPI_CXX_BOOL, and
 * MPI_MAX on a complex type refused with MPI_ERR_OP under MPI_ERRORS_RETURN.
 * Values are small integers, so every sum and product is exact whatever
 * order the ranks combine in. */
#include <complex.h>
#include <stdbool.h>

#include "mp_check.h"

enum { kLong = 5000 };

/* Rank r's element i: (r+1 + i%3) + (2r-1)i, small integers with no zero
 * imaginary part (a product that dropped the -bd term would show). */
static double complex Element(int r, int i) {
  return CMPLX((double)(r + 1 + i % 3), (double)(2 * r - 1));
}

/* (a+bi)(c+di) written out, the product MPI defines. */
static double complex Mul(double complex x, double complex y) {
  return CMPLX(creal(x) * creal(y) - cimag(x) * cimag(y),
               creal(x) * cimag(y) + cimag(x) * creal(y));
}

static void CheckEqual(double complex got, double complex want, const char* what, int i) {
  CHECK(creal(got) == creal(want) && cimag(got) == cimag(want), "%s[%d] = %g%+gi, want %g%+gi",
        what, i, creal(got), cimag(got), creal(want), cimag(want));
}

static void AllreduceDoubleComplex(int rank, int size) {
  static double complex in[kLong], out[kLong];
  const int lengths[] = {1, 7, kLong};
  for (int k = 0; k < 3; ++k) {
    const int n = lengths[k];
    for (int i = 0; i < n; ++i) in[i] = Element(rank, i);
    CHECK_OK(MPI_Allreduce(in, out, n, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < n; ++i) {
      double complex want = 0;
      for (int r = 0; r < size; ++r) want += Element(r, i);
      CheckEqual(out[i], want, "allreduce sum", i);
    }
    CHECK_OK(MPI_Allreduce(in, out, n, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
    for (int i = 0; i < n; ++i) {
      double complex want = 1;
      for (int r = 0; r < size; ++r) want = Mul(want, Element(r, i));
      CheckEqual(out[i], want, "allreduce prod", i);
    }
  }
  /* One exact case spelled out: ranks 0 and 1 give (1-1i)(2+1i) = 3-1i. */
  if (size == 2) CheckEqual(out[0], CMPLX(3.0, -1.0), "allreduce prod n2", 0);
}

static void ReduceFloatComplex(int rank, int size) {
  float complex in[3], out[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) in[i] = CMPLXF((float)(rank + i), (float)(2 * rank - i));
  int root = size - 1;
  CHECK_OK(MPI_Reduce(in, out, 3, MPI_C_FLOAT_COMPLEX, MPI_SUM, root, MPI_COMM_WORLD));
  if (rank == root) {
    for (int i = 0; i < 3; ++i) {
      float re = 0, im = 0;
      for (int r = 0; r < size; ++r) re += (float)(r + i), im += (float)(2 * r - i);
      CHECK(crealf(out[i]) == re && cimagf(out[i]) == im, "reduce[%d] = %g%+gi, want %g%+gi", i,
            crealf(out[i]), cimagf(out[i]), re, im);
    }
  }
}

static void SendLongDoubleComplex(int rank, int size) {
  long double complex buf[4];
  if (rank == 0) {
    for (int i = 0; i < 4; ++i) buf[i] = (1.0L / 3 + i) + (-2.0L / 7 * i) * I;
    CHECK_OK(MPI_Send(buf, 4, MPI_C_LONG_DOUBLE_COMPLEX, size - 1, 11, MPI_COMM_WORLD));
  } else if (rank == size - 1) {
    MPI_Status st;
    int count = -1;
    memset(buf, 0, sizeof buf);
    CHECK_OK(MPI_Recv(buf, 4, MPI_C_LONG_DOUBLE_COMPLEX, 0, 11, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Get_count(&st, MPI_C_LONG_DOUBLE_COMPLEX, &count));
    CHECK(count == 4, "count %d", count);
    for (int i = 0; i < 4; ++i) {
      long double complex want = (1.0L / 3 + i) + (-2.0L / 7 * i) * I;
      CHECK(creall(buf[i]) == creall(want) && cimagl(buf[i]) == cimagl(want),
            "long double complex %d differs", i);
    }
  }
}

/* The names MPI_Type_get_name reports (MPI_C_COMPLEX is MPI_C_FLOAT_COMPLEX). */
static void Names(void) {
  const struct {
    MPI_Datatype t;
    const char* name;
  } cases[] = {{MPI_C_COMPLEX, "MPI_C_FLOAT_COMPLEX"},
               {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"},
               {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"},
               {MPI_CXX_BOOL, "MPI_CXX_BOOL"},
               {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX"},
               {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX"},
               {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX"}};
  for (int i = 0; i < 7; ++i) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    CHECK_OK(MPI_Type_get_name(cases[i].t, name, &len));
    CHECK(strcmp(name, cases[i].name) == 0 && len == (int)strlen(cases[i].name),
          "MPI_Type_get_name gives %s (%d), want %s", name, len, cases[i].name);
  }
}

static void CxxBoolLor(int rank, int size) {
  /* Element 0: only the last rank is true; 1: nobody; 2: everybody. */
  bool in[3] = {rank == size - 1, false, true}, out[3] = {false, true, false};
  CHECK_OK(MPI_Allreduce(in, out, 3, MPI_CXX_BOOL, MPI_LOR, MPI_COMM_WORLD));
  CHECK(out[0] && !out[1] && out[2], "lor = %d %d %d", out[0], out[1], out[2]);
  CHECK_OK(MPI_Allreduce(in, out, 3, MPI_CXX_BOOL, MPI_LAND, MPI_COMM_WORLD));
  CHECK(!out[0] && !out[1] && out[2], "land = %d %d %d", out[0], out[1], out[2]);
}

static void MaxIsRefused(void) {
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  double complex in[2] = {1, 2}, out[2] = {5, 6};
  int rc = MPI_Allreduce(in, out, 2, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_MAX on MPI_C_DOUBLE_COMPLEX: class %d, want MPI_ERR_OP", cls);
  CHECK(creal(out[0]) == 5 && creal(out[1]) == 6, "refused allreduce wrote recvbuf");
  float complex f = 1, g = 2;
  rc = MPI_Reduce_local(&f, &g, 1, MPI_CXX_FLOAT_COMPLEX, MPI_BAND);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP && crealf(g) == 2, "MPI_BAND on MPI_CXX_FLOAT_COMPLEX: class %d", cls);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  CHECK_OK(MPI_Init(&argc, &argv));
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &mp_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Names();
  AllreduceDoubleComplex(mp_rank, size);
  ReduceFloatComplex(mp_rank, size);
  SendLongDoubleComplex(mp_rank, size);
  CxxBoolLor(mp_rank, size);
  MaxIsRefused();
  mp_barrier(MPI_COMM_WORLD);
  if (mp_rank == 0) printf("mp_complex: ok (%d ranks)\n", size);
  return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
