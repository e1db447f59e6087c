/* Full offload of a persistent allreduce (argv[1] doubles, default 64): after init, every
 * rank starts it and then computes for 200 ms making no MPI call (a
 * sleep, extended in 200 ms steps on a loaded machine); the result must be
 * complete in recvbuf with no MPI call made, i.e. it ran entirely as
 * triggered NIC operations (native backend:
 * NICQ_OFFLOAD=native on sockets). Then MPI_Wait completes the request;
 * more starts (in place too) check reuse; then the same requests are
 * matched (MPI_Match) and enqueued (MPI_Enqueue_start/wait, fence), with
 * the same 200 ms check. Data is checked, not time.
 *
 * With a large count on an emulated provider (tcp, shm) and
 * NICQ_PROGRESS_THREAD=1 the same program checks the host-engine path: the
 * schedule's sends, receives and reduce steps are run by the host progress
 * thread while the application makes no MPI call. argv[2] = "nopeek" only
 * sleeps and then waits, never reading a buffer the thread may be writing
 * (the ThreadSanitizer run: the peek is a deliberate race). argv[2] =
 * "subcomm" runs everything on a split of world instead (the first half of
 * the ranks, and the rest, each in reverse order): plans on communicators
 * smaller than world, peers named by world rank. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll_check.h"

static int g_p;
static int g_nopeek;

static void compute_200ms(void) {
  struct timespec ts = {0, 200 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Computes (sleeps) 200 ms, then longer in 200 ms steps while the result
 * is not there yet, still without any MPI call: on a loaded 2-core machine
 * the NIC's (sockets provider's) thread may not get the CPU at once. The
 * point is that it completes with no MPI call at all; 30 s bounds a hang. */
static int compute_until(const double* a, const double* b, int n, double wa0, double wb) {
  for (int step = 0; step < 150; ++step) {
    compute_200ms();
    if (g_nopeek) return 1;
    int done = 1;
    for (int i = 0; i < n && done; ++i) done = a[i] == wa0 + (double)(i * g_p) && b[i] == wb;
    if (done) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm comm = MPI_COMM_WORLD;
  if (argc > 2 && strcmp(argv[2], "subcomm") == 0) {
    MPI_Comm_split(MPI_COMM_WORLD, rank < (p + 1) / 2 ? 0 : 1, p - rank, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
  }
  g_rank = rank;
  g_p = p;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int N = argc > 1 ? atoi(argv[1]) : 64;
  g_nopeek = argc > 2 && strcmp(argv[2], "nopeek") == 0;
  double* in = malloc(sizeof(double) * N);
  double* out = malloc(sizeof(double) * N);
  double* io = malloc(sizeof(double) * N);
  CHECK(N > 0 && in && out && io, "bad count %d", N);
  MPI_Request rq, rq_in_place;
  CHECK_OK(MPI_Allreduce_init(in, out, N, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &rq));
  CHECK_OK(MPI_Allreduce_init(MPI_IN_PLACE, io, N, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL,
                              &rq_in_place));
  for (int epoch = 0; epoch < 20; ++epoch) {
    const int no_mpi = epoch < 3; /* the first starts run with no MPI call at all */
    for (int i = 0; i < N; ++i) in[i] = rank + i + epoch, out[i] = -1, io[i] = 2.0 * rank + epoch;
    CHECK_OK(MPI_Start(&rq));
    CHECK_OK(MPI_Start(&rq_in_place));
    if (no_mpi) {
      (void)compute_until(out, io, N, p * (double)epoch + p * (p - 1) / 2.0,
                          p * (p - 1.0) + p * (double)epoch);
      for (int i = 0; i < N && !g_nopeek; ++i) {
        const double want = p * (double)(i + epoch) + p * (p - 1) / 2.0;
        CHECK(out[i] == want, "epoch %d: without MPI calls out[%d] = %g, want %g", epoch, i, out[i],
              want);
        CHECK(io[i] == p * (p - 1.0) + p * (double)epoch, "epoch %d in place [%d] = %g", epoch, i,
              io[i]);
      }
    }
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&rq_in_place, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i) {
      CHECK(out[i] == p * (double)(i + epoch) + p * (p - 1) / 2.0, "epoch %d out[%d]", epoch, i);
      CHECK(io[i] == p * (p - 1.0) + p * (double)epoch, "epoch %d in place [%d]", epoch, i);
    }
  }
  /* The same requests matched and enqueued on a queue (chapter 13). */
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  CHECK_OK(MPI_Match(&rq));
  CHECK_OK(MPI_Match(&rq_in_place));
  for (int epoch = 20; epoch < 26; ++epoch) {
    for (int i = 0; i < N; ++i) in[i] = rank + i + epoch, out[i] = -1, io[i] = 2.0 * rank + epoch;
    CHECK_OK(MPI_Enqueue_start(&q, &rq));
    CHECK_OK(MPI_Enqueue_start(&q, &rq_in_place));
    if (epoch < 22) {
      (void)compute_until(out, io, N, p * (double)epoch + p * (p - 1) / 2.0,
                          p * (p - 1.0) + p * (double)epoch);
      for (int i = 0; i < N && !g_nopeek; ++i) {
        CHECK(out[i] == p * (double)(i + epoch) + p * (p - 1) / 2.0,
              "enqueued epoch %d: without MPI calls out[%d] = %g", epoch, i, out[i]);
        CHECK(io[i] == p * (p - 1.0) + p * (double)epoch, "enqueued epoch %d in place", epoch);
      }
    }
    CHECK_OK(MPI_Enqueue_wait(&q, &rq, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Enqueue_wait(&q, &rq_in_place, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Queue_fence(&q));
    for (int i = 0; i < N; ++i) {
      CHECK(out[i] == p * (double)(i + epoch) + p * (p - 1) / 2.0, "enqueued epoch %d [%d]", epoch,
            i);
      CHECK(io[i] == p * (p - 1.0) + p * (double)epoch, "enqueued epoch %d in place [%d]", epoch,
            i);
    }
  }
  CHECK_OK(MPI_Queue_free(&q));
  CHECK_OK(MPI_Request_free(&rq));
  CHECK_OK(MPI_Request_free(&rq_in_place));
  free(in);
  free(out);
  free(io);
  if (rank == 0) printf("mp_coll_offload: ok on %d ranks, %d doubles\n", p, N);
  if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
