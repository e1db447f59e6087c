/* Every collective, data-checked, in one form chosen by argv[1]:
 *   blocking | nonblocking (MPI_I... + MPI_Wait) | persistent (_init +
 *   MPI_Start + MPI_Wait + MPI_Request_free).
 * Runs on MPI_COMM_WORLD, a dup and a split (reversed key order), with
 * counts 1, 7 (odd) and 64 KiB of ints; 2 MiB for allreduce, bcast and
 * allgather on world. Predefined ops on the types they apply to, a
 * non-commutative user op (affine-map composition: only rank order gives
 * the expected value), MPI_IN_PLACE, every root, and a strided datatype.
 * argv[2] (optional): "allreduce" runs only the allreduce part (for
 * NICQ_ALLREDUCE_ALGO runs); "quick" skips the dup and the 64 KiB counts
 * (for the slow sockets provider). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "coll_check.h"

static int g_form; /* 0 blocking, 1 nonblocking, 2 persistent */
static MPI_Info g_info;

#define COLL(B, I, ...)                                       \
  do {                                                        \
    MPI_Request rq_;                                          \
    if (g_form == 0) {                                        \
      CHECK_OK(MPI_##B(__VA_ARGS__));                         \
    } else {                                                  \
      if (g_form == 1)                                        \
        CHECK_OK(MPI_##I(__VA_ARGS__, &rq_));                 \
      else {                                                  \
        CHECK_OK(MPI_##B##_init(__VA_ARGS__, g_info, &rq_));  \
        CHECK_OK(MPI_Start(&rq_));                            \
      }                                                       \
      CHECK_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));            \
      if (g_form == 2) CHECK_OK(MPI_Request_free(&rq_));      \
      CHECK(rq_ == MPI_REQUEST_NULL, "request not released"); \
    }                                                         \
  } while (0)

static int val(int rank, int i) {
  return (rank * 31 + i * 7) % 101;
}

typedef struct {
  unsigned a, b;
} Affine;
/* inout = in . inout, where (f . g)(x) = g(f(x)): in is the lower rank. */
static void affine_op(void* in, void* inout, int* len, MPI_Datatype* dt) {
  Affine* x = (Affine*)in;
  Affine* y = (Affine*)inout;
  for (int i = 0; i < *len; ++i) {
    Affine r = {x[i].a * y[i].a, x[i].b * y[i].a + y[i].b};
    y[i] = r;
  }
}
static Affine aff(int rank, int i) {
  Affine f = {2u * rank + 3u + (unsigned)(i % 5), (unsigned)(rank + i)};
  return f;
}
static Affine aff_fold(int from, int to, int i) { /* ranks [from, to) */
  Affine acc = {1, 0};
  for (int r = from; r < to; ++r) {
    Affine f = aff(r, i);
    Affine n = {acc.a * f.a, acc.b * f.a + f.b};
    acc = n;
  }
  return acc;
}
static MPI_Op g_affine;

static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  CHECK(p, "out of memory");
  return p;
}

static long sum_val(int p, int i) {
  long s = 0;
  for (int r = 0; r < p; ++r) s += val(r, i);
  return s;
}

static void test_allreduce(MPI_Comm comm, int n) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* in = xmalloc(n * sizeof(int));
  int* out = xmalloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) in[i] = val(rank, i), out[i] = -1;
  COLL(Allreduce, Iallreduce, in, out, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i)
    CHECK(out[i] == sum_val(p, i), "allreduce n=%d [%d]=%d", n, i, out[i]);
  for (int i = 0; i < n; ++i) out[i] = val(rank, i);
  COLL(Allreduce, Iallreduce, MPI_IN_PLACE, out, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) CHECK(out[i] == sum_val(p, i), "in-place allreduce [%d]", i);
  /* doubles, MAX */
  double* d = xmalloc(n * sizeof(double));
  double* e = xmalloc(n * sizeof(double));
  for (int i = 0; i < n; ++i) d[i] = (double)((rank * 13 + i) % (p + 3));
  COLL(Allreduce, Iallreduce, d, e, n, MPI_DOUBLE, MPI_MAX, comm);
  for (int i = 0; i < n; ++i) {
    double m = 0;
    for (int r = 0; r < p; ++r) m = fmax(m, (double)((r * 13 + i) % (p + 3)));
    CHECK(e[i] == m, "allreduce max [%d] %g != %g", i, e[i], m);
  }
  /* non-commutative user op */
  Affine* fa = xmalloc(n * sizeof(Affine));
  Affine* fo = xmalloc(n * sizeof(Affine));
  for (int i = 0; i < n; ++i) fa[i] = aff(rank, i);
  COLL(Allreduce, Iallreduce, fa, fo, n, MPI_2INT, g_affine, comm);
  for (int i = 0; i < n; ++i) {
    Affine x = aff_fold(0, p, i);
    CHECK(fo[i].a == x.a && fo[i].b == x.b, "non-commutative allreduce [%d]", i);
  }
  free(in), free(out), free(d), free(e), free(fa), free(fo);
}

/* Every predefined op on types it applies to (small counts). */
static void test_ops_types(MPI_Comm comm) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  enum { N = 5 };
  const MPI_Datatype types[] = {MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_SHORT,     MPI_INT,
                                MPI_UNSIGNED,    MPI_LONG,          MPI_LONG_LONG, MPI_FLOAT,
                                MPI_DOUBLE,      MPI_INT8_T,        MPI_UINT16_T,  MPI_INT64_T,
                                MPI_UINT64_T};
  const MPI_Op ops[] = {MPI_SUM, MPI_MIN, MPI_MAX, MPI_PROD};
  for (unsigned t = 0; t < sizeof types / sizeof *types; ++t)
    for (unsigned o = 0; o < sizeof ops / sizeof *ops; ++o) {
      /* values 1..3: sums, products (<= 3^5 on 5 ranks) fit every type */
      double in[N], expect[N];
      unsigned char sbuf[N * 8], rbuf[N * 8];
      int size;
      MPI_Type_size(types[t], &size);
      for (int i = 0; i < N; ++i) {
        in[i] = 1 + (rank + i) % (ops[o] == MPI_PROD ? 2 : 3);
        expect[i] = ops[o] == MPI_PROD ? 1 : ops[o] == MPI_MIN ? 1e9 : ops[o] == MPI_MAX ? -1e9 : 0;
        for (int r = 0; r < p; ++r) {
          double v = 1 + (r + i) % (ops[o] == MPI_PROD ? 2 : 3);
          if (ops[o] == MPI_SUM) expect[i] += v;
          if (ops[o] == MPI_PROD) expect[i] *= v;
          if (ops[o] == MPI_MIN) expect[i] = fmin(expect[i], v);
          if (ops[o] == MPI_MAX) expect[i] = fmax(expect[i], v);
        }
      }
#define CONV(T)                                                                        \
  for (int i = 0; i < N; ++i) ((T*)sbuf)[i] = (T)in[i];                                \
  COLL(Allreduce, Iallreduce, sbuf, rbuf, N, types[t], ops[o], comm);                  \
  for (int i = 0; i < N; ++i)                                                          \
    CHECK((double)((T*)rbuf)[i] == expect[i], "type %u op %u [%d]: %g != %g", t, o, i, \
          (double)((T*)rbuf)[i], expect[i]);
      if (types[t] == MPI_FLOAT) {
        CONV(float)
      } else if (types[t] == MPI_DOUBLE) {
        CONV(double)
      } else if (size == 1) {
        CONV(signed char)
      } else if (size == 2) {
        CONV(short)
      } else if (size == 4) {
        CONV(int)
      } else {
        CONV(long long)
      }
    }
  /* logical and bitwise */
  unsigned u[N], ur[N];
  for (int i = 0; i < N; ++i) u[i] = 1u << ((rank + i) % 8);
  COLL(Allreduce, Iallreduce, u, ur, N, MPI_UNSIGNED, MPI_BOR, comm);
  for (int i = 0; i < N; ++i) {
    unsigned x = 0;
    for (int r = 0; r < p; ++r) x |= 1u << ((r + i) % 8);
    CHECK(ur[i] == x, "BOR [%d]", i);
  }
  COLL(Allreduce, Iallreduce, u, ur, N, MPI_UNSIGNED, MPI_BXOR, comm);
  for (int i = 0; i < N; ++i) {
    unsigned x = 0;
    for (int r = 0; r < p; ++r) x ^= 1u << ((r + i) % 8);
    CHECK(ur[i] == x, "BXOR [%d]", i);
  }
  COLL(Allreduce, Iallreduce, u, ur, N, MPI_UNSIGNED, MPI_BAND, comm);
  for (int i = 0; i < N; ++i) CHECK(ur[i] == (p == 1 ? u[i] : 0u), "BAND [%d]", i);
  int l[N], lr[N];
  for (int i = 0; i < N; ++i) l[i] = (rank + i) % 2;
  COLL(Allreduce, Iallreduce, l, lr, N, MPI_INT, MPI_LOR, comm);
  for (int i = 0; i < N; ++i) CHECK(lr[i] == (p > 1 || i % 2 == 1 ? 1 : l[i]), "LOR [%d]", i);
  COLL(Allreduce, Iallreduce, l, lr, N, MPI_INT, MPI_LAND, comm);
  for (int i = 0; i < N; ++i) CHECK(lr[i] == (p > 1 ? 0 : l[i]), "LAND [%d]", i);
  /* MINLOC / MAXLOC: ties broken by the lower index */
  struct {
    double v;
    int k;
  } dl[N], dr[N];
  for (int i = 0; i < N; ++i) dl[i].v = (rank + i) % 3, dl[i].k = rank;
  COLL(Allreduce, Iallreduce, dl, dr, N, MPI_DOUBLE_INT, MPI_MINLOC, comm);
  for (int i = 0; i < N; ++i) {
    int best = 0;
    for (int r = 1; r < p; ++r)
      if ((r + i) % 3 < (best + i) % 3) best = r;
    CHECK(dr[i].v == (best + i) % 3 && dr[i].k == best, "MINLOC [%d]", i);
  }
  COLL(Allreduce, Iallreduce, dl, dr, N, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  for (int i = 0; i < N; ++i) {
    int best = 0;
    for (int r = 1; r < p; ++r)
      if ((r + i) % 3 > (best + i) % 3) best = r;
    CHECK(dr[i].v == (best + i) % 3 && dr[i].k == best, "MAXLOC [%d]", i);
  }
  /* a strided (noncontiguous) datatype: every other int */
  MPI_Datatype vec;
  CHECK_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
  CHECK_OK(MPI_Type_commit(&vec));
  int vs[12], vr[12];
  for (int i = 0; i < 12; ++i) vs[i] = val(rank, i), vr[i] = -7;
  COLL(Allreduce, Iallreduce, vs, vr, 2, vec, MPI_SUM, comm);
  /* two items of extent 5 ints: elements 0,2,4 and 5,7,9 */
  const int idx[] = {0, 2, 4, 5, 7, 9};
  for (int k = 0; k < 6; ++k) CHECK(vr[idx[k]] == sum_val(p, idx[k]), "vector [%d]", idx[k]);
  CHECK(vr[1] == -7 && vr[3] == -7 && vr[6] == -7 && vr[10] == -7, "vector gaps overwritten");
  COLL(Bcast, Ibcast, vs, 2, vec, p - 1, comm);
  for (int k = 0; k < 6; ++k) CHECK(vs[idx[k]] == val(p - 1, idx[k]), "vector bcast [%d]", idx[k]);
  MPI_Type_free(&vec);
}

/* Types that differ between ranks with the same signature (3 ints): rank 0
 * receives each block as one strided vector (elements 0, 2, 4 of an extent
 * of 5 ints) and rank 1 sends one, the others use 3 MPI_INTs. Every rank
 * must take the same algorithm whatever its own layout; the gaps keep
 * their values. */
static void check_blocks(int rank, const int* r, int p, const char* what) {
  for (int q = 0; q < p; ++q)
    for (int i = 0; i < 3; ++i) {
      const int at = rank == 0 ? q * 5 + 2 * i : q * 3 + i;
      CHECK(r[at] == val(q, i), "%s: block %d [%d] = %d", what, q, i, r[at]);
    }
  if (rank == 0)
    for (int q = 0; q < p; ++q)
      CHECK(r[q * 5 + 1] == -7 && r[q * 5 + 3] == -7, "%s: gap of block %d written", what, q);
}

static void test_mixed_layouts(MPI_Comm comm) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  CHECK(p <= 8, "mixed layouts: at most 8 ranks");
  MPI_Datatype vec;
  CHECK_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
  CHECK_OK(MPI_Type_commit(&vec));
  const MPI_Datatype st = rank == 1 ? vec : MPI_INT, rt = rank == 0 ? vec : MPI_INT;
  const int sc = rank == 1 ? 1 : 3, rc = rank == 0 ? 1 : 3;
  int s[5], r[5 * 8], cnt[8], dsp[8];
  for (int i = 0; i < 5; ++i) s[i] = rank == 1 ? (i % 2 ? -1 : val(rank, i / 2)) : val(rank, i);
  for (int q = 0; q < p; ++q) cnt[q] = rc, dsp[q] = q * rc;
  for (int i = 0; i < 5 * p; ++i) r[i] = -7;
  COLL(Allgather, Iallgather, s, sc, st, r, rc, rt, comm);
  check_blocks(rank, r, p, "mixed-layout allgather");
  for (int i = 0; i < 5 * p; ++i) r[i] = -7;
  for (int i = 0; i < 3; ++i) r[rank == 0 ? 2 * i : rank * 3 + i] = val(rank, i);
  COLL(Allgather, Iallgather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, rc, rt, comm);
  check_blocks(rank, r, p, "mixed-layout in-place allgather");
  for (int i = 0; i < 5 * p; ++i) r[i] = -7;
  COLL(Allgatherv, Iallgatherv, s, sc, st, r, cnt, dsp, rt, comm);
  check_blocks(rank, r, p, "mixed-layout allgatherv");
  for (int i = 0; i < 5 * p; ++i) r[i] = -7;
  COLL(Gather, Igather, s, sc, st, r, rc, rt, 0, comm);
  if (rank == 0) check_blocks(rank, r, p, "mixed-layout gather");
  MPI_Type_free(&vec);
}

static void test_rooted(MPI_Comm comm, int n) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* a = xmalloc(n * sizeof(int));
  int* b = xmalloc((size_t)n * p * sizeof(int));
  int* c = xmalloc((size_t)n * p * sizeof(int));
  int roots[2] = {0, p - 1};
  for (int ri = 0; ri < (p > 1 ? 2 : 1); ++ri) {
    const int root = roots[ri];
    /* bcast */
    for (int i = 0; i < n; ++i) a[i] = rank == root ? val(root, i) : -1;
    COLL(Bcast, Ibcast, a, n, MPI_INT, root, comm);
    for (int i = 0; i < n; ++i) CHECK(a[i] == val(root, i), "bcast root %d [%d]=%d", root, i, a[i]);
    /* reduce, and in place at the root */
    for (int i = 0; i < n; ++i) a[i] = val(rank, i), b[i] = -1;
    COLL(Reduce, Ireduce, a, b, n, MPI_INT, MPI_SUM, root, comm);
    if (rank == root)
      for (int i = 0; i < n; ++i) CHECK(b[i] == sum_val(p, i), "reduce root %d [%d]", root, i);
    COLL(Reduce, Ireduce, rank == root ? MPI_IN_PLACE : a, a, n, MPI_INT, MPI_SUM, root, comm);
    if (rank == root)
      for (int i = 0; i < n; ++i) CHECK(a[i] == sum_val(p, i), "in-place reduce [%d]", i);
    /* non-commutative reduce */
    Affine* fa = xmalloc(n * sizeof(Affine));
    Affine* fo = xmalloc(n * sizeof(Affine));
    for (int i = 0; i < n; ++i) fa[i] = aff(rank, i);
    COLL(Reduce, Ireduce, fa, fo, n, MPI_2INT, g_affine, root, comm);
    if (rank == root)
      for (int i = 0; i < n; ++i) {
        Affine x = aff_fold(0, p, i);
        CHECK(fo[i].a == x.a && fo[i].b == x.b, "non-commutative reduce root %d [%d]", root, i);
      }
    free(fa), free(fo);
    /* gather, in place at the root */
    for (int i = 0; i < n; ++i) a[i] = val(rank, i);
    for (int i = 0; i < n * p; ++i) b[i] = -1;
    COLL(Gather, Igather, a, n, MPI_INT, b, n, MPI_INT, root, comm);
    if (rank == root)
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == val(r, i), "gather [%d][%d]", r, i);
    if (rank == root)
      for (int i = 0; i < n * p; ++i) b[i] = i / n == root ? val(root, i % n) : -1;
    COLL(Gather, Igather, rank == root ? MPI_IN_PLACE : a, n, MPI_INT, b, n, MPI_INT, root, comm);
    if (rank == root)
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == val(r, i), "in-place gather [%d]", r);
    /* gatherv: rank r sends n - (r % 2) ints (>= 0), displaced by 1 extra slot */
    int* counts = xmalloc(p * sizeof(int));
    int* displs = xmalloc(p * sizeof(int));
    for (int r = 0, off = 0; r < p; ++r) {
      counts[r] = n - (r % 2 && n > 1 ? 1 : 0);
      displs[r] = off;
      off += counts[r] + 1;
    }
    int* g = xmalloc((size_t)(n + 1) * p * sizeof(int));
    for (int i = 0; i < (n + 1) * p; ++i) g[i] = -1;
    COLL(Gatherv, Igatherv, a, counts[rank], MPI_INT, g, counts, displs, MPI_INT, root, comm);
    if (rank == root)
      for (int r = 0; r < p; ++r) {
        for (int i = 0; i < counts[r]; ++i) CHECK(g[displs[r] + i] == val(r, i), "gatherv [%d]", r);
        CHECK(g[displs[r] + counts[r]] == -1, "gatherv gap written");
      }
    /* scatter and scatterv (root sends val(r, i) to rank r) */
    if (rank == root)
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) c[r * n + i] = val(r, i);
    for (int i = 0; i < n; ++i) a[i] = -1;
    COLL(Scatter, Iscatter, c, n, MPI_INT, a, n, MPI_INT, root, comm);
    for (int i = 0; i < n; ++i) CHECK(a[i] == val(rank, i), "scatter [%d]", i);
    COLL(Scatter, Iscatter, c, n, MPI_INT, rank == root ? MPI_IN_PLACE : a, n, MPI_INT, root, comm);
    for (int i = 0; i < n; ++i) CHECK(a[i] == val(rank, i), "in-place scatter [%d]", i);
    if (rank == root)
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < counts[r]; ++i) g[displs[r] + i] = val(r, i) + 1;
    for (int i = 0; i < n; ++i) a[i] = -1;
    COLL(Scatterv, Iscatterv, g, counts, displs, MPI_INT, a, counts[rank], MPI_INT, root, comm);
    for (int i = 0; i < counts[rank]; ++i) CHECK(a[i] == val(rank, i) + 1, "scatterv [%d]", i);
    free(counts), free(displs), free(g);
  }
  free(a), free(b), free(c);
}

static void test_global(MPI_Comm comm, int n) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int* a = xmalloc((size_t)n * p * sizeof(int));
  int* b = xmalloc((size_t)n * p * sizeof(int));
  COLL(Barrier, Ibarrier, comm);
  /* allgather, in place */
  for (int i = 0; i < n * p; ++i) a[i] = val(rank, i);
  COLL(Allgather, Iallgather, a, n, MPI_INT, b, n, MPI_INT, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == val(r, i), "allgather [%d][%d]", r, i);
  for (int i = 0; i < n * p; ++i) b[i] = i / n == rank ? val(rank, i % n) : -1;
  COLL(Allgather, Iallgather, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) CHECK(b[r * n + i] == val(r, i), "in-place allgather [%d]", r);
  /* allgatherv: rank r contributes r % 3 + n - 1 ints */
  int* cnt = xmalloc(p * sizeof(int));
  int* dsp = xmalloc(p * sizeof(int));
  int tot = 0;
  for (int r = 0; r < p; ++r) cnt[r] = r % 3 + n - 1, dsp[r] = tot, tot += cnt[r];
  int* v = xmalloc(tot * sizeof(int));
  COLL(Allgatherv, Iallgatherv, a, cnt[rank], MPI_INT, v, cnt, dsp, MPI_INT, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < cnt[r]; ++i) CHECK(v[dsp[r] + i] == val(r, i), "allgatherv [%d]", r);
  /* alltoall: block for rank d is val(rank * p + d, i) */
  for (int d = 0; d < p; ++d)
    for (int i = 0; i < n; ++i) a[d * n + i] = val(rank * p + d, i);
  COLL(Alltoall, Ialltoall, a, n, MPI_INT, b, n, MPI_INT, comm);
  for (int s = 0; s < p; ++s)
    for (int i = 0; i < n; ++i) CHECK(b[s * n + i] == val(s * p + rank, i), "alltoall [%d]", s);
  memcpy(b, a, (size_t)n * p * sizeof(int));
  COLL(Alltoall, Ialltoall, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, n, MPI_INT, comm);
  for (int s = 0; s < p; ++s)
    for (int i = 0; i < n; ++i) CHECK(b[s * n + i] == val(s * p + rank, i), "in-place alltoall");
  /* alltoallv / alltoallw: rank s sends (s + d) % 2 + n - 1 ints to d */
  int *sc = xmalloc(p * sizeof(int)), *sd = xmalloc(p * sizeof(int));
  int *rc = xmalloc(p * sizeof(int)), *rd = xmalloc(p * sizeof(int));
  int *sdb = xmalloc(p * sizeof(int)), *rdb = xmalloc(p * sizeof(int));
  MPI_Datatype* ty = xmalloc(p * sizeof(MPI_Datatype));
  int so = 0, ro = 0;
  for (int d = 0; d < p; ++d) {
    sc[d] = (rank + d) % 2 + n - 1, sd[d] = so, so += sc[d];
    rc[d] = (d + rank) % 2 + n - 1, rd[d] = ro, ro += rc[d];
    sdb[d] = sd[d] * (int)sizeof(int), rdb[d] = rd[d] * (int)sizeof(int), ty[d] = MPI_INT;
  }
  int* sv = xmalloc((so + 1) * sizeof(int));
  int* rv = xmalloc((ro + 1) * sizeof(int));
  for (int d = 0; d < p; ++d)
    for (int i = 0; i < sc[d]; ++i) sv[sd[d] + i] = val(rank * p + d, i);
  COLL(Alltoallv, Ialltoallv, sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, comm);
  for (int s = 0; s < p; ++s)
    for (int i = 0; i < rc[s]; ++i) CHECK(rv[rd[s] + i] == val(s * p + rank, i), "alltoallv");
  memset(rv, 0, ro * sizeof(int));
  COLL(Alltoallw, Ialltoallw, sv, sc, sdb, ty, rv, rc, rdb, ty, comm);
  for (int s = 0; s < p; ++s)
    for (int i = 0; i < rc[s]; ++i) CHECK(rv[rd[s] + i] == val(s * p + rank, i), "alltoallw");
  /* reduce_scatter_block and reduce_scatter (in place too) */
  for (int i = 0; i < n * p; ++i) a[i] = val(rank, i);
  COLL(Reduce_scatter_block, Ireduce_scatter_block, a, b, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) CHECK(b[i] == sum_val(p, rank * n + i), "reduce_scatter_block");
  int* rsc = xmalloc(p * sizeof(int));
  int rtot = 0, before = 0;
  for (int r = 0; r < p; ++r) {
    rsc[r] = (r + 1) % 3 + (n > 1 ? n - 2 : 0);
    if (r < rank) before += rsc[r];
    rtot += rsc[r];
  }
  int* rs = xmalloc((rtot + 1) * sizeof(int));
  for (int i = 0; i < rtot; ++i) rs[i] = val(rank, i);
  COLL(Reduce_scatter, Ireduce_scatter, MPI_IN_PLACE, rs, rsc, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < rsc[rank]; ++i) CHECK(rs[i] == sum_val(p, before + i), "reduce_scatter");
  /* scan / exscan: sum and the non-commutative op */
  for (int i = 0; i < n; ++i) a[i] = val(rank, i), b[i] = -1;
  COLL(Scan, Iscan, a, b, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n; ++i) {
    long s = 0;
    for (int r = 0; r <= rank; ++r) s += val(r, i);
    CHECK(b[i] == s, "scan [%d]", i);
  }
  COLL(Exscan, Iexscan, MPI_IN_PLACE, a, n, MPI_INT, MPI_SUM, comm);
  for (int i = 0; i < n && rank > 0; ++i) {
    long s = 0;
    for (int r = 0; r < rank; ++r) s += val(r, i);
    CHECK(a[i] == s, "exscan [%d]", i);
  }
  Affine* fa = xmalloc(n * sizeof(Affine));
  Affine* fo = xmalloc(n * sizeof(Affine));
  for (int i = 0; i < n; ++i) fa[i] = aff(rank, i);
  COLL(Scan, Iscan, fa, fo, n, MPI_2INT, g_affine, comm);
  for (int i = 0; i < n; ++i) {
    Affine x = aff_fold(0, rank + 1, i);
    CHECK(fo[i].a == x.a && fo[i].b == x.b, "non-commutative scan [%d]", i);
  }
  COLL(Exscan, Iexscan, fa, fo, n, MPI_2INT, g_affine, comm);
  for (int i = 0; i < n && rank > 0; ++i) {
    Affine x = aff_fold(0, rank, i);
    CHECK(fo[i].a == x.a && fo[i].b == x.b, "non-commutative exscan [%d]", i);
  }
  free(a), free(b), free(cnt), free(dsp), free(v), free(sc), free(sd), free(rc), free(rd);
  free(sdb), free(rdb), free(ty), free(sv), free(rv), free(rsc), free(rs), free(fa), free(fo);
}

static void test_large(MPI_Comm comm) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const int n = (2 << 20) / (int)sizeof(double); /* 2 MiB */
  double* x = xmalloc(n * sizeof(double));
  double* y = xmalloc(n * sizeof(double));
  for (int i = 0; i < n; ++i) x[i] = (double)(rank + i % 1000);
  COLL(Allreduce, Iallreduce, x, y, n, MPI_DOUBLE, MPI_SUM, comm);
  for (int i = 0; i < n; ++i)
    CHECK(y[i] == p * (double)(i % 1000) + p * (p - 1) / 2.0, "2 MiB allreduce [%d]", i);
  for (int i = 0; i < n; ++i) x[i] = rank == p - 1 ? (double)i : -1.0;
  COLL(Bcast, Ibcast, x, n, MPI_DOUBLE, p - 1, comm);
  for (int i = 0; i < n; ++i) CHECK(x[i] == (double)i, "2 MiB bcast [%d]", i);
  const int m = n / p;
  for (int i = 0; i < m; ++i) x[i] = rank * 1e6 + i;
  COLL(Allgather, Iallgather, x, m, MPI_DOUBLE, y, m, MPI_DOUBLE, comm);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < m; ++i) CHECK(y[r * m + i] == r * 1e6 + i, "2 MiB allgather [%d]", r);
  free(x), free(y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* form = argc > 1 ? argv[1] : "blocking";
  g_form = !strcmp(form, "nonblocking") ? 1 : !strcmp(form, "persistent") ? 2 : 0;
  const int allreduce_only = argc > 2 && !strcmp(argv[2], "allreduce");
  const int quick = argc > 2 && !strcmp(argv[2], "quick");
  g_info = MPI_INFO_NULL;
  CHECK_OK(MPI_Op_create(affine_op, 0, &g_affine));
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm dup, split;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  /* two halves, reversed rank order inside each */
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, -g_rank, &split));
  MPI_Comm comms[3] = {MPI_COMM_WORLD, dup, split};
  const int counts[3] = {1, 7, 16384};
  for (int ci = 0; ci < 3; ++ci)
    for (int k = 0; k < 3; ++k) {
      if (ci > 0 && k == 2) continue; /* 64 KiB on world only */
      if (quick && (ci == 1 || k == 2)) continue;
      test_allreduce(comms[ci], counts[k]);
      if (allreduce_only) continue;
      test_rooted(comms[ci], counts[k]);
      test_global(comms[ci], counts[k]);
    }
  if (!allreduce_only) test_ops_types(MPI_COMM_WORLD);
  if (!allreduce_only) test_mixed_layouts(MPI_COMM_WORLD);
  if (!allreduce_only && !quick) test_mixed_layouts(split);
  if (!allreduce_only && !quick) test_ops_types(split);
  if (!quick) test_large(MPI_COMM_WORLD);
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  MPI_Op_free(&g_affine);
  if (g_rank == 0)
    printf("mp_coll %s%s: ok on %d ranks\n", form, allreduce_only ? " allreduce" : "", p);
  MPI_Finalize();
  return 0;
}
