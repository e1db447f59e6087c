/* 13.4 progress: every rank enqueues a ring exchange, then computes for
 * 200 ms making no MPI call at all, and the exchange must already be
 * complete (the receive buffers hold the neighbours' data) before the
 * fence. The check is on data: the host looks at its receive buffers
 * between sleeps, up to 10 x 200 ms, still without calling MPI; the
 * NIC (native) or the emulator's progress thread must have moved it. */
#include <string.h>
#include <time.h>

#include "check.h"

#define N 4096

static void Compute200ms(void) {
  struct timespec ts = {0, 200 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

int main(int argc, char* argv[]) {
  int rank, size;
  static double sbuf[N], rbuf[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  MPI_Queue q;
  MPI_Request reqs[2];
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  QT_OK(MPI_Recv_init(rbuf, N, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &reqs[0]));
  QT_OK(MPI_Send_init(sbuf, N, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &reqs[1]));
  QT_OK(MPI_Matchall(2, reqs));
  for (int i = 0; i < N; ++i) {
    sbuf[i] = rank + 1 + i * 1e-3;
    rbuf[i] = -1;
  }
  QT_OK(MPI_Enqueue_startall(q, 2, reqs));
  QT_OK(MPI_Enqueue_waitall(q, 2, reqs, MPI_STATUSES_IGNORE));
  int rounds = 0, complete = 0;
  while (!complete && rounds < 10) {
    Compute200ms(); /* no MPI call while computing */
    ++rounds;
    complete = 1;
    for (int i = 0; i < N; ++i)
      if (*(volatile double*)&rbuf[i] != left + 1 + i * 1e-3) complete = 0;
  }
  QT_CHECK(complete, "the exchange did not progress without MPI calls (%d x 200 ms)", rounds);
  QT_OK(MPI_Queue_fence(q));
  QT_OK(MPI_Request_free(&reqs[0]));
  QT_OK(MPI_Request_free(&reqs[1]));
  QT_OK(MPI_Queue_free(&q));
  MPI_Finalize();
  if (rank == 0) printf("overlap: complete after %d x 200 ms without MPI calls\n", rounds);
  return 0;
}
