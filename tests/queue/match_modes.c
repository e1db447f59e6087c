/* 13.2 matching beyond Example 13.1, on rank pairs (0,1), (2,3), ...:
 * MPI_Imatchall completed by polling MPI_Is_matched and then MPI_Wait;
 * MPI_ANY_SOURCE / MPI_ANY_TAG receives resolved at match time (status
 * reports the real sender and tag); synchronous, ready and buffered sends;
 * a zero-byte message; MPI_PROC_NULL; data checked for several epochs. */
#include <string.h>

#include "check.h"

#define N 100

int main(int argc, char* argv[]) {
  int rank, size;
  static double a[N], b[N], ra[N], rb[N];
  static char zs[1], zr[1];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  int peer = rank ^ 1;
  if (peer >= size) peer = MPI_PROC_NULL;
  const int sender = rank % 2 == 0;
  MPI_Request req[5];
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  if (peer == MPI_PROC_NULL) {
    QT_OK(MPI_Ssend_init(a, N, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &req[0]));
    QT_OK(MPI_Recv_init(ra, N, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &req[1]));
  } else if (sender) {
    QT_OK(MPI_Ssend_init(a, N, MPI_DOUBLE, peer, 11, MPI_COMM_WORLD, &req[0]));
    QT_OK(MPI_Rsend_init(b, N, MPI_DOUBLE, peer, 12, MPI_COMM_WORLD, &req[1]));
    QT_OK(MPI_Bsend_init(zs, 0, MPI_CHAR, peer, 13, MPI_COMM_WORLD, &req[2]));
  } else {
    QT_OK(MPI_Recv_init(ra, N, MPI_DOUBLE, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &req[0]));
    QT_OK(MPI_Recv_init(rb, N, MPI_DOUBLE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &req[1]));
    QT_OK(MPI_Recv_init(zr, 1, MPI_CHAR, peer, 13, MPI_COMM_WORLD, &req[2]));
  }
  int n = peer == MPI_PROC_NULL ? 2 : 3;
  MPI_Request m;
  QT_OK(MPI_Imatchall(n, req, &m));
  for (int all = 0; !all;) {
    all = 1;
    for (int i = 0; i < n; ++i) {
      int f = 0;
      QT_OK(MPI_Is_matched(req[i], &f));
      all &= f;
    }
  }
  QT_OK(MPI_Wait(&m, MPI_STATUS_IGNORE));
  QT_CHECK(m == MPI_REQUEST_NULL, "match request not freed by MPI_Wait");
  for (int it = 0; it < 5; ++it) {
    for (int i = 0; i < N; ++i) {
      a[i] = it * 1000 + i;
      b[i] = -(it * 1000 + i);
    }
    MPI_Status st[3];
    memset(st, 0, sizeof st);
    /* Ready mode: the receive's start is ordered before the send's by the
     * protocol itself (the put waits for the ready token). */
    QT_OK(MPI_Enqueue_startall(q, n, req));
    QT_OK(MPI_Enqueue_waitall(q, n, req, st));
    QT_OK(MPI_Queue_fence(q));
    if (peer == MPI_PROC_NULL) {
      QT_CHECK(st[1].MPI_SOURCE == MPI_PROC_NULL && st[1].MPI_TAG == MPI_ANY_TAG,
               "PROC_NULL status: source %d tag %d", st[1].MPI_SOURCE, st[1].MPI_TAG);
    } else if (!sender) {
      int count = -1;
      for (int i = 0; i < N; ++i)
        QT_CHECK(ra[i] == it * 1000 + i && rb[i] == -(it * 1000 + i), "it %d data at %d", it, i);
      QT_OK(MPI_Get_count(&st[0], MPI_DOUBLE, &count));
      QT_CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 11 && count == N,
               "ANY_SOURCE status: source %d tag %d count %d", st[0].MPI_SOURCE, st[0].MPI_TAG, count);
      QT_CHECK(st[1].MPI_SOURCE == peer && st[1].MPI_TAG == 12, "ANY_TAG status: source %d tag %d",
               st[1].MPI_SOURCE, st[1].MPI_TAG);
      QT_OK(MPI_Get_count(&st[2], MPI_CHAR, &count));
      QT_CHECK(count == 0, "zero-byte receive count %d", count);
    }
  }
  for (int i = 0; i < n; ++i) QT_OK(MPI_Request_free(&req[i]));
  QT_OK(MPI_Queue_free(&q));
  MPI_Finalize();
  if (rank == 0) printf("match_modes: ok on %d ranks\n", size);
  return 0;
}
