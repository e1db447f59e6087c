/* Two queues used concurrently from two threads (13.4: queues are
 * independent; each is used by one thread at a time). The main thread
 * matches everything first; then each thread runs its own ring exchange on
 * its own communicator and queue, with per-iteration data checks. */
#include <pthread.h>
#include <string.h>

#include "check.h"

#define N 512
#define NITER 40

struct Lane {
  int id;
  MPI_Comm comm;
  MPI_Queue queue;
  MPI_Request reqs[2];
  double sbuf[N], rbuf[N];
  int left, right, rank;
};

static double Value(int lane, int src, int iter, int i) {
  return lane * 1e7 + src * 1e5 + iter * 100 + i % 100;
}

static void* Run(void* arg) {
  struct Lane* l = (struct Lane*)arg;
  for (int it = 0; it < NITER; ++it) {
    for (int i = 0; i < N; ++i) l->sbuf[i] = Value(l->id, l->rank, it, i);
    QT_OK(MPI_Enqueue_startall(&l->queue, 2, l->reqs));
    QT_OK(MPI_Enqueue_waitall(&l->queue, 2, l->reqs, MPI_STATUSES_IGNORE));
    QT_OK(MPI_Queue_fence(&l->queue));
    for (int i = 0; i < N; ++i)
      QT_CHECK(l->rbuf[i] == Value(l->id, l->left, it, i), "lane %d iter %d rbuf[%d] = %g", l->id,
               it, i, l->rbuf[i]);
  }
  return NULL;
}

int main(int argc, char* argv[]) {
  int provided = 0, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  QT_CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
  static struct Lane lanes[2];
  MPI_Request all[4];
  for (int k = 0; k < 2; ++k) {
    struct Lane* l = &lanes[k];
    l->id = k;
    l->rank = rank;
    l->left = (rank - 1 + size) % size;
    l->right = (rank + 1) % size;
    QT_OK(MPI_Comm_dup(MPI_COMM_WORLD, &l->comm));
    QT_OK(MPI_Queue_init(&l->queue, MPI_QUEUE_TYPE_DEFAULT, NULL));
    QT_OK(MPI_Recv_init(l->rbuf, N, MPI_DOUBLE, l->left, 5, l->comm, &l->reqs[0]));
    QT_OK(MPI_Send_init(l->sbuf, N, MPI_DOUBLE, l->right, 5, l->comm, &l->reqs[1]));
    all[2 * k] = l->reqs[0];
    all[2 * k + 1] = l->reqs[1];
  }
  QT_OK(MPI_Matchall(4, all));
  pthread_t t[2];
  for (int k = 0; k < 2; ++k) pthread_create(&t[k], NULL, Run, &lanes[k]);
  for (int k = 0; k < 2; ++k) pthread_join(t[k], NULL);
  for (int k = 0; k < 2; ++k) {
    QT_OK(MPI_Request_free(&lanes[k].reqs[0]));
    QT_OK(MPI_Request_free(&lanes[k].reqs[1]));
    QT_OK(MPI_Queue_free(&lanes[k].queue));
    QT_OK(MPI_Comm_free(&lanes[k].comm));
  }
  MPI_Finalize();
  if (rank == 0) printf("threads: 2 queues x %d iterations checked\n", NITER);
  return 0;
}
