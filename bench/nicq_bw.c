/* OSU-style unidirectional bandwidth between ranks 0 and 1: rank 0 posts a
 * window of 64 nonblocking sends, rank 1 a window of receives, then a short
 * acknowledgement closes each window. Output as osu_bw:
 * "# Size  Bandwidth (MB/s)" with MB = 10^6 bytes. Rank 1 checks the
 * last window's data against rank 0's pattern after the timed loop. */
#include "osu_util.h"

#define WINDOW 64

int main(int argc, char** argv) {
  int rank, size;
  struct osu_options o;
  if (osu_p2p_start(&argc, &argv, "nicq_bw", 0, 1, 4L << 20, &o, &rank, &size) != 0) return 1;
  /* Windows make each iteration 64 messages: scale the OSU defaults down. */
  if (o.iters > 100) o.iters /= 100;
  if (o.warmup > 10) o.warmup /= 20;
  MPI_Comm pair = osu_pair_comm(rank);
  char* sbuf = osu_buffer(o.max_size, 0);
  char* rbuf = osu_buffer(o.max_size, 0);
  MPI_Request reqs[WINDOW];
  /* A real array, not MPI_STATUSES_IGNORE: GCC 12 warns on the sentinel
   * passed to an array parameter (MPICH's and nicq's prototypes alike). */
  MPI_Status stats[WINDOW];
  char ack = 0;
  if (rank == 0) {
    osu_header("Bandwidth Test", &o, size);
    printf("# %-10s%18s", "Size", "Bandwidth (MB/s)");
    osu_full_columns(&o, "MB/s");
    printf("\n");
    fflush(stdout);
  }
  struct osu_progress progress;
  osu_progress_init(&progress, &o, rank);
  for (long n = o.min_size > 0 ? o.min_size : 1; n <= o.max_size; n *= 2) {
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    memset(sbuf, osu_pattern(0, n), (size_t)n);
    memset(rbuf, 0, (size_t)n);
    osu_sync_pair(rank);
    double t0 = 0;
    for (int i = 0; i < iters + warmup; ++i) {
      if (i == warmup) t0 = MPI_Wtime();
      if (rank == 0) {
        for (int w = 0; w < WINDOW; ++w)
          MPI_Isend(sbuf, (int)n, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &reqs[w]);
        MPI_Waitall(WINDOW, reqs, stats);
        MPI_Recv(&ack, 1, MPI_CHAR, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        for (int w = 0; w < WINDOW; ++w)
          MPI_Irecv(rbuf, (int)n, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &reqs[w]);
        MPI_Waitall(WINDOW, reqs, stats);
        MPI_Send(&ack, 1, MPI_CHAR, 0, 101, MPI_COMM_WORLD);
      }
    }
    double secs = MPI_Wtime() - t0;
    if (rank == 1) osu_check_bytes("bandwidth window", rbuf, n, osu_pattern(0, n));
    if (rank < 2) osu_print_row(&o, pair, n, (double)n * WINDOW * iters / secs / 1e6, iters);
    osu_progress_done(&progress, &o, n);
  }
  free(sbuf);
  free(rbuf);
  MPI_Comm_free(&pair);
  MPI_Finalize();
  return 0;
}
