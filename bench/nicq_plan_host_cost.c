/* What a start and a wait of a resident trigger plan cost the host when the
 * backend does the epoch: a persistent MPI_Neighbor_alltoall on a periodic
 * 2D grid of all ranks (four neighbours each, nicq_algorithm=offload), or
 * with `-c allreduce` a persistent MPI_SUM allreduce of bytes/8 doubles
 * (nicq_algorithm=nic_tree, the NIC plan). Each iteration MPI_Start (or,
 * with `-q`, MPI_Enqueue_start and MPI_Enqueue_wait on a queue, the request
 * matched first), then sleeps of 20 us without MPI calls until
 * NICQX_Request_work_done (NICQX_Queue_waits_completed) reports the epoch
 * done (a read of the plan's done counter, no progress; at most `-n`
 * sleeps, 1,000 by default: where only MPI calls fire ops, a host-driven
 * backend or a host-sequenced queue, give 0), then MPI_Wait
 * (MPI_Queue_fence). Prints, per rank, the mean ns in the start and in the
 * wait, and the iterations whose epoch was done only after more than 100
 * sleeps. The start and the wait are the functions start_epoch and
 * wait_done_epoch, so that `valgrind --tool=callgrind
 * --toggle-collect=start_epoch` counts the instructions of starts alone.
 *   usage: nicq_plan_host_cost [-m bytes] [-i iterations]
 *                              [-c neighbor|allreduce] [-q] [-n max_naps] */
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

__attribute__((noinline)) void start_epoch(MPI_Request* req, MPI_Queue* queue) {
  if (*queue == MPI_QUEUE_NULL) {
    check(MPI_Start(req), "MPI_Start");
    return;
  }
  check(MPI_Enqueue_start(queue, req), "MPI_Enqueue_start");
}

__attribute__((noinline)) void wait_done_epoch(MPI_Request* req, MPI_Queue* queue) {
  if (*queue == MPI_QUEUE_NULL) {
    check(MPI_Wait(req, MPI_STATUS_IGNORE), "MPI_Wait");
    return;
  }
  check(MPI_Queue_fence(queue), "MPI_Queue_fence");
}

static int epoch_done(MPI_Request req, MPI_Queue queue) {
  int done = 0;
  if (queue == MPI_QUEUE_NULL) {
    check(NICQX_Request_work_done(req, &done), "NICQX_Request_work_done");
    return done;
  }
  long long completed = 0, enqueued = 0;
  check(NICQX_Queue_waits_completed(queue, &completed, &enqueued), "NICQX_Queue_waits_completed");
  return completed == enqueued;
}

int main(int argc, char** argv) {
  long bytes = 8, iters = 2000;
  int allreduce = 0, enqueue = 0, max_naps = 1000;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-q") == 0) enqueue = 1;
    if (i + 1 >= argc) continue;
    if (strcmp(argv[i], "-m") == 0) bytes = atol(argv[i + 1]);
    if (strcmp(argv[i], "-i") == 0) iters = atol(argv[i + 1]);
    if (strcmp(argv[i], "-n") == 0) max_naps = atoi(argv[i + 1]);
    if (strcmp(argv[i], "-c") == 0) allreduce = strcmp(argv[i + 1], "allreduce") == 0;
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
  MPI_Info_set(info, "nicq_algorithm", allreduce ? "nic_tree" : "offload");
  MPI_Request req;
  const int doubles = bytes / 8 > 0 ? (int)(bytes / 8) : 1;
  if (allreduce) {
    for (int k = 0; k < doubles; ++k) ((double*)sendbuf)[k] = rank + k;
    check(MPI_Allreduce_init(sendbuf, recvbuf, doubles, MPI_DOUBLE, MPI_SUM, grid, info, &req),
          "MPI_Allreduce_init");
  } else {
    check(MPI_Neighbor_alltoall_init(sendbuf, (int)bytes, MPI_CHAR, recvbuf, (int)bytes, MPI_CHAR,
                                     grid, info, &req),
          "MPI_Neighbor_alltoall_init");
  }
  MPI_Info_free(&info);
  MPI_Queue queue = MPI_QUEUE_NULL;
  if (enqueue) {
    check(MPI_Match(&req), "MPI_Match");
    check(MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL), "MPI_Queue_init");
  }
  double in_start = 0, in_wait = 0;
  long slow = 0;
  const struct timespec nap = {0, 20000};
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < iters; ++i) {
    const double t0 = now_ns();
    start_epoch(&req, &queue);
    const double t1 = now_ns();
    if (enqueue) check(MPI_Enqueue_wait(&queue, &req, MPI_STATUS_IGNORE), "MPI_Enqueue_wait");
    int naps = 0;
    while (!epoch_done(req, queue) && naps < max_naps) nanosleep(&nap, NULL), ++naps;
    slow += naps > 100;
    const double t2 = now_ns();
    wait_done_epoch(&req, &queue);
    const double t3 = now_ns();
    in_start += t1 - t0;
    in_wait += t3 - t2;
  }
  printf(
      "rank %d: %ld iterations of %ld B %s: %s %.0f ns, %s of a done epoch %.0f ns"
      " (%ld epochs took over 100 naps)\n",
      rank, iters, bytes, allreduce ? "allreduce" : "neighbor alltoall",
      enqueue ? "MPI_Enqueue_start" : "MPI_Start", in_start / (double)iters,
      enqueue ? "MPI_Queue_fence" : "MPI_Wait", in_wait / (double)iters, slow);
  if (allreduce) {
    for (int k = 0; k < doubles; ++k) {
      const double want = (double)ranks * k + ranks * (ranks - 1) / 2.0;
      if (((double*)recvbuf)[k] != want) {
        fprintf(stderr, "rank %d: allreduce[%d] = %g, want %g\n", rank, k, ((double*)recvbuf)[k],
                want);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  if (enqueue) MPI_Queue_free(&queue);
  MPI_Request_free(&req);
  MPI_Comm_free(&grid);
  free(sendbuf);
  free(recvbuf);
  MPI_Finalize();
  return 0;
}
