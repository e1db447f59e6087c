/* A rank that leaves after MPI_Init without MPI_Finalize, for nicqrun's
 * tests. usage: exit_without_finalize <mode>
 *   blocked   rank 1 returns from main; rank 0 waits in MPI_Recv from it and
 *             the others in MPI_Barrier. nicqrun must end the job naming
 *             rank 1; a rank whose call returns prints CALL-RETURNED (the
 *             bug: a peer saw an exit with status 0 as a success).
 *   recover   (under --enable-recovery) the same, but rank 0 takes errors
 *             as return codes: its receive must fail with
 *             MPI_ERR_PROC_FAILED (RECOVER-OK); then every survivor, also
 *             one that never met the failure, finalizes (FINALIZED).
 *   finalize  every rank initializes and finalizes: a clean job. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "blocked";
  int rank = -1, size = 0, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank is initialized before rank 1 leaves */
  if (strcmp(mode, "finalize") == 0) {
    MPI_Finalize();
    return 0;
  }
  if (rank == 1) return 0; /* no MPI_Finalize */
  if (strcmp(mode, "recover") == 0) {
    if (rank == 0) {
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
      int cls = -1, rc = MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Error_class(rc, &cls);
      if (cls != MPI_ERR_PROC_FAILED) {
        printf("check failed: receive from the departed rank gave class %d\n", cls);
        return 2;
      }
      printf("RECOVER-OK: rank 0's receive failed with MPI_ERR_PROC_FAILED\n");
      fflush(stdout);
    }
    /* Every survivor, also one that never met the failure, finalizes. */
    const int rc = MPI_Finalize();
    printf("FINALIZED rank %d rc %d\n", rank, rc);
    fflush(stdout);
    return 0;
  }
  int rc = rank == 0 ? MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
                     : MPI_Barrier(MPI_COMM_WORLD);
  printf("CALL-RETURNED: rank %d, rc %d\n", rank, rc);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
