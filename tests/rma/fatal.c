/* A window's default error handler is MPI_ERRORS_ARE_FATAL even when the
 * communicator's is MPI_ERRORS_RETURN: an unlock without a lock aborts the
 * job with the message, while the other ranks wait in a receive that never
 * completes. Run by tests/api/expect_fatal.sh (nonzero exit, the message,
 * no hang). */
#include "mp_check.h"

int main(int argc, char** argv) {
  int rank, size, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Win win;
  CHECK_OK(MPI_Win_create(&x, sizeof x, sizeof x, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  if (rank == size - 1) {
    MPI_Win_unlock(0, win);
    fprintf(stderr, "rank %d: MPI_Win_unlock returned under MPI_ERRORS_ARE_FATAL\n", rank);
    return 0; /* reaching here makes the test fail: expect_fatal.sh sees the line */
  }
  MPI_Recv(&x, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  fprintf(stderr, "rank %d: MPI_Recv returned\n", rank);
  return 0;
}
