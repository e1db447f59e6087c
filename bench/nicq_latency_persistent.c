/* OSU-style ping-pong latency between ranks 0 and 1 with persistent
 * requests (MPI_Send_init / MPI_Recv_init made once per size, then
 * MPI_Start / MPI_Wait every iteration); latency is half the round trip.
 * Rank 0 starts its receive before its send, rank 1 receives, then sends.
 * Ranks >= 2 idle. After the timed loop both ranks check that the last
 * message they received is the peer's byte pattern.
 * -M matches the two requests first (MPI_Matchall, draft chapter 13):
 * matched requests still run with MPI_Start / MPI_Wait (13.4), on nicq as
 * its matched (NIC) path; an MPI without matching prints that and exits 0. */
#include "osu_util.h"

int main(int argc, char** argv) {
  int rank, size;
  struct osu_options o;
  if (osu_p2p_start(&argc, &argv, "nicq_latency_persistent", OSU_ACCEPT_MATCHED, 1, 4L << 20, &o,
                    &rank, &size) != 0)
    return 1;
  MPI_Comm pair = osu_pair_comm(rank);
  char* sbuf = osu_buffer(o.max_size, 0);
  char* rbuf = osu_buffer(o.max_size, 0);
  const int peer = rank == 0 ? 1 : 0;
  if (rank == 0) {
    osu_header(o.matched ? "Matched Persistent Latency Test" : "Persistent Latency Test", &o, size);
#ifndef NICQ_MPI
    if (o.matched) printf("# form not supported by this MPI\n");
#endif
  }
#ifndef NICQ_MPI
  if (o.matched) {
    MPI_Finalize();
    return 0;
  }
#endif
  if (rank == 0) {
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
    MPI_Request send = MPI_REQUEST_NULL, recv = MPI_REQUEST_NULL;
    if (rank < 2) {
      MPI_Send_init(sbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &send);
      MPI_Recv_init(rbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &recv);
#ifdef NICQ_MPI
      /* Receive first: see nicq_latency_queued.c. */
      MPI_Request both[2] = {recv, send};
      if (o.matched && MPI_Matchall(2, both) != MPI_SUCCESS) osu_fail("MPI_Matchall failed");
#endif
    }
    osu_sync_pair(rank);
    double t0 = 0;
    for (int i = 0; i < iters + warmup && rank < 2; ++i) {
      if (i == warmup) t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Start(&recv);
        MPI_Start(&send);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
        MPI_Wait(&recv, MPI_STATUS_IGNORE);
      } else {
        MPI_Start(&recv);
        MPI_Wait(&recv, MPI_STATUS_IGNORE);
        MPI_Start(&send);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
      }
    }
    double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
    if (rank < 2) {
      osu_check_bytes("persistent ping-pong message", rbuf, n, osu_pattern(peer, n));
      MPI_Request_free(&send);
      MPI_Request_free(&recv);
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
