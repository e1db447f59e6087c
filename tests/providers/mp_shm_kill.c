/* A rank SIGKILLed while a queued chain runs on the shm trigger backend
 * (NICQ_OFFLOAD=shm): rank 0's fence fails instead of hanging, its next
 * barrier with MPI_ERR_PROC_FAILED, nicqrun names the killed rank, and no
 * shared-memory name of either rank is left in /dev/shm (the backend's
 * areas are memfds: they go with their processes).
 *
 * Both ranks run a synchronous send and its receive as an enqueued chain
 * for a few checked epochs; then rank 1 dies without starting its side of
 * the next epoch, while rank 0's side of it is already enqueued. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../queue/check.h"

#define N 8
#define GOOD_EPOCHS 3

/* Names in /dev/shm made by nicq for process `pid` ("nicq-...-<pid>-..."
 * or "nicq_..._<pid>"). */
static int NamesOf(long pid) {
  char dash[32], under[32];
  snprintf(dash, sizeof dash, "-%ld-", pid);
  snprintf(under, sizeof under, "_%ld", pid);
  int found = 0;
  DIR* d = opendir("/dev/shm");
  if (!d) return 0;
  for (struct dirent* e; (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, "nicq", 4) == 0 &&
        (strstr(e->d_name, dash) != NULL || strstr(e->d_name, under) != NULL))
      ++found;
  closedir(d);
  return found;
}

int main(int argc, char* argv[]) {
  /* nicqrun sends SIGTERM to the others once rank 1 dies: rank 0 ignores
   * it so that it lives to report. */
  signal(SIGTERM, SIG_IGN);
  int rank, size;
  double a[N], ra[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  if (rank != 0) signal(SIGTERM, SIG_DFL);
  if (size != 2) QT_FAIL("needs 2 ranks");
  long pids[2], mine = (long)getpid();
  QT_OK(MPI_Allgather(&mine, 1, MPI_LONG, pids, 1, MPI_LONG, MPI_COMM_WORLD));
  MPI_Queue q;
  MPI_Request r = MPI_REQUEST_NULL;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  if (rank == 0) QT_OK(MPI_Ssend_init(a, N, MPI_DOUBLE, 1, 11, MPI_COMM_WORLD, &r));
  if (rank == 1) QT_OK(MPI_Recv_init(ra, N, MPI_DOUBLE, 0, 11, MPI_COMM_WORLD, &r));
  QT_OK(MPI_Match(&r));
  for (int it = 0; it < GOOD_EPOCHS; ++it) {
    for (int i = 0; i < N; ++i) a[i] = it * 1000 + i, ra[i] = -1;
    QT_OK(MPI_Enqueue_start(q, &r));
    QT_OK(MPI_Enqueue_wait(q, &r, MPI_STATUS_IGNORE));
    QT_OK(MPI_Queue_fence(q));
    for (int i = 0; i < N && rank == 1; ++i)
      QT_CHECK(ra[i] == it * 1000 + i, "epoch %d: ra[%d] = %g", it, i, ra[i]);
  }
  if (rank == 1) kill(getpid(), SIGKILL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc = MPI_Enqueue_start(q, &r), cls = -1;
  if (rc == MPI_SUCCESS) rc = MPI_Enqueue_wait(q, &r, MPI_STATUS_IGNORE);
  if (rc == MPI_SUCCESS) rc = MPI_Queue_fence(q);
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  QT_CHECK(rc != MPI_SUCCESS, "the epoch with a killed rank completed");
  /* The queue call that meets the dead peer says so in its class, as the
   * runtime's next call does. */
  MPI_Error_class(rc, &cls);
  QT_CHECK(cls == MPI_ERR_PROC_FAILED, "queue call with a killed rank: class %d (%s)", cls, msg);
  MPI_Error_class(MPI_Barrier(MPI_COMM_WORLD), &cls);
  QT_CHECK(cls == MPI_ERR_PROC_FAILED, "barrier with a killed rank: class %d", cls);
  const int left = NamesOf(pids[0]) + NamesOf(pids[1]);
  QT_CHECK(left == 0, "%d shared-memory names of the job remain in /dev/shm", left);
  printf("SHMKILL-OK: the fence failed (%s), the barrier MPI_ERR_PROC_FAILED, /dev/shm clean\n",
         msg);
  fflush(stdout);
  _exit(0);
}
