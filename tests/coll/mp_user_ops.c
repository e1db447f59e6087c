/* User-defined non-commutative ops on derived datatypes, in every reduction
 * collective and form. The op multiplies 2x2 integer matrices (in * inout),
 * so a result is right only if the op was called with the user's datatype,
 * a count in items of it, data in the type's own layout, and the operands
 * in rank order. Three layouts: a dense matrix (contiguous), a matrix with a
 * hole between its rows (vector), and the same shifted to a negative lower
 * bound with holes at both ends (hindexed + resized). Holes of receive
 * buffers must keep their sentinel. The op and the types are freed right
 * after each nonblocking call and after each persistent init: pending
 * operations must complete normally (MPI 4.1 2.5.1, 6.9.5). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

#define ITEMS 3
#define SENTINEL (-7)

enum Layout { kDense, kHoled, kShifted, kLayouts };
static const char* const kLayoutNames[] = {"dense", "holed", "shifted"};
/* Byte offsets of a00 a01 a10 a11 inside one item, the item's lower bound
 * and extent. */
static const int kOffsets[kLayouts][4] = {{0, 4, 8, 12}, {0, 4, 12, 16}, {-8, -4, 4, 8}};
static const int kLb[kLayouts] = {0, 0, -12};
static const int kExtent[kLayouts] = {16, 20, 28};

/* The handle of the type in use (saved: the test frees it while the op may
 * still be called); only one layout is in use at a time, since a freed
 * handle's value may come back for the next type. */
static MPI_Datatype g_handles[kLayouts];
static int g_bad_calls;

static int LayoutOf(MPI_Datatype dt) {
  for (int l = 0; l < kLayouts; ++l)
    if (g_handles[l] == dt) return l;
  return -1;
}

static int* At(void* base, int layout, int item, int e) {
  return (int*)((char*)base + (long)item * kExtent[layout] + kOffsets[layout][e]);
}

static void MatMul(void* in, void* inout, int* len, MPI_Datatype* dt) {
  const int l = LayoutOf(*dt);
  if (l < 0) {
    ++g_bad_calls; /* called with a datatype the user never passed */
    return;
  }
  for (int k = 0; k < *len; ++k) {
    int a[4], b[4];
    for (int e = 0; e < 4; ++e) a[e] = *At(in, l, k, e), b[e] = *At(inout, l, k, e);
    *At(inout, l, k, 0) = a[0] * b[0] + a[1] * b[2];
    *At(inout, l, k, 1) = a[0] * b[1] + a[1] * b[3];
    *At(inout, l, k, 2) = a[2] * b[0] + a[3] * b[2];
    *At(inout, l, k, 3) = a[2] * b[1] + a[3] * b[3];
  }
}

/* Rank r's matrix for item k; no two ranks' matrices commute. */
static void Matrix(int r, int k, int m[4]) {
  m[0] = 1, m[1] = r + k + 1, m[2] = (r + 2 * k) % 3, m[3] = 1;
}

/* The product of ranks [from, to] for item k, in rank order. */
static void Product(int from, int to, int k, int m[4]) {
  m[0] = 1, m[1] = 0, m[2] = 0, m[3] = 1;
  for (int r = from; r <= to; ++r) {
    int x[4], c[4];
    Matrix(r, k, x);
    c[0] = m[0] * x[0] + m[1] * x[2], c[1] = m[0] * x[1] + m[1] * x[3];
    c[2] = m[2] * x[0] + m[3] * x[2], c[3] = m[2] * x[1] + m[3] * x[3];
    memcpy(m, c, sizeof c);
  }
}

static MPI_Datatype MakeType(int layout) {
  MPI_Datatype t, inner;
  for (int l = 0; l < kLayouts; ++l) g_handles[l] = MPI_DATATYPE_NULL;
  if (layout == kDense) {
    CHECK_OK(MPI_Type_contiguous(4, MPI_INT, &t));
  } else if (layout == kHoled) {
    CHECK_OK(MPI_Type_vector(2, 2, 3, MPI_INT, &t));
  } else {
    int one = 1;
    MPI_Aint disp = -8;
    MPI_Datatype vec;
    CHECK_OK(MPI_Type_vector(2, 2, 3, MPI_INT, &vec));
    CHECK_OK(MPI_Type_create_hindexed(1, &one, &disp, vec, &inner));
    CHECK_OK(MPI_Type_create_resized(inner, kLb[kShifted], kExtent[kShifted], &t));
    CHECK_OK(MPI_Type_free(&inner));
    CHECK_OK(MPI_Type_free(&vec));
  }
  CHECK_OK(MPI_Type_commit(&t));
  g_handles[layout] = t;
  MPI_Aint lb, extent;
  CHECK_OK(MPI_Type_get_extent(t, &lb, &extent));
  CHECK(lb == kLb[layout] && extent == kExtent[layout], "%s: lb %ld extent %ld",
        kLayoutNames[layout], (long)lb, (long)extent);
  return t;
}

/* A buffer of n items whose origin leaves room for a negative lower bound. */
typedef struct {
  char* mem;
  char* origin;
} Buf;

static Buf Alloc(int layout, int n) {
  Buf b;
  const size_t bytes = (size_t)(n + 1) * kExtent[layout] + 32;
  b.mem = malloc(bytes);
  int* w = (int*)b.mem;
  for (size_t i = 0; i < bytes / sizeof(int); ++i) w[i] = SENTINEL;
  b.origin = b.mem + 16;
  return b;
}

static void FillMine(Buf b, int layout, int n, int rank) {
  for (int k = 0; k < n; ++k) {
    int m[4];
    Matrix(rank, k, m);
    for (int e = 0; e < 4; ++e) *At(b.origin, layout, k, e) = m[e];
  }
}

/* Items [first, first+n) of the expected products of ranks [from, to],
 * stored at items 0..n-1; every other int of the buffer keeps its sentinel. */
static void Expect(const char* what, Buf b, int layout, int first, int n, int from, int to) {
  const size_t bytes = (size_t)(n + 1) * kExtent[layout] + 32;
  int* w = (int*)b.mem;
  char* data_mark = calloc(bytes / sizeof(int), 1);
  for (int k = 0; k < n; ++k) {
    int m[4];
    Product(from, to, first + k, m);
    for (int e = 0; e < 4; ++e) {
      int* p = At(b.origin, layout, k, e);
      data_mark[p - w] = 1;
      CHECK(*p == m[e], "%s on %s: item %d entry %d is %d, expected %d", what, kLayoutNames[layout],
            first + k, e, *p, m[e]);
    }
  }
  for (size_t i = 0; i < bytes / sizeof(int); ++i)
    CHECK(data_mark[i] || w[i] == SENTINEL, "%s on %s: hole int %zu overwritten (%d)", what,
          kLayoutNames[layout], i, w[i]);
  free(data_mark);
}

enum Form { kBlocking, kNonblocking, kPersistent };
static const char* const kFormNames[] = {"blocking", "nonblocking", "persistent"};

/* Runs one collective in one form; for the nonblocking and persistent forms
 * the op and type handles are freed before the operation completes. */
typedef int (*Blocking)(void* in, void* out, MPI_Datatype t, MPI_Op op);
typedef int (*Nonblocking)(void* in, void* out, MPI_Datatype t, MPI_Op op, MPI_Request* r);
typedef int (*Persistent)(void* in, void* out, MPI_Datatype t, MPI_Op op, MPI_Request* r);

static int g_size, g_root;
static int g_counts[8];

static int AllreduceB(void* i, void* o, MPI_Datatype t, MPI_Op op) {
  return MPI_Allreduce(i, o, ITEMS, t, op, MPI_COMM_WORLD);
}
static int AllreduceN(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Iallreduce(i, o, ITEMS, t, op, MPI_COMM_WORLD, r);
}
static int AllreduceP(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Allreduce_init(i, o, ITEMS, t, op, MPI_COMM_WORLD, MPI_INFO_NULL, r);
}
static int ReduceB(void* i, void* o, MPI_Datatype t, MPI_Op op) {
  return MPI_Reduce(i, o, ITEMS, t, op, g_root, MPI_COMM_WORLD);
}
static int ReduceN(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Ireduce(i, o, ITEMS, t, op, g_root, MPI_COMM_WORLD, r);
}
static int ReduceP(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Reduce_init(i, o, ITEMS, t, op, g_root, MPI_COMM_WORLD, MPI_INFO_NULL, r);
}
static int ScanB(void* i, void* o, MPI_Datatype t, MPI_Op op) {
  return MPI_Scan(i, o, ITEMS, t, op, MPI_COMM_WORLD);
}
static int ScanN(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Iscan(i, o, ITEMS, t, op, MPI_COMM_WORLD, r);
}
static int ScanP(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Scan_init(i, o, ITEMS, t, op, MPI_COMM_WORLD, MPI_INFO_NULL, r);
}
static int ExscanB(void* i, void* o, MPI_Datatype t, MPI_Op op) {
  return MPI_Exscan(i, o, ITEMS, t, op, MPI_COMM_WORLD);
}
static int ExscanN(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Iexscan(i, o, ITEMS, t, op, MPI_COMM_WORLD, r);
}
static int ExscanP(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Exscan_init(i, o, ITEMS, t, op, MPI_COMM_WORLD, MPI_INFO_NULL, r);
}
static int RsbB(void* i, void* o, MPI_Datatype t, MPI_Op op) {
  return MPI_Reduce_scatter_block(i, o, ITEMS, t, op, MPI_COMM_WORLD);
}
static int RsbN(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Ireduce_scatter_block(i, o, ITEMS, t, op, MPI_COMM_WORLD, r);
}
static int RsbP(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Reduce_scatter_block_init(i, o, ITEMS, t, op, MPI_COMM_WORLD, MPI_INFO_NULL, r);
}
static int RsB(void* i, void* o, MPI_Datatype t, MPI_Op op) {
  return MPI_Reduce_scatter(i, o, g_counts, t, op, MPI_COMM_WORLD);
}
static int RsN(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Ireduce_scatter(i, o, g_counts, t, op, MPI_COMM_WORLD, r);
}
static int RsP(void* i, void* o, MPI_Datatype t, MPI_Op op, MPI_Request* r) {
  return MPI_Reduce_scatter_init(i, o, g_counts, t, op, MPI_COMM_WORLD, MPI_INFO_NULL, r);
}

enum Coll { kAllreduce, kReduce, kScan, kExscan, kRsb, kRs, kColls };
static const char* const kCollNames[] = {
    "allreduce", "reduce", "scan", "exscan", "reduce_scatter_block", "reduce_scatter"};
static const Blocking kB[] = {AllreduceB, ReduceB, ScanB, ExscanB, RsbB, RsB};
static const Nonblocking kN[] = {AllreduceN, ReduceN, ScanN, ExscanN, RsbN, RsN};
static const Persistent kP[] = {AllreduceP, ReduceP, ScanP, ExscanP, RsbP, RsP};

static void CheckResult(int coll, int form, int layout, Buf out, int rank, int size) {
  char what[96];
  snprintf(what, sizeof what, "%s %s", kFormNames[form], kCollNames[coll]);
  switch (coll) {
    case kAllreduce:
      return Expect(what, out, layout, 0, ITEMS, 0, size - 1);
    case kReduce:
      if (rank == g_root) Expect(what, out, layout, 0, ITEMS, 0, size - 1);
      return;
    case kScan:
      return Expect(what, out, layout, 0, ITEMS, 0, rank);
    case kExscan:
      if (rank > 0) Expect(what, out, layout, 0, ITEMS, 0, rank - 1);
      return;
    case kRsb:
      return Expect(what, out, layout, rank * ITEMS, ITEMS, 0, size - 1);
    case kRs: {
      int first = 0;
      for (int i = 0; i < rank; ++i) first += g_counts[i];
      return Expect(what, out, layout, first, g_counts[rank], 0, size - 1);
    }
  }
}

/* Items of the send buffer: one block per rank for the scattering forms. */
static int SendItems(int coll) {
  if (coll == kRsb) return ITEMS * g_size;
  if (coll == kRs) {
    int n = 0;
    for (int i = 0; i < g_size; ++i) n += g_counts[i];
    return n;
  }
  return ITEMS;
}

static void RunOne(int coll, int form, int layout, int rank, int size) {
  const int n = SendItems(coll);
  Buf in = Alloc(layout, n), out = Alloc(layout, n);
  FillMine(in, layout, n, rank);
  MPI_Datatype t = MakeType(layout);
  MPI_Op op;
  CHECK_OK(MPI_Op_create(MatMul, 0, &op));
  int commute = 1;
  CHECK_OK(MPI_Op_commutative(op, &commute));
  CHECK(commute == 0, "MPI_Op_commutative says %d for a non-commutative op", commute);
  if (form == kBlocking) {
    CHECK_OK(kB[coll](in.origin, out.origin, t, op));
    CHECK_OK(MPI_Op_free(&op));
    CHECK_OK(MPI_Type_free(&t));
  } else if (form == kNonblocking) {
    MPI_Request r;
    CHECK_OK(kN[coll](in.origin, out.origin, t, op, &r));
    CHECK_OK(MPI_Op_free(&op)); /* legal: the pending reduction keeps using it */
    CHECK_OK(MPI_Type_free(&t));
    CHECK(op == MPI_OP_NULL && t == MPI_DATATYPE_NULL, "free did not reset the handles");
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  } else {
    MPI_Request r;
    CHECK_OK(kP[coll](in.origin, out.origin, t, op, &r));
    CHECK_OK(MPI_Op_free(&op));
    CHECK_OK(MPI_Type_free(&t));
    for (int round = 0; round < 2; ++round) {
      CHECK_OK(MPI_Start(&r));
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      CheckResult(coll, form, layout, out, rank, size);
    }
    CHECK_OK(MPI_Request_free(&r));
  }
  CHECK(g_bad_calls == 0, "%s %s on %s: the op was called with %d foreign datatypes",
        kFormNames[form], kCollNames[coll], kLayoutNames[layout], g_bad_calls);
  CheckResult(coll, form, layout, out, rank, size);
  free(in.mem);
  free(out.mem);
}

/* MPI_IN_PLACE allreduce: the input is read from, and the result written
 * into, the same holed buffer. */
static void InPlace(int layout, int rank, int size) {
  Buf b = Alloc(layout, ITEMS);
  FillMine(b, layout, ITEMS, rank);
  MPI_Datatype t = MakeType(layout);
  MPI_Op op;
  CHECK_OK(MPI_Op_create(MatMul, 0, &op));
  CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, b.origin, ITEMS, t, op, MPI_COMM_WORLD));
  Expect("in-place allreduce", b, layout, 0, ITEMS, 0, size - 1);
  CHECK_OK(MPI_Op_free(&op));
  CHECK_OK(MPI_Type_free(&t));
  free(b.mem);
}

/* MPI_Op_create_c: a large-count function on a contiguous derived type of
 * two longs (m, c), the affine map x -> m*x + c; the op composes the left
 * operand's map then the right's, which is associative and not
 * commutative. */
static MPI_Datatype g_large_type;
static int g_large_calls_bad;
static void ComposeAffine(void* in, void* inout, MPI_Count* len, MPI_Datatype* dt) {
  if (*dt != g_large_type) ++g_large_calls_bad;
  long* a = in;
  long* b = inout;
  for (MPI_Count k = 0; k < *len; ++k, a += 2, b += 2) {
    const long m = a[0] * b[0], c = b[0] * a[1] + b[1];
    b[0] = m;
    b[1] = c;
  }
}

static void LargeCountOp(int rank, int size) {
  CHECK_OK(MPI_Type_contiguous(2, MPI_LONG, &g_large_type));
  CHECK_OK(MPI_Type_commit(&g_large_type));
  MPI_Op op;
  CHECK_OK(MPI_Op_create_c(ComposeAffine, 0, &op));
  int commute = 1;
  CHECK_OK(MPI_Op_commutative(op, &commute));
  CHECK(commute == 0, "MPI_Op_create_c op reported commutative");
  long in[6], out[6];
  for (int k = 0; k < 3; ++k) in[2 * k] = 2 + (rank + k) % 2, in[2 * k + 1] = rank + 1 + k;
  for (int i = 0; i < 6; ++i) out[i] = -1;
  CHECK_OK(MPI_Allreduce(in, out, 3, g_large_type, op, MPI_COMM_WORLD));
  for (int k = 0; k < 3; ++k) {
    long m = 1, c = 0; /* identity, then each rank's map in rank order */
    for (int r = 0; r < size; ++r) {
      const long mr = 2 + (r + k) % 2, cr = r + 1 + k;
      c = mr * c + cr;
      m = m * mr;
    }
    CHECK(out[2 * k] == m && out[2 * k + 1] == c,
          "MPI_Op_create_c allreduce item %d is (%ld, %ld), expected (%ld, %ld)", k, out[2 * k],
          out[2 * k + 1], m, c);
  }
  CHECK(g_large_calls_bad == 0, "the large-count op got a foreign datatype");
  CHECK_OK(MPI_Op_free(&op));
  CHECK_OK(MPI_Type_free(&g_large_type));
}

int main(int argc, char** argv) {
  CHECK_OK(MPI_Init(&argc, &argv));
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_rank = rank;
  g_size = size;
  g_root = size - 1; /* a root that is not where a rank-ordered tree ends */
  for (int i = 0; i < size && i < 8; ++i) g_counts[i] = 1 + i % 2;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (int layout = 0; layout < kLayouts; ++layout) {
    for (int coll = 0; coll < kColls; ++coll)
      for (int form = 0; form < 3; ++form) RunOne(coll, form, layout, rank, size);
    InPlace(layout, rank, size);
  }
  LargeCountOp(rank, size);
  if (rank == 0) printf("user ops on derived types: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
