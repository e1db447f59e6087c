/* What a start and a wait of a resident trigger plan cost the host when the
 * backend does the epoch: a persistent MPI_Neighbor_alltoall on a periodic
 * 2D grid of all ranks (four neighbours each, nicq_algorithm=offload), and
 * each iteration MPI_Start, then sleeps of 20 us without MPI calls until
 * NICQX_Request_work_done reports the epoch done (a read of the plan's
 * done counter, no progress), then MPI_Wait. Prints, per rank, the mean ns
 * in MPI_Start and in MPI_Wait, and the iterations whose epoch was done
 * only after more than 100 sleeps. The start and the wait are the
 * functions start_epoch and wait_done_epoch, so that
 * `valgrind --tool=callgrind --toggle-collect=wait_done_epoch` counts the
 * instructions of waits of finished epochs alone.
 *   usage: nicq_plan_host_cost [-m bytes] [-i iterations] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NEIGHBORS 4

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  fprintf(stderr, "%s failed (%d)\n", what, rc);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

__attribute__((noinline)) void start_epoch(MPI_Request* req) {
  check(MPI_Start(req), "MPI_Start");
}

__attribute__((noinline)) void wait_done_epoch(MPI_Request* req) {
  check(MPI_Wait(req, MPI_STATUS_IGNORE), "MPI_Wait");
}

int main(int argc, char** argv) {
  long bytes = 8, iters = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-m") == 0) bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "-i") == 0) iters = atol(argv[i + 1]);
  }
  MPI_Init(&argc, &argv);
  int ranks = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int dims[2] = {0, 0};
  const int periods[2] = {1, 1};
  MPI_Comm grid;
  check(MPI_Dims_create(ranks, 2, dims), "MPI_Dims_create");
  check(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid), "MPI_Cart_create");
  MPI_Comm_rank(grid, &rank);
  char* sendbuf = malloc((size_t)(NEIGHBORS * bytes));
  char* recvbuf = malloc((size_t)(NEIGHBORS * bytes));
  memset(sendbuf, rank + 1, (size_t)(NEIGHBORS * bytes));
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "nicq_algorithm", "offload");
  MPI_Request req;
  check(MPI_Neighbor_alltoall_init(sendbuf, (int)bytes, MPI_CHAR, recvbuf, (int)bytes, MPI_CHAR,
                                   grid, info, &req),
        "MPI_Neighbor_alltoall_init");
  MPI_Info_free(&info);
  double in_start = 0, in_wait = 0;
  long slow = 0;
  const struct timespec nap = {0, 20000};
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < iters; ++i) {
    const double t0 = now_ns();
    start_epoch(&req);
    const double t1 = now_ns();
    int done = 0, naps = 0;
    while (!done) {
      check(NICQX_Request_work_done(req, &done), "NICQX_Request_work_done");
      if (!done) nanosleep(&nap, NULL), ++naps;
    }
    slow += naps > 100;
    const double t2 = now_ns();
    wait_done_epoch(&req);
    const double t3 = now_ns();
    in_start += t1 - t0;
    in_wait += t3 - t2;
  }
  printf(
      "rank %d: %ld iterations of %ld B: MPI_Start %.0f ns, MPI_Wait of a done epoch %.0f ns"
      " (%ld epochs took over 100 naps)\n",
      rank, iters, bytes, in_start / (double)iters, in_wait / (double)iters, slow);
  MPI_Request_free(&req);
  MPI_Comm_free(&grid);
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return 0;
}
