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
 * Counter chains: the failed epoch has company that the failure must
 * detach too. A second matched request r2 has a start enqueued without its
 * wait (before the failing one, so its epoch is posted), and the failing
 * request is enqueued DEFERRED start/wait pairs in all, more than the
 * QueueSlot::kRing epochs a request may run ahead of its completions: the
 * later pairs are deferred steps. After the fence fails, every wait's status
 * is written (the first: the failure's class; the others MPI_ERR_PENDING),
 * both requests free, the queue frees, and nothing is left attached.
 *
 * argv[2] = "host" (NICQ_QUEUE_EXEC=host): only the fence's class and
 * message are checked; a host-sequenced queue keeps its failed step at the
 * head and reports it on every call (docs/queue-semantics.md).
 *
 * argv[3] = "known": before enqueueing, rank 0 learns that rank 1 is gone
 * (a blocking receive from it fails), so on shm's host-engine epochs the
 * start, begun directly in MPI_Enqueue_start (nothing ahead), ends in
 * error at once and the wait enqueued behind it finds a failed epoch
 * (src/queue/queue_direct.cc): it must become a step the fence reports,
 * not retire as done. */
#include <string.h>
#include <unistd.h>

#include "check.h"

#define N 512
#define GOOD_EPOCHS 3
#define DEFERRED 20 /* > QueueSlot::kRing (16) epochs of one request */

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
  MPI_Request r = MPI_REQUEST_NULL, r2 = MPI_REQUEST_NULL;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  const int sender = recv_side ? 1 : 0;
  if (rank == sender)
    QT_OK(MPI_Ssend_init(a, N, MPI_DOUBLE, 1 - rank, 11, MPI_COMM_WORLD, &r));
  else
    QT_OK(MPI_Recv_init(ra, N, MPI_DOUBLE, 1 - rank, 11, MPI_COMM_WORLD, &r));
  QT_OK(MPI_Match(&r));
  /* r2: the start left without its wait at the failure (its buffer is
   * never written: no epoch of it completes). */
  static double b[N];
  if (rank == sender)
    QT_OK(MPI_Ssend_init(b, N, MPI_DOUBLE, 1 - rank, 12, MPI_COMM_WORLD, &r2));
  else
    QT_OK(MPI_Recv_init(b, N, MPI_DOUBLE, 1 - rank, 12, MPI_COMM_WORLD, &r2));
  QT_OK(MPI_Match(&r2));
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
  if (argc > 3 && strcmp(argv[3], "known") == 0) {
    double x = 0;
    QT_ERR(MPI_ERR_PROC_FAILED,
           MPI_Recv(&x, 1, MPI_DOUBLE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  static MPI_Status st[DEFERRED];
  for (int i = 0; i < DEFERRED; ++i) st[i].MPI_ERROR = -7;
  int rc = MPI_SUCCESS, cls = -1;
  if (!host) rc = MPI_Enqueue_start(&q, &r2); /* no wait: pending at the failure */
  for (int i = 0; i < (host ? 1 : DEFERRED) && rc == MPI_SUCCESS; ++i) {
    rc = MPI_Enqueue_start(&q, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Enqueue_wait(&q, &r, &st[i]);
  }
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
  QT_CHECK(st[0].MPI_ERROR == MPI_ERR_PROC_FAILED, "the failed wait's MPI_ERROR is %d, expected %d",
           st[0].MPI_ERROR, MPI_ERR_PROC_FAILED);
  /* Behind it, posted and deferred waits alike retired unfinished: their
   * status is written, MPI_ERR_PENDING or the class the request's counter
   * kept (every one of them is the failed request's). */
  for (int i = 1; i < DEFERRED; ++i)
    QT_CHECK(st[i].MPI_ERROR == MPI_ERR_PENDING || st[i].MPI_ERROR == MPI_ERR_PROC_FAILED,
             "wait %d behind the failure: MPI_ERROR %d, expected %d or %d", i, st[i].MPI_ERROR,
             MPI_ERR_PENDING, MPI_ERR_PROC_FAILED);
  /* Progress of other calls runs no deferred step of the dead chain. */
  for (int i = 0; i < 100; ++i) {
    int flag = 0;
    QT_OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE));
  }
  QT_ERR(MPI_ERR_PROC_FAILED, MPI_Queue_fence(&q)); /* the same failure, again */
  /* Every request the queue held is inactive and detached: both free, and
   * the fenced queue is empty and frees. The unwaited start's request is
   * freed after the queue, which must not be referred to any more. */
  QT_OK(MPI_Request_free(&r));
  QT_CHECK(r == MPI_REQUEST_NULL, "request not freed");
  QT_OK(MPI_Queue_free(&q));
  QT_OK(MPI_Request_free(&r2));
  QT_CHECK(r2 == MPI_REQUEST_NULL, "the unwaited start's request not freed");
  /* A new queue works on rank 0 alone. */
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  QT_OK(MPI_Queue_fence(&q));
  QT_OK(MPI_Queue_free(&q));
  printf("CHAIN-ERRORS-OK: %s\n", msg);
  fflush(stdout);
  _exit(0);
}
