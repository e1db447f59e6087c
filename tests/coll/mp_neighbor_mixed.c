/* Many starts of one persistent neighbourhood alltoall (and allgather) on
 * a 2D periodic stencil, mixed with blocking neighbourhood calls on the
 * same communicator: some steps run the blocking form instead, and some
 * run a blocking call between MPI_Start and MPI_Wait of the persistent
 * one (its traffic then crosses the epoch's). Every step sends new data,
 * so a block left from an earlier step, one that lands late or one that
 * matched the other call's message fails the check; blocks of the
 * blocking calls are checked as well.
 * Usage: mp_neighbor_mixed STEPS [offload]
 *   offload: the init passes nicq_algorithm=offload (the resident trigger
 *   plan even where the backend would leave it to the host schedule). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

#define NB 4    /* neighbours of the 2D stencil */
#define ITEMS 5 /* ints per block */

static MPI_Comm grid;
static int me, src[NB];

/* What rank q puts in its block `slot` at `step`; `kind` tells the calls apart. */
static int val(int kind, int step, int q, int slot, int k) {
  return ((kind * 7919 + step) * 64 + q) * 64 * ITEMS + slot * ITEMS + k + 1;
}

/* per_slot: one block per neighbour (alltoall); else the one block an
 * allgather sends. */
static void fill(int* buf, int kind, int step, int per_slot) {
  for (int s = 0; s < (per_slot ? NB : 1); ++s)
    for (int k = 0; k < ITEMS; ++k) buf[s * ITEMS + k] = val(kind, step, me, per_slot ? s : 0, k);
}

/* Receive slot i came from src[i], who addressed it from its slot i ^ 1
 * (alltoall: what goes to the -1 neighbour lands in its +1 slot) or from
 * its one block (allgather). */
static void verify(const int* got, int kind, int step, int alltoall, const char* what) {
  for (int i = 0; i < NB; ++i)
    for (int k = 0; k < ITEMS; ++k) {
      const int want = val(kind, step, src[i], alltoall ? i ^ 1 : 0, k);
      CHECK(got[i * ITEMS + k] == want, "%s step %d: slot %d item %d from rank %d is %d, want %d",
            what, step, i, k, src[i], got[i * ITEMS + k], want);
    }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int steps = argc > 1 ? atoi(argv[1]) : 100;
  const int offload = argc > 2 && strcmp(argv[2], "offload") == 0;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[2] = {0, 0};
  const int periods[2] = {1, 1};
  CHECK_OK(MPI_Dims_create(size, 2, dims));
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid));
  MPI_Comm_rank(grid, &me);
  g_rank = me;
  for (int d = 0; d < 2; ++d) CHECK_OK(MPI_Cart_shift(grid, d, 1, &src[2 * d], &src[2 * d + 1]));

  static int a_send[NB * ITEMS], a_recv[NB * ITEMS]; /* persistent alltoall */
  static int g_send[ITEMS], g_recv[NB * ITEMS];      /* persistent allgather */
  static int b_send[NB * ITEMS], b_recv[NB * ITEMS]; /* blocking calls */
  MPI_Info info = MPI_INFO_NULL;
  if (offload) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "nicq_algorithm", "offload");
  }
  MPI_Request a2a, ag;
  CHECK_OK(
      MPI_Neighbor_alltoall_init(a_send, ITEMS, MPI_INT, a_recv, ITEMS, MPI_INT, grid, info, &a2a));
  CHECK_OK(
      MPI_Neighbor_allgather_init(g_send, ITEMS, MPI_INT, g_recv, ITEMS, MPI_INT, grid, info, &ag));
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);

  int persistent_steps = 0, crossed = 0;
  for (int step = 0; step < steps; ++step) {
    const int mode = step % 4; /* 0, 1: persistent; 2: blocking only; 3: blocking inside */
    if (mode == 2) {
      fill(b_send, 2, step, 1);
      CHECK_OK(MPI_Neighbor_alltoall(b_send, ITEMS, MPI_INT, b_recv, ITEMS, MPI_INT, grid));
      verify(b_recv, 2, step, 1, "blocking alltoall");
      continue;
    }
    fill(a_send, 0, step, 1);
    fill(g_send, 1, step, 0);
    memset(a_recv, 0, sizeof a_recv);
    memset(g_recv, 0, sizeof g_recv);
    CHECK_OK(MPI_Start(&a2a));
    CHECK_OK(MPI_Start(&ag));
    if (mode == 3) {
      fill(b_send, 3, step, 0);
      CHECK_OK(MPI_Neighbor_allgather(b_send, ITEMS, MPI_INT, b_recv, ITEMS, MPI_INT, grid));
      verify(b_recv, 3, step, 0, "blocking allgather between start and wait");
      ++crossed;
    }
    CHECK_OK(MPI_Wait(&a2a, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&ag, MPI_STATUS_IGNORE));
    verify(a_recv, 0, step, 1, "persistent alltoall");
    verify(g_recv, 1, step, 0, "persistent allgather");
    ++persistent_steps;
  }
  CHECK_OK(MPI_Request_free(&a2a));
  CHECK_OK(MPI_Request_free(&ag));
  MPI_Comm_free(&grid);
  if (me == 0)
    printf("neighbor mixed: %d steps, %d persistent (%d with a blocking call inside), %s\n", steps,
           persistent_steps, crossed, offload ? "plan forced" : "default choice");
  MPI_Finalize();
  return 0;
}
