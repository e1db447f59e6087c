// mpi.h from a C++ translation unit: handles and constants are compile-time
// integers (usable in constexpr, switch cases, templates), functions have C
// linkage. Each rank sends a ring token with MPI_Sendrecv and checks it.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static_assert(MPI_ANY_SOURCE == -2 && MPI_ANY_TAG == -1 && MPI_PROC_NULL == -1);
static_assert(MPI_THREAD_SINGLE == 0 && MPI_THREAD_MULTIPLE == 3);
static_assert(MPI_VERSION == 4 && MPI_SUBVERSION == 1);
static_assert(MPI_SUCCESS == 0 && MPI_ERR_LASTCODE > MPI_ERR_PROC_FAILED);
static_assert(MPI_COMM_WORLD != MPI_COMM_SELF && MPI_COMM_NULL != MPI_COMM_WORLD);
constexpr MPI_Datatype kTypes[] = {MPI_INT, MPI_DOUBLE, MPI_2INT};

template <MPI_Datatype T>
struct TypeTag {
  static constexpr MPI_Datatype value = T;
};

static const char* Describe(MPI_Comm comm) {
  switch (comm) {
    case MPI_COMM_WORLD:
      return "world";
    case MPI_COMM_SELF:
      return "self";
    default:
      return "other";
  }
}

int main(int argc, char** argv) {
  int provided = -1;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return 1;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<int> out(16, rank), in(16, -1);
  MPI_Status st;
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int rc = MPI_Sendrecv(out.data(), 16, TypeTag<kTypes[0]>::value, right, 3, in.data(), 16, MPI_INT,
                        left, 3, MPI_COMM_WORLD, &st);
  bool ok = rc == MPI_SUCCESS && st.MPI_SOURCE == left && provided >= MPI_THREAD_SINGLE;
  // --expect-size N: the launcher (or its absence: a singleton) made N ranks.
  if (argc > 2 && std::strcmp(argv[1], "--expect-size") == 0 && size != std::atoi(argv[2])) {
    std::fprintf(stderr, "cxx: world size %d, expected %s\n", size, argv[2]);
    ok = false;
  }
  for (int v : in) ok = ok && v == left;
  if (!ok) {
    std::fprintf(stderr, "cxx: rank %d: ring exchange failed (rc %d)\n", rank, rc);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (rank == 0) std::printf("cxx OK (%d ranks, %s)\n", size, Describe(MPI_COMM_WORLD));
  MPI_Finalize();
  return 0;
}
