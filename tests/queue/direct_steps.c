/* Direct steps of a host-sequenced queue (src/queue/queue_direct.cc): with
 * nothing ahead in its ring, a host-engine start begins inside
 * MPI_Enqueue_start and an enqueued wait whose epoch already finished
 * retires inside MPI_Enqueue_wait, before any fence.
 *
 * Rank 1 sends with a matched synchronous send, enqueued and fenced, then
 * enters a barrier: its fence returns only once rank 0's receive, started
 * by rank 0's MPI_Enqueue_start before that barrier, matched the message,
 * so after the barrier rank 0's epoch is finished. Rank 0 then enqueues
 * the wait and, before fencing, checks that the queue counts the wait as
 * completed (NICQX_Queue_waits_completed), that the status is written and
 * that the data is in. The fence that follows has nothing pending. Fences
 * of an empty queue (fresh, and after each round) succeed and change no
 * count. At the end the request is inactive outside the queue: MPI_Start
 * and MPI_Wait run one more epoch, and request and queue free.
 * Run on shm without the progress thread (host-engine epochs); ranks >= 2
 * idle. */
#include "check.h"

#define N 32
#define ROUNDS 50

static void ExpectCounts(MPI_Queue q, long long done, long long enqueued, const char* when) {
  long long d = -1, e = -1;
  QT_OK(NICQX_Queue_waits_completed(q, &d, &e));
  QT_CHECK(d == done && e == enqueued, "%s: %lld of %lld waits completed, expected %lld of %lld",
           when, d, e, done, enqueued);
}

int main(int argc, char* argv[]) {
  int rank;
  static double buf[N];
  MPI_Comm pair = qt_init_pair(&argc, &argv, &rank);
  MPI_Request r;
  if (rank == 0)
    QT_OK(MPI_Recv_init(buf, N, MPI_DOUBLE, 1, 5, pair, &r));
  else
    QT_OK(MPI_Ssend_init(buf, N, MPI_DOUBLE, 0, 5, pair, &r));
  QT_OK(MPI_Match(&r));
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  QT_OK(MPI_Queue_fence(&q)); /* nothing ever enqueued */
  QT_OK(MPI_Queue_fence(&q));
  ExpectCounts(q, 0, 0, "fresh queue after two fences");
  for (int round = 0; round < ROUNDS; ++round) {
    MPI_Status st;
    st.MPI_SOURCE = st.MPI_TAG = -9;
    st.MPI_ERROR = -7;
    if (rank == 1) {
      for (int i = 0; i < N; ++i) buf[i] = round * 1000 + i;
      QT_OK(MPI_Enqueue_start(&q, &r));
      QT_OK(MPI_Enqueue_wait(&q, &r, &st));
      QT_OK(MPI_Queue_fence(&q));
      QT_OK(MPI_Barrier(pair));
      continue;
    }
    for (int i = 0; i < N; ++i) buf[i] = -1;
    QT_OK(MPI_Enqueue_start(&q, &r));
    QT_OK(MPI_Barrier(pair)); /* rank 1's synchronous send matched our receive */
    QT_OK(MPI_Enqueue_wait(&q, &r, &st));
    ExpectCounts(q, round + 1, round + 1, "after an enqueued wait of a finished epoch");
    int count = -1;
    QT_OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    QT_CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 5 && count == N && st.MPI_ERROR == -7,
             "round %d: status before the fence: source %d tag %d count %d error %d", round,
             st.MPI_SOURCE, st.MPI_TAG, count, st.MPI_ERROR);
    for (int i = 0; i < N; ++i)
      QT_CHECK(buf[i] == round * 1000 + i, "round %d: buf[%d] = %g before the fence", round, i,
               buf[i]);
    QT_OK(MPI_Queue_fence(&q)); /* nothing pending */
    QT_OK(MPI_Queue_fence(&q));
    ExpectCounts(q, round + 1, round + 1, "after fences of an empty queue");
  }
  /* The queue let go of the request: MPI_Start/MPI_Wait outside it. */
  if (rank == 1)
    for (int i = 0; i < N; ++i) buf[i] = -(i + 1);
  else
    for (int i = 0; i < N; ++i) buf[i] = 0;
  QT_OK(MPI_Start(&r));
  QT_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  for (int i = 0; i < N && rank == 0; ++i)
    QT_CHECK(buf[i] == -(i + 1), "MPI_Start epoch: buf[%d] = %g", i, buf[i]);
  QT_OK(MPI_Queue_free(&q));
  QT_OK(MPI_Request_free(&r));
  QT_OK(MPI_Comm_free(&pair));
  MPI_Finalize();
  return 0;
}
