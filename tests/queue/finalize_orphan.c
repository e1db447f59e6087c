/* MPI_Finalize after an erroneous program freed active requests that can
 * never complete (their peer never sends): a matched persistent receive
 * started with MPI_Start, and a plain MPI_Irecv. MPI makes this erroneous;
 * nicq must not hang: after NICQ_PEER_TIMEOUT (2 s in the test) without
 * progress it reports and cancels them, and MPI_Finalize returns on every
 * rank. The test passes when every rank gets past MPI_Finalize. */
#include <stdio.h>

#include "check.h"

int main(int argc, char* argv[]) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  static double buf[8], plain[8];
  MPI_Request r, p;
  if (rank == 0)
    QT_OK(MPI_Recv_init(buf, 8, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, &r));
  else if (rank == 1)
    QT_OK(MPI_Send_init(buf, 8, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, &r));
  if (rank < 2) QT_OK(MPI_Match(&r));
  if (rank == 0) {
    QT_OK(MPI_Start(&r));                                             /* the sender never starts */
    QT_OK(MPI_Irecv(plain, 8, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, &p)); /* never sent */
    QT_OK(MPI_Request_free(&p));
  }
  if (rank < 2) QT_OK(MPI_Request_free(&r));
  MPI_Finalize();
  printf("finalize_orphan: rank %d of %d returned from MPI_Finalize\n", rank, size);
  return 0;
}
