/* An enqueued waitall of the largest size (64 requests: 32 matched
 * receives from the left neighbour and 32 sends to the right one). Every
 * epoch refills the send buffers, resets the receive
 * buffers, and checks all 32 messages after the fence, with their
 * statuses. */
#include "check.h"

#define K 32
#define N 8

int main(int argc, char* argv[]) {
  int rank, size;
  static double sbuf[K][N], rbuf[K][N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  MPI_Queue q;
  MPI_Request reqs[2 * K];
  MPI_Status st[2 * K];
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  for (int k = 0; k < K; ++k) {
    QT_OK(MPI_Recv_init(rbuf[k], N, MPI_DOUBLE, left, k, MPI_COMM_WORLD, &reqs[k]));
    QT_OK(MPI_Send_init(sbuf[k], N, MPI_DOUBLE, right, k, MPI_COMM_WORLD, &reqs[K + k]));
  }
  QT_OK(MPI_Matchall(2 * K, reqs));
  for (int epoch = 0; epoch < 5; ++epoch) {
    for (int k = 0; k < K; ++k)
      for (int i = 0; i < N; ++i) {
        sbuf[k][i] = 1000.0 * epoch + 100.0 * rank + k + i * 1e-3;
        rbuf[k][i] = -1;
      }
    QT_OK(MPI_Enqueue_startall(q, 2 * K, reqs));
    QT_OK(MPI_Enqueue_waitall(q, 2 * K, reqs, st));
    QT_OK(MPI_Queue_fence(q));
    for (int k = 0; k < K; ++k) {
      for (int i = 0; i < N; ++i)
        QT_CHECK(rbuf[k][i] == 1000.0 * epoch + 100.0 * left + k + i * 1e-3,
                 "epoch %d: message %d element %d = %g", epoch, k, i, rbuf[k][i]);
      QT_CHECK(st[k].MPI_SOURCE == left && st[k].MPI_TAG == k,
               "epoch %d: status %d names source %d tag %d", epoch, k, st[k].MPI_SOURCE,
               st[k].MPI_TAG);
    }
  }
  for (int k = 0; k < 2 * K; ++k) QT_OK(MPI_Request_free(&reqs[k]));
  QT_OK(MPI_Queue_free(&q));
  if (rank == 0) printf("big waitall: 5 epochs of 64 requests checked\n");
  MPI_Finalize();
  return 0;
}
