/* A profiling tool's view of the library: this program defines MPI_Send,
 * MPI_Isend and MPI_Waitall itself, as a tool loaded ahead of the library
 * (LD_PRELOAD) would, each counting its calls while armed and passing them
 * on to the library's definition found with dlsym(RTLD_NEXT), the way that
 * needs no PMPI_ names (mp_pmpi.c tests those; docs/mpi-api.md
 * "Interposition"). Every call the program makes
 * must reach them, its data delivered; the library's own work must not:
 * the other send modes, the combined and blocking calls and the
 * collectives, which move their data with point-to-point inside, add
 * nothing to the counts. */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "mp_check.h"

static int armed;
static long sends, isends, waitalls;

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  typedef int (*fn_t)(const void*, int, MPI_Datatype, int, int, MPI_Comm);
  static fn_t real;
  if (!real) real = (fn_t)dlsym(RTLD_NEXT, "MPI_Send");
  sends += armed;
  return real(buf, count, datatype, dest, tag, comm);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  typedef int (*fn_t)(const void*, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request*);
  static fn_t real;
  if (!real) real = (fn_t)dlsym(RTLD_NEXT, "MPI_Isend");
  isends += armed;
  return real(buf, count, datatype, dest, tag, comm, request);
}

int MPI_Waitall(int count, MPI_Request* array_of_requests, MPI_Status* array_of_statuses) {
  typedef int (*fn_t)(int, MPI_Request*, MPI_Status*);
  static fn_t real;
  if (!real) real = (fn_t)dlsym(RTLD_NEXT, "MPI_Waitall");
  waitalls += armed;
  return real(count, array_of_requests, array_of_statuses);
}

int main(int argc, char** argv) {
  int rank, size;
  mp_init(&argc, &argv, &rank, &size);
  const int rounds = 5;
  const int paired = rank < (size & ~1); /* ranks 2k and 2k+1 exchange */
  const int peer = rank ^ 1;
  armed = 1;
  /* The counted calls. */
  for (int i = 0; paired && i < rounds; ++i) {
    int v = rank * 100 + i, got = -1;
    if (rank % 2 == 0) {
      CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, i, MPI_COMM_WORLD));
    } else {
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(got == peer * 100 + i, "MPI_Send round %d delivered %d", i, got);
    }
    MPI_Request q[2];
    got = -1;
    CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, peer, 50 + i, MPI_COMM_WORLD, &q[0]));
    CHECK_OK(MPI_Isend(&v, 1, MPI_INT, peer, 50 + i, MPI_COMM_WORLD, &q[1]));
    CHECK_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    CHECK(got == peer * 100 + i, "MPI_Isend round %d delivered %d", i, got);
  }
  /* The library's own work: none of it may reach the definitions above. */
  if (paired) {
    int v = rank, got = -1;
    MPI_Request r;
    if (rank % 2 == 0) {
      CHECK_OK(MPI_Ssend(&v, 1, MPI_INT, peer, 90, MPI_COMM_WORLD));
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the peer's receive is posted */
      CHECK_OK(MPI_Rsend(&v, 0, MPI_INT, peer, 91, MPI_COMM_WORLD));
      CHECK_OK(MPI_Issend(&v, 1, MPI_INT, peer, 92, MPI_COMM_WORLD, &r));
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else {
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK_OK(MPI_Irecv(&got, 0, MPI_INT, peer, 91, MPI_COMM_WORLD, &r));
      CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the receive is posted before the ready send */
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, 92, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, peer, 93, &got, 1, MPI_INT, peer, 93, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    CHECK(got == peer, "MPI_Sendrecv delivered %d", got);
  }
  if (!paired) CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  int sum = 0, one = 1, root_value = rank == 0 ? 7 : 0;
  CHECK_OK(MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(root_value == 7 && sum == size, "collectives delivered %d and %d", root_value, sum);
  armed = 0;
  const long expect_sends = paired && rank % 2 == 0 ? rounds : 0;
  const long expect_paired = paired ? rounds : 0;
  CHECK(sends == expect_sends, "the tool saw %ld MPI_Send calls, the program made %ld", sends,
        expect_sends);
  CHECK(isends == expect_paired, "the tool saw %ld MPI_Isend calls, the program made %ld", isends,
        expect_paired);
  CHECK(waitalls == expect_paired, "the tool saw %ld MPI_Waitall calls, the program made %ld",
        waitalls, expect_paired);
  CHECK_OK(MPI_Finalize());
  return 0;
}
