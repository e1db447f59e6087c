/* Matched, enqueued persistent collectives on the same-node area: every
 * start of a request the area runs (MPI_Start and, once matched,
 * MPI_Enqueue_start alike) is an area start, so the rank inside MPI does
 * the work for a peer that sleeps. Per round, every rank but 0 enqueues a
 * start and a wait of a 1 MiB allreduce, lets one MPI call run the start
 * step, and then sleeps with no MPI call until rank 0 says (through a
 * file) that its MPI_Queue_fence returned. That happens only when rank 0
 * could finish the allreduce alone: on the area it reads every rank's
 * input and writes every rank's result; a host schedule would need the
 * sleepers' own sends, and the sleepers give up after 60 s. Then every
 * rank fences and checks the sum. Rounds alternate MPI_Start/MPI_Wait on
 * rank 0 with its enqueued start, which must take the same path. A bcast
 * and a barrier of the same queue check the other area kinds' data.
 * Usage: mp_coll_queue_area [rounds] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "node_check.h"

#define N (131072 + 3)

static char g_flag[128];

/* Rank 0 marks round `round` done; the others wait for the mark asleep. */
static void MarkDone(int round) {
  FILE* f = fopen(g_flag, "w");
  CHECK(f != NULL, "cannot create %s", g_flag);
  fprintf(f, "%d\n", round);
  fclose(f);
}

static int SeenDone(int round) {
  FILE* f = fopen(g_flag, "r");
  int seen = -1;
  if (!f) return 0;
  if (fscanf(f, "%d", &seen) != 1) seen = -1;
  fclose(f);
  return seen == round;
}

static void SleepUntilDone(int round) {
  const struct timespec nap = {0, 2000000};
  for (int i = 0; i < 30000 && !SeenDone(round); ++i) nanosleep(&nap, NULL);
  CHECK(SeenDone(round),
        "round %d: rank 0's fence did not return in 60 s while rank %d slept outside MPI with "
        "its start published: the enqueued start is not on the same-node area",
        round, rank);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  g_rank = rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int rounds = argc > 1 ? atoi(argv[1]) : 4;
  long job = rank == 0 ? (long)getpid() : 0;
  CHECK_OK(MPI_Bcast(&job, 1, MPI_LONG, 0, MPI_COMM_WORLD));
  snprintf(g_flag, sizeof g_flag, "/tmp/nicq-queue-area-%ld", job);

  double* in = malloc(N * sizeof(double));
  double* out = malloc(N * sizeof(double));
  int value[4];
  MPI_Request reqs[3];
  CHECK_OK(
      MPI_Allreduce_init(in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[0]));
  CHECK_OK(MPI_Bcast_init(value, 4, MPI_INT, p - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]));
  CHECK_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[2]));
  CHECK_OK(MPI_Matchall(3, reqs));
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));

  for (int round = 0; round < rounds; ++round) {
    Fill(in, N, round);
    for (long i = 0; i < N; ++i) out[i] = -1;
    if (rank == 0 && round % 2 == 1) {
      CHECK_OK(MPI_Start(&reqs[0]));
      CHECK_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
    } else {
      CHECK_OK(MPI_Enqueue_start(q, &reqs[0]));
      CHECK_OK(MPI_Enqueue_wait(q, &reqs[0], MPI_STATUS_IGNORE));
    }
    if (rank == 0) {
      if (round % 2 == 0) CHECK_OK(MPI_Queue_fence(q));
      CheckSum(out, N, round, "allreduce, rank 0 after its fence");
      MarkDone(round);
    } else {
      /* One call that runs the queue's start step (a progress pass). */
      int flag;
      CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
      SleepUntilDone(round);
      CHECK_OK(MPI_Queue_fence(q));
      CheckSum(out, N, round, "allreduce, after the sleep and the fence");
    }
    CheckSameBits(out, N * sizeof(double), "allreduce");
    /* The bcast and the barrier on the same queue, data checked. */
    for (int k = 0; k < 4; ++k) value[k] = rank == p - 1 ? 1000 * round + k : -1;
    CHECK_OK(MPI_Enqueue_start(q, &reqs[1]));
    CHECK_OK(MPI_Enqueue_wait(q, &reqs[1], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Enqueue_start(q, &reqs[2]));
    CHECK_OK(MPI_Enqueue_wait(q, &reqs[2], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Queue_fence(q));
    for (int k = 0; k < 4; ++k)
      CHECK(value[k] == 1000 * round + k, "bcast round %d: [%d] = %d", round, k, value[k]);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  if (rank == 0) unlink(g_flag);
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Request_free(&reqs[i]));
  CHECK_OK(MPI_Queue_free(&q));
  free(in);
  free(out);
  if (rank == 0) printf("coll_queue_area: %d rounds, %d ranks\n", rounds, p);
  MPI_Finalize();
  return 0;
}
