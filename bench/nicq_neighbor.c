/* OSU-style neighborhood collective latency (and overlap with -t) on a 2D
 * 5-point stencil: a periodic Cartesian grid of all ranks (MPI_Dims_create),
 * four neighbors per rank. --coll allgather|alltoall picks
 * MPI_Neighbor_allgather or MPI_Neighbor_alltoall, --form blocking|
 * nonblocking|persistent|queued the form (see osu_coll.h); the size is the
 * bytes sent to each neighbor, 1 B to 1 MiB by default. Each size ends with
 * a checked run: every receive block must hold the pattern of the neighbor
 * that sent it, and for alltoall the block that neighbor addressed to this
 * rank (its +1 block lands in our -1 slot and vice versa). --algo NAME
 * passes the info key nicq_algorithm=NAME to the persistent init (offload:
 * the resident trigger plan even where the backend would not take it). */
#include "osu_coll.h"

#define NEIGHBORS 4

struct neighbor_ctx {
  int alltoall;
  MPI_Comm grid;
  int rank;
  int src[NEIGHBORS];
  char* sendbuf;
  char* recvbuf;
  const char* algo; /* --algo: nicq_algorithm of the persistent init, or NULL */
};

/* The byte a rank sends in its block `slot` (allgather: one block, slot 0). */
static char block_pattern(int rank, int slot, long size) {
  return osu_pattern(rank * NEIGHBORS + slot, size);
}

static void setup(void* p, const struct osu_options* o, int rank, int ranks) {
  struct neighbor_ctx* b = p;
  int dims[2] = {0, 0};
  const int periods[2] = {1, 1};
  osu_mpi_ok(MPI_Dims_create(ranks, 2, dims), "MPI_Dims_create");
  osu_mpi_ok(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &b->grid), "MPI_Cart_create");
  MPI_Comm_rank(b->grid, &b->rank);
  (void)rank;
  for (int d = 0; d < 2; ++d)
    osu_mpi_ok(MPI_Cart_shift(b->grid, d, 1, &b->src[2 * d], &b->src[2 * d + 1]), "MPI_Cart_shift");
  b->sendbuf = osu_buffer(NEIGHBORS * o->max_size, 0);
  b->recvbuf = osu_buffer(NEIGHBORS * o->max_size, 0);
}

static void prepare(void* p, long size) {
  struct neighbor_ctx* b = p;
  for (int j = 0; j < NEIGHBORS; ++j)
    memset(b->sendbuf + j * size, block_pattern(b->rank, b->alltoall ? j : 0, size), (size_t)size);
  memset(b->recvbuf, 0, (size_t)(NEIGHBORS * size));
}

static int blocking(void* p, long size) {
  struct neighbor_ctx* b = p;
  if (b->alltoall)
    return MPI_Neighbor_alltoall(b->sendbuf, (int)size, MPI_CHAR, b->recvbuf, (int)size, MPI_CHAR,
                                 b->grid);
  return MPI_Neighbor_allgather(b->sendbuf, (int)size, MPI_CHAR, b->recvbuf, (int)size, MPI_CHAR,
                                b->grid);
}

static int begin(void* p, long size, MPI_Request* req) {
  struct neighbor_ctx* b = p;
  if (b->alltoall)
    return MPI_Ineighbor_alltoall(b->sendbuf, (int)size, MPI_CHAR, b->recvbuf, (int)size, MPI_CHAR,
                                  b->grid, req);
  return MPI_Ineighbor_allgather(b->sendbuf, (int)size, MPI_CHAR, b->recvbuf, (int)size, MPI_CHAR,
                                 b->grid, req);
}

#if OSU_HAVE_PERSISTENT_COLL
static int init(void* p, long size, MPI_Request* req) {
  struct neighbor_ctx* b = p;
  MPI_Info info = MPI_INFO_NULL;
  if (b->algo) {
    MPI_Info_create(&info);
    MPI_Info_set(info, "nicq_algorithm", b->algo);
  }
  int rc;
  if (b->alltoall)
    rc = MPI_Neighbor_alltoall_init(b->sendbuf, (int)size, MPI_CHAR, b->recvbuf, (int)size,
                                    MPI_CHAR, b->grid, info, req);
  else
    rc = MPI_Neighbor_allgather_init(b->sendbuf, (int)size, MPI_CHAR, b->recvbuf, (int)size,
                                     MPI_CHAR, b->grid, info, req);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return rc;
}
#endif

static void check(void* p, long size, struct osu_coll_state* s) {
  struct neighbor_ctx* b = p;
  memset(b->recvbuf, 0, (size_t)(NEIGHBORS * size));
  osu_coll_once(s);
  for (int i = 0; i < NEIGHBORS; ++i) {
    char what[64];
    snprintf(what, sizeof what, "block %d (from rank %d)", i, b->src[i]);
    osu_check_bytes(what, b->recvbuf + i * size, size,
                    block_pattern(b->src[i], b->alltoall ? i ^ 1 : 0, size));
  }
}

int main(int argc, char** argv) {
  /* static: its buffers stay reachable until exit (LeakSanitizer) */
  static struct neighbor_ctx b;
  /* --coll and --algo are this program's own options: taken out before the
   * shared parser. */
  int n = 0;
  for (int i = 0; i < argc; ++i) {
    if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc) {
      b.algo = argv[++i];
      continue;
    }
    if (strcmp(argv[i], "--coll") == 0 && i + 1 < argc) {
      if (strcmp(argv[i + 1], "alltoall") == 0) {
        b.alltoall = 1;
      } else if (strcmp(argv[i + 1], "allgather") != 0) {
        fprintf(stderr, "usage: %s --coll allgather|alltoall [--algo NAME] [options]\n", argv[0]);
        return 1;
      }
      ++i;
      continue;
    }
    argv[n++] = argv[i];
  }
  argv[n] = NULL;
  struct osu_coll c = {b.alltoall ? "Neighbor Alltoall Latency Test (2D stencil)"
                                  : "Neighbor Allgather Latency Test (2D stencil)",
                       &b,
                       setup,
                       prepare,
                       blocking,
                       begin,
                       NULL,
                       check};
#if OSU_HAVE_PERSISTENT_COLL
  c.init = init;
#endif
  return osu_coll_main(n, argv, &c, 1, 1L << 20, OSU_ACCEPT_FORM | OSU_ACCEPT_OVERLAP);
}
