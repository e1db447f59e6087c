/* Every erroneous use of chapter 13 that nicq detects returns an MPI error
 * of the documented class (docs/queue-semantics.md) and changes nothing:
 * after each failed call the queue and requests still work, which the
 * final exchange checks with data. */
#include <string.h>

#include "check.h"

#define N 64

int main(int argc, char* argv[]) {
  int rank, size;
  double sbuf[N], rbuf[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int peer = rank ^ 1; /* pairs; an odd last rank talks to MPI_PROC_NULL */
  if (peer >= size) peer = MPI_PROC_NULL;

  MPI_Queue q1, q2;
  QT_OK(MPI_Queue_init(&q1, MPI_QUEUE_TYPE_DEFAULT, NULL));
  QT_OK(MPI_Queue_init(&q2, MPI_QUEUE_TYPE_DEFAULT, NULL));
  QT_ERR(MPI_ERR_ARG, MPI_Queue_init(&q1 + 0, 12345, NULL)); /* unknown queue type */

  MPI_Request s, r, unmatched, nonpers, pn;
  QT_OK(MPI_Send_init(sbuf, N, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &s));
  QT_OK(MPI_Recv_init(rbuf, N, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r));
  QT_OK(MPI_Send_init(sbuf, N, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD, &unmatched));
  QT_OK(MPI_Send_init(sbuf, 1, MPI_DOUBLE, MPI_PROC_NULL, 9, MPI_COMM_WORLD, &pn));

  /* Enqueueing an unmatched persistent request. */
  QT_ERR(MPI_ERR_MATCH, MPI_Enqueue_start(&q1, &unmatched));
  /* Enqueueing a nonpersistent request. */
  QT_OK(MPI_Irecv(rbuf, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &nonpers));
  QT_ERR(MPI_ERR_REQUEST, MPI_Enqueue_start(&q1, &nonpers));
  QT_ERR(MPI_ERR_REQUEST, MPI_Match(&nonpers));
  QT_OK(MPI_Wait(&nonpers, MPI_STATUS_IGNORE));

  QT_OK(MPI_Match(&pn));
  /* Blocking matches of a receive and then a send would deadlock like
   * MPI_Recv before MPI_Send: match both at once. */
  MPI_Request rs[2] = {r, s};
  QT_OK(MPI_Matchall(2, rs));
  /* Matching a matched request. */
  QT_ERR(MPI_ERR_MATCH, MPI_Match(&s));
  MPI_Request both[2] = {r, s};
  QT_ERR(MPI_ERR_MATCH, MPI_Matchall(2, both));
  MPI_Request mr;
  QT_ERR(MPI_ERR_MATCH, MPI_Imatch(&r, &mr));

  /* Startall with one bad request enqueues none: a wait for the good one
   * then finds no pending start. */
  MPI_Request mix[2] = {pn, unmatched};
  QT_ERR(MPI_ERR_MATCH, MPI_Enqueue_startall(&q1, 2, mix));
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_wait(&q1, &pn, MPI_STATUS_IGNORE));
  /* Waiting on a request not started there. */
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_wait(&q2, &r, MPI_STATUS_IGNORE));
  /* Waitall with one bad element enqueues no wait. */
  QT_OK(MPI_Enqueue_start(&q1, &pn));
  MPI_Request wmix[2] = {pn, r};
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_waitall(&q1, 2, wmix, MPI_STATUSES_IGNORE));
  /* Starting it again before its wait is enqueued. */
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_start(&q1, &pn));
  /* Waiting on a queue other than the start's. */
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_wait(&q2, &pn, MPI_STATUS_IGNORE));
  /* Freeing a non-empty queue (a start without its wait is outstanding). */
  QT_ERR(MPI_ERR_QUEUE, MPI_Queue_free(&q1));
  QT_CHECK(q1 != MPI_QUEUE_NULL, "failed MPI_Queue_free changed the handle");
  MPI_Status st;
  memset(&st, 0, sizeof st);
  QT_OK(MPI_Enqueue_wait(&q1, &pn, &st));
  QT_OK(MPI_Queue_fence(&q1));
  QT_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
           "MPI_PROC_NULL status: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
  /* Invalid queue handles. */
  MPI_Queue bad = MPI_QUEUE_NULL;
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_start(&bad, &pn));
  QT_ERR(MPI_ERR_QUEUE, MPI_Queue_fence(bad));

  /* Nothing was changed by the failures: a real exchange still works. */
  for (int it = 0; it < 5; ++it) {
    for (int i = 0; i < N; ++i) sbuf[i] = rank * 100 + it + i * 0.5;
    memset(rbuf, 0, sizeof rbuf);
    QT_OK(MPI_Enqueue_start(&q2, &r));
    QT_OK(MPI_Enqueue_start(&q2, &s));
    MPI_Request w[2] = {r, s};
    QT_OK(MPI_Enqueue_waitall(&q2, 2, w, MPI_STATUSES_IGNORE));
    QT_OK(MPI_Queue_fence(&q2));
    if (peer != MPI_PROC_NULL)
      for (int i = 0; i < N; ++i)
        QT_CHECK(rbuf[i] == peer * 100 + it + i * 0.5, "iteration %d: rbuf[%d] = %g", it, i,
                 rbuf[i]);
  }
  QT_OK(MPI_Request_free(&s));
  QT_OK(MPI_Request_free(&r));
  QT_OK(MPI_Request_free(&pn));
  QT_OK(MPI_Request_free(&unmatched));
  QT_OK(MPI_Queue_free(&q1));
  QT_OK(MPI_Queue_free(&q2));
  MPI_Finalize();
  if (rank == 0) printf("errors: all erroneous uses detected\n");
  return 0;
}
