/* Handles freed while operations still use them (MPI 4.1 2.5.1: freeing
 * marks the object for deallocation; pending operations complete
 * normally), on 2+ ranks (ranks beyond 1 take part in the collective calls
 * only):
 *   - a communicator freed on both sides while a receive is pending on it
 *     keeps its context: a communicator duplicated afterwards must not
 *     deliver its messages to that receive, which is then cancelled;
 *   - a persistent receive freed while active still receives its data;
 *   - a datatype and a user op freed right after a nonblocking reduction
 *     that uses them (the reduction still applies the op). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mp_check.h"

static void SumInts(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len * 2; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  /* 1. Communicator freed with a receive pending on it. */
  MPI_Comm d, e;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  int pending_value = -1;
  MPI_Request pending = MPI_REQUEST_NULL;
  if (rank == 0) CHECK_OK(MPI_Irecv(&pending_value, 1, MPI_INT, 1, 7, d, &pending));
  CHECK_OK(MPI_Comm_free(&d));
  CHECK(d == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &e));
  if (rank == 1) {
    int v = 111;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, 0, 7, e));
  }
  if (rank == 0) {
    int got = -1, flag = 1;
    MPI_Status st;
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, 1, 7, e, &st));
    CHECK(got == 111 && st.MPI_SOURCE == 1 && st.MPI_TAG == 7,
          "message on the new communicator: value %d source %d tag %d", got, st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK_OK(MPI_Test(&pending, &flag, &st));
    CHECK(!flag && pending_value == -1,
          "the receive on the freed communicator took a message of the new one (%d)",
          pending_value);
    CHECK_OK(MPI_Cancel(&pending));
    CHECK_OK(MPI_Wait(&pending, &st));
    int cancelled = 0;
    CHECK_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled && pending_value == -1, "cancelled %d value %d", cancelled, pending_value);
  }
  CHECK_OK(MPI_Comm_free(&e));

  /* 2. Active persistent receive freed, then its message arrives. */
  int b = -1;
  if (rank == 0) {
    MPI_Request pr;
    CHECK_OK(MPI_Recv_init(&b, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &pr));
    CHECK_OK(MPI_Start(&pr));
    CHECK_OK(MPI_Request_free(&pr));
    CHECK(pr == MPI_REQUEST_NULL, "MPI_Request_free did not reset the handle");
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 1) {
    int v = 5;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD));
  }
  /* The freed request has no handle to wait on: a second message after
   * it on the same communicator is received only after it (messages do not
   * overtake), so its data is in place once the second one is. */
  if (rank <= 1) {
    int token = 0;
    if (rank == 1) CHECK_OK(MPI_Send(&token, 1, MPI_INT, 0, 10, MPI_COMM_WORLD));
    if (rank == 0) {
      CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(b == 5, "the freed active receive got %d", b);
    }
  }

  /* 3. Datatype and op freed while a nonblocking reduction uses them. */
  MPI_Datatype pair;
  MPI_Op op;
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  CHECK_OK(MPI_Type_commit(&pair));
  CHECK_OK(MPI_Op_create(SumInts, 1, &op));
  int in[6], out[6];
  for (int i = 0; i < 6; ++i) in[i] = rank * 10 + i, out[i] = -1;
  MPI_Request r;
  CHECK_OK(MPI_Iallreduce(in, out, 3, pair, op, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Type_free(&pair));
  CHECK_OK(MPI_Op_free(&op));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  for (int i = 0; i < 6; ++i)
    CHECK(out[i] == 10 * size * (size - 1) / 2 + size * i, "allreduce element %d is %d", i, out[i]);

  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("lifetimes: all checks passed on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
