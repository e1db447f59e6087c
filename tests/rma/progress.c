/* Passive-target progress: rank 0 exposes a window and then makes no MPI
 * call, sleeping in nanosleep while it watches its own memory; every other
 * rank locks rank 0 exclusively, puts its mark, fetch-and-adds a counter
 * and unlocks. With NICQ_PROGRESS_THREAD=1 the async progress thread
 * serves those requests, so the origins finish and rank 0 sees every mark
 * and the exact count without entering MPI. The check is on data; the
 * watch gives up after a generous bound so a broken build fails instead of
 * hanging. Watching window memory while it is the target of puts is a race
 * by design (ThreadSanitizer reports this loop's reads, and only them). */
#include <time.h>

#include "mp_check.h"

enum { SLOTS = 8, ROUNDS = 5 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  long long* mem = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate(SLOTS * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &mem, &win));
  for (int i = 0; i < SLOTS; ++i) mem[i] = 0;
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) {
    volatile long long* watch = mem;
    const long long expect = (long long)ROUNDS * (size - 1);
    int seen = 0;
    /* 60 s of 1 ms naps at most; the origins need a few milliseconds. */
    for (int naps = 0; naps < 60000 && !seen; ++naps) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      seen = watch[0] == expect;
      for (int r = 1; r < size && r < SLOTS; ++r) seen = seen && watch[r] == 1000 + r;
    }
    CHECK(seen, "rank 0 never saw the origins' data without calling MPI: count %lld of %lld",
          watch[0], expect);
  } else {
    const long long one = 1;
    for (int k = 0; k < ROUNDS; ++k) {
      long long mark = 1000 + rank, before = -1;
      CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      if (rank < SLOTS) CHECK_OK(MPI_Put(&mark, 1, MPI_LONG_LONG, 0, rank, 1, MPI_LONG_LONG, win));
      CHECK_OK(MPI_Fetch_and_op(&one, &before, MPI_LONG_LONG, 0, 0, MPI_SUM, win));
      CHECK_OK(MPI_Win_unlock(0, win));
      CHECK(before >= 0 && before < (long long)ROUNDS * (size - 1), "fetched %lld", before);
    }
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_OK(MPI_Win_free(&win));
  if (rank == 0) printf("rma_progress: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
