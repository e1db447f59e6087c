/* OSU-style ping-pong latency between ranks 0 and 1: for each size, rank 0
 * sends and waits for the same size back; latency is half the round trip.
 * Output as osu_latency: "# Size  Latency (us)". Ranks >= 2 only idle.
 * Each rank sends its own byte pattern, and after the timed loop both
 * check that the last message they received is the peer's pattern. */
#include "osu_util.h"

/* One round trip; not inlined, so that callgrind's
 * --toggle-collect=pingpong_iteration counts exactly these calls. */
static __attribute__((noinline)) void pingpong_iteration(int rank, char* sbuf, char* rbuf, int n) {
  if (rank == 0) {
    MPI_Send(sbuf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
    MPI_Recv(rbuf, n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(rbuf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(sbuf, n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  int rank, size;
  struct osu_options o;
  if (osu_p2p_start(&argc, &argv, "nicq_latency", 0, 1, 4L << 20, &o, &rank, &size) != 0) return 1;
  MPI_Comm pair = osu_pair_comm(rank);
  char* sbuf = osu_buffer(o.max_size, 0);
  char* rbuf = osu_buffer(o.max_size, 0);
  const int peer = rank == 0 ? 1 : 0;
  if (rank == 0) {
    osu_header("Latency Test", &o, size);
    printf("# %-10s%18s", "Size", "Latency (us)");
    osu_full_columns(&o, "us");
    printf("\n");
    fflush(stdout);
  }
  struct osu_progress progress;
  osu_progress_init(&progress, &o, rank);
  for (long n = o.min_size; n <= o.max_size; n = osu_next_size(n)) {
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    memset(sbuf, osu_pattern(rank, n), (size_t)n);
    memset(rbuf, 0, (size_t)n);
    osu_sync_pair(rank);
    double t0 = 0;
    for (int i = 0; i < iters + warmup; ++i) {
      if (i == warmup) t0 = MPI_Wtime();
      if (rank < 2) pingpong_iteration(rank, sbuf, rbuf, (int)n);
    }
    double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
    if (rank < 2) {
      osu_check_bytes("ping-pong message", rbuf, n, osu_pattern(peer, n));
      osu_print_row(&o, pair, n, us, iters);
    }
    osu_progress_done(&progress, &o, n);
  }
  free(sbuf);
  free(rbuf);
  MPI_Comm_free(&pair);
  MPI_Finalize();
  return 0;
}
