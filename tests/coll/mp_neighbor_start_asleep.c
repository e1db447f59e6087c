/* A persistent neighbourhood alltoall started with MPI_Start finishes
 * while every host thread sleeps (issue 17: the halo exchange of a stencil
 * progresses with the host asleep, on the NIC or the emulator's agent).
 * Usage: mp_neighbor_start_asleep [ints] [offload] (ints: per block,
 * default 2; offload: the request carries nicq_algorithm=offload, which the
 * emulated backend needs to take the plan where ranks outnumber cores).
 *
 * The periodic 2x2 grid of the benchmark's 2D stencil (4 ranks, four
 * neighbours each; MPI 4.1 8.6: receive slot 2d holds what the -1
 * neighbour of dimension d sent to its +1 neighbour, slot 2d ^ 1). Each
 * epoch sends data of its own (an epoch delivered twice, late or into the
 * wrong slot shows). One timed epoch (MPI_Start, MPI_Wait) gives the step;
 * then, per epoch:
 *   - the ranks idle in nanosleep first (idle: 30 ms, longer than every
 *     agent's and progress thread's nap, so they sleep when the start
 *     comes and the start itself must wake what moves the epoch);
 *   - MPI_Start, then no MPI call but NICQX_Request_work_done, which drives
 *     no progress: sleep three steps, then in 200 ms steps while the
 *     epoch is unfinished, at most 20 s;
 *   - the epoch must be finished and every receive block hold its data
 *     before MPI_Wait; then MPI_Wait and the same check.
 * Where only host calls advance the exchange, it fails at the first check. */
#include <string.h>

#include "asleep_check.h"
#include "coll_check.h"

#define NB 4     /* neighbours of the 2D stencil */
#define EPOCHS 4 /* asleep epochs after the timed one */

static int item(int epoch, int rank, int block, int k) {
  return 1000000 * (epoch + 1) + 10000 * rank + 1000 * block + k;
}

static void fill(int* send, int* recv, int n, int epoch, int rank) {
  for (int j = 0; j < NB; j++)
    for (int k = 0; k < n; k++) send[j * n + k] = item(epoch, rank, j, k);
  for (int k = 0; k < NB * n; k++) recv[k] = -1;
}

/* Every receive slot holds what its source sent to this rank this epoch. */
static void check_blocks(const int* recv, int n, int epoch, const int src[NB], const char* when) {
  for (int i = 0; i < NB; i++)
    for (int k = 0; k < n; k++) {
      const int want = item(epoch, src[i], i ^ 1, k);
      CHECK(recv[i * n + k] == want, "epoch %d %s: slot %d (from rank %d) item %d is %d, want %d",
            epoch, when, i, src[i], k, recv[i * n + k], want);
    }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int n = argc > 1 ? atoi(argv[1]) : 2;
  const int offload = argc > 2 && strcmp(argv[2], "offload") == 0;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  CHECK(size == 4, "run on 4 ranks (got %d)", size);
  CHECK(n > 0, "ints per block must be positive (got %d)", n);
  int dims[2] = {2, 2}, periods[2] = {1, 1}, rank, src[NB];
  MPI_Comm grid;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
  MPI_Comm_rank(grid, &rank);
  for (int d = 0; d < 2; d++) CHECK_OK(MPI_Cart_shift(grid, d, 1, &src[2 * d], &src[2 * d + 1]));

  int* send = malloc(sizeof(int) * NB * (size_t)n);
  int* recv = malloc(sizeof(int) * NB * (size_t)n);
  CHECK(send && recv, "out of memory");
  MPI_Info info = MPI_INFO_NULL;
  if (offload) {
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_set(info, "nicq_algorithm", "offload"));
  }
  MPI_Request req;
  CHECK_OK(MPI_Neighbor_alltoall_init(send, n, MPI_INT, recv, n, MPI_INT, grid, info, &req));

  /* The timed epoch: how long a step takes here with the host in MPI_Wait. */
  fill(send, recv, n, 0, rank);
  CHECK_OK(MPI_Barrier(grid));
  const double t0 = MPI_Wtime();
  CHECK_OK(MPI_Start(&req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  double step = MPI_Wtime() - t0, slowest = 0;
  check_blocks(recv, n, 0, src, "after MPI_Wait");
  CHECK_OK(MPI_Allreduce(&step, &slowest, 1, MPI_DOUBLE, MPI_MAX, grid));

  for (int e = 1; e <= EPOCHS; e++) {
    fill(send, recv, n, e, rank);
    CHECK_OK(MPI_Barrier(grid));
    sleep_seconds(0.03);
    CHECK_OK(MPI_Start(&req));
    /* No MPI call from here to MPI_Wait but the non-progressing read. */
    int done = 0;
    sleep_seconds(3 * slowest + 0.002);
    double slept = 3 * slowest;
    CHECK_OK(NICQX_Request_work_done(req, &done));
    while (!done && slept < 20.0) {
      sleep_seconds(0.2);
      slept += 0.2;
      CHECK_OK(NICQX_Request_work_done(req, &done));
    }
    CHECK(done,
          "epoch %d: not finished after the host slept %.1f s with no MPI call (the exchange did "
          "not advance without the host)",
          e, slept);
    check_blocks(recv, n, e, src, "before MPI_Wait (host asleep)");
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_blocks(recv, n, e, src, "after MPI_Wait");
  }
  CHECK_OK(MPI_Request_free(&req));
  if (info != MPI_INFO_NULL) CHECK_OK(MPI_Info_free(&info));
  CHECK_OK(MPI_Comm_free(&grid));
  free(send);
  free(recv);
  if (rank == 0)
    printf("neighbor_start_asleep: %d epochs of %d ints per block finished asleep (step %.1f us)\n",
           EPOCHS, n, slowest * 1e6);
  MPI_Finalize();
  return 0;
}
