/* Host-engine steps mixed with every other kind in one host-sequenced
 * queue (src/queue/queue_host.cc). On shm without the progress thread a
 * queue runs its own steps, and a matched standard send/recv between ranks
 * of the node takes the host-engine path: its starts go straight to the
 * point-to-point engine and its waits retire from the engine's request. A
 * buffered send and its receive keep the backend's eager protocol, an
 * MPI_PROC_NULL receive completes at once, and a persistent allreduce
 * starts through its own engine: the other paths, in the same calls.
 *
 * Each MPI_Enqueue_startall takes all six requests, kinds alternating
 * (host, backend, null, host, collective, backend), so a run of host-engine
 * starts ends at a start of another kind and the other way round; each
 * MPI_Enqueue_waitall takes them in another order, a host-engine send first
 * (it completes as soon as it starts: a wait that looked at its first
 * request only would retire with the receives still running). WINDOW
 * iterations per fence, new send values every window; after every fence
 * every receive buffer, the allreduce result and the statuses of the last
 * iteration are checked. Then a request repeated in one call, in a call of
 * three (compared pairwise) and of ten requests (stamped), is refused with
 * MPI_ERR_REQUEST naming both places, and nothing was enqueued. */
#include <string.h>

#include "check.h"

#define N 16
#define WINDOW 20
#define ROUNDS 12

static double Value(int src, int round, int kind, int i) {
  return src * 1e6 + round * 1e3 + kind * 100 + i;
}

static void ExpectRepeat(int rc, const char* what) {
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING];
  QT_CHECK(rc != MPI_SUCCESS, "a repeated request was enqueued");
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, msg, &len);
  QT_CHECK(cls == MPI_ERR_REQUEST, "repeat: class %d, expected MPI_ERR_REQUEST (%s)", cls, msg);
  QT_CHECK(strstr(msg, what) != NULL, "repeat: message \"%s\" does not say \"%s\"", msg, what);
}

int main(int argc, char* argv[]) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  static double hsend[N], hrecv[N], bsend[N], brecv[N], nrecv[N], sum_in[2], sum_out[2];
  enum { HR, BR, PN, HS, AR, BS, NREQ };
  MPI_Request r[NREQ];
  QT_OK(MPI_Recv_init(hrecv, N, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &r[HR]));
  QT_OK(MPI_Recv_init(brecv, N, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &r[BR]));
  QT_OK(MPI_Recv_init(nrecv, N, MPI_DOUBLE, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r[PN]));
  QT_OK(MPI_Send_init(hsend, N, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &r[HS]));
  QT_OK(MPI_Allreduce_init(sum_in, sum_out, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &r[AR]));
  QT_OK(MPI_Bsend_init(bsend, N, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &r[BS]));
  QT_OK(MPI_Matchall(NREQ, r));
  /* The waits' order: the host-engine send first. */
  enum { W_HS, W_HR, W_BR, W_PN, W_AR, W_BS };
  MPI_Request w[NREQ] = {r[HS], r[HR], r[BR], r[PN], r[AR], r[BS]};
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  double rank_sum = 0;
  for (int k = 0; k < size; ++k) rank_sum += k + 1;
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < N; ++i) {
      hsend[i] = Value(rank, round, 1, i);
      bsend[i] = Value(rank, round, 2, i);
      hrecv[i] = brecv[i] = nrecv[i] = -1;
    }
    sum_in[0] = rank + 1;
    sum_in[1] = (rank + 1) * round;
    sum_out[0] = sum_out[1] = -1;
    MPI_Status st[NREQ];
    for (int k = 0; k < NREQ; ++k) {
      memset(&st[k], 0, sizeof st[k]);
      st[k].MPI_ERROR = 12345;
    }
    for (int it = 0; it < WINDOW; ++it) {
      QT_OK(MPI_Enqueue_startall(&q, NREQ, r));
      QT_OK(MPI_Enqueue_waitall(&q, NREQ, w, it == WINDOW - 1 ? st : MPI_STATUSES_IGNORE));
    }
    QT_OK(MPI_Queue_fence(&q));
    for (int i = 0; i < N; ++i) {
      QT_CHECK(hrecv[i] == Value(left, round, 1, i), "round %d: host-engine recv[%d] = %g", round,
               i, hrecv[i]);
      QT_CHECK(brecv[i] == Value(left, round, 2, i), "round %d: backend recv[%d] = %g", round, i,
               brecv[i]);
      QT_CHECK(nrecv[i] == -1, "round %d: MPI_PROC_NULL recv wrote [%d] = %g", round, i, nrecv[i]);
    }
    QT_CHECK(sum_out[0] == rank_sum && sum_out[1] == rank_sum * round,
             "round %d: allreduce gave %g %g, expected %g %g", round, sum_out[0], sum_out[1],
             rank_sum, rank_sum * round);
    int count = -1;
    QT_OK(MPI_Get_count(&st[W_HR], MPI_DOUBLE, &count));
    QT_CHECK(st[W_HR].MPI_SOURCE == left && st[W_HR].MPI_TAG == 1 && count == N,
             "round %d: host-engine recv status: source %d tag %d count %d", round,
             st[W_HR].MPI_SOURCE, st[W_HR].MPI_TAG, count);
    QT_OK(MPI_Get_count(&st[W_BR], MPI_DOUBLE, &count));
    QT_CHECK(st[W_BR].MPI_SOURCE == left && st[W_BR].MPI_TAG == 2 && count == N,
             "round %d: backend recv status: source %d tag %d count %d", round, st[W_BR].MPI_SOURCE,
             st[W_BR].MPI_TAG, count);
    QT_OK(MPI_Get_count(&st[W_PN], MPI_DOUBLE, &count));
    QT_CHECK(st[W_PN].MPI_SOURCE == MPI_PROC_NULL && st[W_PN].MPI_TAG == MPI_ANY_TAG && count == 0,
             "round %d: MPI_PROC_NULL recv status: source %d tag %d count %d", round,
             st[W_PN].MPI_SOURCE, st[W_PN].MPI_TAG, count);
    for (int k = 0; k < NREQ; ++k)
      QT_CHECK(st[k].MPI_ERROR == 12345, "round %d: status %d: MPI_ERROR %d changed", round, k,
               st[k].MPI_ERROR);
  }
  long long done = -1, enqueued = -1;
  QT_OK(NICQX_Queue_waits_completed(q, &done, &enqueued));
  QT_CHECK(done == enqueued && enqueued == (long long)ROUNDS * WINDOW * NREQ,
           "%lld of %lld enqueued waits completed, expected %d", done, enqueued,
           ROUNDS * WINDOW * NREQ);

  /* A repeat, found pairwise (3 requests) and by stamps (10): refused,
   * nothing enqueued. */
  MPI_Request extra[4];
  for (int k = 0; k < 4; ++k)
    QT_OK(MPI_Recv_init(nrecv, N, MPI_DOUBLE, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &extra[k]));
  QT_OK(MPI_Matchall(4, extra));
  MPI_Request three[3] = {r[HR], r[BR], r[HR]};
  ExpectRepeat(MPI_Enqueue_startall(&q, 3, three),
               "array_of_requests[2] repeats array_of_requests[0]");
  MPI_Request ten[10] = {r[HR], r[BR],    r[PN],    r[HS],    r[AR],
                         r[BS], extra[0], extra[1], extra[2], r[BS]};
  ExpectRepeat(MPI_Enqueue_startall(&q, 10, ten),
               "array_of_requests[9] repeats array_of_requests[5]");
  QT_OK(NICQX_Queue_waits_completed(q, &done, &enqueued));
  QT_CHECK(enqueued == (long long)ROUNDS * WINDOW * NREQ, "a refused call enqueued waits");
  /* Nothing was started either: the requests start (the repeat of a wait
   * is refused in between, enqueueing no wait) and complete. */
  for (int i = 0; i < N; ++i) hsend[i] = Value(rank, ROUNDS, 1, i);
  QT_OK(MPI_Enqueue_startall(&q, NREQ, r));
  QT_OK(MPI_Enqueue_startall(&q, 4, extra));
  MPI_Request four[4] = {extra[0], extra[1], extra[3], extra[1]};
  ExpectRepeat(MPI_Enqueue_waitall(&q, 4, four, MPI_STATUSES_IGNORE),
               "array_of_requests[3] repeats array_of_requests[1]");
  QT_OK(NICQX_Queue_waits_completed(q, &done, &enqueued));
  QT_CHECK(enqueued == (long long)ROUNDS * WINDOW * NREQ, "a refused wait was enqueued");
  QT_OK(MPI_Enqueue_waitall(&q, NREQ, w, MPI_STATUSES_IGNORE));
  QT_OK(MPI_Enqueue_waitall(&q, 4, extra, MPI_STATUSES_IGNORE));
  QT_OK(MPI_Queue_fence(&q));
  for (int i = 0; i < N; ++i)
    QT_CHECK(hrecv[i] == Value(left, ROUNDS, 1, i), "after the refused calls: recv[%d] = %g", i,
             hrecv[i]);
  for (int k = 0; k < 4; ++k) QT_OK(MPI_Request_free(&extra[k]));
  for (int k = 0; k < NREQ; ++k) QT_OK(MPI_Request_free(&r[k]));
  QT_OK(MPI_Queue_free(&q));
  MPI_Finalize();
  if (rank == 0) printf("mixed_steps: ok\n");
  return 0;
}
