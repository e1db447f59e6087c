/* The offloaded persistent allreduce over every predefined type and
 * reduction the NIC combines (native backend): integers of 8 to 64 bits,
 * signed and unsigned, MPI_LONG, floats, Fortran's INTEGER, INTEGER8, REAL,
 * DOUBLE PRECISION and LOGICAL, with SUM, PROD, MIN, MAX, the
 * logical and the bitwise ops. For each case, 3 starts with inputs that
 * change per start; after each start the rank makes no MPI call and reads
 * its receive buffer until the exact result is there (the NIC ran the
 * whole plan; bounded at 30 s), then MPI_Wait, and the result is checked
 * again. The same cases as a persistent reduce to the last rank, whose
 * result must arrive while every rank makes no MPI call, and as the plans
 * of remote atomics (src/coll/offload_reduce_scan.h): reduce_scatter_block
 * (kCount items per rank), scan and exscan (rank 0's buffer must stay as
 * it was). Run with NICQ_PLAN_DUMP=text: the harness counts one plan line
 * per form, case and rank ("plan allreduce nic_tree", "plan reduce
 * nic_tree", "plan reduce_scatter_block", "plan scan", "plan exscan").
 * A rank without a result (reduce's other ranks, exscan's rank 0) makes no
 * MPI call either until every rank with one has it: those mark the start
 * in a file the ranks share (no MPI involved), which the others read. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_check.h"

enum { kCount = 4, kStarts = 3, kMaxP = 4 };

enum Form { kAllreduce, kReduce, kReduceScatterBlock, kScan, kExscan, kForms };
static const char* const kFormNames[] = {"allreduce", "reduce", "reduce_scatter_block", "scan",
                                         "exscan"};

struct Case {
  MPI_Datatype type;
  MPI_Op op;
  const char* name;
  int bytes;     /* item size */
  int is_signed; /* integers */
  int is_float;
};

static const struct Case kCases[] = {
    {MPI_INT, MPI_SUM, "MPI_INT SUM", 4, 1, 0},
    {MPI_INT, MPI_PROD, "MPI_INT PROD", 4, 1, 0},
    {MPI_LONG, MPI_MAX, "MPI_LONG MAX", (int)sizeof(long), 1, 0},
    {MPI_LONG, MPI_MIN, "MPI_LONG MIN", (int)sizeof(long), 1, 0},
    {MPI_UNSIGNED, MPI_BAND, "MPI_UNSIGNED BAND", 4, 0, 0},
    {MPI_UNSIGNED_LONG, MPI_BOR, "MPI_UNSIGNED_LONG BOR", (int)sizeof(long), 0, 0},
    {MPI_UINT16_T, MPI_BXOR, "MPI_UINT16_T BXOR", 2, 0, 0},
    {MPI_SHORT, MPI_MIN, "MPI_SHORT MIN", 2, 1, 0},
    {MPI_INT8_T, MPI_MAX, "MPI_INT8_T MAX", 1, 1, 0},
    {MPI_UNSIGNED_CHAR, MPI_SUM, "MPI_UNSIGNED_CHAR SUM", 1, 0, 0},
    {MPI_INT, MPI_LAND, "MPI_INT LAND", 4, 1, 0},
    {MPI_INT, MPI_LOR, "MPI_INT LOR", 4, 1, 0},
    {MPI_INT, MPI_LXOR, "MPI_INT LXOR", 4, 1, 0},
    {MPI_DOUBLE, MPI_PROD, "MPI_DOUBLE PROD", 8, 1, 1},
    {MPI_FLOAT, MPI_MAX, "MPI_FLOAT MAX", 4, 1, 1},
    /* Fortran's named types, which have the C types' layout */
    {MPI_DOUBLE_PRECISION, MPI_SUM, "MPI_DOUBLE_PRECISION SUM", 8, 1, 1},
    {MPI_REAL, MPI_MIN, "MPI_REAL MIN", 4, 1, 1},
    {MPI_INTEGER, MPI_SUM, "MPI_INTEGER SUM", 4, 1, 0},
    {MPI_INTEGER8, MPI_MAX, "MPI_INTEGER8 MAX", 8, 1, 0},
    {MPI_LOGICAL, MPI_LOR, "MPI_LOGICAL LOR", 4, 1, 0},
};

static int g_p;

/* Rank r's item i at start s, as a small integer the op keeps exact. */
static long long Input(const struct Case* c, int r, int i, int s) {
  if (c->op == MPI_BAND || c->op == MPI_BOR || c->op == MPI_BXOR)
    return (1LL << ((r + i + s) % 7)) | (1LL << ((2 * r + i) % 5));
  if (c->op == MPI_LAND || c->op == MPI_LOR || c->op == MPI_LXOR)
    return (r + i + s) % 3 == 0 ? 0 : 5;
  if (c->op == MPI_PROD) return 1 + (r + i + s) % 3;
  if (c->op == MPI_SUM) return (r * 3 + i + s) % 7;
  return (c->is_signed ? -40 : 0) + (r * 13 + i * 7 + s * 5) % 50;
}

static long long Fold(const struct Case* c, long long a, long long b) {
  if (c->op == MPI_SUM) return a + b;
  if (c->op == MPI_PROD) return a * b;
  if (c->op == MPI_MIN) return a < b ? a : b;
  if (c->op == MPI_MAX) return a > b ? a : b;
  if (c->op == MPI_LAND) return (a != 0) && (b != 0);
  if (c->op == MPI_LOR) return (a != 0) || (b != 0);
  if (c->op == MPI_LXOR) return (a != 0) != (b != 0);
  if (c->op == MPI_BAND) return a & b;
  if (c->op == MPI_BOR) return a | b;
  return a ^ b;
}

/* Item i of this rank's result: the fold of ranks [0, upto) over the
 * item `at` of their input. */
static long long Folded(const struct Case* c, int at, int s, int upto) {
  long long v = Input(c, 0, at, s);
  for (int r = 1; r < upto; ++r) v = Fold(c, v, Input(c, r, at, s));
  return v;
}
static long long Expected(const struct Case* c, enum Form f, int i, int s) {
  switch (f) {
    case kReduceScatterBlock:
      return Folded(c, g_rank * kCount + i, s, g_p);
    case kScan:
      return Folded(c, i, s, g_rank + 1);
    case kExscan:
      return Folded(c, i, s, g_rank);
    default:
      return Folded(c, i, s, g_p);
  }
}

static void Store(const struct Case* c, void* buf, int i, long long v) {
  char* p = (char*)buf + (size_t)i * (size_t)c->bytes;
  if (c->is_float && c->bytes == 8) {
    double d = (double)v;
    memcpy(p, &d, 8);
  } else if (c->is_float) {
    float f = (float)v;
    memcpy(p, &f, 4);
  } else if (c->bytes == 1) {
    int8_t x = (int8_t)v;
    memcpy(p, &x, 1);
  } else if (c->bytes == 2) {
    int16_t x = (int16_t)v;
    memcpy(p, &x, 2);
  } else if (c->bytes == 4) {
    int32_t x = (int32_t)v;
    memcpy(p, &x, 4);
  } else {
    int64_t x = v;
    memcpy(p, &x, 8);
  }
}

/* Whether item i of buf holds v (compared in the item's own width). */
static int Holds(const struct Case* c, const void* buf, int i, long long v) {
  char want[8];
  Store(c, want, 0, v);
  return memcmp((const char*)buf + (size_t)i * (size_t)c->bytes, want, (size_t)c->bytes) == 0;
}

static int AllThere(const struct Case* c, enum Form f, const void* out, int s) {
  for (int i = 0; i < kCount; ++i)
    if (!Holds(c, out, i, Expected(c, f, i, s))) return 0;
  return 1;
}

/* Whether rank r gets a result of form f (reduce: its root only; exscan:
 * every rank but 0). */
static int HasResult(enum Form f, int r, int root) {
  return (f != kReduce || r == root) && (f != kExscan || r > 0);
}

/* The marks: an int per rank, the last start whose result it has. */
static int g_marks = -1;

static void OpenMarks(void) {
  char path[64] = "/tmp/nicq_offload_types_XXXXXX";
  if (g_rank == 0) {
    const int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
    close(fd);
  }
  CHECK_OK(MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
  g_marks = open(path, O_RDWR);
  CHECK(g_marks >= 0, "open %s: %s", path, strerror(errno));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) unlink(path); /* every rank holds it open */
}

static void Mark(int start) {
  CHECK(pwrite(g_marks, &start, sizeof start, (off_t)(g_rank * sizeof start)) == sizeof start,
        "pwrite: %s", strerror(errno));
}

/* Whether every rank with a result of form f has marked `start`. */
static int AllMarked(enum Form f, int root, int start) {
  for (int r = 0; r < g_p; ++r) {
    int v = 0;
    if (HasResult(f, r, root) &&
        (pread(g_marks, &v, sizeof v, (off_t)(r * sizeof v)) != sizeof v || v < start))
      return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_p);
  const int ncases = (int)(sizeof kCases / sizeof kCases[0]);
  const int root = g_p - 1;
  OpenMarks();
  int start = 0; /* every start of every case, counted alike on every rank */
  for (int form = 0; form < kForms; ++form) {
    const enum Form f = (enum Form)form;
    const char* fname = kFormNames[form];
    for (int k = 0; k < ncases; ++k) {
      const struct Case* c = &kCases[k];
      char in[kMaxP * kCount * 8], out[kCount * 8];
      const int items = f == kReduceScatterBlock ? g_p * kCount : kCount;
      MPI_Request req;
      MPI_Comm w = MPI_COMM_WORLD;
      if (f == kAllreduce)
        CHECK_OK(MPI_Allreduce_init(in, out, kCount, c->type, c->op, w, MPI_INFO_NULL, &req));
      else if (f == kReduce)
        CHECK_OK(MPI_Reduce_init(in, out, kCount, c->type, c->op, root, w, MPI_INFO_NULL, &req));
      else if (f == kReduceScatterBlock)
        CHECK_OK(
            MPI_Reduce_scatter_block_init(in, out, kCount, c->type, c->op, w, MPI_INFO_NULL, &req));
      else if (f == kScan)
        CHECK_OK(MPI_Scan_init(in, out, kCount, c->type, c->op, w, MPI_INFO_NULL, &req));
      else
        CHECK_OK(MPI_Exscan_init(in, out, kCount, c->type, c->op, w, MPI_INFO_NULL, &req));
      const int has_result = HasResult(f, g_rank, root);
      for (int s = 0; s < kStarts; ++s) {
        for (int i = 0; i < items; ++i) Store(c, in, i, Input(c, g_rank, i, s));
        memset(out, 0x5a, sizeof out);
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* every peer's buffers are ready */
        CHECK_OK(MPI_Start(&req));
        ++start;
        /* No MPI call until the result is there: only the NIC can put it
         * (a rank without a result makes none until every rank with one
         * has marked it, at most 30 s). */
        const struct timespec nap = {0, 2000000};
        int there = !has_result;
        for (int t = 0; t < 15000 && !there; ++t) {
          nanosleep(&nap, NULL);
          there = AllThere(c, f, out, s);
        }
        if (has_result && there) Mark(start);
        for (int t = 0; t < 15000 && !has_result && !AllMarked(f, root, start); ++t)
          nanosleep(&nap, NULL);
        CHECK(there, "%s %s start %d: the result did not arrive without MPI calls in 30 s", fname,
              c->name, s);
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < kCount && has_result; ++i)
          CHECK(Holds(c, out, i, Expected(c, f, i, s)), "%s %s start %d: item %d is not %lld",
                fname, c->name, s, i, Expected(c, f, i, s));
        if (f == kExscan && g_rank == 0)
          for (int i = 0; i < (int)sizeof out; ++i)
            CHECK(out[i] == 0x5a, "exscan %s start %d: rank 0's buffer was written (byte %d)",
                  c->name, s, i);
      }
      CHECK_OK(MPI_Request_free(&req));
    }
  }
  if (g_rank == 0)
    printf(
        "coll_offload_types: %d type/op cases, allreduce, reduce, reduce_scatter_block, scan "
        "and exscan, offloaded on %d ranks\n",
        ncases, g_p);
  close(g_marks);
  MPI_Finalize();
  return 0;
}
