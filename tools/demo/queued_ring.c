/* The queued ring of the draft Queued Communication chapter (Example 13.1),
 * with its data checked: each rank exchanges N doubles with both neighbours
 * through persistent requests matched once (MPI_Matchall), then enqueues
 * starts and waits for NITER iterations on a queue and fences it. Between
 * rounds the send buffers change, so stale data would be caught.
 *
 * usage: nicqrun -n 4 nicq_queued_ring [rounds] [iterations]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1024

static double value(int from, int to, int round, int i) {
  return from * 1e6 + to * 1e4 + round * 100 + i % 97;
}

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  int niter = argc > 2 ? atoi(argv[2]) : 100;
  int rank, size;
  static double send_left[N], send_right[N], recv_left[N], recv_right[N];
  MPI_Queue queue;
  MPI_Request reqs[4];
  MPI_Status statuses[4];

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;

  MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL);
  /* Tags tell the two messages apart when left == right (2 ranks). */
  MPI_Recv_init(recv_left, N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[0]);
  MPI_Recv_init(recv_right, N, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &reqs[1]);
  MPI_Send_init(send_left, N, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &reqs[2]);
  MPI_Send_init(send_right, N, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[3]);
  MPI_Matchall(4, reqs);

  int errors = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < N; ++i) {
      send_left[i] = value(rank, left, round, i);
      send_right[i] = value(rank, right, round, i);
    }
    for (int iter = 0; iter < niter; ++iter) {
      MPI_Enqueue_startall(queue, 2, &reqs[0]);
      MPI_Enqueue_startall(queue, 2, &reqs[2]);
      MPI_Enqueue_waitall(queue, 4, reqs, statuses);
    }
    MPI_Queue_fence(queue);
    for (int i = 0; i < N; ++i) {
      if (recv_left[i] != value(left, rank, round, i) ||
          recv_right[i] != value(right, rank, round, i)) {
        if (errors++ < 5)
          fprintf(stderr, "queued ring: rank %d round %d: element %d wrong\n", rank, round, i);
      }
    }
  }
  for (int i = 0; i < 4; ++i) MPI_Request_free(&reqs[i]);
  MPI_Queue_free(&queue);
  if (errors) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    printf("queued ring OK: %d ranks, %d rounds of %d enqueued iterations\n", size, rounds, niter);
  MPI_Finalize();
  return 0;
}
