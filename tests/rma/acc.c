/* Accumulates: predefined ops under fence; concurrent MPI_Accumulate(SUM)
 * and MPI_Fetch_and_op from every rank to one location give the exact sum
 * and distinct fetched values; MPI_Compare_and_swap as a lock gives mutual
 * exclusion to a get-increment-put critical section; MPI_Get_accumulate
 * with MPI_NO_OP and MPI_REPLACE; a derived target type. */
#include <stdint.h>
#include <stdlib.h>

#include "mp_check.h"

enum { SLOTS = 16, ITERS = 200, CS_ITERS = 40 };

static int rank, size;

static int cmp_ll(const void* a, const void* b) {
  long long x = *(const long long*)a, y = *(const long long*)b;
  return x < y ? -1 : x > y;
}

static void fence_ops(MPI_Win win, long long* mem) {
  for (int i = 0; i < SLOTS; ++i) mem[i] = 0;
  mem[2] = 1000;
  CHECK_OK(MPI_Win_fence(0, win));
  long long mine = rank + 1, r = rank;
  for (int k = 0; k < 3; ++k)
    CHECK_OK(MPI_Accumulate(&mine, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win));
  CHECK_OK(MPI_Accumulate(&r, 1, MPI_LONG_LONG, 0, 1, 1, MPI_LONG_LONG, MPI_MAX, win));
  CHECK_OK(MPI_Accumulate(&r, 1, MPI_LONG_LONG, 0, 2, 1, MPI_LONG_LONG, MPI_MIN, win));
  CHECK_OK(MPI_Accumulate(&r, 1, MPI_LONG_LONG, MPI_PROC_NULL, 2, 1, MPI_LONG_LONG, MPI_MIN, win));
  CHECK_OK(MPI_Win_fence(0, win));
  if (rank == 0) {
    const long long sum = 3LL * size * (size + 1) / 2;
    CHECK(mem[0] == sum, "SUM: %lld, expected %lld", mem[0], sum);
    CHECK(mem[1] == size - 1, "MAX: %lld", mem[1]);
    CHECK(mem[2] == 0, "MIN: %lld", mem[2]);
  }
  /* A vector target: every other double of rank 0's window += 1.5 from each rank. */
  double* d = (double*)(mem + 8);
  for (int i = 0; i < 8; ++i) d[i] = 0;
  MPI_Datatype every_other;
  CHECK_OK(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &every_other));
  CHECK_OK(MPI_Type_commit(&every_other));
  double add[4] = {1.5, 1.5, 1.5, 1.5};
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Accumulate(add, 4, MPI_DOUBLE, 0, 8, 1, every_other, MPI_SUM, win));
  CHECK_OK(MPI_Win_fence(0, win));
  if (rank == 0)
    for (int i = 0; i < 8; ++i)
      CHECK(d[i] == (i % 2 == 0 ? 1.5 * size : 0.0), "vector accumulate: d[%d] = %g", i, d[i]);
  CHECK_OK(MPI_Type_free(&every_other));
  /* MPI_MAXLOC on MPI_2INT pairs: the largest value, ties to the lowest rank. */
  int* pair = (int*)(mem + 12);
  pair[0] = -1;
  pair[1] = -1;
  int mine_pair[2] = {rank % 2, rank};
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Accumulate(mine_pair, 1, MPI_2INT, 0, 12, 1, MPI_2INT, MPI_MAXLOC, win));
  CHECK_OK(MPI_Win_fence(0, win));
  if (rank == 0)
    CHECK(pair[0] == (size > 1 ? 1 : 0) && pair[1] == (size > 1 ? 1 : 0), "MAXLOC: (%d, %d)",
          pair[0], pair[1]);
}

static void concurrent_sum(MPI_Win win, long long* mem) {
  for (int i = 0; i < SLOTS; ++i) mem[i] = 0;
  mp_barrier(MPI_COMM_WORLD);
  long long one = 1, fetched[ITERS];
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int k = 0; k < ITERS; ++k) {
    CHECK_OK(MPI_Fetch_and_op(&one, &fetched[k], MPI_LONG_LONG, 0, 2, MPI_SUM, win));
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 3, 1, MPI_LONG_LONG, MPI_SUM, win));
    if (k % 16 == 15) CHECK_OK(MPI_Win_flush(0, win));
  }
  CHECK_OK(MPI_Win_unlock_all(win));
  long long* all = rank == 0 ? malloc(sizeof(long long) * ITERS * size) : NULL;
  CHECK_OK(MPI_Gather(fetched, ITERS, MPI_LONG_LONG, all, ITERS, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    CHECK(mem[2] == (long long)ITERS * size, "fetch_and_op sum %lld, expected %d", mem[2],
          ITERS * size);
    CHECK(mem[3] == (long long)ITERS * size, "accumulate sum %lld, expected %d", mem[3],
          ITERS * size);
    /* Atomic fetch-and-add hands out every value once. */
    qsort(all, (size_t)ITERS * size, sizeof(long long), cmp_ll);
    for (long long i = 0; i < (long long)ITERS * size; ++i)
      CHECK(all[i] == i, "fetched values: position %lld holds %lld", i, all[i]);
    free(all);
  }
}

static void cas_mutex(MPI_Win win, long long* mem) {
  for (int i = 0; i < SLOTS; ++i) mem[i] = 0;
  mp_barrier(MPI_COMM_WORLD);
  const long long unlocked = 0, me = rank + 1;
  CHECK_OK(MPI_Win_lock_all(0, win));
  for (int k = 0; k < CS_ITERS; ++k) {
    long long prev = -1;
    for (;;) {
      CHECK_OK(MPI_Compare_and_swap(&me, &unlocked, &prev, MPI_LONG_LONG, 0, 4, win));
      CHECK_OK(MPI_Win_flush(0, win));
      if (prev == 0) break;
      CHECK(prev >= 1 && prev <= size, "lock word holds %lld", prev);
    }
    /* Not atomic on its own: only the lock makes the count exact. */
    long long counter = -1;
    CHECK_OK(MPI_Get(&counter, 1, MPI_LONG_LONG, 0, 5, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_flush(0, win));
    ++counter;
    CHECK_OK(MPI_Put(&counter, 1, MPI_LONG_LONG, 0, 5, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_flush(0, win));
    long long old = -1;
    CHECK_OK(MPI_Compare_and_swap(&unlocked, &me, &old, MPI_LONG_LONG, 0, 4, win));
    CHECK_OK(MPI_Win_flush(0, win));
    CHECK(old == me, "unlock found %lld in the lock word, expected %lld", old, me);
  }
  CHECK_OK(MPI_Win_unlock_all(win));
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    CHECK(mem[5] == (long long)CS_ITERS * size, "critical sections counted %lld, expected %d",
          mem[5], CS_ITERS * size);
    CHECK(mem[4] == 0, "lock word left at %lld", mem[4]);
  }
}

static void get_accumulate(MPI_Win win, long long* mem) {
  const int target = (rank + 1) % size;
  for (int i = 0; i < SLOTS; ++i) mem[i] = 100 * rank + i;
  mp_barrier(MPI_COMM_WORLD);
  long long dummy = 0, got = -1, swap = -rank - 1, old = -1;
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
  CHECK_OK(MPI_Get_accumulate(&dummy, 1, MPI_LONG_LONG, &got, 1, MPI_LONG_LONG, target, 7, 1,
                              MPI_LONG_LONG, MPI_NO_OP, win));
  CHECK_OK(MPI_Win_flush(target, win));
  CHECK(got == 100 * target + 7, "NO_OP fetched %lld", got);
  CHECK_OK(MPI_Get_accumulate(&swap, 1, MPI_LONG_LONG, &old, 1, MPI_LONG_LONG, target, 6, 1,
                              MPI_LONG_LONG, MPI_REPLACE, win));
  long long fetched = -1, two = 2;
  CHECK_OK(MPI_Fetch_and_op(&two, &fetched, MPI_LONG_LONG, target, 6, MPI_PROD, win));
  CHECK_OK(MPI_Win_unlock(target, win));
  CHECK(old == 100 * target + 6, "REPLACE fetched %lld", old);
  CHECK(fetched == swap, "PROD fetched %lld, expected %lld", fetched, swap);
  mp_barrier(MPI_COMM_WORLD);
  const int from = (rank + size - 1) % size;
  CHECK(mem[6] == 2 * (-from - 1), "after REPLACE and PROD: %lld", mem[6]);
  CHECK(mem[7] == 100 * rank + 7, "NO_OP changed the target: %lld", mem[7]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  long long* mem = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate(SLOTS * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &mem, &win));
  fence_ops(win, mem);
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  concurrent_sum(win, mem);
  cas_mutex(win, mem);
  get_accumulate(win, mem);
  CHECK_OK(MPI_Win_free(&win));
  if (rank == 0) printf("rma_acc: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
