/* A queued chain of a matched persistent allreduce completes while every
 * host thread sleeps (issue: compile once). Each rank enqueues `pairs`
 * start/wait pairs (argv[1], default 16: as far as a queue may run ahead)
 * of an 8-double MPI_SUM allreduce, not in place, then sleeps in nanosleep
 * and makes no MPI call: first as long as the same chain took with a
 * fence, then in steps of an eighth of that (5-200 ms) while the chain is
 * unfinished (a loaded machine), at most 20 s (asleep_check.h). Before the fence it reads, through
 * NICQX_Queue_waits_completed (which drives no progress), that every
 * enqueued wait completed. Then the fence, and every element of the result
 * is checked. argv[2] = "inplace" runs the MPI_IN_PLACE form; argv[3] is
 * the element count (1..8; cxi's atomics carry one element).
 *
 * Runs where every step of the plan is on the NIC (native on sockets) or
 * on the emulator's agent (emulated with NICQ_PROGRESS_THREAD=1); where
 * only host calls advance the chain it fails at the first check. */
#include <string.h>
#include <time.h>

#include "asleep_check.h"
#include "coll_check.h"

enum { kCount = 8, kRounds = 3 };

static void run_chain(MPI_Queue q, MPI_Request* r, int pairs) {
  for (int i = 0; i < pairs; i++) {
    CHECK_OK(MPI_Enqueue_start(&q, r));
    CHECK_OK(MPI_Enqueue_wait(&q, r, MPI_STATUS_IGNORE));
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int pairs = argc > 1 ? atoi(argv[1]) : 16;
  const int inplace = argc > 2 && strcmp(argv[2], "inplace") == 0;
  const int count =
      argc > 3 && atoi(argv[3]) >= 1 && atoi(argv[3]) <= kCount ? atoi(argv[3]) : kCount;
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double in[kCount], out[kCount];
  MPI_Request req;
  CHECK_OK(MPI_Allreduce_init(inplace ? MPI_IN_PLACE : in, out, count, MPI_DOUBLE, MPI_SUM,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &req));
  CHECK_OK(MPI_Match(&req));
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  for (int round = 0; round < kRounds; round++) {
    /* Not in place each epoch sums the same input; in place the result is
     * the input of the next epoch, so it grows by a factor `size` each. */
    for (int k = 0; k < kCount; k++) {
      in[k] = g_rank + k + round;
      out[k] = inplace ? in[k] : -1;
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = MPI_Wtime();
    run_chain(q, &req, 1);
    CHECK_OK(MPI_Queue_fence(&q));
    const double chain = (MPI_Wtime() - t0) * pairs;
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));

    long long done0 = 0, enq0 = 0, done = 0, enq = 0;
    CHECK_OK(NICQX_Queue_waits_completed(q, &done0, &enq0));
    CHECK(done0 == enq0, "round %d: %lld of %lld waits complete after a fence", round, done0, enq0);
    run_chain(q, &req, pairs);
    /* No MPI call from here to the fence but the non-progressing read. */
    const double slept = sleep_while_chain_runs(q, done0, pairs, chain, &done, &enq);
    CHECK(enq - enq0 == pairs, "round %d: %lld waits enqueued, expected %d", round, enq - enq0,
          pairs);
    CHECK(done - done0 == pairs,
          "round %d: %lld of %d enqueued waits completed while the host slept %.1f s (the chain "
          "did not advance without MPI calls)",
          round, done - done0, pairs, slept);
    CHECK_OK(MPI_Queue_fence(&q));
    for (int k = 0; k < count; k++) {
      double want = (double)size * (k + round) + size * (size - 1) / 2.0;
      if (inplace) /* one epoch before the chain, then `pairs` more on its result */
        for (int e = 0; e < pairs; e++) want *= size;
      CHECK(out[k] == want, "round %d element %d: %g, want %g", round, k, out[k], want);
    }
  }
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Queue_free(&q));
  if (g_rank == 0)
    printf("coll_asleep: %d rounds of %d enqueued pairs complete asleep\n", kRounds, pairs);
  MPI_Finalize();
  return 0;
}
