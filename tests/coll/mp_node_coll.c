/* Blocking barrier, bcast, reduce and allreduce through the same-node
 * collective area (src/coll/node_coll.cc; runs on the shm column, where
 * nicq's shm transport carries every rank). argv[1]:
 *   data      every predefined op on several types, counts 0 / 1 / odd /
 *             across the small limit and chunk boundaries, MPI_IN_PLACE,
 *             every root, bcast with a non-contiguous type and with
 *             different (matching) types on root and leaves, a
 *             non-commutative user op, bit-identical float results
 *   split     the same on subcommunicators from MPI_Comm_split
 *   mixed     many back-to-back calls alternating kinds and sizes, with
 *             communicators made and freed between them
 *   late      one rank arrives late (sleeps) at each kind
 *   killsetup rank 1 is killed before the area's setup completes: rank 0
 *             must fail with MPI_ERR_PROC_FAILED and leave no name in
 *             /dev/shm
 *   killafter rank 1 is killed after the area exists: rank 0's barrier
 *             fails the same way
 * "all" (default) runs data, split, mixed and late. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coll_check.h"

static int rank, p;

/* Element i of rank r's input: small integers so sums and products stay
 * exact in every type (products only over 1s and 2s). */
static long long Val(int r, long long i, int op_is_prod) {
  if (op_is_prod) return 1 + ((r + i) % 3 == 0);
  return (r * 7 + i * 3) % 23 + (r == (int)(i % p));
}

typedef struct {
  MPI_Datatype type;
  const char* name;
  int size;
  int integer;
} TypeCase;

static void Store(const TypeCase* t, void* buf, long long i, long long v) {
  if (t->type == MPI_INT)
    ((int*)buf)[i] = (int)v;
  else if (t->type == MPI_FLOAT)
    ((float*)buf)[i] = (float)v;
  else if (t->type == MPI_DOUBLE)
    ((double*)buf)[i] = (double)v;
  else if (t->type == MPI_LONG_LONG)
    ((long long*)buf)[i] = v;
  else if (t->type == MPI_UNSIGNED_CHAR)
    ((unsigned char*)buf)[i] = (unsigned char)v;
  else if (t->type == MPI_SHORT)
    ((short*)buf)[i] = (short)v;
}
static long long Load(const TypeCase* t, const void* buf, long long i) {
  if (t->type == MPI_INT) return ((const int*)buf)[i];
  if (t->type == MPI_FLOAT) return (long long)((const float*)buf)[i];
  if (t->type == MPI_DOUBLE) return (long long)((const double*)buf)[i];
  if (t->type == MPI_LONG_LONG) return ((const long long*)buf)[i];
  if (t->type == MPI_UNSIGNED_CHAR) return ((const unsigned char*)buf)[i];
  return ((const short*)buf)[i];
}

static long long Apply(MPI_Op op, long long a, long long b, const TypeCase* t) {
  if (op == MPI_SUM) return a + b;
  if (op == MPI_PROD) return a * b;
  if (op == MPI_MAX) return a > b ? a : b;
  if (op == MPI_MIN) return a < b ? a : b;
  if (op == MPI_LAND) return (a != 0) && (b != 0);
  if (op == MPI_LOR) return (a != 0) || (b != 0);
  if (op == MPI_LXOR) return (a != 0) != (b != 0);
  if (op == MPI_BAND) return a & b;
  if (op == MPI_BOR) return a | b;
  (void)t;
  return a ^ b; /* MPI_BXOR */
}

static long long Expected(MPI_Op op, int n, long long i, const TypeCase* t) {
  const int prod = op == MPI_PROD;
  long long acc = Val(0, i, prod);
  for (int r = 1; r < n; ++r) acc = Apply(op, acc, Val(r, i, prod), t);
  return acc;
}

static void CheckReduction(MPI_Comm comm, const TypeCase* t, MPI_Op op, const char* opname,
                           long long count, int in_place, int root) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  const size_t bytes = (size_t)(count ? count : 1) * (size_t)t->size;
  char* in = malloc(bytes);
  char* out = malloc(bytes);
  const int prod = op == MPI_PROD;
  for (long long i = 0; i < count; ++i) Store(t, in, i, Val(me, i, prod));
  memset(out, 0x7b, bytes);
  if (root < 0) {
    if (in_place) memcpy(out, in, bytes);
    CHECK_OK(MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, (int)count, t->type, op, comm));
  } else {
    if (in_place && me == root) memcpy(out, in, bytes);
    CHECK_OK(MPI_Reduce(in_place && me == root ? MPI_IN_PLACE : in, out, (int)count, t->type, op,
                        root, comm));
  }
  if (root < 0 || me == root) {
    for (long long i = 0; i < count; ++i) {
      const long long want = Expected(op, n, i, t), got = Load(t, out, i);
      long long w = want;
      if (t->type == MPI_UNSIGNED_CHAR) w = (unsigned char)want;
      if (t->type == MPI_SHORT) w = (short)want;
      CHECK(got == w, "%s %s %s count %lld root %d in_place %d [%lld]: %lld, want %lld",
            root < 0 ? "allreduce" : "reduce", opname, t->name, count, root, in_place, i, got, w);
    }
  } else {
    /* A non-root's receive buffer is not touched. */
    CHECK((unsigned char)out[0] == 0x7b, "reduce wrote a non-root's receive buffer");
  }
  free(in);
  free(out);
}

/* 2x2 matrices of unsigned ints multiplied mod 2^32: associative, not
 * commutative, so only MPI's rank order gives the expected product. */
static void MatMul(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  unsigned* a = in;
  unsigned* b = inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    unsigned c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}
static void Mat(int r, int i, unsigned m[4]) {
  m[0] = 1 + r, m[1] = (unsigned)(i % 5) + 2u * r, m[2] = 3u * (unsigned)r + 1u, m[3] = (unsigned)i;
}

static void NonCommutative(MPI_Comm comm, int count, int root) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  MPI_Datatype mat;
  MPI_Op op;
  CHECK_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
  CHECK_OK(MPI_Type_commit(&mat));
  CHECK_OK(MPI_Op_create(MatMul, 0, &op));
  unsigned* in = malloc((size_t)count * 16 + 16);
  unsigned* out = malloc((size_t)count * 16 + 16);
  for (int i = 0; i < count; ++i) Mat(me, i, in + 4 * i);
  if (root < 0)
    CHECK_OK(MPI_Allreduce(in, out, count, mat, op, comm));
  else
    CHECK_OK(MPI_Reduce(in, out, count, mat, op, root, comm));
  if (root < 0 || me == root) {
    for (int i = 0; i < count; ++i) {
      unsigned acc[4], m[4];
      Mat(n - 1, i, acc);
      for (int r = n - 2; r >= 0; --r) {
        int one = 1;
        Mat(r, i, m);
        MatMul(m, acc, &one, NULL);
      }
      CHECK(memcmp(acc, out + 4 * i, 16) == 0, "non-commutative %s count %d [%d] out of order",
            root < 0 ? "allreduce" : "reduce", count, i);
    }
  }
  free(in);
  free(out);
  MPI_Op_free(&op);
  MPI_Type_free(&mat);
}

/* Inexact float sums: every rank must get the same bits. */
static void BitIdentical(MPI_Comm comm, int count) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  double* in = malloc((size_t)count * sizeof(double));
  double* out = malloc((size_t)count * sizeof(double));
  double* first = malloc((size_t)count * sizeof(double));
  for (int i = 0; i < count; ++i) in[i] = 1.0 / (3.0 + me + i) + (me % 2 ? 1e9 : -1e-7);
  CHECK_OK(MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, comm));
  memcpy(first, out, (size_t)count * sizeof(double));
  CHECK_OK(MPI_Bcast(first, count, MPI_DOUBLE, 0, comm));
  CHECK(memcmp(first, out, (size_t)count * sizeof(double)) == 0,
        "allreduce of %d doubles differs between ranks", count);
  free(in);
  free(out);
  free(first);
}

static void Bcasts(MPI_Comm comm, long long count) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  int* buf = malloc((size_t)(count * 2 + 2) * sizeof(int));
  for (int root = 0; root < n; ++root) {
    /* Contiguous. */
    for (long long i = 0; i < count; ++i) buf[i] = me == root ? (int)(i * 31 + root) : -1;
    CHECK_OK(MPI_Bcast(buf, (int)count, MPI_INT, root, comm));
    for (long long i = 0; i < count; ++i)
      CHECK(buf[i] == (int)(i * 31 + root), "bcast count %lld root %d [%lld]: %d", count, root, i,
            buf[i]);
    /* Every other int (a vector type) on the root, plain ints elsewhere:
     * matching signatures, different layouts. */
    MPI_Datatype every_other;
    CHECK_OK(MPI_Type_vector((int)count, 1, 2, MPI_INT, &every_other));
    CHECK_OK(MPI_Type_commit(&every_other));
    for (long long i = 0; i < 2 * count; ++i) buf[i] = me == root ? (int)(i * 7 - root) : -5;
    if (me == root)
      CHECK_OK(MPI_Bcast(buf, 1, every_other, root, comm));
    else
      CHECK_OK(MPI_Bcast(buf, (int)count, MPI_INT, root, comm));
    for (long long i = 0; i < count; ++i) {
      const int want = me == root ? (int)(i * 7 - root) : (int)(2 * i * 7 - root);
      CHECK(buf[i] == want, "vector bcast count %lld root %d [%lld]: %d, want %d", count, root, i,
            buf[i], want);
    }
    /* The leaves receive into the vector layout; the holes stay. */
    for (long long i = 0; i < 2 * count; ++i) buf[i] = me == root ? (int)(i + 100) : -9;
    if (me == root)
      CHECK_OK(MPI_Bcast(buf, (int)count, MPI_INT, root, comm));
    else
      CHECK_OK(MPI_Bcast(buf, 1, every_other, root, comm));
    if (me != root)
      for (long long i = 0; i < 2 * count; ++i) {
        const int want = i % 2 ? -9 : (int)(i / 2 + 100);
        CHECK(buf[i] == want, "bcast into a vector count %lld [%lld]: %d, want %d", count, i,
              buf[i], want);
      }
    MPI_Type_free(&every_other);
  }
  free(buf);
}

static const TypeCase kTypes[] = {
    {MPI_INT, "MPI_INT", 4, 1},
    {MPI_FLOAT, "MPI_FLOAT", 4, 0},
    {MPI_DOUBLE, "MPI_DOUBLE", 8, 0},
    {MPI_LONG_LONG, "MPI_LONG_LONG", 8, 1},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1},
    {MPI_SHORT, "MPI_SHORT", 2, 1},
};

static void Data(MPI_Comm comm, int quick) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  /* 8 KiB is the small limit, 64 KiB a chunk. */
  const long long counts[] = {0, 1, 7, 2047, 2048, 2049, 16383, 16384, 16385, 40001, 262147};
  const int ncounts = sizeof counts / sizeof counts[0];
  struct {
    MPI_Op op;
    const char* name;
    int integer_only;
  } ops[] = {{MPI_SUM, "MPI_SUM", 0},   {MPI_PROD, "MPI_PROD", 0}, {MPI_MAX, "MPI_MAX", 0},
             {MPI_MIN, "MPI_MIN", 0},   {MPI_LAND, "MPI_LAND", 1}, {MPI_LOR, "MPI_LOR", 1},
             {MPI_LXOR, "MPI_LXOR", 1}, {MPI_BAND, "MPI_BAND", 1}, {MPI_BOR, "MPI_BOR", 1},
             {MPI_BXOR, "MPI_BXOR", 1}};
  for (size_t t = 0; t < sizeof kTypes / sizeof kTypes[0]; ++t)
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
      if (ops[o].integer_only && !kTypes[t].integer) continue;
      for (int c = 0; c < ncounts; ++c) {
        /* Large counts on a few type/op pairs only (time). */
        if (counts[c] > 20000 && (o > 1 || t % 2)) continue;
        if (quick && counts[c] > 3000 && o > 0) continue;
        const int in_place = (int)((t + o + (size_t)c) % 2);
        CheckReduction(comm, &kTypes[t], ops[o].op, ops[o].name, counts[c], in_place, -1);
        CheckReduction(comm, &kTypes[t], ops[o].op, ops[o].name, counts[c], !in_place,
                       (int)((o + (size_t)c) % (size_t)n));
      }
    }
  /* MAXLOC on MPI_2INT (contiguous pairs). */
  int pair[2] = {(me * 5) % 3, me}, best[2] = {-1, -1};
  CHECK_OK(MPI_Allreduce(pair, best, 1, MPI_2INT, MPI_MAXLOC, comm));
  int want_v = -1, want_i = -1;
  for (int r = 0; r < n; ++r)
    if ((r * 5) % 3 > want_v) want_v = (r * 5) % 3, want_i = r;
  CHECK(best[0] == want_v && best[1] == want_i, "maxloc (%d,%d) want (%d,%d)", best[0], best[1],
        want_v, want_i);
  for (int c = 0; c < 3; ++c) {
    const int count = c == 0 ? 1 : c == 1 ? 301 : 9001; /* 9001 x 16 B: three chunks */
    NonCommutative(comm, count, -1);
    NonCommutative(comm, count, (c + 1) % n);
  }
  BitIdentical(comm, 3);
  BitIdentical(comm, 50001);
  const long long bcounts[] = {0, 1, 2047, 2049, 16384, 16385, 100003};
  for (size_t c = 0; c < sizeof bcounts / sizeof bcounts[0]; ++c) Bcasts(comm, bcounts[c]);
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Barrier(comm));
}

static void Split(void) {
  MPI_Comm half, reversed;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &reversed));
  Data(half, 1);
  Data(reversed, 1);
  /* World traffic between them still runs. */
  int one = 1, sum = 0;
  CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == p, "world allreduce between subcommunicators: %d", sum);
  MPI_Comm_free(&half);
  MPI_Comm_free(&reversed);
}

static void Mixed(int rounds) {
  const int counts[] = {1, 3, 2048, 2049, 16385, 70000};
  float* a = malloc(70000 * sizeof(float));
  float* b = malloc(70000 * sizeof(float));
  MPI_Comm dup = MPI_COMM_NULL;
  for (int it = 0; it < rounds; ++it) {
    if (it % 50 == 0) {
      /* Areas are made and freed with their communicators. */
      if (dup != MPI_COMM_NULL) MPI_Comm_free(&dup);
      CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    }
    MPI_Comm comm = it % 3 ? MPI_COMM_WORLD : dup;
    const int count = counts[(it * 7) % 6];
    const int root = it % p;
    for (int i = 0; i < count; ++i) a[i] = (float)((rank + it + i) % 11);
    switch (it % 4) {
      case 0:
        CHECK_OK(MPI_Barrier(comm));
        break;
      case 1:
        for (int i = 0; i < count; ++i) b[i] = rank == root ? (float)(it + i % 13) : -1.f;
        CHECK_OK(MPI_Bcast(b, count, MPI_FLOAT, root, comm));
        for (int i = 0; i < count; ++i)
          CHECK(b[i] == (float)(it + i % 13), "mixed %d bcast [%d]", it, i);
        break;
      case 2:
      case 3: {
        const int all = it % 4 == 2;
        if (all)
          CHECK_OK(MPI_Allreduce(a, b, count, MPI_FLOAT, MPI_SUM, comm));
        else
          CHECK_OK(MPI_Reduce(a, b, count, MPI_FLOAT, MPI_SUM, root, comm));
        if (all || rank == root)
          for (int i = 0; i < count; ++i) {
            float want = 0;
            for (int r = 0; r < p; ++r) want += (float)((r + it + i) % 11);
            CHECK(b[i] == want, "mixed %d %s [%d]: %g want %g", it, all ? "allreduce" : "reduce", i,
                  (double)b[i], (double)want);
          }
        break;
      }
    }
  }
  MPI_Comm_free(&dup);
  free(a);
  free(b);
}

static void SleepMs(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* CLOCK_MONOTONIC is one clock for every process of the host. */
static double MonotonicNow(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void Late(void) {
  const int late = p - 1;
  double v[4] = {rank, rank, rank, rank}, s[4];
  for (int k = 0; k < 4; ++k) {
    if (rank == late) SleepMs(30);
    switch (k) {
      case 0: {
        /* No rank leaves the barrier before the late rank entered it: the
         * late rank sends the time it entered, the others compare it with
         * the time they left (one host, one monotonic clock). */
        const double entered = MonotonicNow();
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        const double left = MonotonicNow();
        if (rank == late) {
          for (int r = 0; r < p - 1; ++r)
            CHECK_OK(MPI_Send(&entered, 1, MPI_DOUBLE, r, 9, MPI_COMM_WORLD));
        } else {
          double late_entered = 0;
          CHECK_OK(
              MPI_Recv(&late_entered, 1, MPI_DOUBLE, late, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
          CHECK(left >= late_entered, "rank %d left the barrier %.6f s before rank %d entered it",
                rank, late_entered - left, late);
        }
        break;
      }
      case 1:
        CHECK_OK(MPI_Allreduce(v, s, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        CHECK(s[3] == p * (p - 1) / 2.0, "late allreduce %g", s[3]);
        break;
      case 2:
        s[0] = rank == late ? 42 : 0;
        CHECK_OK(MPI_Bcast(s, 1, MPI_DOUBLE, late, MPI_COMM_WORLD));
        CHECK(s[0] == 42, "late root bcast %g", s[0]);
        break;
      case 3: {
        static float big[100000], out[100000];
        for (int i = 0; i < 100000; ++i) big[i] = (float)(i % 5);
        CHECK_OK(MPI_Allreduce(big, out, 100000, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < 100000; ++i) CHECK(out[i] == (float)(i % 5), "late large [%d]", i);
        break;
      }
    }
  }
}

static int CollNamesOf(long pid) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "nicq-coll-%ld-", pid);
  int found = 0;
  DIR* d = opendir("/dev/shm");
  if (!d) return 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) ++found;
  closedir(d);
  return found;
}

/* Rank 1 dies before (setup) or after (after) the world's area exists. */
static void Kill(int after) {
  const long pid0 = getpid(); /* used on rank 0 only */
  if (after) CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 1) kill(getpid(), SIGKILL);
  if (rank != 0) {
    SleepMs(60000); /* ranks other than 0 and 1 stay out of the way */
    return;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_Barrier(MPI_COMM_WORLD), cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_PROC_FAILED, "barrier with a killed rank: class %d", cls);
  const int left = CollNamesOf(pid0);
  CHECK(left == 0, "%d same-node collective names of rank 0 remain in /dev/shm", left);
  printf("NODEKILL-OK: rank 0 saw MPI_ERR_PROC_FAILED, /dev/shm clean\n");
  fflush(stdout);
  _exit(0);
}

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "all";
  /* nicqrun sends SIGTERM to the others once rank 1 dies: rank 0 ignores
   * it from before rank 1 can die (killsetup: rank 0 may still be in
   * MPI_Init then), so it lives to report. */
  const int kills = !strcmp(what, "killsetup") || !strcmp(what, "killafter");
  if (kills) signal(SIGTERM, SIG_IGN);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_rank = rank;
  if (kills && rank != 0) signal(SIGTERM, SIG_DFL);
  const int all = strcmp(what, "all") == 0;
  if (all || !strcmp(what, "data")) Data(MPI_COMM_WORLD, 0);
  if (all || !strcmp(what, "split")) Split();
  if (all || !strcmp(what, "mixed")) Mixed(argc > 2 ? atoi(argv[2]) : 2000);
  if (all || !strcmp(what, "late")) Late();
  if (!strcmp(what, "killsetup")) Kill(0);
  if (!strcmp(what, "killafter")) Kill(1);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("node coll %s: ok with %d ranks\n", what, p);
  MPI_Finalize();
  return 0;
}
