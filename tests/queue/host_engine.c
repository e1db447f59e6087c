/* Host-engine epochs (src/queue/matched_p2p.h): on a process whose queues
 * are host-sequenced, matched send/recv pairs between ranks of one node run
 * each epoch on the point-to-point engine over nicq's shm transport, not as
 * ops on the offload backend.
 *
 * argv[1] says which path the run must take: "engine" (the default shm
 * transport, host-sequenced queues with or without the progress thread) or
 * "backend" (NICQ_SHM=off, or NICQ_QUEUE_EXEC=counters: every epoch is ops
 * handed to the backend).
 *
 * 1. The ring of Example 13.1 at two sizes (8 B through the eager path,
 *    256 KiB through the engine's large-message path), ITERS iterations
 *    enqueued in windows of WINDOW, new send values every window, data and
 *    statuses checked after every fence. Work handed to the offload backend
 *    (NICQX_Offload_work_requests) over the enqueued iterations: none on
 *    "engine", at least one op per start on "backend".
 * 2. Replies and epochs apart: with the first pair (left -> right, tag 7)
 *    running a burst of enqueued epochs, each rank matches a second pair in
 *    the opposite direction with the same tag (MPI_Imatchall) before the
 *    fence. Its match reply travels to the same rank, on the same context,
 *    as the running pair's epoch data: only their tags keep them apart.
 *    The second pair then carries its own data.
 * 3. MPI_Start / MPI_Wait of a host-engine request outside any queue. */
#include <string.h>

#include "check.h"

#define ITERS 300
#define WINDOW 25
#define BIG (256 * 1024 / 8)

static double Value(int src, int round, int side, long i) {
  return src * 1e7 + round * 1e3 + side * 500 + (double)(i % 499);
}

static long long WorkRequests(void) {
  long long w = -1;
  QT_OK(NICQX_Offload_work_requests(&w));
  return w;
}

static void CheckWork(int engine, long long before, long long starts, const char* what) {
  const long long work = WorkRequests() - before;
  if (engine)
    QT_CHECK(work == 0, "%s: %lld ops handed to the offload backend, expected none", what, work);
  else
    QT_CHECK(work >= starts, "%s: %lld ops handed to the backend for %lld starts", what, work,
             starts);
}

static void Ring(int engine, int rank, int left, int right, long n, MPI_Queue queue) {
  double* send_left = malloc(n * sizeof(double));
  double* send_right = malloc(n * sizeof(double));
  double* recv_left = malloc(n * sizeof(double));
  double* recv_right = malloc(n * sizeof(double));
  QT_CHECK(send_left && send_right && recv_left && recv_right, "out of memory");
  MPI_Request reqs[4];
  MPI_Status st[4];
  QT_OK(MPI_Recv_init(recv_left, (int)n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[0]));
  QT_OK(MPI_Recv_init(recv_right, (int)n, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &reqs[1]));
  QT_OK(MPI_Send_init(send_left, (int)n, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &reqs[2]));
  QT_OK(MPI_Send_init(send_right, (int)n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[3]));
  QT_OK(MPI_Matchall(4, reqs));
  const long long before = WorkRequests();
  for (int round = 0; round < ITERS / WINDOW; ++round) {
    for (long i = 0; i < n; ++i) {
      send_left[i] = Value(rank, round, 0, i);
      send_right[i] = Value(rank, round, 1, i);
      recv_left[i] = recv_right[i] = -1;
    }
    memset(st, 0xff, sizeof st);
    for (int k = 0; k < WINDOW; ++k) {
      QT_OK(MPI_Enqueue_startall(&queue, 2, &reqs[0]));
      QT_OK(MPI_Enqueue_startall(&queue, 2, &reqs[2]));
      QT_OK(MPI_Enqueue_waitall(&queue, 4, reqs, k == WINDOW - 1 ? st : MPI_STATUSES_IGNORE));
    }
    QT_OK(MPI_Queue_fence(&queue));
    for (long i = 0; i < n; ++i) {
      QT_CHECK(recv_left[i] == Value(left, round, 1, i),
               "%ld doubles, round %d: recv_left[%ld] = %g", n, round, i, recv_left[i]);
      QT_CHECK(recv_right[i] == Value(right, round, 0, i),
               "%ld doubles, round %d: recv_right[%ld] = %g", n, round, i, recv_right[i]);
    }
    for (int r = 0; r < 2; ++r) {
      int count = -1;
      QT_OK(MPI_Get_count(&st[r], MPI_DOUBLE, &count));
      QT_CHECK(st[r].MPI_SOURCE == (r ? right : left) && st[r].MPI_TAG == r + 1 && count == n,
               "status[%d]: source %d tag %d count %d", r, st[r].MPI_SOURCE, st[r].MPI_TAG, count);
    }
  }
  CheckWork(engine, before, 4LL * ITERS, "ring");
  for (int i = 0; i < 4; ++i) QT_OK(MPI_Request_free(&reqs[i]));
  free(send_left);
  free(send_right);
  free(recv_left);
  free(recv_right);
}

static void RepliesApart(int rank, int left, int right, MPI_Queue queue) {
  enum { kLen = 64, kBurst = 40 };
  static double out1[kLen], in1[kLen], out2[kLen], in2[kLen];
  MPI_Request p1[2], p2[2], match;
  /* Pair 1: receive from the left, send to the right, tag 7. */
  QT_OK(MPI_Recv_init(in1, kLen, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &p1[0]));
  QT_OK(MPI_Send_init(out1, kLen, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &p1[1]));
  QT_OK(MPI_Matchall(2, p1));
  for (int i = 0; i < kLen; ++i) out1[i] = Value(rank, 1, 0, i);
  for (int k = 0; k < kBurst; ++k) {
    QT_OK(MPI_Enqueue_startall(&queue, 2, p1));
    QT_OK(MPI_Enqueue_waitall(&queue, 2, p1, MPI_STATUSES_IGNORE));
  }
  /* Pair 2, the other way round with the same tag, matched while pair 1's
   * epochs run (the match's progress runs the queue's steps too). */
  QT_OK(MPI_Recv_init(in2, kLen, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &p2[0]));
  QT_OK(MPI_Send_init(out2, kLen, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &p2[1]));
  QT_OK(MPI_Imatchall(2, p2, &match));
  QT_OK(MPI_Wait(&match, MPI_STATUS_IGNORE));
  QT_OK(MPI_Queue_fence(&queue));
  for (int i = 0; i < kLen; ++i)
    QT_CHECK(in1[i] == Value(left, 1, 0, i), "pair 1: in1[%d] = %g", i, in1[i]);
  for (int i = 0; i < kLen; ++i) out2[i] = Value(rank, 2, 1, i);
  QT_OK(MPI_Enqueue_startall(&queue, 2, p2));
  QT_OK(MPI_Enqueue_waitall(&queue, 2, p2, MPI_STATUSES_IGNORE));
  QT_OK(MPI_Queue_fence(&queue));
  for (int i = 0; i < kLen; ++i)
    QT_CHECK(in2[i] == Value(right, 2, 1, i), "pair 2: in2[%d] = %g", i, in2[i]);
  /* 3: the same requests through MPI_Start / MPI_Waitall, no queue. */
  for (int i = 0; i < kLen; ++i) out2[i] = Value(rank, 3, 1, i);
  QT_OK(MPI_Startall(2, p2));
  MPI_Status st[2];
  QT_OK(MPI_Waitall(2, p2, st));
  int count = -1;
  QT_OK(MPI_Get_count(&st[0], MPI_DOUBLE, &count));
  QT_CHECK(st[0].MPI_SOURCE == right && st[0].MPI_TAG == 7 && count == kLen,
           "MPI_Start'ed receive: source %d tag %d count %d", st[0].MPI_SOURCE, st[0].MPI_TAG,
           count);
  for (int i = 0; i < kLen; ++i)
    QT_CHECK(in2[i] == Value(right, 3, 1, i), "MPI_Start'ed pair: in2[%d] = %g", i, in2[i]);
  for (int i = 0; i < 2; ++i) {
    QT_OK(MPI_Request_free(&p1[i]));
    QT_OK(MPI_Request_free(&p2[i]));
  }
}

int main(int argc, char* argv[]) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  const int engine = argc < 2 || strcmp(argv[1], "backend") != 0;
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  MPI_Queue queue;
  QT_OK(MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL));
  Ring(engine, rank, left, right, 1, queue);
  Ring(engine, rank, left, right, BIG, queue);
  RepliesApart(rank, left, right, queue);
  QT_OK(MPI_Queue_free(&queue));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("host engine ring: %d ranks, %s path, data checked\n", size,
           engine ? "engine" : "backend");
  MPI_Finalize();
  return 0;
}
