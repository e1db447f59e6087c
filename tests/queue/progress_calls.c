/* Progress of enqueued work inside other MPI calls (13.4: without a
 * progress thread it completes during MPI_Queue_fence and any blocking or
 * test MPI call), with data checked.
 *
 * Rank 0 enqueues: start(recv from 1), wait, start(send to 1), wait. Its
 * send is behind the wait for the receive, so it can only begin once
 * something on rank 0 sees that receive complete. Rank 0 then blocks in a
 * plain MPI_Recv for a token from rank 1, without fencing. Rank 1 enqueues
 * start(send to 0), wait, start(recv from 0), wait, fences, checks the data
 * and only then sends the token. Unless rank 0's MPI_Recv runs the queue
 * (the NIC, the emulator's thread, or the host progress of that call), both
 * ranks hang.
 *
 * With "deep" as argv[1] the ranks first run D start/wait pairs of one
 * request pair, rank 0 enqueueing all of them before it sends rank 1 (with
 * MPI_Send) the token that rank 1 waits for before it enqueues its side: an
 * enqueue call must not wait for the peer however many starts of one
 * request are outstanding (host sequencing keeps them as steps; counter
 * chains defer the starts past a request's 16 epochs in flight,
 * docs/queue-semantics.md). Ranks >= 2 idle.
 *
 * With "testall0" as argv[1], rank 1 starts 200 ms late and rank 0 then
 * calls nothing but MPI_Testall of no request or of a null one (a
 * program asking for progress with no request of its own) until its enqueued wait for the receive
 * has retired and written its status, for at most 20 s, before its MPI_Recv. */
#include <string.h>
#include <time.h>

#include "check.h"

#define N 64
#define D 40

static void deep(MPI_Comm pair, int rank) {
  static double buf[N];
  MPI_Request req;
  if (rank == 0)
    QT_OK(MPI_Recv_init(buf, N, MPI_DOUBLE, 1, 5, pair, &req));
  else
    QT_OK(MPI_Send_init(buf, N, MPI_DOUBLE, 0, 5, pair, &req));
  QT_OK(MPI_Match(&req));
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  int token = 11;
  if (rank == 0) {
    for (int i = 0; i < D; ++i) {
      QT_OK(MPI_Enqueue_start(&q, &req));
      QT_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
    }
    QT_OK(MPI_Send(&token, 1, MPI_INT, 1, 99, pair));
    QT_OK(MPI_Queue_fence(&q));
    for (int j = 0; j < N; ++j)
      QT_CHECK(buf[j] == 1000.0 * (D - 1) + j, "deep: buf[%d] = %g after %d epochs", j, buf[j], D);
  } else {
    QT_OK(MPI_Recv(&token, 1, MPI_INT, 0, 99, pair, MPI_STATUS_IGNORE));
    for (int i = 0; i < D; ++i) {
      /* The buffer may be rewritten once the previous epoch's wait is done:
       * a fence per epoch keeps the contents per epoch distinct. */
      for (int j = 0; j < N; ++j) buf[j] = 1000.0 * i + j;
      QT_OK(MPI_Enqueue_start(&q, &req));
      QT_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
      QT_OK(MPI_Queue_fence(&q));
    }
  }
  QT_OK(MPI_Request_free(&req));
  QT_OK(MPI_Queue_free(&q));
}

int main(int argc, char* argv[]) {
  int rank;
  MPI_Comm pair = qt_init_pair(&argc, &argv, &rank);
  if (argc > 1 && strcmp(argv[1], "deep") == 0) deep(pair, rank);

  static double out[N], in[N];
  const int peer = 1 - rank;
  for (int j = 0; j < N; ++j) {
    out[j] = rank * 100.0 + j;
    in[j] = -1;
  }
  MPI_Request req[2]; /* recv, send */
  QT_OK(MPI_Recv_init(in, N, MPI_DOUBLE, peer, 3, pair, &req[0]));
  QT_OK(MPI_Send_init(out, N, MPI_DOUBLE, peer, 3, pair, &req[1]));
  QT_OK(MPI_Matchall(2, req));
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  MPI_Status st[2];
  st[0].MPI_TAG = st[1].MPI_TAG = -1;
  const int testall0 = argc > 1 && strcmp(argv[1], "testall0") == 0;
  if (testall0 && rank == 1) nanosleep(&(struct timespec){0, 200000000}, NULL);
  const int first = rank == 0 ? 0 : 1; /* rank 0 receives first, rank 1 sends first */
  QT_OK(MPI_Enqueue_start(&q, &req[first]));
  QT_OK(MPI_Enqueue_wait(&q, &req[first], &st[first]));
  QT_OK(MPI_Enqueue_start(&q, &req[1 - first]));
  QT_OK(MPI_Enqueue_wait(&q, &req[1 - first], &st[1 - first]));
  int token = 0;
  if (rank == 0 && testall0) {
    const time_t give_up = time(NULL) + 20;
    volatile int* recv_tag = &st[0].MPI_TAG;
    MPI_Request none = MPI_REQUEST_NULL;
    int flag = 0, calls = 0;
    while (*recv_tag != 3 && time(NULL) < give_up) {
      /* No request, then one null request: neither has work of its own. */
      QT_OK(MPI_Testall(calls++ % 2, &none, &flag, MPI_STATUSES_IGNORE));
      QT_CHECK(flag == 1 && none == MPI_REQUEST_NULL, "MPI_Testall of no request: flag %d", flag);
    }
    QT_CHECK(
        *recv_tag == 3,
        "testall0: the enqueued wait did not retire in 20 s of MPI_Testall calls with no request");
  }
  if (rank == 0) {
    /* No fence yet: the send can only run inside this MPI_Recv. */
    QT_OK(MPI_Recv(&token, 1, MPI_INT, 1, 7, pair, MPI_STATUS_IGNORE));
    QT_CHECK(token == 42, "token %d", token);
    QT_OK(MPI_Queue_fence(&q));
  } else {
    QT_OK(MPI_Queue_fence(&q));
    token = 42;
    QT_OK(MPI_Send(&token, 1, MPI_INT, 0, 7, pair));
  }
  for (int j = 0; j < N; ++j)
    QT_CHECK(in[j] == peer * 100.0 + j, "in[%d] = %g, expected %g", j, in[j], peer * 100.0 + j);
  QT_CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == 3, "recv status source %d tag %d",
           st[0].MPI_SOURCE, st[0].MPI_TAG);
  int count = -1;
  QT_OK(MPI_Get_count(&st[0], MPI_DOUBLE, &count));
  QT_CHECK(count == N, "recv status count %d", count);
  for (int i = 0; i < 2; ++i) QT_OK(MPI_Request_free(&req[i]));
  QT_OK(MPI_Queue_free(&q));
  MPI_Comm_free(&pair);
  MPI_Finalize();
  return 0;
}
