/* An enqueued waitall of several host-engine receives on a host-sequenced
 * queue retires only when every one of them is done, whichever completes
 * first, and writes each request's own status; a start enqueued behind it
 * begins only then.
 *
 * Rank 0 enqueues per round: the start of three matched receives from
 * rank 1 (tags 1, 2, 3; 8, 24 and 40 doubles), their waitall with an
 * array of statuses, then the start and wait of a matched send C to rank
 * 1, and fences. Rank 1 has started its matched receive of C with
 * MPI_Start, sends two of the three messages (alternating rounds: the
 * first and third, or the third and second), sleeps 20 ms, checks that C
 * has not arrived (rank 0's send is behind a wait one of whose receives is
 * still pending), sends the last one and then waits for C. So rank 0's
 * fence watches a receive that is not the group's first in half of the
 * rounds. Checked on rank 0: the data of each receive and each status's
 * source, tag and count; on rank 1: C's data, and that it came only after
 * the last message. Run on shm without the progress thread (host-engine
 * epochs through the enqueue calls' valid case); ranks >= 2 idle. */
#include <time.h>

#include "check.h"

#define ROUNDS 20
#define N1 8
#define N2 24
#define N3 40

static double a[N1], b[N2], d[N3];
static double c;

static void nap_ms(int ms) {
  struct timespec ts = {0, ms * 1000000L};
  nanosleep(&ts, NULL);
}

static double value(int which, int round, int i) {
  return which * 10000.0 + round * 100.0 + i;
}

/* Rank 1: one matched send through its queue, fenced. */
static void send_one(MPI_Queue* q, MPI_Request* s, double* buf, int n, int which, int round) {
  for (int i = 0; i < n; ++i) buf[i] = value(which, round, i);
  QT_OK(MPI_Enqueue_start(q, s));
  QT_OK(MPI_Enqueue_wait(q, s, MPI_STATUS_IGNORE));
  QT_OK(MPI_Queue_fence(q));
}

int main(int argc, char* argv[]) {
  int rank;
  MPI_Comm pair = qt_init_pair(&argc, &argv, &rank);
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  MPI_Request r[3], cr;
  double* bufs[3] = {a, b, d};
  const int counts[3] = {N1, N2, N3};
  for (int k = 0; k < 3; ++k) {
    if (rank == 0)
      QT_OK(MPI_Recv_init(bufs[k], counts[k], MPI_DOUBLE, 1, k + 1, pair, &r[k]));
    else
      QT_OK(MPI_Send_init(bufs[k], counts[k], MPI_DOUBLE, 0, k + 1, pair, &r[k]));
  }
  if (rank == 0)
    QT_OK(MPI_Send_init(&c, 1, MPI_DOUBLE, 1, 4, pair, &cr));
  else
    QT_OK(MPI_Recv_init(&c, 1, MPI_DOUBLE, 0, 4, pair, &cr));
  MPI_Request all[4] = {r[0], r[1], r[2], cr};
  QT_OK(MPI_Matchall(4, all));

  for (int round = 0; round < ROUNDS; ++round) {
    if (rank == 0) {
      for (int k = 0; k < 3; ++k)
        for (int i = 0; i < counts[k]; ++i) bufs[k][i] = -1;
      c = round + 0.5;
      MPI_Status st[3];
      for (int k = 0; k < 3; ++k) {
        st[k].MPI_SOURCE = st[k].MPI_TAG = -9;
        st[k].MPI_ERROR = -7;
      }
      QT_OK(MPI_Enqueue_startall(&q, 3, r));
      QT_OK(MPI_Enqueue_waitall(&q, 3, r, st));
      QT_OK(MPI_Enqueue_start(&q, &cr));
      QT_OK(MPI_Enqueue_wait(&q, &cr, MPI_STATUS_IGNORE));
      QT_OK(MPI_Queue_fence(&q));
      for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < counts[k]; ++i)
          QT_CHECK(bufs[k][i] == value(k, round, i), "round %d: message %d [%d] = %g", round, k, i,
                   bufs[k][i]);
        int n = -1;
        QT_OK(MPI_Get_count(&st[k], MPI_DOUBLE, &n));
        QT_CHECK(st[k].MPI_SOURCE == 1 && st[k].MPI_TAG == k + 1 && n == counts[k] &&
                     st[k].MPI_ERROR == -7,
                 "round %d: status %d: source %d tag %d count %d error %d", round, k,
                 st[k].MPI_SOURCE, st[k].MPI_TAG, n, st[k].MPI_ERROR);
      }
      continue;
    }
    c = -1;
    QT_OK(MPI_Start(&cr));
    /* Even rounds: the group's first receive done early, its second last;
     * odd rounds: its first last. */
    const int first = round % 2 == 0 ? 0 : 2, second = round % 2 == 0 ? 2 : 1,
              last = round % 2 == 0 ? 1 : 0;
    send_one(&q, &r[first], bufs[first], counts[first], first, round);
    send_one(&q, &r[second], bufs[second], counts[second], second, round);
    nap_ms(20);
    int arrived = 1;
    QT_OK(MPI_Test(&cr, &arrived, MPI_STATUS_IGNORE));
    QT_CHECK(!arrived, "round %d: rank 0's send arrived before its enqueued wait could retire",
             round);
    send_one(&q, &r[last], bufs[last], counts[last], last, round);
    QT_OK(MPI_Wait(&cr, MPI_STATUS_IGNORE));
    QT_CHECK(c == round + 0.5, "round %d: c = %g", round, c);
  }
  for (int k = 0; k < 3; ++k) QT_OK(MPI_Request_free(&r[k]));
  QT_OK(MPI_Request_free(&cr));
  QT_OK(MPI_Queue_free(&q));
  QT_OK(MPI_Comm_free(&pair));
  MPI_Finalize();
  return 0;
}
