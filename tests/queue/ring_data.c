/* Example 13.1's ring with data checks: the send buffers change every
 * iteration, statuses are checked, and a burst of iterations is enqueued
 * back to back (no fence in between) before the final check. Also mixes
 * the by-pointer and by-value queue spellings. */
#include <string.h>

#include "check.h"

#define N 1024
#define NITER 60
#define BURST 200

static double Value(int src, int iter, int side, int i) {
  return src * 1e6 + iter * 1e3 + side * 500 + i % 500;
}

int main(int argc, char* argv[]) {
  int rank, size;
  static double send_left[N], send_right[N], recv_left[N], recv_right[N];
  MPI_Queue queue;
  MPI_Request reqs[4];
  MPI_Status statuses[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  QT_OK(MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL));
  /* Different tags per direction so that 2 ranks (left == right) still pair
   * each send with the intended receive. */
  QT_OK(MPI_Recv_init(recv_left, N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[0]));
  QT_OK(MPI_Recv_init(recv_right, N, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &reqs[1]));
  QT_OK(MPI_Send_init(send_left, N, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &reqs[2]));
  QT_OK(MPI_Send_init(send_right, N, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[3]));
  int flag = 1;
  QT_OK(MPI_Is_matched(reqs[0], &flag));
  QT_CHECK(!flag, "unmatched request reported as matched");
  QT_OK(MPI_Matchall(4, reqs));
  for (int i = 0; i < 4; ++i) {
    QT_OK(MPI_Is_matched(reqs[i], &flag));
    QT_CHECK(flag, "request %d not matched after MPI_Matchall", i);
  }
  for (int iter = 0; iter < NITER; ++iter) {
    for (int i = 0; i < N; ++i) {
      send_left[i] = Value(rank, iter, 0, i);
      send_right[i] = Value(rank, iter, 1, i);
    }
    memset(statuses, 0xff, sizeof statuses);
    QT_OK(MPI_Enqueue_startall(&queue, 2, &reqs[0]));
    QT_OK(MPI_Enqueue_startall(queue, 2, &reqs[2]));
    QT_OK(MPI_Enqueue_waitall(&queue, 4, reqs, statuses));
    QT_OK(MPI_Queue_fence(iter % 2 ? &queue : &queue));
    for (int i = 0; i < N; ++i) {
      /* recv_left came from the left neighbour's send_right (side 1). */
      QT_CHECK(recv_left[i] == Value(left, iter, 1, i), "iter %d recv_left[%d] = %g, want %g", iter,
               i, recv_left[i], Value(left, iter, 1, i));
      QT_CHECK(recv_right[i] == Value(right, iter, 0, i), "iter %d recv_right[%d] = %g, want %g",
               iter, i, recv_right[i], Value(right, iter, 0, i));
    }
    int count = -1;
    QT_OK(MPI_Get_count(&statuses[0], MPI_DOUBLE, &count));
    QT_CHECK(statuses[0].MPI_SOURCE == left && statuses[0].MPI_TAG == 1 && count == N,
             "status[0]: source %d tag %d count %d", statuses[0].MPI_SOURCE, statuses[0].MPI_TAG,
             count);
    QT_OK(MPI_Get_count(&statuses[1], MPI_DOUBLE, &count));
    QT_CHECK(statuses[1].MPI_SOURCE == right && statuses[1].MPI_TAG == 2 && count == N,
             "status[1]: source %d tag %d count %d", statuses[1].MPI_SOURCE, statuses[1].MPI_TAG,
             count);
  }
  /* A burst enqueued back to back, one fence at the end. Buffers keep one
   * value during the burst (the host may not touch them while enqueued). */
  for (int i = 0; i < N; ++i) {
    send_left[i] = Value(rank, 999, 0, i);
    send_right[i] = Value(rank, 999, 1, i);
    recv_left[i] = recv_right[i] = -1;
  }
  for (int iter = 0; iter < BURST; ++iter) {
    QT_OK(MPI_Enqueue_startall(queue, 2, &reqs[0]));
    QT_OK(MPI_Enqueue_startall(queue, 2, &reqs[2]));
    QT_OK(MPI_Enqueue_waitall(queue, 4, reqs, MPI_STATUSES_IGNORE));
  }
  QT_OK(MPI_Queue_fence(queue));
  for (int i = 0; i < N; ++i)
    QT_CHECK(recv_left[i] == Value(left, 999, 1, i) && recv_right[i] == Value(right, 999, 0, i),
             "burst: wrong data at %d", i);
  for (int i = 0; i < 4; i++) QT_OK(MPI_Request_free(&reqs[i]));
  QT_OK(MPI_Queue_free(&queue));
  QT_CHECK(queue == MPI_QUEUE_NULL, "MPI_Queue_free did not set MPI_QUEUE_NULL");
  MPI_Finalize();
  if (rank == 0)
    printf("ring_data: %d checked iterations + %d burst on %d ranks\n", NITER, BURST, size);
  return 0;
}
