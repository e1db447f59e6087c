/* Waitany / Waitsome / Testsome / Testany semantics across ranks. Rank 0
 * posts one receive per peer (plus MPI_REQUEST_NULL holes); the peers send
 * in reverse rank order, one at a time after a go-token from rank 0, so the
 * completion order is known: each call must report exactly the request that
 * completed, with its status, and null entries never. */
#include "mp_check.h"

#define GO_TAG 50
#define DATA_TAG 51

static void release(int peer) {
  int go = 1;
  CHECK_OK(MPI_Send(&go, 1, MPI_INT, peer, GO_TAG, MPI_COMM_WORLD));
}

static void peer_loop(int rank, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    int go, v = rank * 100 + round;
    CHECK_OK(MPI_Recv(&go, 1, MPI_INT, 0, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, 0, DATA_TAG, MPI_COMM_WORLD));
  }
}

int main(int argc, char** argv) {
  int rank, size;
  mp_init(&argc, &argv, &rank, &size);
  const int rounds = 3; /* Waitany, Waitsome, Testsome+Testany */
  if (size < 2) {
    printf("completion: needs 2 or more ranks, skipped\n");
    MPI_Finalize();
    return 0;
  }
  if (rank != 0) {
    peer_loop(rank, rounds);
  } else {
    int n = 2 * size; /* slot 2p holds peer p's receive, odd slots stay null */
    MPI_Request* reqs = malloc(sizeof(MPI_Request) * (size_t)n);
    int* vals = malloc(sizeof(int) * (size_t)size);
    int* indices = malloc(sizeof(int) * (size_t)n);
    MPI_Status* sts = malloc(sizeof(MPI_Status) * (size_t)n);
    for (int round = 0; round < rounds; ++round) {
      for (int i = 0; i < n; ++i) reqs[i] = MPI_REQUEST_NULL;
      for (int p = 1; p < size; ++p)
        CHECK_OK(MPI_Irecv(&vals[p], 1, MPI_INT, p, DATA_TAG, MPI_COMM_WORLD, &reqs[2 * p]));
      for (int p = size - 1; p >= 1; --p) {
        release(p);
        int want = 2 * p;
        MPI_Status st;
        if (round == 0) {
          int index = -1;
          CHECK_OK(MPI_Waitany(n, reqs, &index, &st));
          CHECK(index == want, "Waitany index %d, expected %d", index, want);
          CHECK(reqs[index] == MPI_REQUEST_NULL, "Waitany did not free the request");
          CHECK(st.MPI_SOURCE == p && st.MPI_TAG == DATA_TAG, "Waitany status %d/%d", st.MPI_SOURCE,
                st.MPI_TAG);
        } else if (round == 1) {
          int outcount = -1;
          CHECK_OK(MPI_Waitsome(n, reqs, &outcount, indices, sts));
          CHECK(outcount == 1 && indices[0] == want, "Waitsome outcount %d index %d", outcount,
                indices[0]);
          CHECK(sts[0].MPI_SOURCE == p, "Waitsome status source %d", sts[0].MPI_SOURCE);
        } else {
          int outcount = 0;
          while (outcount == 0) CHECK_OK(MPI_Testsome(n, reqs, &outcount, indices, sts));
          CHECK(outcount == 1 && indices[0] == want, "Testsome outcount %d index %d", outcount,
                indices[0]);
        }
        CHECK(vals[p] == p * 100 + round, "value from %d is %d", p, vals[p]);
      }
      /* Everything is null now. */
      int index = 0, flag = 0, outcount = 0;
      CHECK_OK(MPI_Waitany(n, reqs, &index, MPI_STATUS_IGNORE));
      CHECK(index == MPI_UNDEFINED, "Waitany on nulls gave %d", index);
      CHECK_OK(MPI_Testany(n, reqs, &index, &flag, MPI_STATUS_IGNORE));
      CHECK(flag && index == MPI_UNDEFINED, "Testany on nulls gave %d/%d", flag, index);
      CHECK_OK(MPI_Waitsome(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
      CHECK(outcount == MPI_UNDEFINED, "Waitsome on nulls gave %d", outcount);
      CHECK_OK(MPI_Testsome(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE));
      CHECK(outcount == MPI_UNDEFINED, "Testsome on nulls gave %d", outcount);
    }
    free(reqs);
    free(vals);
    free(indices);
    free(sts);
  }
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("completion OK (%d ranks)\n", size);
  MPI_Finalize();
  return 0;
}
