/* An enqueued chain whose operation fails reports the failing operation's
 * class, not MPI_ERR_OTHER (docs/queue-semantics.md, "Failed operations"):
 * rank 1 exits (without MPI_Finalize, as a crashed process would; an exit,
 * not a signal, so that nicqrun leaves rank 0 running to report) while
 * rank 0's enqueued synchronous send to it and the send's wait are pending. Rank 0's
 * MPI_Queue_fence must return MPI_ERR_PROC_FAILED with a message naming the fence and rank 1, the
 * wait's status must carry the class in MPI_ERROR, and afterwards the
 * request and the queue must free, and a new queue work on rank 0 alone.
 *
 * argv[1] = "recv": rank 0's enqueued operation is a receive from rank 1
 * instead (a receive from a dead peer sees no transport error: only the
 * liveness check finds the peer gone).
 *
 * argv[2] = "host" (NICQ_QUEUE_EXEC=host): only the fence's class and
 * message are checked; a host-sequenced queue keeps its failed step at the
 * head and reports it on every call (docs/queue-semantics.md). */
#include <string.h>
#include <unistd.h>

#include "check.h"

#define N 512
#define GOOD_EPOCHS 3

int main(int argc, char* argv[]) {
  int rank, size;
  static double a[N], ra[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  if (size != 2) QT_FAIL("needs 2 ranks");
  const int recv_side = argc > 1 && strcmp(argv[1], "recv") == 0;
  const int host = argc > 2 && strcmp(argv[2], "host") == 0;
  MPI_Queue q;
  MPI_Request r = MPI_REQUEST_NULL;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  const int sender = recv_side ? 1 : 0;
  if (rank == sender)
    QT_OK(MPI_Ssend_init(a, N, MPI_DOUBLE, 1 - rank, 11, MPI_COMM_WORLD, &r));
  else
    QT_OK(MPI_Recv_init(ra, N, MPI_DOUBLE, 1 - rank, 11, MPI_COMM_WORLD, &r));
  QT_OK(MPI_Match(&r));
  for (int it = 0; it < GOOD_EPOCHS; ++it) {
    for (int i = 0; i < N; ++i) a[i] = it * 1000 + i, ra[i] = -1;
    MPI_Status st;
    st.MPI_ERROR = -7;
    QT_OK(MPI_Enqueue_start(&q, &r));
    QT_OK(MPI_Enqueue_wait(&q, &r, &st));
    QT_OK(MPI_Queue_fence(&q));
    QT_CHECK(st.MPI_ERROR == -7, "epoch %d: a good wait's MPI_ERROR became %d", it, st.MPI_ERROR);
    for (int i = 0; i < N && rank != sender; ++i)
      QT_CHECK(ra[i] == it * 1000 + i, "epoch %d: ra[%d] = %g", it, i, ra[i]);
  }
  QT_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 1) _exit(0);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  sleep(1); /* rank 1 is gone before rank 0's epoch starts */
  MPI_Status st;
  st.MPI_ERROR = -7;
  int rc = MPI_Enqueue_start(&q, &r), cls = -1;
  if (rc == MPI_SUCCESS) rc = MPI_Enqueue_wait(&q, &r, &st);
  if (rc == MPI_SUCCESS) rc = MPI_Queue_fence(&q);
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  QT_CHECK(rc != MPI_SUCCESS, "the epoch with a killed rank completed");
  MPI_Error_class(rc, &cls);
  QT_CHECK(cls == MPI_ERR_PROC_FAILED, "fence with a killed rank: class %d (%s)", cls, msg);
  QT_CHECK(strstr(msg, "MPI_Queue_fence") != NULL && strstr(msg, "rank 1") != NULL,
           "the fence's message names neither the call nor rank 1: %s", msg);
  if (host) {
    QT_ERR(MPI_ERR_PROC_FAILED, MPI_Queue_fence(&q)); /* reported again */
    printf("CHAIN-ERRORS-OK: %s\n", msg);
    fflush(stdout);
    _exit(0);
  }
  QT_CHECK(st.MPI_ERROR == MPI_ERR_PROC_FAILED, "the failed wait's MPI_ERROR is %d, expected %d",
           st.MPI_ERROR, MPI_ERR_PROC_FAILED);
  /* The failed wait completed: the request is inactive and frees, the
   * fenced queue is empty and frees. */
  QT_OK(MPI_Request_free(&r));
  QT_CHECK(r == MPI_REQUEST_NULL, "request not freed");
  QT_OK(MPI_Queue_free(&q));
  printf("CHAIN-ERRORS-OK: %s\n", msg);
  fflush(stdout);
  _exit(0);
}
