/* A job spanning virtual nodes (NICQ_NODE_RANKS=k: world rank r on node
 * r / k): every locality view agrees on the nodes, and traffic inside a
 * node (nicq's shared-memory transport, same-node collectives, shared
 * windows) and between nodes (libfabric) carries the right data.
 *
 * Run with NICQ_NODE_RANKS set (the test reads it to know the layout). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "[%d] FAIL %s:%d: ", rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      failures++;                                          \
    }                                                      \
  } while (0)

static int rank, size, per_node;

static int node_of(int r) {
  return r / per_node;
}

static unsigned char pattern(int src, int dst, size_t i) {
  return (unsigned char)(src * 31 + dst * 7 + i * 13);
}

static void check_names(void) {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  char want[32];
  snprintf(want, sizeof want, ":vnode%d", node_of(rank));
  const size_t wl = strlen(want);
  CHECK((size_t)len > wl && strcmp(name + len - wl, want) == 0, "processor name %s lacks %s",
        name, want);
  char* all = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                MPI_COMM_WORLD);
  for (int r = 0; r < size; r++) {
    const int same = strcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0;
    CHECK(same == (node_of(r) == node_of(rank)), "rank %d's name %s against mine %s", r,
          all + (size_t)r * MPI_MAX_PROCESSOR_NAME, name);
  }
  free(all);
}

static MPI_Comm node_comm(void) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int nsize, nrank;
  MPI_Comm_size(node, &nsize);
  MPI_Comm_rank(node, &nrank);
  const int first = node_of(rank) * per_node;
  const int want = (first + per_node <= size ? per_node : size - first);
  CHECK(nsize == want, "node communicator of %d ranks, want %d", nsize, want);
  CHECK(nrank == rank - first, "node rank %d, want %d", nrank, rank - first);
  return node;
}

/* Every pair, both directions, eager to rendezvous sizes. */
static void check_pairs(void) {
  const size_t sizes[] = {8, 65536, (1u << 20) + 3};
  for (int s = 0; s < 3; s++) {
    const size_t n = sizes[s];
    unsigned char* out = malloc(n);
    unsigned char* in = malloc(n);
    for (int step = 1; step < size; step++) {
      const int to = (rank + step) % size, from = (rank - step + size) % size;
      for (size_t i = 0; i < n; i++) out[i] = pattern(rank, to, i);
      memset(in, 0, n);
      MPI_Status st;
      MPI_Sendrecv(out, (int)n, MPI_BYTE, to, 5, in, (int)n, MPI_BYTE, from, 5, MPI_COMM_WORLD,
                   &st);
      int count = -1;
      MPI_Get_count(&st, MPI_BYTE, &count);
      CHECK(st.MPI_SOURCE == from && count == (int)n, "from %d: source %d count %d", from,
            st.MPI_SOURCE, count);
      size_t bad = n;
      for (size_t i = 0; i < n && bad == n; i++)
        if (in[i] != pattern(from, rank, i)) bad = i;
      CHECK(bad == n, "%zu bytes from %d (%s node): byte %zu wrong", n, from,
            node_of(from) == node_of(rank) ? "same" : "other", bad);
    }
    free(out);
    free(in);
  }
}

static void check_collectives(MPI_Comm comm, const char* what) {
  int csize, crank;
  MPI_Comm_size(comm, &csize);
  MPI_Comm_rank(comm, &crank);
  const int counts[] = {1, 1000, (1 << 17) + 5};
  for (int c = 0; c < 3; c++) {
    const int n = counts[c];
    long long* v = malloc(sizeof(long long) * (size_t)n);
    for (int i = 0; i < n; i++) v[i] = (long long)(crank + 1) * (i + 1);
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG_LONG, MPI_SUM, comm);
    const long long ranks_sum = (long long)csize * (csize + 1) / 2;
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
      if (v[i] != ranks_sum * (i + 1)) bad = i;
    CHECK(bad < 0, "%s allreduce of %d: element %d wrong", what, n, bad);
    for (int i = 0; i < n; i++) v[i] = crank == csize - 1 ? 3 * i + 1 : -1;
    MPI_Bcast(v, n, MPI_LONG_LONG, csize - 1, comm);
    bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
      if (v[i] != 3 * i + 1) bad = i;
    CHECK(bad < 0, "%s bcast of %d: element %d wrong", what, n, bad);
    free(v);
  }
  MPI_Barrier(comm);
}

static void check_shared_windows(MPI_Comm node) {
  int nsize, nrank;
  MPI_Comm_size(node, &nsize);
  MPI_Comm_rank(node, &nrank);
  int* mine = NULL;
  MPI_Win win;
  MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
  MPI_Win_lock_all(0, win);
  *mine = 1000 + rank;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  for (int r = 0; r < nsize; r++) {
    MPI_Aint bytes;
    int unit;
    int* theirs = NULL;
    MPI_Win_shared_query(win, r, &bytes, &unit, &theirs);
    const int world = node_of(rank) * per_node + r;
    CHECK(theirs && *theirs == 1000 + world, "shared slot of node rank %d: %d", r,
          theirs ? *theirs : -1);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);

  /* A shared window over ranks of several nodes is refused on every rank. */
  if (size > per_node) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int* p = NULL;
    MPI_Win w2 = MPI_WIN_NULL;
    const int rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL,
                                           MPI_COMM_WORLD, &p, &w2);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_SHARED && w2 == MPI_WIN_NULL,
          "shared window across nodes: class %d", cls);
    if (w2 != MPI_WIN_NULL) MPI_Win_free(&w2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* k = getenv("NICQ_NODE_RANKS");
  per_node = k ? atoi(k) : 0;
  if (per_node <= 0) {
    if (rank == 0) fprintf(stderr, "mp_vnode: set NICQ_NODE_RANKS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  check_names();
  MPI_Comm node = node_comm();
  check_pairs();
  check_collectives(MPI_COMM_WORLD, "world");
  check_collectives(node, "node");
  check_shared_windows(node);
  MPI_Comm_free(&node);
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("mp_vnode: %d ranks, %d per node: %s\n", size, per_node,
                        total ? "FAILED" : "OK");
  MPI_Finalize();
  return total ? 1 : 0;
}
