/* Under the default MPI_ERRORS_ARE_FATAL an argument error aborts the whole
 * job cleanly: the last rank sends to an invalid rank while the others wait
 * in MPI_Recv for a message that never comes. Run by expect_fatal.sh, which
 * requires a nonzero exit, the error message, and no hang. */
#include "mp_check.h"

int main(int argc, char** argv) {
  int rank, size, x = 0;
  mp_init(&argc, &argv, &rank, &size);
  if (rank == size - 1) {
    MPI_Send(&x, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
    fprintf(stderr, "rank %d: MPI_Send returned under MPI_ERRORS_ARE_FATAL\n", rank);
    return 0; /* reaching here makes the test fail: expect_fatal.sh sees the line */
  }
  MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  fprintf(stderr, "rank %d: MPI_Recv returned\n", rank);
  return 0;
}
