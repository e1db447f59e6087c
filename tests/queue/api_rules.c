/* Rules of the enqueue calls beyond the erroneous uses (errors.c):
 *  1. MPI_Enqueue_startall / MPI_Enqueue_waitall take any count: 150
 *     requests per call (the draft sets no limit), data and statuses
 *     checked;
 *  2. statuses of enqueued waits have MPI_Wait's content (13.3.2): source,
 *     tag and count set, MPI_ERROR left as the program put it;
 *  3. an erroneous enqueue call raises the error on the handler of the
 *     request's communicator (as MPI_Start does), after the call has left
 *     the queue: the handler itself may use the queue.
 * Ranks pair up (0-1, 2-3, ...); an odd last rank talks to MPI_PROC_NULL. */
#include <string.h>

#include "check.h"

#define K 150
#define N 8

static MPI_Queue* handler_queue;
static int handler_calls, handler_class, handler_fence_rc;

static void on_error(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
  /* The queue is free again: a fence from the handler succeeds. */
  handler_fence_rc = MPI_Queue_fence(handler_queue);
}

int main(int argc, char* argv[]) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int peer = rank ^ 1;
  if (peer >= size) peer = MPI_PROC_NULL;
  const int want = peer == MPI_PROC_NULL ? MPI_PROC_NULL : peer;

  /* 1 + 2: K sends and K receives, each enqueued in one call. */
  static double sbuf[K][N], rbuf[K][N];
  MPI_Request sreq[K], rreq[K];
  for (int i = 0; i < K; ++i) {
    for (int j = 0; j < N; ++j) {
      sbuf[i][j] = rank * 1e6 + i * 100 + j;
      rbuf[i][j] = -1;
    }
    QT_OK(MPI_Send_init(sbuf[i], N, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, &sreq[i]));
    QT_OK(MPI_Recv_init(rbuf[i], N, MPI_DOUBLE, peer, i, MPI_COMM_WORLD, &rreq[i]));
  }
  MPI_Request all[2 * K];
  for (int i = 0; i < K; ++i) {
    all[i] = rreq[i];
    all[K + i] = sreq[i];
  }
  QT_OK(MPI_Matchall(2 * K, all));
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  static MPI_Status st[K];
  for (int i = 0; i < K; ++i) st[i].MPI_ERROR = 4242;
  MPI_Status one;
  one.MPI_ERROR = 4343;
  QT_OK(MPI_Enqueue_startall(&q, K, rreq));
  QT_OK(MPI_Enqueue_startall(&q, K, sreq));
  QT_OK(MPI_Enqueue_waitall(&q, K - 1, rreq, st));
  QT_OK(MPI_Enqueue_wait(&q, &rreq[K - 1], &one));
  QT_OK(MPI_Enqueue_waitall(&q, K, sreq, MPI_STATUSES_IGNORE));
  QT_OK(MPI_Queue_fence(&q));
  for (int i = 0; i < K; ++i) {
    const MPI_Status* s = i < K - 1 ? &st[i] : &one;
    const int err = i < K - 1 ? 4242 : 4343;
    QT_CHECK(s->MPI_SOURCE == want, "status[%d].MPI_SOURCE %d, expected %d", i, s->MPI_SOURCE,
             want);
    QT_CHECK(s->MPI_ERROR == err, "status[%d].MPI_ERROR %d changed (expected %d)", i, s->MPI_ERROR,
             err);
    if (peer == MPI_PROC_NULL) continue;
    int count = -1;
    QT_OK(MPI_Get_count(s, MPI_DOUBLE, &count));
    QT_CHECK(s->MPI_TAG == i && count == N, "status[%d]: tag %d count %d", i, s->MPI_TAG, count);
    for (int j = 0; j < N; ++j)
      QT_CHECK(rbuf[i][j] == peer * 1e6 + i * 100 + j, "rbuf[%d][%d] = %g", i, j, rbuf[i][j]);
  }
  /* A request repeated past the first 64 elements is still caught, and
   * nothing of the call is enqueued. */
  MPI_Request rep[K];
  memcpy(rep, rreq, sizeof rep);
  rep[K - 1] = rreq[3];
  QT_ERR(MPI_ERR_REQUEST, MPI_Enqueue_startall(&q, K, rep));
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_wait(&q, &rreq[0], MPI_STATUS_IGNORE));

  /* 3: the handler of the request's communicator, entered with the queue
   * free. */
  MPI_Comm dup;
  QT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_Errhandler eh;
  QT_OK(MPI_Comm_create_errhandler(on_error, &eh));
  QT_OK(MPI_Comm_set_errhandler(dup, eh));
  MPI_Request dreq;
  double dbuf = 0;
  QT_OK(MPI_Send_init(&dbuf, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, dup, &dreq));
  QT_OK(MPI_Match(&dreq));
  handler_queue = &q;
  /* A wait with no start pending: MPI_ERR_QUEUE, raised on dup. */
  const int rc = MPI_Enqueue_wait(&q, &dreq, MPI_STATUS_IGNORE);
  QT_CHECK(rc != MPI_SUCCESS, "MPI_Enqueue_wait without a start succeeded");
  QT_CHECK(handler_calls == 1, "dup's handler ran %d times", handler_calls);
  QT_CHECK(handler_class == MPI_ERR_QUEUE, "handler saw class %d", handler_class);
  QT_CHECK(handler_fence_rc == MPI_SUCCESS, "MPI_Queue_fence in the handler returned %d",
           handler_fence_rc);
  /* The queue still works afterwards. */
  QT_OK(MPI_Enqueue_start(&q, &dreq));
  QT_OK(MPI_Enqueue_wait(&q, &dreq, MPI_STATUS_IGNORE));
  QT_OK(MPI_Queue_fence(&q));

  QT_OK(MPI_Request_free(&dreq));
  QT_OK(MPI_Errhandler_free(&eh));
  QT_OK(MPI_Comm_free(&dup));
  for (int i = 0; i < K; ++i) {
    QT_OK(MPI_Request_free(&sreq[i]));
    QT_OK(MPI_Request_free(&rreq[i]));
  }
  QT_OK(MPI_Queue_free(&q));
  MPI_Finalize();
  return 0;
}
