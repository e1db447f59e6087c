/* Neighborhood collectives (MPI 4.1 8.6) with data checks, on every
 * topology kind and in every form:
 *  - topologies: 1D periodic and nonperiodic Cartesian (MPI_PROC_NULL at
 *    the borders), a 2D 5-point stencil (one periodic dimension), a grid
 *    with a periodic dimension of size 1 (the rank is its own -1 and +1
 *    neighbor), a row of the stencil from MPI_Cart_sub, a 2-rank periodic
 *    ring (the other rank is both neighbors), a graph ring
 *    (MPI_Graph_create), a weighted distributed graph with asymmetric
 *    in/out neighbors (multi-edges on small sizes), and one made by
 *    MPI_Dist_graph_create;
 *  - collectives: neighbor allgather(v), alltoall(v,w), each blocking,
 *    nonblocking and persistent (two starts with new data), and on the 2D
 *    stencil also their large-count (_c) forms;
 *  - every receive buffer is checked whole: blocks from real neighbors hold
 *    exactly what that neighbor sent in the matching slot, while gaps
 *    between blocks and the blocks of MPI_PROC_NULL neighbors keep their
 *    sentinel;
 *  - the expected slot pairing is computed here from the topology queries
 *    alone: a Cartesian receive slot 2d (from the -1 neighbor) holds what
 *    that neighbor sent to its +1 neighbor (slot 2d+1) and vice versa; on
 *    graphs the k-th edge q -> me in my sources is the k-th in q's
 *    destinations;
 *  - errors: no topology (MPI_ERR_TOPOLOGY in every form), MPI_IN_PLACE,
 *    negative counts, large counts above INT_MAX, a persistent init whose
 *    sizes differ along an edge (MPI_ERR_ARG on every rank);
 *  - with argument "queue": the persistent stencil alltoall matched and
 *    enqueued on a queue (chapter 13), three steps, data-checked.
 * Usage: mp_neighbor [queue] */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

#define MAXP 8
#define MAXN 16 /* largest degree used */
#define B 3     /* items per block */
#define GAP 1   /* sentinel ints between receive blocks */
#define STRIDE (B + GAP)
#define SENT (-7)
#define BUF (MAXN * STRIDE + 2 * GAP + 8)

enum Form { kBlocking, kNonblocking, kPersistent };
static const char* const kFormName[] = {"blocking", "nonblocking", "persistent"};

typedef struct {
  int in, out;
  int src[MAXN], dst[MAXN];
} Nb;

static MPI_Comm tc;       /* the topology communicator under test */
static int tr, tp;        /* rank and size in it */
static int is_cart;       /* Cartesian slot pairing */
static Nb nbs[MAXP];      /* every rank's neighbor lists */
static const char* where; /* the topology's name, for messages */

static int sendbuf[BUF], recvbuf[BUF];

static int val(int seed, int q, int slot, int k) {
  return seed * 100000 + q * 10000 + slot * 100 + k;
}

/* This rank's neighbors from the topology queries, then everyone's. */
static void load_neighbors(void) {
  Nb me;
  memset(&me, 0, sizeof me);
  int status = MPI_UNDEFINED;
  CHECK_OK(MPI_Topo_test(tc, &status));
  if (status == MPI_CART) {
    int nd = 0;
    CHECK_OK(MPI_Cartdim_get(tc, &nd));
    for (int d = 0; d < nd; ++d) {
      CHECK_OK(MPI_Cart_shift(tc, d, 1, &me.src[2 * d], &me.src[2 * d + 1]));
      me.dst[2 * d] = me.src[2 * d];
      me.dst[2 * d + 1] = me.src[2 * d + 1];
    }
    me.in = me.out = 2 * nd;
  } else if (status == MPI_GRAPH) {
    CHECK_OK(MPI_Graph_neighbors_count(tc, tr, &me.in));
    CHECK_OK(MPI_Graph_neighbors(tc, tr, MAXN, me.src));
    me.out = me.in;
    memcpy(me.dst, me.src, sizeof me.src);
  } else {
    CHECK(status == MPI_DIST_GRAPH, "%s: MPI_Topo_test gave %d", where, status);
    int weighted = 0;
    CHECK_OK(MPI_Dist_graph_neighbors_count(tc, &me.in, &me.out, &weighted));
    CHECK_OK(
        MPI_Dist_graph_neighbors(tc, MAXN, me.src, MPI_UNWEIGHTED, MAXN, me.dst, MPI_UNWEIGHTED));
  }
  CHECK(me.in <= MAXN && me.out <= MAXN, "%s: degree too large", where);
  is_cart = status == MPI_CART;
  CHECK_OK(MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, nbs, (int)sizeof me, MPI_BYTE, tc));
}

/* The send slot at source q whose block lands in my receive slot i. */
static int sender_slot(int i) {
  const Nb* me = &nbs[tr];
  const int q = me->src[i];
  if (is_cart) return i ^ 1;
  int k = 0;
  for (int j = 0; j < i; ++j) k += me->src[j] == q;
  for (int j = 0; j < nbs[q].out; ++j)
    if (nbs[q].dst[j] == tr && k-- == 0) return j;
  CHECK(0, "%s: rank %d has no edge to %d for my slot %d", where, q, tr, i);
  return -1;
}

static void clear_recv(void) {
  for (int i = 0; i < BUF; ++i) recvbuf[i] = SENT;
}

/* Checks recvbuf[0, BUF) against `want`, built by the caller. */
static void compare(const int* want, const char* coll, enum Form f, int seed) {
  for (int i = 0; i < BUF; ++i)
    CHECK(recvbuf[i] == want[i], "%s %s %s (seed %d): recvbuf[%d] = %d, expected %d", where, coll,
          kFormName[f], seed, i, recvbuf[i], want[i]);
}

/* Runs one collective in form f: `blocking`, `start` (nonblocking, gives
 * *req) and `init` (persistent) are the three calls; fill/verify bracket
 * each run. Persistent requests run twice with new data. */
#define RUN_FORMS(f, seed, FILL, VERIFY, BLOCKING_CALL, NB_CALL, INIT_CALL)            \
  do {                                                                                 \
    MPI_Request req_ = MPI_REQUEST_NULL;                                               \
    const int runs_ = (f) == kPersistent ? 2 : 1;                                      \
    for (int it_ = 0; it_ < runs_; ++it_) {                                            \
      const int s_ = (seed) + it_;                                                     \
      FILL(s_);                                                                        \
      clear_recv();                                                                    \
      if ((f) == kBlocking) {                                                          \
        CHECK_OK(BLOCKING_CALL);                                                       \
      } else if ((f) == kNonblocking) {                                                \
        CHECK_OK(NB_CALL);                                                             \
        CHECK_OK(MPI_Wait(&req_, MPI_STATUS_IGNORE));                                  \
      } else {                                                                         \
        if (it_ == 0) CHECK_OK(INIT_CALL);                                             \
        CHECK_OK(MPI_Start(&req_));                                                    \
        CHECK_OK(MPI_Wait(&req_, MPI_STATUS_IGNORE));                                  \
        CHECK(req_ != MPI_REQUEST_NULL, "a persistent request was freed by its wait"); \
      }                                                                                \
      VERIFY(f, s_);                                                                   \
    }                                                                                  \
    if ((f) == kPersistent) CHECK_OK(MPI_Request_free(&req_));                         \
  } while (0)

/* ---- allgather: one block of B to every destination ---------------------------- */
static void fill_one(int seed) {
  for (int i = 0; i < BUF; ++i) sendbuf[i] = -1;
  for (int k = 0; k < B; ++k) sendbuf[k] = val(seed, tr, 0, k);
}
static void verify_allgather(enum Form f, int seed) {
  int want[BUF];
  for (int i = 0; i < BUF; ++i) want[i] = SENT;
  for (int i = 0; i < nbs[tr].in; ++i)
    if (nbs[tr].src[i] != MPI_PROC_NULL)
      for (int k = 0; k < B; ++k) want[i * B + k] = val(seed, nbs[tr].src[i], 0, k);
  compare(want, "neighbor_allgather", f, seed);
}
static int counts[MAXN], displs[MAXN], scounts[MAXN], sdispls[MAXN];
static MPI_Count ccounts[MAXN], cscounts[MAXN];
static MPI_Aint adispls[MAXN], asdispls[MAXN];
/* allgatherv: B items per source, STRIDE apart, after a leading gap. */
static void layout_v(void) {
  for (int i = 0; i < MAXN; ++i) {
    counts[i] = B;
    displs[i] = GAP + i * STRIDE;
    ccounts[i] = counts[i];
    adispls[i] = displs[i];
  }
}
static void verify_allgatherv(enum Form f, int seed) {
  int want[BUF];
  for (int i = 0; i < BUF; ++i) want[i] = SENT;
  for (int i = 0; i < nbs[tr].in; ++i)
    if (nbs[tr].src[i] != MPI_PROC_NULL)
      for (int k = 0; k < B; ++k) want[displs[i] + k] = val(seed, nbs[tr].src[i], 0, k);
  compare(want, "neighbor_allgatherv", f, seed);
}

/* ---- alltoall: block j (B items) to destination j ---------------------------- */
static void fill_blocks(int seed) {
  for (int i = 0; i < BUF; ++i) sendbuf[i] = -1;
  for (int j = 0; j < nbs[tr].out; ++j)
    for (int k = 0; k < B; ++k) sendbuf[j * B + k] = val(seed, tr, j, k);
}
static void verify_alltoall(enum Form f, int seed) {
  int want[BUF];
  for (int i = 0; i < BUF; ++i) want[i] = SENT;
  for (int i = 0; i < nbs[tr].in; ++i)
    if (nbs[tr].src[i] != MPI_PROC_NULL)
      for (int k = 0; k < B; ++k) want[i * B + k] = val(seed, nbs[tr].src[i], sender_slot(i), k);
  compare(want, "neighbor_alltoall", f, seed);
}

/* ---- alltoallv: 1..B items per slot, depending on sender and slot -------------- */
static int vcount(int q, int slot) {
  return 1 + (q + slot) % B;
}
static void layout_alltoallv(void) {
  for (int j = 0; j < nbs[tr].out; ++j) {
    scounts[j] = vcount(tr, j);
    sdispls[j] = j * STRIDE;
    cscounts[j] = scounts[j];
    asdispls[j] = sdispls[j];
  }
  for (int i = 0; i < nbs[tr].in; ++i) {
    /* A PROC_NULL slot still gets a count: nothing may arrive there. */
    counts[i] = nbs[tr].src[i] == MPI_PROC_NULL ? B : vcount(nbs[tr].src[i], sender_slot(i));
    displs[i] = GAP + i * STRIDE;
    ccounts[i] = counts[i];
    adispls[i] = displs[i];
  }
}
static void fill_v(int seed) {
  for (int i = 0; i < BUF; ++i) sendbuf[i] = -1;
  for (int j = 0; j < nbs[tr].out; ++j)
    for (int k = 0; k < scounts[j]; ++k) sendbuf[sdispls[j] + k] = val(seed, tr, j, k);
}
static void verify_alltoallv(enum Form f, int seed) {
  int want[BUF];
  for (int i = 0; i < BUF; ++i) want[i] = SENT;
  for (int i = 0; i < nbs[tr].in; ++i)
    if (nbs[tr].src[i] != MPI_PROC_NULL)
      for (int k = 0; k < counts[i]; ++k)
        want[displs[i] + k] = val(seed, nbs[tr].src[i], sender_slot(i), k);
  compare(want, "neighbor_alltoallv", f, seed);
}

/* ---- alltoallw: 2 ints per slot; even receive slots land in a strided type
 * (ints 0 and 2 of the block, int 1 a hole), odd ones contiguous ---------------- */
static MPI_Datatype stypes[MAXN], rtypes[MAXN], strided;
static MPI_Aint sbytes[MAXN], rbytes[MAXN];
static int wscounts[MAXN], wrcounts[MAXN];
static MPI_Count cwscounts[MAXN], cwrcounts[MAXN];
static void layout_w(void) {
  for (int j = 0; j < nbs[tr].out; ++j) {
    stypes[j] = MPI_INT;
    wscounts[j] = cwscounts[j] = 2;
    sbytes[j] = (MPI_Aint)(j * STRIDE * sizeof(int));
  }
  for (int i = 0; i < nbs[tr].in; ++i) {
    rtypes[i] = i % 2 ? MPI_INT : strided;
    wrcounts[i] = cwrcounts[i] = i % 2 ? 2 : 1;
    rbytes[i] = (MPI_Aint)((GAP + i * STRIDE) * sizeof(int));
  }
}
static void fill_w(int seed) {
  for (int i = 0; i < BUF; ++i) sendbuf[i] = -1;
  for (int j = 0; j < nbs[tr].out; ++j)
    for (int k = 0; k < 2; ++k) sendbuf[j * STRIDE + k] = val(seed, tr, j, k);
}
static void verify_alltoallw(enum Form f, int seed) {
  int want[BUF];
  for (int i = 0; i < BUF; ++i) want[i] = SENT;
  for (int i = 0; i < nbs[tr].in; ++i) {
    if (nbs[tr].src[i] == MPI_PROC_NULL) continue;
    const int at = GAP + i * STRIDE, q = nbs[tr].src[i], s = sender_slot(i);
    want[at] = val(seed, q, s, 0);
    want[at + (i % 2 ? 1 : 2)] = val(seed, q, s, 1);
  }
  compare(want, "neighbor_alltoallw", f, seed);
}

static void run_all(int large) {
  for (int fi = 0; fi < 3; ++fi) {
    const enum Form f = (enum Form)fi;
    const int seed = 1 + fi * 3 + large * 10;
    MPI_Count cB = B;
    if (!large) {
      RUN_FORMS(f, seed, fill_one, verify_allgather,
                MPI_Neighbor_allgather(sendbuf, B, MPI_INT, recvbuf, B, MPI_INT, tc),
                MPI_Ineighbor_allgather(sendbuf, B, MPI_INT, recvbuf, B, MPI_INT, tc, &req_),
                MPI_Neighbor_allgather_init(sendbuf, B, MPI_INT, recvbuf, B, MPI_INT, tc,
                                            MPI_INFO_NULL, &req_));
    } else {
      RUN_FORMS(f, seed, fill_one, verify_allgather,
                MPI_Neighbor_allgather_c(sendbuf, cB, MPI_INT, recvbuf, cB, MPI_INT, tc),
                MPI_Ineighbor_allgather_c(sendbuf, cB, MPI_INT, recvbuf, cB, MPI_INT, tc, &req_),
                MPI_Neighbor_allgather_init_c(sendbuf, cB, MPI_INT, recvbuf, cB, MPI_INT, tc,
                                              MPI_INFO_NULL, &req_));
    }
    layout_v();
    if (!large) {
      RUN_FORMS(f, seed, fill_one, verify_allgatherv,
                MPI_Neighbor_allgatherv(sendbuf, B, MPI_INT, recvbuf, counts, displs, MPI_INT, tc),
                MPI_Ineighbor_allgatherv(sendbuf, B, MPI_INT, recvbuf, counts, displs, MPI_INT, tc,
                                         &req_),
                MPI_Neighbor_allgatherv_init(sendbuf, B, MPI_INT, recvbuf, counts, displs, MPI_INT,
                                             tc, MPI_INFO_NULL, &req_));
    } else {
      RUN_FORMS(
          f, seed, fill_one, verify_allgatherv,
          MPI_Neighbor_allgatherv_c(sendbuf, cB, MPI_INT, recvbuf, ccounts, adispls, MPI_INT, tc),
          MPI_Ineighbor_allgatherv_c(sendbuf, cB, MPI_INT, recvbuf, ccounts, adispls, MPI_INT, tc,
                                     &req_),
          MPI_Neighbor_allgatherv_init_c(sendbuf, cB, MPI_INT, recvbuf, ccounts, adispls, MPI_INT,
                                         tc, MPI_INFO_NULL, &req_));
    }
    if (!large) {
      RUN_FORMS(f, seed, fill_blocks, verify_alltoall,
                MPI_Neighbor_alltoall(sendbuf, B, MPI_INT, recvbuf, B, MPI_INT, tc),
                MPI_Ineighbor_alltoall(sendbuf, B, MPI_INT, recvbuf, B, MPI_INT, tc, &req_),
                MPI_Neighbor_alltoall_init(sendbuf, B, MPI_INT, recvbuf, B, MPI_INT, tc,
                                           MPI_INFO_NULL, &req_));
    } else {
      RUN_FORMS(f, seed, fill_blocks, verify_alltoall,
                MPI_Neighbor_alltoall_c(sendbuf, cB, MPI_INT, recvbuf, cB, MPI_INT, tc),
                MPI_Ineighbor_alltoall_c(sendbuf, cB, MPI_INT, recvbuf, cB, MPI_INT, tc, &req_),
                MPI_Neighbor_alltoall_init_c(sendbuf, cB, MPI_INT, recvbuf, cB, MPI_INT, tc,
                                             MPI_INFO_NULL, &req_));
    }
    layout_alltoallv();
    if (!large) {
      RUN_FORMS(f, seed, fill_v, verify_alltoallv,
                MPI_Neighbor_alltoallv(sendbuf, scounts, sdispls, MPI_INT, recvbuf, counts, displs,
                                       MPI_INT, tc),
                MPI_Ineighbor_alltoallv(sendbuf, scounts, sdispls, MPI_INT, recvbuf, counts, displs,
                                        MPI_INT, tc, &req_),
                MPI_Neighbor_alltoallv_init(sendbuf, scounts, sdispls, MPI_INT, recvbuf, counts,
                                            displs, MPI_INT, tc, MPI_INFO_NULL, &req_));
    } else {
      RUN_FORMS(f, seed, fill_v, verify_alltoallv,
                MPI_Neighbor_alltoallv_c(sendbuf, cscounts, asdispls, MPI_INT, recvbuf, ccounts,
                                         adispls, MPI_INT, tc),
                MPI_Ineighbor_alltoallv_c(sendbuf, cscounts, asdispls, MPI_INT, recvbuf, ccounts,
                                          adispls, MPI_INT, tc, &req_),
                MPI_Neighbor_alltoallv_init_c(sendbuf, cscounts, asdispls, MPI_INT, recvbuf,
                                              ccounts, adispls, MPI_INT, tc, MPI_INFO_NULL, &req_));
    }
    layout_w();
    if (!large) {
      RUN_FORMS(f, seed, fill_w, verify_alltoallw,
                MPI_Neighbor_alltoallw(sendbuf, wscounts, sbytes, stypes, recvbuf, wrcounts, rbytes,
                                       rtypes, tc),
                MPI_Ineighbor_alltoallw(sendbuf, wscounts, sbytes, stypes, recvbuf, wrcounts,
                                        rbytes, rtypes, tc, &req_),
                MPI_Neighbor_alltoallw_init(sendbuf, wscounts, sbytes, stypes, recvbuf, wrcounts,
                                            rbytes, rtypes, tc, MPI_INFO_NULL, &req_));
    } else {
      RUN_FORMS(f, seed, fill_w, verify_alltoallw,
                MPI_Neighbor_alltoallw_c(sendbuf, cwscounts, sbytes, stypes, recvbuf, cwrcounts,
                                         rbytes, rtypes, tc),
                MPI_Ineighbor_alltoallw_c(sendbuf, cwscounts, sbytes, stypes, recvbuf, cwrcounts,
                                          rbytes, rtypes, tc, &req_),
                MPI_Neighbor_alltoallw_init_c(sendbuf, cwscounts, sbytes, stypes, recvbuf,
                                              cwrcounts, rbytes, rtypes, tc, MPI_INFO_NULL, &req_));
    }
  }
}

/* Runs every collective on `comm` (MPI_COMM_NULL: this rank is not in it). */
static void on(MPI_Comm comm, const char* name, int large) {
  if (comm == MPI_COMM_NULL) return;
  tc = comm;
  where = name;
  MPI_Comm_rank(tc, &tr);
  MPI_Comm_size(tc, &tp);
  MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN);
  if (getenv("MP_NEIGHBOR_TRACE")) fprintf(stderr, "rank %d: %s\n", g_rank, name);
  load_neighbors();
  run_all(0);
  if (large) run_all(1);
  CHECK_OK(MPI_Comm_free(&comm));
}

static MPI_Comm cart(int ndims, const int* dims, const int* periods) {
  MPI_Comm c = MPI_COMM_NULL;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &c));
  return c;
}

/* rank r: out-edges to r+1 and r+2, in-edges from r-2 and r-1 (in that
 * order, so the pairing is not list position), weighted. */
static MPI_Comm skew_graph(int p, int r) {
  const int dst[2] = {(r + 1) % p, (r + 2) % p};
  const int src[2] = {((r - 2) % p + p) % p, (r + p - 1) % p};
  const int sw[2] = {10 * r + 1, 10 * r + 2}, dw[2] = {10 * r + 3, 10 * r + 4};
  MPI_Comm c = MPI_COMM_NULL;
  CHECK_OK(
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 1, &c));
  return c;
}

/* Each rank names its edge r -> r+1; rank 0 also names p-1 -> 0 once more. */
static MPI_Comm named_graph(int p, int r) {
  const int sources[2] = {r, p - 1};
  const int degrees[2] = {1, 1};
  const int dests[2] = {(r + 1) % p, 0};
  MPI_Comm c = MPI_COMM_NULL;
  CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, r == 0 ? 2 : 1, sources, degrees, dests,
                                 MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
  return c;
}

static MPI_Comm graph_ring(int p) {
  int index[MAXP], edges[2 * MAXP];
  for (int i = 0; i < p; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + 1) % p;
    edges[2 * i + 1] = (i + p - 1) % p;
  }
  MPI_Comm c = MPI_COMM_NULL;
  CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, p, index, edges, 0, &c));
  return c;
}

static void errors(int p) {
  int a[4] = {0}, b[4] = {0};
  MPI_Request req = MPI_REQUEST_NULL;
  /* No topology: every form refuses, and leaves the request alone. */
  CHECK_ERR(MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
  CHECK_ERR(MPI_Ineighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD, &req),
            MPI_ERR_TOPOLOGY);
  CHECK(req == MPI_REQUEST_NULL, "a refused MPI_Ineighbor_alltoall wrote its request");
  CHECK_ERR(
      MPI_Neighbor_alltoall_init(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
      MPI_ERR_TOPOLOGY);
  CHECK_ERR(
      MPI_Neighbor_alltoallv_c(a, NULL, NULL, MPI_INT, b, NULL, NULL, MPI_INT, MPI_COMM_WORLD),
      MPI_ERR_TOPOLOGY);
  const int dims[1] = {p}, periods[1] = {1};
  MPI_Comm c = cart(1, dims, periods);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  CHECK_ERR(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, c), MPI_ERR_BUFFER);
  const int neg[2] = {1, -1}, zero[2] = {0, 0};
  CHECK_ERR(MPI_Neighbor_alltoallv(a, neg, zero, MPI_INT, b, zero, zero, MPI_INT, c),
            MPI_ERR_COUNT);
  CHECK_ERR(MPI_Neighbor_alltoall_c(a, (MPI_Count)INT_MAX + 1, MPI_INT, b, 1, MPI_INT, c),
            MPI_ERR_COUNT);
  const MPI_Count big[2] = {1, (MPI_Count)INT_MAX + 5};
  const MPI_Aint ad[2] = {0, 0};
  CHECK_ERR(MPI_Ineighbor_allgatherv_c(a, 1, MPI_INT, b, big, ad, MPI_INT, c, &req), MPI_ERR_COUNT);
  CHECK(req == MPI_REQUEST_NULL, "a refused MPI_Ineighbor_allgatherv_c wrote its request");
  /* Persistent init checks the sizes along every edge: rank 0 expects two
   * ints where its neighbors send one, and every rank gets the error. */
  req = MPI_REQUEST_NULL;
  CHECK_ERR(MPI_Neighbor_alltoall_init(a, 1, MPI_INT, b, g_rank == 0 ? 2 : 1, MPI_INT, c,
                                       MPI_INFO_NULL, &req),
            MPI_ERR_ARG);
  CHECK(req == MPI_REQUEST_NULL, "a refused MPI_Neighbor_alltoall_init wrote its request");
  /* ... and the same sizes in other types pass (2 shorts for 1 int). */
  CHECK_OK(MPI_Neighbor_allgather_init(a, 1, MPI_INT, b, 2, MPI_SHORT, c, MPI_INFO_NULL, &req));
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Comm_free(&c));
}

/* The persistent stencil exchange matched and enqueued: three steps. */
static void queued(int p) {
  int dims[2] = {0, 0};
  const int periods[2] = {1, 0};
  CHECK_OK(MPI_Dims_create(p, 2, dims));
  tc = cart(2, dims, periods);
  where = "queued 2D stencil";
  MPI_Comm_rank(tc, &tr);
  MPI_Comm_set_errhandler(tc, MPI_ERRORS_RETURN);
  load_neighbors();
  MPI_Request req;
  CHECK_OK(MPI_Neighbor_alltoall_init(sendbuf, B, MPI_INT, recvbuf, B, MPI_INT, tc, MPI_INFO_NULL,
                                      &req));
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  CHECK_OK(MPI_Match(&req));
  for (int step = 0; step < 3; ++step) {
    fill_blocks(40 + step);
    clear_recv();
    CHECK_OK(MPI_Enqueue_start(&q, &req));
    CHECK_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Queue_fence(&q));
    verify_alltoall(kPersistent, 40 + step);
  }
  CHECK_OK(MPI_Queue_free(&q));
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Comm_free(&tc));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(p <= MAXP, "at most %d ranks", MAXP);
  CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &strided));
  CHECK_OK(MPI_Type_commit(&strided));
  if (argc > 1 && strcmp(argv[1], "queue") == 0) {
    queued(p);
  } else {
    const int d1[1] = {p}, per1[1] = {1}, nper1[1] = {0};
    on(cart(1, d1, per1), "1D periodic ring", 0);
    on(cart(1, d1, nper1), "1D nonperiodic line", 0);
    int d2[2] = {0, 0};
    const int per2[2] = {1, 0};
    CHECK_OK(MPI_Dims_create(p, 2, d2));
    on(cart(2, d2, per2), "2D 5-point stencil", 1);
    {
      /* The rows of the stencil: MPI_Cart_sub's grids have neighbors too. */
      MPI_Comm grid = cart(2, d2, per2), row = MPI_COMM_NULL;
      const int keep[2] = {0, 1};
      CHECK_OK(MPI_Cart_sub(grid, keep, &row));
      CHECK_OK(MPI_Comm_free(&grid));
      on(row, "row of the stencil (MPI_Cart_sub)", 0);
    }
    const int dself[2] = {p, 1}, pself[2] = {0, 1};
    on(cart(2, dself, pself), "grid with a periodic dimension of size 1", 0);
    if (p >= 2) {
      const int d2r[1] = {2};
      on(cart(1, d2r, per1), "2-rank periodic ring", 0);
    }
    on(graph_ring(p), "graph ring", 0);
    on(skew_graph(p, rank), "weighted asymmetric dist graph", 0);
    on(named_graph(p, rank), "dist graph from MPI_Dist_graph_create", 0);
    errors(p);
  }
  CHECK_OK(MPI_Type_free(&strided));
  if (rank == 0) printf("mp_neighbor: ok on %d ranks\n", p);
  MPI_Finalize();
  return 0;
}
