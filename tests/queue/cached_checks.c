/* The enqueue calls check the rules that hold from MPI_Match until
 * MPI_Request_free (a persistent, not generalized, matched request) once per
 * request and remember the result (ApiRequest::enqueueable in
 * src/api/queue_api.cc); what can change between calls is checked on every
 * call. A request whose state changed after its first enqueue must still be
 * refused with the class a first check would give:
 *  1. started with MPI_Start (active): MPI_ERR_REQUEST;
 *  2. its start already enqueued and no wait enqueued yet: MPI_ERR_QUEUE;
 *  3. freed, and its handle reused by an unmatched persistent request
 *     (MPI_ERR_MATCH) or a nonpersistent one (MPI_ERR_REQUEST);
 *  4. freed, and its handle reused by a new matched request: enqueued, it
 *     moves the new request's data.
 * Every round exchanges data with the peer and checks it, so a refusal that
 * changed something shows. Ranks pair up (0-1, 2-3, ...); an odd last rank
 * talks to MPI_PROC_NULL. */
#include <string.h>

#include "check.h"

#define N 16

static double sbuf[N], rbuf[N];

static double value(int rank, int round, int i) {
  return rank * 1000.0 + round * 100.0 + i;
}

static void fill(int rank, int round) {
  for (int i = 0; i < N; ++i) {
    sbuf[i] = value(rank, round, i);
    rbuf[i] = -1;
  }
}

static void check_data(int peer, int round) {
  if (peer == MPI_PROC_NULL) return;
  for (int i = 0; i < N; ++i)
    QT_CHECK(rbuf[i] == value(peer, round, i), "round %d: rbuf[%d] = %g, expected %g", round, i,
             rbuf[i], value(peer, round, i));
}

static void make_pair(int peer, MPI_Request* r, MPI_Request* s) {
  QT_OK(MPI_Recv_init(rbuf, N, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, r));
  QT_OK(MPI_Send_init(sbuf, N, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD, s));
  MPI_Request both[2] = {*r, *s};
  QT_OK(MPI_Matchall(2, both));
}

/* One queued exchange of the pair, fenced, data checked. */
static void queued_round(MPI_Queue* q, MPI_Request* r, MPI_Request* s, int rank, int peer,
                         int round) {
  fill(rank, round);
  MPI_Request both[2] = {*r, *s};
  QT_OK(MPI_Enqueue_startall(q, 2, both));
  QT_OK(MPI_Enqueue_waitall(q, 2, both, MPI_STATUSES_IGNORE));
  QT_OK(MPI_Queue_fence(q));
  check_data(peer, round);
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

  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  MPI_Request r, s;
  make_pair(peer, &r, &s);
  /* Round 1: both requests pass every check once (and are remembered). */
  queued_round(&q, &r, &s, rank, peer, 1);

  /* 1. Active through MPI_Start: refused, then completed by MPI_Waitall. */
  fill(rank, 2);
  QT_OK(MPI_Start(&r));
  QT_OK(MPI_Start(&s));
  QT_ERR(MPI_ERR_REQUEST, MPI_Enqueue_start(&q, &s));
  QT_ERR(MPI_ERR_REQUEST, MPI_Enqueue_start(&q, &r));
  MPI_Request both[2] = {r, s};
  QT_OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
  check_data(peer, 2);
  queued_round(&q, &r, &s, rank, peer, 3);

  /* 2. A second enqueued start before the first one's wait. */
  fill(rank, 4);
  QT_OK(MPI_Enqueue_start(&q, &r));
  QT_OK(MPI_Enqueue_start(&q, &s));
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_start(&q, &s));
  QT_ERR(MPI_ERR_QUEUE, MPI_Enqueue_startall(&q, 2, both));
  QT_OK(MPI_Enqueue_waitall(&q, 2, both, MPI_STATUSES_IGNORE));
  QT_OK(MPI_Queue_fence(&q));
  check_data(peer, 4);

  /* 3. Freed, and the handle reused (the request table hands a thread's
   * last freed slot out first). */
  const MPI_Request freed = s;
  QT_OK(MPI_Request_free(&r));
  QT_OK(MPI_Request_free(&s));
  MPI_Request u;
  QT_OK(MPI_Send_init(sbuf, N, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD, &u));
  QT_CHECK(u == freed, "MPI_Send_init got handle %d, not the freed %d: the test needs it", (int)u,
           (int)freed);
  QT_ERR(MPI_ERR_MATCH, MPI_Enqueue_start(&q, &u));
  QT_ERR(MPI_ERR_MATCH, MPI_Enqueue_startall(&q, 1, &u));
  QT_OK(MPI_Request_free(&u));
  MPI_Request nonpersistent;
  QT_OK(MPI_Irecv(rbuf, N, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &nonpersistent));
  QT_CHECK(nonpersistent == freed, "MPI_Irecv got handle %d, not the freed %d: the test needs it",
           (int)nonpersistent, (int)freed);
  QT_ERR(MPI_ERR_REQUEST, MPI_Enqueue_start(&q, &nonpersistent));
  QT_OK(MPI_Wait(&nonpersistent, MPI_STATUS_IGNORE));

  /* 4. New matched requests in the reused slots move their own data. */
  make_pair(peer, &r, &s);
  queued_round(&q, &r, &s, rank, peer, 5);
  queued_round(&q, &r, &s, rank, peer, 6);

  QT_OK(MPI_Request_free(&r));
  QT_OK(MPI_Request_free(&s));
  QT_OK(MPI_Queue_free(&q));
  MPI_Finalize();
  return 0;
}
