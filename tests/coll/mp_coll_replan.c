/* Offloaded persistent allreduces freed and made again, round after round
 * (argv[1] rounds, argv[2] requests per round, on a duplicate of world).
 * With resident plans a freed plan leaves epochs armed ahead that never
 * started; the next plan reuses its counters. Each round checks every
 * element of every result of three Startall/Waitall passes. Guards the
 * native backend's draining of those leftover ops: left on the reused
 * counters' trigger lists they formed cycles of counter adds that deadlock
 * sockets' progress thread (the test then hangs until its timeout). */
#include <stdlib.h>

#include "coll_check.h"

enum { kMaxRequests = 8, kCount = 4 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  int per_round = argc > 2 ? atoi(argv[2]) : 5;
  if (per_round > kMaxRequests) per_round = kMaxRequests;
  MPI_Comm comm;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  int size;
  MPI_Comm_rank(comm, &g_rank);
  MPI_Comm_size(comm, &size);
  for (int round = 0; round < rounds; round++) {
    MPI_Request req[kMaxRequests];
    double in[kMaxRequests][kCount], out[kMaxRequests][kCount];
    for (int b = 0; b < per_round; b++) {
      CHECK_OK(MPI_Allreduce_init(in[b], out[b], kCount, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL,
                                  &req[b]));
    }
    for (int pass = 0; pass < 3; pass++) {
      for (int b = 0; b < per_round; b++)
        for (int k = 0; k < kCount; k++) {
          in[b][k] = g_rank * 1000 + round * 100 + pass * 10 + b + k;
          out[b][k] = -1;
        }
      CHECK_OK(MPI_Startall(per_round, req));
      CHECK_OK(MPI_Waitall(per_round, req, MPI_STATUSES_IGNORE));
      for (int b = 0; b < per_round; b++)
        for (int k = 0; k < kCount; k++) {
          const double want =
              1000.0 * size * (size - 1) / 2 + size * (round * 100 + pass * 10 + b + k);
          CHECK(out[b][k] == want, "round %d pass %d request %d [%d]: %g, want %g", round, pass, b,
                k, out[b][k], want);
        }
    }
    for (int b = 0; b < per_round; b++) {
      CHECK_OK(MPI_Request_free(&req[b]));
      CHECK(req[b] == MPI_REQUEST_NULL, "request %d not nulled by MPI_Request_free", b);
    }
  }
  CHECK_OK(MPI_Comm_free(&comm));
  if (g_rank == 0) printf("coll_replan: %d rounds of %d plans OK\n", rounds, per_round);
  MPI_Finalize();
  return 0;
}
