/* Staged lock-epoch puts on the one-node direct path (docs/rma.md, "Staged
 * lock-epoch puts"): small puts to another rank's MPI_Win_create memory go
 * through a slot the target applies in its progress, or that the origin
 * takes back after NICQ_RMA_LOCK_STAGE_NS. Rank 0 is the target of every
 * other rank (concurrent origins, alternating exclusive and shared locks).
 * Each epoch puts a new value into the origin's own word, and every fourth
 * epoch also puts into a second word and accumulates 1 onto it in the same
 * epoch (the accumulate must see the put). After each unlock the origin
 * reads both words back under a new lock: the unlock must have landed
 * them. At the end the target checks its memory.
 * argv[1]:
 *   inside   the target polls in MPI (MPI_Test) while origins work;
 *            expects some batches applied by the target
 *   reclaim  the same, expects some batches taken back by their origin
 *            (run with NICQ_RMA_LOCK_STAGE_NS=0)
 *   asleep   the target is in nanosleep, outside MPI (and without the
 *            host progress thread, which would apply them), until every
 *            origin's last put landed: staged puts must come back to their
 *            origin within the bound (a wait for the target never ends),
 *            and none is applied by the target (run with
 *            NICQ_RMA_LOCK_STAGE=always: nothing is staged otherwise)
 *   any      data checks only (the default settings) */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_check.h"

enum { EPOCHS = 400 };

static int rank, size;

static long long info_value(MPI_Win win, const char* key) {
  const long long v = mp_win_info_value(win, key);
  CHECK(v != -1, "MPI_Win_get_info has no %s", key);
  return v;
}

static long long value_of(int origin, int epoch) {
  return ((long long)origin << 32) | (long long)(epoch + 1);
}

/* Word layout of the target: [0, size) each origin's put word, [size,
 * 2 size) each origin's put-then-accumulate word, [2 size, 3 size) each
 * origin's count of finished epochs (its last put, watched by an asleep
 * target). */
static void origin_epochs(MPI_Win win) {
  for (int e = 0; e < EPOCHS; ++e) {
    const long long v = value_of(rank, e), one = 1, done = e + 1;
    CHECK_OK(MPI_Win_lock(e % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, rank, 1, MPI_LONG_LONG, win));
    if (e % 4 == 0) {
      CHECK_OK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, size + rank, 1, MPI_LONG_LONG, win));
      CHECK_OK(
          MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, size + rank, 1, MPI_LONG_LONG, MPI_SUM, win));
    }
    CHECK_OK(MPI_Put(&done, 1, MPI_LONG_LONG, 0, 2 * size + rank, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_unlock(0, win));
    long long got[2] = {0, 0};
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    CHECK_OK(MPI_Get(&got[0], 1, MPI_LONG_LONG, 0, rank, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Get(&got[1], 1, MPI_LONG_LONG, 0, size + rank, 1, MPI_LONG_LONG, win));
    CHECK_OK(MPI_Win_unlock(0, win));
    CHECK(got[0] == v, "epoch %d: after the unlock rank 0 holds %llx, expected %llx", e,
          (unsigned long long)got[0], (unsigned long long)v);
    const long long acc = value_of(rank, e - e % 4) + 1;
    CHECK(got[1] == acc, "epoch %d: put then accumulate left %llx, expected %llx", e,
          (unsigned long long)got[1], (unsigned long long)acc);
  }
}

/* The target outside MPI: naps until every origin's epoch count says its
 * last epoch ended (at most 60 s). */
static void asleep_target(volatile long long* mem) {
  const struct timespec nap = {0, 200000};
  for (int naps = 0; naps < 300000; ++naps) {
    int all = 1;
    for (int o = 1; o < size; ++o) all &= mem[2 * size + o] == EPOCHS;
    if (all) return;
    nanosleep(&nap, NULL);
  }
  CHECK(0, "the origins' puts never all arrived while the target stayed out of MPI");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  const char* mode = argc > 1 ? argv[1] : "any";
  CHECK(size >= 2, "needs at least 2 ranks");
  long long* mem = calloc((size_t)(3 * size), sizeof *mem);
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mem, (MPI_Aint)(3 * size * sizeof *mem), sizeof *mem, MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  const int asleep = strcmp(mode, "asleep") == 0;
  if (rank > 0) {
    origin_epochs(win);
    if (asleep) {
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    } else {
      MPI_Request req;
      CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
      CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
  } else if (asleep) {
    asleep_target(mem);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  } else {
    /* Inside MPI until every origin is done: each MPI_Test is a progress
     * pass, the one that applies staged puts. */
    MPI_Request req;
    CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req));
    for (int done = 0; !done;) CHECK_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
  }
  if (rank == 0) {
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win)); /* the target's own view */
    for (int o = 1; o < size; ++o) {
      CHECK(mem[o] == value_of(o, EPOCHS - 1), "origin %d's word is %llx", o,
            (unsigned long long)mem[o]);
      CHECK(mem[size + o] == value_of(o, (EPOCHS - 1) - (EPOCHS - 1) % 4) + 1,
            "origin %d's accumulated word is %llx", o, (unsigned long long)mem[size + o]);
      CHECK(mem[2 * size + o] == EPOCHS, "origin %d's epoch count is %lld", o, mem[2 * size + o]);
    }
    CHECK_OK(MPI_Win_unlock(0, win));
  }
  long long mine[3] = {info_value(win, "nicq_rma_lock_staged_puts"),
                       info_value(win, "nicq_rma_lock_stage_applied"),
                       info_value(win, "nicq_rma_lock_stage_reclaimed")};
  long long sum[3];
  CHECK_OK(MPI_Reduce(mine, sum, 3, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    printf(
        "lock_stage %s: %d ranks, %lld puts staged, %lld batches applied by the target, %lld "
        "taken back\n",
        mode, size, sum[0], sum[1], sum[2]);
    if (strcmp(mode, "inside") == 0) CHECK(sum[1] > 0, "no staged put was applied by the target");
    if (strcmp(mode, "reclaim") == 0) CHECK(sum[2] > 0, "no staged put was taken back");
    if (asleep) {
      CHECK(sum[0] > 0 && sum[2] > 0, "no put was staged and taken back");
      /* The target's last progress pass inside the first barrier may run
       * after an origin staged its first batch (the target descheduled
       * between the barrier's done check and that pass): one per origin at
       * most. More means a target outside MPI applied puts. */
      CHECK(sum[1] < size, "a target outside MPI applied %lld batches", sum[1]);
    }
  }
  CHECK_OK(MPI_Win_free(&win));
  free(mem);
  if (rank == 0) printf("rma_lock_stage %s: %d ranks OK\n", mode, size);
  MPI_Finalize();
  return 0;
}
