/* OSU-style ping-pong latency between ranks 0 and 1: for each size, rank 0
 * sends and waits for the same size back; latency is half the round trip.
 * Output as osu_latency: "# Size  Latency (us)". Ranks >= 2 only idle. */
#include "osu_util.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct osu_options o;
  if (osu_parse(argc, argv, &o) != 0 || size < 2) {
    if (rank == 0 && size < 2) fprintf(stderr, "nicq_latency needs 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  char* sbuf = osu_buffer(o.max_size, 'a');
  char* rbuf = osu_buffer(o.max_size, 'b');
  if (rank == 0) {
    printf("# nicq OSU-style Latency Test\n");
    osu_library_line();
    printf("# %-10s%18s\n", "Size", "Latency (us)");
    fflush(stdout);
  }
  for (long n = o.min_size; n <= o.max_size; n = n ? n * 2 : 1) {
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    osu_sync_pair(rank);
    double t0 = 0;
    for (int i = 0; i < iters + warmup; ++i) {
      if (i == warmup) t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(sbuf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
        MPI_Recv(rbuf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(rbuf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
      }
    }
    double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
    if (rank == 0) {
      printf("%-10ld%18.2f\n", n, us);
      fflush(stdout);
    }
    if (n == 0 && o.max_size == 0) break;
  }
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
