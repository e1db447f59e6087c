/* A ring of partitioned requests, started two ways: MPI_Startall + MPI_Waitall
 * against MPI_Enqueue_startall + MPI_Enqueue_waitall + MPI_Queue_fence.
 * Rank r receives from r-1 and sends to r+1, 8 partitions of one double.
 * Prints microseconds per iteration of each form on rank 0; for instruction
 * counts, give callgrind --toggle-collect=form_startall or form_queued
 * (docs/performance.md, Run 62).
 *
 *   nicq_partitioned_queued [iterations]     (default 1000)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { kPartitions = 8, kPerPartition = 1 };

static double out[kPartitions * kPerPartition], in[kPartitions * kPerPartition];
static MPI_Request reqs[2]; /* receive, send */
static MPI_Queue queue;

__attribute__((noinline)) void form_startall(int iters) {
  for (int i = 0; i < iters; ++i) {
    MPI_Startall(2, reqs);
    MPI_Pready_range(0, kPartitions - 1, reqs[1]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  }
}

__attribute__((noinline)) void form_queued(int iters) {
  for (int i = 0; i < iters; ++i) {
    MPI_Enqueue_startall(&queue, 2, reqs);
    MPI_Pready_range(0, kPartitions - 1, reqs[1]);
    MPI_Enqueue_waitall(&queue, 2, reqs, MPI_STATUSES_IGNORE);
    MPI_Queue_fence(&queue);
  }
}

int main(int argc, char** argv) {
  int rank, size;
  const int iters = argc > 1 ? atoi(argv[1]) : 1000;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Precv_init(in, kPartitions, kPerPartition, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, MPI_INFO_NULL,
                 &reqs[0]);
  MPI_Psend_init(out, kPartitions, kPerPartition, MPI_DOUBLE, right, 3, MPI_COMM_WORLD,
                 MPI_INFO_NULL, &reqs[1]);
  MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL);
  form_startall(10); /* warm-up */
  form_queued(10);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  form_startall(iters);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t1 = MPI_Wtime();
  form_queued(iters);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t2 = MPI_Wtime();
  if (rank == 0)
    printf("partitioned ring %d ranks: startall %.2f us, queued %.2f us per iteration\n", size,
           (t1 - t0) / iters * 1e6, (t2 - t1) / iters * 1e6);
  MPI_Queue_free(&queue);
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
  MPI_Finalize();
  return 0;
}
