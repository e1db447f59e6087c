/* A persistent allreduce (MPI-4.1 7.13) started many times with changing
 * input, its result checked each time: initialized once, so that nicq
 * compiles it to a trigger plan, then MPI_Start / MPI_Wait per iteration.
 *
 * usage: nicqrun -n 4 nicq_persistent_allreduce [iterations] [count]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 100;
  int count = argc > 2 ? atoi(argv[2]) : 256;
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double* in = malloc(sizeof(double) * (size_t)count);
  double* out = malloc(sizeof(double) * (size_t)count);
  MPI_Request req;
  MPI_Allreduce_init(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req);

  int errors = 0;
  for (int it = 0; it < iters; ++it) {
    /* Small integers: the sum is exact in any order of reduction. */
    for (int i = 0; i < count; ++i) in[i] = rank + it + i % 7;
    MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < count; ++i) {
      double want = (double)size * (size - 1) / 2 + (double)size * (it + i % 7);
      if (out[i] != want && errors++ < 5)
        fprintf(stderr, "allreduce: rank %d iteration %d: element %d is %g, expected %g\n", rank,
                it, i, out[i], want);
    }
  }
  MPI_Request_free(&req);
  if (errors) MPI_Abort(MPI_COMM_WORLD, 1);
  if (rank == 0)
    printf("persistent allreduce OK: %d ranks, %d starts of %d doubles\n", size, iters, count);
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}
