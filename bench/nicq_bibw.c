/* OSU-style bidirectional bandwidth between ranks 0 and 1: both post a
 * window of 64 receives and 64 sends at once and wait for all of them;
 * bandwidth counts the bytes of both directions. Output as osu_bibw:
 * "# Size  Bandwidth (MB/s)", MB = 10^6 bytes. After the timed loop each
 * rank checks the last window's data against the peer's pattern. */
#include "osu_util.h"

#define WINDOW 64

int main(int argc, char** argv) {
  int rank, size;
  struct osu_options o;
  if (osu_p2p_start(&argc, &argv, "nicq_bibw", 0, 1, 4L << 20, &o, &rank, &size) != 0) return 1;
  /* Windows make each iteration 128 messages: scale the OSU defaults down. */
  if (o.iters > 100) o.iters /= 100;
  if (o.warmup > 10) o.warmup /= 20;
  MPI_Comm pair = osu_pair_comm(rank);
  const int peer = rank == 0 ? 1 : 0;
  char* sbuf = osu_buffer(o.max_size, 0);
  char* rbuf = osu_buffer(o.max_size, 0);
  MPI_Request reqs[2 * WINDOW];
  MPI_Status stats[2 * WINDOW];
  if (rank == 0) {
    osu_header("Bi-Directional Bandwidth Test", &o, size);
    printf("# %-10s%18s", "Size", "Bandwidth (MB/s)");
    osu_full_columns(&o, "MB/s");
    printf("\n");
    fflush(stdout);
  }
  struct osu_progress progress;
  osu_progress_init(&progress, &o, rank);
  for (long n = o.min_size > 0 ? o.min_size : 1; n <= o.max_size; n *= 2) {
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    memset(sbuf, osu_pattern(rank, n), (size_t)n);
    memset(rbuf, 0, (size_t)n);
    osu_sync_pair(rank);
    double t0 = 0;
    for (int i = 0; i < iters + warmup && rank < 2; ++i) {
      if (i == warmup) t0 = MPI_Wtime();
      for (int w = 0; w < WINDOW; ++w)
        MPI_Irecv(rbuf, (int)n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &reqs[w]);
      for (int w = 0; w < WINDOW; ++w)
        MPI_Isend(sbuf, (int)n, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &reqs[WINDOW + w]);
      MPI_Waitall(2 * WINDOW, reqs, stats);
    }
    double secs = MPI_Wtime() - t0;
    if (rank < 2) {
      osu_check_bytes("bidirectional window", rbuf, n, osu_pattern(peer, n));
      osu_print_row(&o, pair, n, 2.0 * n * WINDOW * iters / secs / 1e6, iters);
    }
    osu_progress_done(&progress, &o, n);
  }
  free(sbuf);
  free(rbuf);
  MPI_Comm_free(&pair);
  MPI_Finalize();
  return 0;
}
