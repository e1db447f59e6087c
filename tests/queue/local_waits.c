/* Enqueue calls are local (13.3): however many waits are outstanding, an
 * enqueued wait does not wait for earlier ones to complete. Rank 0 enqueues
 * the starts of K receives and then K separate MPI_Enqueue_wait calls
 * before it sends rank 1, with plain MPI_Send, the token rank 1 waits for
 * before it starts the matching sends. An implementation whose enqueued
 * waits block for room once some fixed number are outstanding deadlocks
 * here (the wait it blocks in needs rank 1's send, which needs the token).
 * Data and every status are checked after the fence. Ranks >= 2 idle. */
#include <string.h>

#include "check.h"

#define K 100
#define N 16

int main(int argc, char* argv[]) {
  int rank;
  static int buf[K][N];
  MPI_Comm pair = qt_init_pair(&argc, &argv, &rank);
  MPI_Request req[K];
  for (int i = 0; i < K; ++i) {
    if (rank == 0) {
      memset(buf[i], 0xff, sizeof buf[i]);
      QT_OK(MPI_Recv_init(buf[i], N, MPI_INT, 1, i, pair, &req[i]));
    } else {
      QT_OK(MPI_Send_init(buf[i], N, MPI_INT, 0, i, pair, &req[i]));
    }
  }
  QT_OK(MPI_Matchall(K, req));
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  MPI_Status st[K];
  int token = 7;
  if (rank == 0) {
    for (int i = 0; i < K; ++i) QT_OK(MPI_Enqueue_start(&q, &req[i]));
    for (int i = 0; i < K; ++i) QT_OK(MPI_Enqueue_wait(&q, &req[i], &st[i]));
    QT_OK(MPI_Send(&token, 1, MPI_INT, 1, 1000, pair));
  } else {
    QT_OK(MPI_Recv(&token, 1, MPI_INT, 0, 1000, pair, MPI_STATUS_IGNORE));
    QT_CHECK(token == 7, "token %d", token);
    for (int i = 0; i < K; ++i)
      for (int j = 0; j < N; ++j) buf[i][j] = i * 1000 + j;
    for (int i = 0; i < K; ++i) QT_OK(MPI_Enqueue_start(&q, &req[i]));
    for (int i = 0; i < K; ++i) QT_OK(MPI_Enqueue_wait(&q, &req[i], &st[i]));
  }
  QT_OK(MPI_Queue_fence(&q));
  if (rank == 0) {
    for (int i = 0; i < K; ++i) {
      for (int j = 0; j < N; ++j)
        QT_CHECK(buf[i][j] == i * 1000 + j, "message %d: [%d] = %d", i, j, buf[i][j]);
      int count = -1;
      QT_OK(MPI_Get_count(&st[i], MPI_INT, &count));
      QT_CHECK(st[i].MPI_SOURCE == 1 && st[i].MPI_TAG == i && count == N,
               "status %d: source %d tag %d count %d", i, st[i].MPI_SOURCE, st[i].MPI_TAG, count);
    }
  }
  QT_OK(MPI_Queue_free(&q));
  for (int i = 0; i < K; ++i) QT_OK(MPI_Request_free(&req[i]));
  QT_OK(MPI_Comm_free(&pair));
  MPI_Finalize();
  return 0;
}
