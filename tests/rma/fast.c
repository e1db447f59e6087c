/* The same-node fast path of MPI_Win_allocate windows (docs/rma.md, "One
 * node: the direct path"): contiguous puts and gets are one copy, and
 * accumulates take the target's accumulate lock, or with
 * mpi_accumulate_granularity 1-8 are CPU atomics per element for the basic
 * types that have them (the lock for the rest).
 *   atomics: every rank (the target included) hammers rank 0's window under
 *     MPI_Win_lock_all with MPI_Fetch_and_op SUM, MPI_Accumulate SUM (int,
 *     double, a vector target type over the same ints), a compare-and-swap
 *     increment loop, and a long double (no atomics: the lock path):
 *     every total is exact and the fetched values are all distinct.
 *   exchange: under lock_all every rank puts its round's values into every
 *     rank's window, flushes, and after a barrier reads every rank's slots
 *     with gets (contiguous and strided origin types).
 *   errors: MPI_ERRORS_RETURN on the window; a put, get, fetch_and_op or
 *     flush outside an epoch, a wrong rank and displacements out of range
 *     return their classes, and the window keeps working.
 * The atomics run on three windows: default (the accumulate lock), made
 * with mpi_accumulate_granularity 8 (CPU atomics) and 64 (the lock); info
 * "nicq_rma_accumulate" says which.
 * ARGS threads: MPI_THREAD_MULTIPLE, and two threads per rank share the
 * atomics' iterations (the origin lock is then taken). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "mp_check.h"

enum { ITERS = 4000, SLOTS = 64 };

static int rank, size, threads = 1;
static MPI_Win win;
static long long* fetched; /* this rank's fetch_and_op results */

/* rank 0's window layout (bytes) */
enum { OFF_FOP = 0, OFF_INT = 8, OFF_DBL = 16, OFF_CAS = 24, OFF_VEC = 40, OFF_LD = 64 };

struct worker {
  int first, count;
  MPI_Datatype every_other;
};

static void* atomics_worker(void* arg) {
  const struct worker* wk = arg;
  const long long one = 1;
  const int mine = rank + 1;
  const double half = 0.5;
  const long double one_ld = 1;
  const int twos[2] = {2, 2};
  for (int k = wk->first; k < wk->first + wk->count; ++k) {
    CHECK_OK(MPI_Fetch_and_op(&one, &fetched[k], MPI_LONG_LONG, 0, OFF_FOP, MPI_SUM, win));
    CHECK_OK(MPI_Accumulate(&mine, 1, MPI_INT, 0, OFF_INT, 1, MPI_INT, MPI_SUM, win));
    CHECK_OK(MPI_Accumulate(&half, 1, MPI_DOUBLE, 0, OFF_DBL, 1, MPI_DOUBLE, MPI_SUM, win));
    CHECK_OK(
        MPI_Accumulate(&one_ld, 1, MPI_LONG_DOUBLE, 0, OFF_LD, 1, MPI_LONG_DOUBLE, MPI_SUM, win));
    /* ints 0 and 2 of the vector area: one strided accumulate against
     * fetch_and_op on int 0 alone, the same basic type at one address. */
    CHECK_OK(MPI_Accumulate(twos, 2, MPI_INT, 0, OFF_VEC, 1, wk->every_other, MPI_SUM, win));
    int inc = 1, old = 0;
    CHECK_OK(MPI_Fetch_and_op(&inc, &old, MPI_INT, 0, OFF_VEC, MPI_SUM, win));
    /* A compare-and-swap increment: retry until the value seen is the one replaced. */
    long long seen = 0, result = -1;
    CHECK_OK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG_LONG, 0, OFF_CAS, MPI_NO_OP, win));
    for (;;) {
      const long long next = seen + 1;
      CHECK_OK(MPI_Compare_and_swap(&next, &seen, &result, MPI_LONG_LONG, 0, OFF_CAS, win));
      if (result == seen) break;
      seen = result;
    }
  }
  return NULL;
}

static int cmp_ll(const void* a, const void* b) {
  long long x = *(const long long*)a, y = *(const long long*)b;
  return x < y ? -1 : x > y;
}

static void atomics(char* mem) {
  if (rank == 0) memset(mem, 0, 128);
  MPI_Barrier(MPI_COMM_WORLD);
  struct worker wk[2];
  MPI_Datatype every_other;
  CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
  CHECK_OK(MPI_Type_commit(&every_other));
  fetched = malloc(sizeof(long long) * ITERS);
  CHECK_OK(MPI_Win_lock_all(0, win));
  pthread_t tid;
  for (int i = 0; i < threads; ++i) {
    wk[i].first = i * (ITERS / threads);
    wk[i].count = ITERS / threads;
    wk[i].every_other = every_other;
  }
  if (threads == 2) CHECK(pthread_create(&tid, NULL, atomics_worker, &wk[1]) == 0, "thread");
  atomics_worker(&wk[0]);
  if (threads == 2) pthread_join(tid, NULL);
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  long long* all = rank == 0 ? malloc(sizeof(long long) * ITERS * size) : NULL;
  MPI_Gather(fetched, ITERS, MPI_LONG_LONG, all, ITERS, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const long long n = (long long)ITERS * size;
    long long fop, cas;
    int ints, vec0, vec1, vec2;
    long double ld;
    double dbl;
    memcpy(&fop, mem + OFF_FOP, 8);
    memcpy(&ints, mem + OFF_INT, 4);
    memcpy(&dbl, mem + OFF_DBL, 8);
    memcpy(&cas, mem + OFF_CAS, 8);
    memcpy(&ld, mem + OFF_LD, sizeof ld);
    memcpy(&vec0, mem + OFF_VEC, 4);
    memcpy(&vec1, mem + OFF_VEC + 4, 4);
    memcpy(&vec2, mem + OFF_VEC + 8, 4);
    CHECK(fop == n, "fetch_and_op SUM: %lld, expected %lld", fop, n);
    CHECK(ints == ITERS * size * (size + 1) / 2, "accumulate SUM int: %d", ints);
    CHECK(dbl == 0.5 * (double)n, "accumulate SUM double: %g", dbl);
    CHECK(cas == n, "compare-and-swap increments: %lld, expected %lld", cas, n);
    CHECK(ld == (long double)n, "accumulate SUM long double (lock path): %Lg", ld);
    CHECK(vec0 == (int)(3 * n) && vec1 == 0 && vec2 == (int)(2 * n),
          "strided accumulate and fetch_and_op on one int: %d %d %d", vec0, vec1, vec2);
    qsort(all, (size_t)n, sizeof(long long), cmp_ll);
    for (long long i = 0; i < n; ++i)
      CHECK(all[i] == i, "fetched values are not 0..%lld: position %lld holds %lld", n - 1, i,
            all[i]);
    free(all);
  }
  free(fetched);
  CHECK_OK(MPI_Type_free(&every_other));
}

static long long value(int origin, int target, int round) {
  return ((long long)round << 32) | (long long)(origin * 1000 + target);
}

static void exchange(long long* mem) {
  MPI_Datatype strided; /* every other long long of the origin buffer */
  CHECK_OK(MPI_Type_vector(size, 1, 2, MPI_LONG_LONG, &strided));
  CHECK_OK(MPI_Type_commit(&strided));
  long long* spread = malloc(sizeof(long long) * 2 * size);
  for (int round = 0; round < 50; ++round) {
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; ++t) {
      const long long v = value(rank, t, round);
      CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, t, rank, 1, MPI_LONG_LONG, win));
      if (round % 2) CHECK_OK(MPI_Win_flush(t, win));
    }
    if (round % 2 == 0) CHECK_OK(MPI_Win_flush_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < size; ++t) {
      long long got[SLOTS];
      if (round % 3 == 0) {
        CHECK_OK(MPI_Get(spread, 1, strided, t, 0, size, MPI_LONG_LONG, win));
        for (int s = 0; s < size; ++s) got[s] = spread[2 * s];
      } else {
        CHECK_OK(MPI_Get(got, size, MPI_LONG_LONG, t, 0, size, MPI_LONG_LONG, win));
      }
      CHECK_OK(MPI_Win_flush(t, win));
      for (int s = 0; s < size; ++s)
        CHECK(got[s] == value(s, t, round), "round %d: rank %d's slot %d holds %llx, not %llx",
              round, t, s, (unsigned long long)got[s], (unsigned long long)value(s, t, round));
    }
    CHECK_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < size; ++s)
      CHECK(mem[s] == value(s, rank, round), "round %d: my slot %d holds %llx", round, s,
            (unsigned long long)mem[s]);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody writes the next round before all checked */
  }
  free(spread);
  CHECK_OK(MPI_Type_free(&strided));
}

static void errors(long long* mem) {
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  const long long v = 77, one = 1;
  long long got = 0;
  const int t = (rank + 1) % size;
  MPI_Barrier(MPI_COMM_WORLD);
  mp_expect_class(MPI_Put(&v, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC,
                  "MPI_Put");
  mp_expect_class(MPI_Get(&got, 1, MPI_LONG_LONG, t, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_SYNC,
                  "MPI_Get");
  mp_expect_class(MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, t, 0, MPI_SUM, win), MPI_ERR_RMA_SYNC,
                  "MPI_Fetch_and_op");
  mp_expect_class(MPI_Win_flush(t, win), MPI_ERR_RMA_SYNC, "MPI_Win_flush");
  mp_expect_class(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_all");
  CHECK_OK(MPI_Win_lock_all(0, win));
  mp_expect_class(MPI_Win_flush(size, win), MPI_ERR_RANK, "MPI_Win_flush");
  mp_expect_class(MPI_Win_flush(-5, win), MPI_ERR_RANK, "MPI_Win_flush");
  mp_expect_class(MPI_Win_flush(-2, win), MPI_ERR_RANK, "MPI_Win_flush");
  mp_expect_class(MPI_Win_flush_local(-5, win), MPI_ERR_RANK, "MPI_Win_flush_local");
  CHECK_OK(MPI_Win_flush(MPI_PROC_NULL, win));
  mp_expect_class(MPI_Put(&v, 1, MPI_LONG_LONG, size, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RANK,
                  "MPI_Put");
  mp_expect_class(MPI_Put(&v, 1, MPI_LONG_LONG, -5, 0, 1, MPI_LONG_LONG, win), MPI_ERR_RANK,
                  "MPI_Put");
  mp_expect_class(MPI_Put(&v, 1, MPI_LONG_LONG, t, SLOTS, 1, MPI_LONG_LONG, win), MPI_ERR_RMA_RANGE,
                  "MPI_Put");
  mp_expect_class(MPI_Put(&v, 2, MPI_LONG_LONG, t, SLOTS - 1, 2, MPI_LONG_LONG, win),
                  MPI_ERR_RMA_RANGE, "MPI_Put");
  mp_expect_class(MPI_Put(&v, 1, MPI_LONG_LONG, t, -1, 1, MPI_LONG_LONG, win), MPI_ERR_DISP,
                  "MPI_Put");
  mp_expect_class(MPI_Get(&got, 1, MPI_LONG_LONG, t, SLOTS, 1, MPI_LONG_LONG, win),
                  MPI_ERR_RMA_RANGE, "MPI_Get");
  mp_expect_class(MPI_Accumulate(&v, 1, MPI_LONG_LONG, t, SLOTS, 1, MPI_LONG_LONG, MPI_SUM, win),
                  MPI_ERR_RMA_RANGE, "MPI_Accumulate");
  mp_expect_class(MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, size + 1, 0, MPI_SUM, win),
                  MPI_ERR_RANK, "MPI_Fetch_and_op");
  mp_expect_class(MPI_Compare_and_swap(&one, &v, &got, MPI_LONG_LONG, t, SLOTS, win),
                  MPI_ERR_RMA_RANGE, "MPI_Compare_and_swap");
  /* Still usable: the last slot of the right neighbor, then a fetch. */
  const long long mark = 5000 + rank;
  CHECK_OK(MPI_Put(&mark, 1, MPI_LONG_LONG, t, SLOTS - 1, 1, MPI_LONG_LONG, win));
  CHECK_OK(MPI_Win_flush(t, win));
  CHECK_OK(MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, t, SLOTS - 1, MPI_SUM, win));
  CHECK(got == mark, "after the errors: fetched %lld, expected %lld", got, mark);
  CHECK_OK(MPI_Win_unlock_all(win));
  MPI_Barrier(MPI_COMM_WORLD);
  const int left = (rank + size - 1) % size;
  CHECK(mem[SLOTS - 1] == 5001 + left, "after the errors: my last slot %lld", mem[SLOTS - 1]);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "threads") == 0) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    threads = 2;
  } else {
    MPI_Init(&argc, &argv);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  CHECK(size <= SLOTS - 1, "at most %d ranks", SLOTS - 1);
  /* The accumulate lock by default and with a coarse mpi_accumulate_granularity
   * (64), CPU atomics with a granularity of one element (8). */
  static const char* const granularity[] = {NULL, "8", "64"};
  for (int g = 0; g < 3; ++g) {
    MPI_Info info = MPI_INFO_NULL;
    const int coarse = g != 1;
    if (granularity[g]) {
      MPI_Info_create(&info);
      MPI_Info_set(info, "mpi_accumulate_granularity", granularity[g]);
    }
    char* mem = NULL;
    CHECK_OK(MPI_Win_allocate(SLOTS * 8, 1, info, MPI_COMM_WORLD, &mem, &win));
    if (info != MPI_INFO_NULL) MPI_Info_free(&info);
    MPI_Info used;
    char how[64] = "";
    int flag = 0;
    CHECK_OK(MPI_Win_get_info(win, &used));
    MPI_Info_get(used, "nicq_rma_accumulate", sizeof how - 1, how, &flag);
    MPI_Info_free(&used);
    CHECK(flag && strcmp(how, coarse ? "lock" : "atomics") == 0,
          "nicq_rma_accumulate is \"%s\" (flag %d)", how, flag);
    atomics(mem);
    CHECK_OK(MPI_Win_free(&win));
  }
  long long* slots = NULL;
  CHECK_OK(MPI_Win_allocate(SLOTS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &slots, &win));
  for (int s = 0; s < SLOTS; ++s) slots[s] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  exchange(slots);
  errors(slots);
  CHECK_OK(MPI_Win_free(&win));
  if (rank == 0)
    printf("rma_fast: ok (%d ranks, %d thread%s)\n", size, threads, threads > 1 ? "s" : "");
  MPI_Finalize();
  return 0;
}
