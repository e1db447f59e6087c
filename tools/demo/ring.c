/* The README's demo: every rank passes a token around the ring for several
 * rounds with nonblocking send/receive, and checks what it gets. Uses only
 * the MPI API, so `mpicc ring.c` builds it against nicq or any other MPI.
 *
 * usage: nicqrun -n 4 nicq_ring_demo [rounds] [count]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int rank, size;
  int rounds = argc > 1 ? atoi(argv[1]) : 10;
  int count = argc > 2 ? atoi(argv[2]) : 1024;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int* out = malloc(sizeof(int) * (size_t)count);
  int* in = malloc(sizeof(int) * (size_t)count);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < count; ++i) out[i] = rank * 1000003 + r * 101 + i;
    MPI_Request reqs[2];
    MPI_Status stats[2]; /* not MPI_STATUSES_IGNORE: GCC 12 warns on it (array parameter) */
    MPI_Irecv(in, count, MPI_INT, left, r, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, count, MPI_INT, right, r, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, stats);
    for (int i = 0; i < count; ++i) {
      if (in[i] != left * 1000003 + r * 101 + i) {
        fprintf(stderr, "ring: rank %d round %d: element %d is %d, expected %d\n", rank, r, i,
                in[i], left * 1000003 + r * 101 + i);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
  }
  if (rank == 0) printf("ring OK: %d ranks, %d rounds of %d ints\n", size, rounds, count);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
