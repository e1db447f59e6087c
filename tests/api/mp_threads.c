/* MPI_THREAD_MULTIPLE through the API: two threads per rank exchange
 * messages concurrently with the ring neighbours, one on MPI_COMM_WORLD
 * (the short path of small point-to-point calls) and one on a duplicate
 * (the full checks), each alone on its communicator, mixing
 * MPI_Isend/MPI_Irecv/MPI_Waitall with
 * persistent requests, so request-table allocation, completion and the
 * error-free paths run from several threads at once. Every 20 rounds each
 * thread also runs a 32 KiB MPI_Iallreduce on its communicator: large
 * enough to start the host progress thread when NICQ_PROGRESS_THREAD=1,
 * which then shares the engine with both application threads. */
#include <pthread.h>

#include "mp_check.h"

#define ROUNDS 200
#define N 64
#define NRED 4096 /* doubles: 32 KiB */

struct Job {
  MPI_Comm comm;
  int rank, size, id;
};

static void* worker(void* arg) {
  struct Job* job = arg;
  int right = (job->rank + 1) % job->size, left = (job->rank + job->size - 1) % job->size;
  int out[N], in[N], pin[N];
  static _Thread_local double red[NRED];
  MPI_Request persist[2];
  CHECK_OK(MPI_Recv_init(pin, N, MPI_INT, right, 2, job->comm, &persist[0]));
  CHECK_OK(MPI_Send_init(out, N, MPI_INT, left, 2, job->comm, &persist[1]));
  for (int r = 0; r < ROUNDS; ++r) {
    for (int i = 0; i < N; ++i) out[i] = job->rank * 100000 + job->id * 10000 + r * 10 + i % 10;
    MPI_Request reqs[2];
    CHECK_OK(MPI_Irecv(in, N, MPI_INT, left, 1, job->comm, &reqs[0]));
    CHECK_OK(MPI_Isend(out, N, MPI_INT, right, 1, job->comm, &reqs[1]));
    CHECK_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; ++i)
      CHECK(in[i] == left * 100000 + job->id * 10000 + r * 10 + i % 10,
            "thread %d round %d: [%d] = %d", job->id, r, i, in[i]);
    CHECK_OK(MPI_Startall(2, persist));
    CHECK_OK(MPI_Waitall(2, persist, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; ++i)
      CHECK(pin[i] == right * 100000 + job->id * 10000 + r * 10 + i % 10,
            "thread %d round %d: persistent [%d] = %d", job->id, r, i, pin[i]);
    if (r % 20 == 0) {
      for (int i = 0; i < NRED; ++i) red[i] = job->rank + r + i;
      MPI_Request rq;
      CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, red, NRED, MPI_DOUBLE, MPI_SUM, job->comm, &rq));
      CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
      const double ranks = job->size * (job->size - 1) / 2.0;
      for (int i = 0; i < NRED; ++i)
        CHECK(red[i] == ranks + (double)job->size * (r + i), "thread %d round %d: sum [%d] = %g",
              job->id, r, i, red[i]);
    }
  }
  CHECK_OK(MPI_Request_free(&persist[0]));
  CHECK_OK(MPI_Request_free(&persist[1]));
  return NULL;
}

int main(int argc, char** argv) {
  int provided = -1, rank, size;
  CHECK_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
  struct Job jobs[2];
  pthread_t threads[2];
  for (int t = 0; t < 2; ++t) {
    jobs[t].rank = rank;
    jobs[t].size = size;
    jobs[t].id = t;
    if (t == 0)
      jobs[t].comm = MPI_COMM_WORLD;
    else
      CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm));
  }
  for (int t = 0; t < 2; ++t)
    CHECK(pthread_create(&threads[t], NULL, worker, &jobs[t]) == 0, "pthread_create");
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  CHECK_OK(MPI_Comm_free(&jobs[1].comm));
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("threads OK (%d ranks)\n", size);
  MPI_Finalize();
  return 0;
}
