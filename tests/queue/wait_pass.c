/* The pass an enqueued wait runs on a host-sequenced queue (queue_host.cc,
 * HostEnqueueWaitAll): after its engine poll it runs the steps at the head
 * unless the head is a host-engine wait whose epoch still runs, where the
 * pass would run nothing and is left out. Both sides of that test:
 *
 *  - the head runs: rank 0's ring holds [start of an MPI_PROC_NULL receive
 *    (never a direct start, so the ring is not empty), start of a receive
 *    whose message rank 1 sent before, its wait]; the wait's own pass
 *    polls the engine, starts both and retires the wait in the call:
 *    counted by NICQX_Queue_waits_completed, status and data in, before
 *    any fence;
 *  - the head wait runs: the same with a second receive whose message rank
 *    1 sends only after the next barrier; the wait returns with nothing
 *    retired (its epoch runs), and the fence completes it.
 * The MPI_PROC_NULL receive's own wait follows each time.
 *
 * Rank 1 sends each message with an enqueued standard send of 8 bytes
 * (eager, complete at once) and fences, then enters a barrier: rank 0's
 * barrier drains its inbox of the message before it sees rank 1's barrier
 * message, so after the barrier the message is in rank 0's engine.
 * Run on shm without the progress thread (host-engine epochs); ranks >= 2
 * idle. */
#include "check.h"

#define ROUNDS 20

static void ExpectCounts(MPI_Queue q, long long done, long long enqueued, const char* when,
                         int round) {
  long long d = -1, e = -1;
  QT_OK(NICQX_Queue_waits_completed(q, &d, &e));
  QT_CHECK(d == done && e == enqueued,
           "round %d, %s: %lld of %lld waits completed, expected %lld of %lld", round, when, d, e,
           done, enqueued);
}

int main(int argc, char* argv[]) {
  int rank;
  static double a, b, null_buf;
  MPI_Comm pair = qt_init_pair(&argc, &argv, &rank);
  MPI_Request r[3]; /* rank 0: PROC_NULL receive, receive A, receive B; rank 1: sends A, B */
  if (rank == 0) {
    QT_OK(MPI_Recv_init(&null_buf, 1, MPI_DOUBLE, MPI_PROC_NULL, 4, pair, &r[0]));
    QT_OK(MPI_Recv_init(&a, 1, MPI_DOUBLE, 1, 5, pair, &r[1]));
    QT_OK(MPI_Recv_init(&b, 1, MPI_DOUBLE, 1, 6, pair, &r[2]));
    QT_OK(MPI_Matchall(3, r));
  } else {
    QT_OK(MPI_Send_init(&a, 1, MPI_DOUBLE, 0, 5, pair, &r[1]));
    QT_OK(MPI_Send_init(&b, 1, MPI_DOUBLE, 0, 6, pair, &r[2]));
    QT_OK(MPI_Matchall(2, &r[1]));
  }
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  long long waits = 0;
  for (int round = 0; round < ROUNDS; ++round) {
    if (rank == 1) {
      a = round * 10 + 1;
      QT_OK(MPI_Enqueue_start(&q, &r[1]));
      QT_OK(MPI_Enqueue_wait(&q, &r[1], MPI_STATUS_IGNORE));
      QT_OK(MPI_Queue_fence(&q));
      QT_OK(MPI_Barrier(pair)); /* A is in rank 0's engine */
      QT_OK(MPI_Barrier(pair)); /* rank 0 checked its first waitall */
      b = round * 10 + 2;
      QT_OK(MPI_Enqueue_start(&q, &r[2]));
      QT_OK(MPI_Enqueue_wait(&q, &r[2], MPI_STATUS_IGNORE));
      QT_OK(MPI_Queue_fence(&q));
      continue;
    }
    MPI_Status st;
    a = b = -1;
    QT_OK(MPI_Barrier(pair));
    /* The head runs: the wait's pass starts both and retires the wait. */
    st.MPI_ERROR = -7;
    QT_OK(MPI_Enqueue_start(&q, &r[0]));
    QT_OK(MPI_Enqueue_start(&q, &r[1]));
    QT_OK(MPI_Enqueue_wait(&q, &r[1], &st));
    ExpectCounts(q, waits + 1, waits + 1, "after the wait of a sent message", round);
    QT_CHECK(a == round * 10 + 1, "round %d: A = %g before the fence", round, a);
    QT_CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 5 && st.MPI_ERROR == -7,
             "round %d: status before the fence: source %d tag %d error %d", round, st.MPI_SOURCE,
             st.MPI_TAG, st.MPI_ERROR);
    QT_OK(MPI_Enqueue_wait(&q, &r[0], MPI_STATUS_IGNORE));
    waits += 2;
    /* The head wait runs: B is sent only after the next barrier. */
    QT_OK(MPI_Enqueue_start(&q, &r[0]));
    QT_OK(MPI_Enqueue_start(&q, &r[2]));
    QT_OK(MPI_Enqueue_wait(&q, &r[2], &st));
    long long done = -1, enqueued = -1;
    QT_OK(NICQX_Queue_waits_completed(q, &done, &enqueued));
    QT_CHECK(done == waits && enqueued == waits + 1,
             "round %d: after the wait of an unsent message %lld of %lld waits completed, "
             "expected %lld of %lld",
             round, done, enqueued, waits, waits + 1);
    QT_CHECK(b == -1, "round %d: B = %g before it was sent", round, b);
    QT_OK(MPI_Enqueue_wait(&q, &r[0], MPI_STATUS_IGNORE));
    QT_OK(MPI_Barrier(pair));
    QT_OK(MPI_Queue_fence(&q));
    waits += 2;
    ExpectCounts(q, waits, waits, "after the fence", round);
    QT_CHECK(b == round * 10 + 2 && st.MPI_SOURCE == 1 && st.MPI_TAG == 6,
             "round %d: after the fence B = %g, source %d tag %d", round, b, st.MPI_SOURCE,
             st.MPI_TAG);
  }
  QT_OK(MPI_Queue_free(&q));
  for (int i = rank == 0 ? 0 : 1; i < 3; ++i) QT_OK(MPI_Request_free(&r[i]));
  QT_OK(MPI_Comm_free(&pair));
  MPI_Finalize();
  return 0;
}
