/* The one-node direct path (docs/rma.md, "One node"), on every window
 * flavor it serves (create: process_vm; allocate and allocate_shared: a
 * shared segment):
 *  - every rank accumulates a 64-element vector, fetch_and_ops and
 *    compare_and_swaps one counter on rank 0, all at once, under lock_all:
 *    the sums are exact, the fetched values all distinct, and no vector
 *    element disagrees with another (an accumulate is applied whole);
 *  - exclusive locks exclude: a writer fills rank 0's array with one value
 *    in two halves, napping between them, under an exclusive lock; readers
 *    under shared locks always get an array of one value;
 *  - with argument "sleep": rank 0 stays out of MPI (no progress thread)
 *    and watches its own memory while rank 1 locks, puts and unlocks: the
 *    value arrives without the target ever running MPI. The watch is
 *    bounded: the active-message path (NICQ_RMA_SHM=off) fails it.
 * And once a window exists, no segment of this job is left with a name in
 * /dev/shm (a rank killed later leaves nothing behind). */
#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "mp_check.h"

enum { VEC = 64, ITERS = 100, HALF = 256, ROUNDS = 60 };

static int rank, size;

static int cmp_ll(const void* a, const void* b) {
  long long x = *(const long long*)a, y = *(const long long*)b;
  return x < y ? -1 : x > y;
}

/* Window layout (long longs): [0, VEC) vector sum, VEC fop counter,
 * VEC + 1 cas counter, then 2 * HALF ints of the exclusivity array. */
enum { FOP = VEC, CAS = VEC + 1, ARRAY = VEC + 2 };
#define WIN_BYTES (sizeof(long long) * ARRAY + sizeof(int) * 2 * HALF)

static void concurrent(MPI_Win win, long long* mem) {
  if (rank == 0) memset(mem, 0, WIN_BYTES);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  long long add[VEC], one = 1, fetched[ITERS];
  for (int i = 0; i < VEC; ++i) add[i] = 1;
  int swaps = 0;
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int k = 0; k < ITERS; ++k) {
    CHECK_OK(MPI_Accumulate(add, VEC, MPI_LONG_LONG, 0, 0, VEC, MPI_LONG_LONG, MPI_SUM, win));
    CHECK_OK(MPI_Fetch_and_op(&one, &fetched[k], MPI_LONG_LONG, 0, FOP, MPI_SUM, win));
    /* Increment by compare-and-swap: read, then swap old -> old + 1 until it sticks. */
    long long seen = 0, want = 0, got = -1;
    CHECK_OK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG_LONG, 0, CAS, MPI_NO_OP, win));
    CHECK_OK(MPI_Win_flush(0, win)); /* results are defined once flushed */
    for (;;) {
      want = seen + 1;
      CHECK_OK(MPI_Compare_and_swap(&want, &seen, &got, MPI_LONG_LONG, 0, CAS, win));
      CHECK_OK(MPI_Win_flush(0, win));
      if (got == seen) break;
      seen = got;
      ++swaps;
    }
  }
  CHECK_OK(MPI_Win_unlock_all(win));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  long long* all = rank == 0 ? malloc(sizeof(long long) * ITERS * size) : NULL;
  CHECK_OK(MPI_Gather(fetched, ITERS, MPI_LONG_LONG, all, ITERS, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    const long long n = (long long)ITERS * size;
    for (int i = 0; i < VEC; ++i)
      CHECK(mem[i] == n, "vector sum [%d] = %lld, expected %lld", i, mem[i], n);
    CHECK(mem[FOP] == n, "fetch_and_op sum %lld, expected %lld", mem[FOP], n);
    CHECK(mem[CAS] == n, "compare_and_swap count %lld, expected %lld", mem[CAS], n);
    qsort(all, (size_t)n, sizeof *all, cmp_ll);
    for (long long i = 0; i < n; ++i)
      CHECK(all[i] == i, "fetched values: [%lld] = %lld", i, all[i]);
  }
  free(all);
}

static void exclusive(MPI_Win win, long long* mem) {
  int* arr = (int*)(mem + ARRAY);
  if (rank == 0)
    for (int i = 0; i < 2 * HALF; ++i) arr[i] = 0;
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  /* Displacements count long longs (the windows' disp_unit). */
  const MPI_Aint at = ARRAY, second = ARRAY + HALF * sizeof(int) / sizeof(long long);
  int buf[2 * HALF];
  const int writer = rank % 2 == 1 || size == 1;
  /* Readers read 4 times as often as writers write, napping between, so
   * their reads spread over the writers' epochs. */
  const struct timespec write_nap = {0, 200000}, read_nap = {0, 50000};
  for (int r = 0; r < (writer ? ROUNDS : 4 * ROUNDS); ++r) {
    if (writer) {
      /* A writer: value rank * ROUNDS + r + 1, half by half. */
      for (int i = 0; i < 2 * HALF; ++i) buf[i] = rank * ROUNDS + r + 1;
      CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      CHECK_OK(MPI_Put(buf, HALF, MPI_INT, 0, at, HALF, MPI_INT, win));
      CHECK_OK(MPI_Win_flush(0, win));
      /* Half written for a while: a reader that gets in now sees it. */
      nanosleep(&write_nap, NULL);
      CHECK_OK(MPI_Put(buf + HALF, HALF, MPI_INT, 0, second, HALF, MPI_INT, win));
      CHECK_OK(MPI_Win_unlock(0, win));
    } else {
      CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
      CHECK_OK(MPI_Get(buf, 2 * HALF, MPI_INT, 0, at, 2 * HALF, MPI_INT, win));
      CHECK_OK(MPI_Win_unlock(0, win));
      for (int i = 1; i < 2 * HALF; ++i)
        CHECK(buf[i] == buf[0], "read %d: a half-written epoch: [0] = %d, [%d] = %d", r, buf[0], i,
              buf[i]);
      nanosleep(&read_nap, NULL);
    }
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Segments are named /nicq-win-<pid of the window's rank 0>-...; every
 * rank of this job has its windows mapped by now, so none has a name. */
static void no_segment_names(int rank0_pid) {
  char prefix[64];
  snprintf(prefix, sizeof prefix, "nicq-win-%d-", rank0_pid);
  DIR* d = opendir("/dev/shm");
  if (!d) return; /* no POSIX shm directory: nothing to leave behind */
  for (struct dirent* e; (e = readdir(d)) != NULL;)
    CHECK(strncmp(e->d_name, prefix, strlen(prefix)) != 0, "/dev/shm/%s is still there", e->d_name);
  closedir(d);
}

/* Rank 0 never calls MPI while rank 1 writes into its window. */
static void sleeping_target(MPI_Win win, long long* mem) {
  volatile long long* watched = mem;
  if (rank == 0) *watched = 0;
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 1) {
    long long v = 4242;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_unlock(0, win));
  } else if (rank == 0) {
    /* At most 20 s of 1 ms naps: only a target that is not needed passes. */
    struct timespec nap = {0, 1000000};
    int naps = 0;
    while (*watched != 4242 && naps < 20000) {
      nanosleep(&nap, NULL);
      ++naps;
    }
    CHECK(*watched == 4242, "the put never arrived while the target stayed out of MPI");
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  const int sleep_test = argc > 1 && strcmp(argv[1], "sleep") == 0;
  int rank0_pid = (int)getpid();
  CHECK_OK(MPI_Bcast(&rank0_pid, 1, MPI_INT, 0, MPI_COMM_WORLD));
  for (int flavor = 0; flavor < 3; ++flavor) {
    MPI_Win win;
    long long* mem = NULL;
    long long* own = NULL;
    if (flavor == 0) {
      own = calloc(1, WIN_BYTES);
      mem = own;
      CHECK_OK(
          MPI_Win_create(mem, WIN_BYTES, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else if (flavor == 1) {
      CHECK_OK(MPI_Win_allocate(WIN_BYTES, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                                &win));
    } else {
      CHECK_OK(MPI_Win_allocate_shared(WIN_BYTES, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD,
                                       &mem, &win));
    }
    no_segment_names(rank0_pid);
    if (sleep_test) {
      if (size > 1) sleeping_target(win, mem);
    } else {
      concurrent(win, mem);
      exclusive(win, mem);
    }
    CHECK_OK(MPI_Win_free(&win));
    free(own);
  }
  if (rank == 0) printf("rma_direct%s: %d ranks OK\n", sleep_test ? " sleep" : "", size);
  MPI_Finalize();
  return 0;
}
