/* The cost of making a communicator and of a fresh communicator's first
 * collectives when they are nonblocking.
 *
 *   nicq_comm_dup [dups] [calls]
 *
 * "dup+free": MPI_Comm_dup of MPI_COMM_WORLD then MPI_Comm_free, `dups`
 * times (default 200, after 10 unmeasured). "first iallreduce": on a dup
 * of world that never runs a blocking or persistent collective,
 * MPI_Iallreduce + MPI_Wait of 8 B and 64 KiB (doubles, summed), `calls`
 * times each (default 1000, after 100 unmeasured); a new dup per size.
 * Each pair or call is timed alone; a figure is the median over them on
 * each rank, the largest over the ranks (medians, since on a shared
 * machine a few descheduled iterations would move a mean). The last
 * call's sums are checked. The ranks line up on MPI_COMM_WORLD before each
 * measured loop. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, ranks;

static int Ascending(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The median of t[0..n) in microseconds, the largest over the ranks. */
static double SlowestMedian(double* t, int n) {
  qsort(t, (size_t)n, sizeof *t, Ascending);
  const double local = (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) * 1e6;
  double worst = 0;
  MPI_Reduce(&local, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return worst;
}

static double DupFree(int n) {
  MPI_Comm c;
  for (int i = 0; i < 10; ++i) {
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_free(&c);
  }
  double* t = malloc((size_t)n * sizeof(double));
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) {
    const double t0 = MPI_Wtime();
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_free(&c);
    t[i] = MPI_Wtime() - t0;
  }
  const double us = SlowestMedian(t, n);
  free(t);
  return us;
}

static double FirstIallreduce(int count, int n) {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  double* in = malloc((size_t)count * sizeof(double));
  double* out = malloc((size_t)count * sizeof(double));
  for (int i = 0; i < count; ++i) in[i] = rank + i % 7;
  double* t = malloc((size_t)n * sizeof(double));
  MPI_Request r;
  for (int i = 0; i < n + 100; ++i) {
    if (i == 100) MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (i >= 100) t[i - 100] = MPI_Wtime() - t0;
  }
  for (int i = 0; i < count; ++i) {
    const double want = (double)ranks * (ranks - 1) / 2 + (double)ranks * (i % 7);
    if (out[i] != want) {
      fprintf(stderr, "rank %d: iallreduce of %d doubles: [%d] is %g, want %g\n", rank, count, i,
              out[i], want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  free(in);
  free(out);
  MPI_Comm_free(&c);
  const double us = SlowestMedian(t, n);
  free(t);
  return us;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const int dups = argc > 1 ? atoi(argv[1]) : 200;
  const int calls = argc > 2 ? atoi(argv[2]) : 1000;
  const double dup = DupFree(dups);
  const double small = FirstIallreduce(1, calls);
  const double large = FirstIallreduce(8192, calls);
  if (rank == 0)
    printf("ranks %d  dup+free %.1f us  first iallreduce 8 B %.2f us  64 KiB %.2f us\n", ranks, dup,
           small, large);
  MPI_Finalize();
  return 0;
}
