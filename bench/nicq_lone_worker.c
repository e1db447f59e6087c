/* How long one rank takes to finish a persistent allreduce alone against
 * the time of the same operation with every rank inside MPI: what decides
 * whether a rank that computes for as long as the operation's pure time
 * finds its result ready (the overlap row of issue 18).
 *
 *   nicq_lone_worker [-m BYTES] [-i ITERS] [-s SLEEP_US]
 *
 * Each iteration starts after a barrier. "lone": every rank starts, rank 0
 * then sleeps SLEEP_US (no MPI call) before its wait, and the time is the
 * last rank's start-to-wait-return, i.e. the operation done by the ranks
 * other than 0 (with 2 ranks, one rank alone). "shared": every rank starts
 * and waits at once. Sleeping rather than spinning leaves the core free, so
 * the figure is the worker's, not the scheduler's. Minimum and median over
 * the iterations, floats summed, the result checked. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int Compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void Sleep(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long bytes = 1 << 20, sleep_us = 3000;
  int iters = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-m") == 0) bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "-i") == 0) iters = atoi(argv[i + 1]);
    if (strcmp(argv[i], "-s") == 0) sleep_us = atol(argv[i + 1]);
  }
  const long n = bytes / (long)sizeof(float);
  float* in = malloc(n * sizeof(float));
  float* out = malloc(n * sizeof(float));
  double* lone = malloc(iters * sizeof(double));
  double* shared = malloc(iters * sizeof(double));
  for (long i = 0; i < n; ++i) in[i] = (float)(rank + i % 7);
  MPI_Request req;
  MPI_Allreduce_init(in, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
  const int warmup = 10;
  for (int form = 0; form < 2; ++form) {
    double* times = form == 0 ? lone : shared;
    for (int k = 0; k < iters + warmup; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Start(&req);
      if (form == 0 && rank == 0) Sleep(sleep_us);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      if (k >= warmup) times[k - warmup] = (MPI_Wtime() - t0) * 1e6;
    }
  }
  int bad = 0;
  for (long i = 0; i < n && !bad; ++i) {
    const float want = (float)(size * (size - 1) / 2) + (float)size * (float)(i % 7);
    bad = out[i] != want;
  }
  if (bad) fprintf(stderr, "rank %d: wrong allreduce result\n", rank);
  if (rank == size - 1) {
    qsort(lone, iters, sizeof(double), Compare);
    qsort(shared, iters, sizeof(double), Compare);
    printf("# %d ranks, %ld bytes, %d iterations; rank %d's start-to-wait time, us\n", size, bytes,
           iters, rank);
    printf("lone min %.1f median %.1f | shared min %.1f median %.1f | lone/shared median %.2f\n",
           lone[0], lone[iters / 2], shared[0], shared[iters / 2],
           lone[iters / 2] / shared[iters / 2]);
  }
  MPI_Request_free(&req);
  MPI_Finalize();
  return bad;
}
