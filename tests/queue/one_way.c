/* One matched synchronous send and its receive (the put protocol:
 * ready token, put with remote CQ data, acknowledgement), enqueued for 6
 * epochs, the receive buffer reset before each epoch and checked after the
 * fence: an enqueued wait must not complete before its data has landed.
 *
 * sockets sets FI_REMOTE_CQ_DATA on the *initiator's* local completion of
 * fi_writemsg/fi_writedata too: an emulated backend that took every entry
 * with that flag for an incoming doorbell lost the put's local completion
 * and added 1 to the counter its CQ data names on the wrong process (the
 * sender's gate), so the next epoch's put went before the ready token and
 * epoch 1 found the buffer still reset. Runs on every backend. */
#include "check.h"

#define N 4

int main(int argc, char* argv[]) {
  int rank, size;
  double a[N], ra[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  if (size < 2) QT_FAIL("needs 2 ranks");
  MPI_Queue q;
  MPI_Request r = MPI_REQUEST_NULL;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  if (rank == 0) QT_OK(MPI_Ssend_init(a, N, MPI_DOUBLE, 1, 11, MPI_COMM_WORLD, &r));
  if (rank == 1) QT_OK(MPI_Recv_init(ra, N, MPI_DOUBLE, 0, 11, MPI_COMM_WORLD, &r));
  if (rank < 2) QT_OK(MPI_Match(&r));
  for (int it = 0; it < 6 && rank < 2; ++it) {
    for (int i = 0; i < N; ++i) a[i] = it * 1000 + i, ra[i] = -1;
    QT_OK(MPI_Enqueue_start(q, &r));
    QT_OK(MPI_Enqueue_wait(q, &r, MPI_STATUS_IGNORE));
    QT_OK(MPI_Queue_fence(q));
    for (int i = 0; i < N && rank == 1; ++i)
      if (ra[i] != it * 1000 + i) QT_FAIL("epoch %d: ra[%d] = %g after the fence", it, i, ra[i]);
  }
  if (rank < 2) QT_OK(MPI_Request_free(&r));
  QT_OK(MPI_Queue_free(&q));
  if (rank == 1) printf("one_way: 6 epochs checked\n");
  MPI_Finalize();
  return 0;
}
