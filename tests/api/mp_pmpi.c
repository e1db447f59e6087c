/* The profiling interface (MPI-4.1 15.2) as a tool uses it: this program
 * defines MPI_Send, MPI_Bcast, MPI_Allreduce, MPI_Barrier, MPI_Comm_free and
 * MPI_Win_allocate itself, each counting its calls while armed and passing
 * them on to PMPI_ (resolved at link time, no dlsym). The counts must equal
 * the calls the program makes, whose data must arrive; the library's own
 * uses of the same functions (a file's open, shared-pointer writes and
 * close, a distributed graph's creation, the collectives' point-to-point)
 * call the PMPI_ names and add nothing. A C++ translation unit
 * (mp_pmpi_cxx.cc) calls PMPI_Comm_rank through mpi.h. */
#include <unistd.h>

#include "mp_check.h"

int pmpi_cxx_rank(MPI_Comm comm); /* mp_pmpi_cxx.cc */

static int armed;
static long sends, bcasts, allreduces, barriers, comm_frees, win_allocates;

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  sends += armed;
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  bcasts += armed;
  return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm) {
  allreduces += armed;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Barrier(MPI_Comm comm) {
  barriers += armed;
  return PMPI_Barrier(comm);
}

int MPI_Comm_free(MPI_Comm* comm) {
  comm_frees += armed;
  return PMPI_Comm_free(comm);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                     MPI_Win* win) {
  win_allocates += armed;
  return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
}

/* Reports a count that differs; all six are compared before one CHECK. */
static int expect(long seen, long made, const char* name) {
  if (seen == made) return 0;
  fprintf(stderr, "rank %d: the tool saw %ld %s calls, the program made %ld\n", mp_rank, seen, name,
          made);
  return 1;
}

int main(int argc, char** argv) {
  int rank, size;
  mp_init(&argc, &argv, &rank, &size);
  CHECK(pmpi_cxx_rank(MPI_COMM_WORLD) == rank, "PMPI_Comm_rank from C++ gave %d",
        pmpi_cxx_rank(MPI_COMM_WORLD));
  /* The tool's definitions are the program's MPI_ names; the library's
   * stay reachable under PMPI_, at other addresses. */
  CHECK((void (*)(void))MPI_Send != (void (*)(void))PMPI_Send, "MPI_Send is PMPI_Send");
  char path[256] = "";
  if (rank == 0) {
    const char* dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/nicq-pmpi-%ld", dir && *dir ? dir : "/tmp", (long)getpid());
  }
  armed = 1;

  /* The program's own calls: one of each but MPI_Send, one per rank. */
  CHECK_OK(MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
  CHECK(path[0] == '/', "MPI_Bcast delivered '%s'", path);
  int one = 1, ranks = 0;
  CHECK_OK(MPI_Allreduce(&one, &ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(ranks == size, "MPI_Allreduce gave %d", ranks);
  int v = rank * 10 + 1, got = -1;
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  MPI_Request r;
  CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Send(&v, 1, MPI_INT, next, 5, MPI_COMM_WORLD));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(got == prev * 10 + 1, "MPI_Send delivered %d", got);
  int* base = NULL;
  MPI_Win win;
  CHECK_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  *base = -1;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, next, 0, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK(*base == prev * 10 + 1, "MPI_Put into the window delivered %d", *base);
  CHECK_OK(MPI_Win_free(&win));
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Barrier(dup));
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK(dup == MPI_COMM_NULL, "MPI_Comm_free left %d", (int)dup);

  /* The library's work: it uses all six, under their PMPI_ names. */
  MPI_File fh;
  CHECK_OK(
      MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  CHECK_OK(MPI_File_write_shared(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
  MPI_Offset bytes = 0;
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_File_close(&fh));
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
  CHECK_OK(MPI_File_get_size(fh, &bytes));
  CHECK(bytes == (MPI_Offset)(size * sizeof(int)), "the shared writes left %lld bytes",
        (long long)bytes);
  CHECK_OK(MPI_File_close(&fh));
  const int sources[1] = {prev}, destinations[1] = {next};
  MPI_Comm graph;
  CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, sources, MPI_UNWEIGHTED, 1,
                                          destinations, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
  int recv_from = -1;
  CHECK_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, &recv_from, 1, MPI_INT, graph));
  CHECK(recv_from == prev, "MPI_Neighbor_allgather delivered %d", recv_from);
  int degrees[3] = {0, 0, 0};
  CHECK_OK(MPI_Dist_graph_neighbors_count(graph, &degrees[0], &degrees[1], &degrees[2]));
  CHECK(degrees[0] == 1 && degrees[1] == 1, "the graph has degrees %d, %d", degrees[0], degrees[1]);
  const int me[1] = {rank}, one_edge[1] = {1};
  MPI_Comm graph2;
  CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, one_edge, destinations, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &graph2));
  int sum = 0;
  CHECK_OK(MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
  CHECK(rank != 0 || sum == size, "MPI_Reduce gave %d", sum);
  CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, next, 6, &got, 1, MPI_INT, prev, 6, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
  armed = 0;

  int wrong = expect(sends, 1, "MPI_Send") + expect(bcasts, 1, "MPI_Bcast") +
              expect(allreduces, 1, "MPI_Allreduce") + expect(barriers, 1, "MPI_Barrier") +
              expect(comm_frees, 1, "MPI_Comm_free") + expect(win_allocates, 1, "MPI_Win_allocate");
  CHECK(wrong == 0, "%d of the tool's counts differ from the program's calls", wrong);
  CHECK_OK(PMPI_Comm_free(&graph));
  CHECK_OK(PMPI_Comm_free(&graph2));
  CHECK(comm_frees == 1, "PMPI_Comm_free reached the tool's MPI_Comm_free");
  CHECK_OK(MPI_Finalize());
  return 0;
}
