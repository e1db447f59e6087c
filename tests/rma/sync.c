/* Synchronization modes with data checks: PSCW on a ring (wait and test),
 * exclusive locks serializing read-modify-write of one location, shared
 * locks reading concurrently, MPI_Win_flush making puts visible inside a
 * lock epoch, lock_all with flush_all / flush_local(_all), and the
 * MPI_MODE_NOCHECK lock. */
#include <stdlib.h>

#include "mp_check.h"

enum { N = 32, ROUNDS = 20 };

static int rank, size;

static void pscw_ring(MPI_Win win, int* mem) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Group world, to_right, from_left;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &right, &to_right);
  MPI_Group_incl(world, 1, &left, &from_left);
  for (int round = 0; round < ROUNDS; ++round) {
    int src[4];
    for (int i = 0; i < 4; ++i) src[i] = rank * 100 + round * 4 + i;
    CHECK_OK(MPI_Win_post(from_left, 0, win));
    CHECK_OK(MPI_Win_start(to_right, 0, win));
    CHECK_OK(MPI_Put(src, 4, MPI_INT, right, 4 * (round % 4), 4, MPI_INT, win));
    int got = -1;
    CHECK_OK(MPI_Get(&got, 1, MPI_INT, right, N - 1, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_complete(win));
    CHECK(got == right * 7, "PSCW get: %d, expected %d", got, right * 7);
    if (round % 2 == 0) {
      CHECK_OK(MPI_Win_wait(win));
    } else {
      int flag = 0;
      while (!flag) CHECK_OK(MPI_Win_test(win, &flag));
    }
    for (int i = 0; i < 4; ++i)
      CHECK(mem[4 * (round % 4) + i] == left * 100 + round * 4 + i, "PSCW round %d: mem[%d] = %d",
            round, 4 * (round % 4) + i, mem[4 * (round % 4) + i]);
  }
  MPI_Group_free(&world);
  MPI_Group_free(&to_right);
  MPI_Group_free(&from_left);
}

/* Rank 0 exposes to all others at once; its wait returns only after every
 * origin's accumulates were applied. */
static void pscw_many_to_one(MPI_Win win, int* mem) {
  MPI_Group world, others, zero;
  const int root = 0;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_excl(world, 1, &root, &others);
  MPI_Group_incl(world, 1, &root, &zero);
  if (rank == 0) mem[21] = 0;
  mp_barrier(MPI_COMM_WORLD);
  for (int round = 1; round <= ROUNDS; ++round) {
    if (rank == 0) {
      CHECK_OK(MPI_Win_post(others, MPI_MODE_NOPUT, win));
      CHECK_OK(MPI_Win_wait(win));
      const int expect = round * (size - 1) * size / 2;
      CHECK(mem[21] == expect, "after wait of round %d: %d, expected %d", round, mem[21], expect);
    } else {
      CHECK_OK(MPI_Win_start(zero, 0, win));
      CHECK_OK(MPI_Accumulate(&rank, 1, MPI_INT, 0, 21, 1, MPI_INT, MPI_SUM, win));
      CHECK_OK(MPI_Win_complete(win));
    }
  }
  MPI_Group_free(&world);
  MPI_Group_free(&others);
  MPI_Group_free(&zero);
}

/* Every rank adds 1 to rank 0's mem[20] ROUNDS times by get + put under an
 * exclusive lock: the total is exact only if the locks exclude each other. */
static void exclusive_increment(MPI_Win win, int* mem) {
  if (rank == 0) mem[20] = 0;
  mp_barrier(MPI_COMM_WORLD);
  for (int k = 0; k < ROUNDS; ++k) {
    int v = -1;
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_OK(MPI_Get(&v, 1, MPI_INT, 0, 20, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_flush(0, win));
    ++v;
    CHECK_OK(MPI_Put(&v, 1, MPI_INT, 0, 20, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_unlock(0, win));
  }
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(mem[20] == ROUNDS * size, "exclusive increments: %d", mem[20]);
}

static void shared_reads_and_flush(MPI_Win win, int* mem) {
  const int target = (rank + 1) % size;
  mp_barrier(MPI_COMM_WORLD);
  int got[2] = {-1, -1};
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
  CHECK_OK(MPI_Get(got, 1, MPI_INT, target, N - 1, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(target, win));
  CHECK(got[0] == target * 7, "shared lock get: %d", got[0]);
  /* Inside one lock epoch: put, flush, then get returns the new value. */
  int v = 4242 + rank;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, target, 24, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_flush(target, win));
  CHECK_OK(MPI_Get(&got[1], 1, MPI_INT, target, 24, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_flush_local(target, win));
  CHECK(got[1] == v, "get after flush: %d, expected %d", got[1], v);
  CHECK_OK(MPI_Win_unlock(target, win));
  mp_barrier(MPI_COMM_WORLD);
  const int left = (rank + size - 1) % size;
  CHECK(mem[24] == 4242 + left, "flushed put: %d", mem[24]);
}

static void lock_all_modes(MPI_Win win, int* mem, int assert) {
  mp_barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock_all(assert, win));
  /* One origin value per target: a put's origin buffer may be read until
   * the flush (MPI 4.1 12.3: it must not be updated before then), and on
   * the counter path it is, by the RMA write. */
  int* v = malloc(sizeof(int) * (size_t)size);
  for (int t = 0; t < size; ++t) {
    v[t] = 1000 * rank + t;
    CHECK_OK(MPI_Put(&v[t], 1, MPI_INT, t, 25 + rank % 4, 1, MPI_INT, win));
  }
  CHECK_OK(MPI_Win_flush_all(win));
  CHECK_OK(MPI_Win_flush_local_all(win));
  CHECK_OK(MPI_Win_unlock_all(win));
  free(v);
  mp_barrier(MPI_COMM_WORLD);
  /* Slot 25 + r belongs to origin r alone while there are at most 4 ranks. */
  if (size <= 4)
    for (int r = 0; r < size; ++r)
      CHECK(mem[25 + r] == 1000 * r + rank, "lock_all put from %d: %d", r, mem[25 + r]);
  CHECK_OK(MPI_Win_sync(win));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  int* mem = NULL;
  MPI_Win win;
  CHECK_OK(
      MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < N; ++i) mem[i] = -1;
  mem[N - 1] = rank * 7;
  mp_barrier(MPI_COMM_WORLD);
  pscw_ring(win, mem);
  pscw_many_to_one(win, mem);
  exclusive_increment(win, mem);
  shared_reads_and_flush(win, mem);
  lock_all_modes(win, mem, 0);
  lock_all_modes(win, mem, MPI_MODE_NOCHECK);
  /* A nocheck lock of one target: the put still completes at unlock. */
  const int target = (rank + 1) % size;
  int v = -5 - rank;
  mp_barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, MPI_MODE_NOCHECK, win));
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, target, 30, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(target, win));
  mp_barrier(MPI_COMM_WORLD);
  CHECK(mem[30] == -5 - (rank + size - 1) % size, "nocheck lock put: %d", mem[30]);
  CHECK_OK(MPI_Win_free(&win));
  if (rank == 0) printf("rma_sync: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
