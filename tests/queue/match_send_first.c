/* 13.2 matching with the send listed first: every rank sends to its right
 * neighbour and receives from its left one with the same tag, and matches
 * {send, recv} in one MPI_Matchall. On 2 ranks both requests have the same
 * peer and tag, so the peer's offer and the reply to our own offer travel
 * between the same pair with the same tag (they must not be confused).
 * Data checked over several epochs, started plainly and through a queue. */
#include <string.h>

#include "check.h"

#define N 64

int main(int argc, char* argv[]) {
  int rank, size;
  static int out[N], in[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Request req[2];
  QT_OK(MPI_Send_init(out, N, MPI_INT, right, 5, MPI_COMM_WORLD, &req[0]));
  QT_OK(MPI_Recv_init(in, N, MPI_INT, left, 5, MPI_COMM_WORLD, &req[1]));
  QT_OK(MPI_Matchall(2, req));
  for (int i = 0; i < 2; ++i) {
    int f = 0;
    QT_OK(MPI_Is_matched(req[i], &f));
    QT_CHECK(f, "request %d not matched after MPI_Matchall", i);
  }
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  for (int it = 0; it < 6; ++it) {
    for (int i = 0; i < N; ++i) out[i] = rank * 100000 + it * 1000 + i;
    memset(in, 0xff, sizeof in);
    MPI_Status st[2];
    if (it % 2 == 0) {
      QT_OK(MPI_Startall(2, req));
      QT_OK(MPI_Waitall(2, req, st));
    } else {
      QT_OK(MPI_Enqueue_startall(q, 2, req));
      QT_OK(MPI_Enqueue_waitall(q, 2, req, st));
      QT_OK(MPI_Queue_fence(q));
    }
    for (int i = 0; i < N; ++i)
      QT_CHECK(in[i] == left * 100000 + it * 1000 + i, "epoch %d: in[%d] = %d, expected %d", it, i,
               in[i], left * 100000 + it * 1000 + i);
    QT_CHECK(st[1].MPI_SOURCE == left && st[1].MPI_TAG == 5,
             "epoch %d: receive status source %d tag %d", it, st[1].MPI_SOURCE, st[1].MPI_TAG);
  }
  QT_OK(MPI_Queue_free(&q));
  QT_OK(MPI_Request_free(&req[0]));
  QT_OK(MPI_Request_free(&req[1]));
  MPI_Finalize();
  return 0;
}
