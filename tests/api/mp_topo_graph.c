/* Graph and distributed graph topologies (MPI 4.1 8.5): what the queries
 * return after each creator, weights (MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY),
 * MPI_Topo_test for every kind, topologies surviving MPI_Comm_dup, and the
 * creators' and queries' errors (each class checked, outputs untouched, and
 * the collective verdicts reached on every rank). */
#include "mp_check.h"

#define MAXP 8
#define SENTINEL (-99)

static int rank, p;

static void expect_class(int rc, int cls, const char* what) {
  int got = -1;
  CHECK(rc != MPI_SUCCESS, "%s succeeded; expected class %d", what, cls);
  MPI_Error_class(rc, &got);
  CHECK(got == cls, "%s: class %d, expected %d", what, got, cls);
}

/* The message of error code rc names the call and the argument. */
static void expect_message(int rc, const char* call, const char* argument) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  CHECK(strstr(msg, call) && strstr(msg, argument), "message \"%s\" does not name %s and %s", msg,
        call, argument);
}

static void expect_topo(MPI_Comm c, int kind, const char* what) {
  int status = -5;
  CHECK_OK(MPI_Topo_test(c, &status));
  CHECK(status == kind, "%s: MPI_Topo_test gave %d, expected %d", what, status, kind);
}

/* Checks the dist-graph queries of c against the expected lists. */
static void expect_dist(MPI_Comm c, int in, const int* src, const int* sw, int out, const int* dst,
                        const int* dw, const char* what) {
  int gi = -1, go = -1, weighted = -1;
  CHECK_OK(MPI_Dist_graph_neighbors_count(c, &gi, &go, &weighted));
  CHECK(gi == in && go == out, "%s: degrees %d/%d, expected %d/%d", what, gi, go, in, out);
  CHECK(weighted == (sw != MPI_UNWEIGHTED), "%s: weighted %d", what, weighted);
  int s[MAXP + 1], w1[MAXP + 1], d[MAXP + 1], w2[MAXP + 1];
  for (int i = 0; i <= MAXP; ++i) s[i] = w1[i] = d[i] = w2[i] = SENTINEL;
  CHECK_OK(MPI_Dist_graph_neighbors(c, in, s, w1, out, d, w2));
  for (int i = 0; i < in; ++i) {
    CHECK(s[i] == src[i], "%s: sources[%d] = %d, expected %d", what, i, s[i], src[i]);
    const int want = sw == MPI_UNWEIGHTED ? SENTINEL : sw[i];
    CHECK(w1[i] == want, "%s: sourceweights[%d] = %d, expected %d", what, i, w1[i], want);
  }
  for (int i = 0; i < out; ++i) {
    CHECK(d[i] == dst[i], "%s: destinations[%d] = %d, expected %d", what, i, d[i], dst[i]);
    const int want = dw == MPI_UNWEIGHTED ? SENTINEL : dw[i];
    CHECK(w2[i] == want, "%s: destweights[%d] = %d, expected %d", what, i, w2[i], want);
  }
  CHECK(s[in] == SENTINEL && d[out] == SENTINEL && w1[in] == SENTINEL && w2[out] == SENTINEL,
        "%s: the queries wrote past the degrees", what);
}

static void adjacent(void) {
  /* Out-edges r -> r+1, r+2; in-edges from r-2, r-1; weighted. */
  const int dst[2] = {(rank + 1) % p, (rank + 2) % p};
  const int src[2] = {((rank - 2) % p + p) % p, (rank + p - 1) % p};
  const int sw[2] = {10 * rank + 1, 10 * rank + 2}, dw[2] = {10 * rank + 3, 10 * rank + 4};
  MPI_Comm c = MPI_COMM_NULL, dup = MPI_COMM_NULL;
  CHECK_OK(
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 1, &c));
  expect_topo(c, MPI_DIST_GRAPH, "adjacent");
  int r = -1;
  MPI_Comm_rank(c, &r);
  CHECK(r == rank, "reorder moved rank %d to %d", rank, r);
  expect_dist(c, 2, src, sw, 2, dst, dw, "adjacent weighted");
  CHECK_OK(MPI_Comm_dup(c, &dup));
  expect_topo(dup, MPI_DIST_GRAPH, "dup of adjacent");
  expect_dist(dup, 2, src, sw, 2, dst, dw, "dup of adjacent weighted");
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK_OK(MPI_Comm_free(&c));

  /* Unweighted: the weight arrays are not written. */
  CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c));
  expect_dist(c, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, "adjacent unweighted");
  CHECK_OK(MPI_Comm_free(&c));

  /* A star into rank 0: zero degrees take MPI_WEIGHTS_EMPTY. */
  int in_src[MAXP], in_w[MAXP];
  for (int i = 1; i < p; ++i) {
    in_src[i - 1] = i;
    in_w[i - 1] = i * 7;
  }
  const int to0[1] = {0}, w0[1] = {rank * 7};
  if (rank == 0)
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, p - 1, in_src,
                                            p > 1 ? in_w : MPI_WEIGHTS_EMPTY, 0, NULL,
                                            MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c));
  else
    CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 1, to0, w0,
                                            MPI_INFO_NULL, 0, &c));
  if (rank == 0)
    expect_dist(c, p - 1, in_src, in_w, 0, NULL, in_w, "star root");
  else
    expect_dist(c, 0, NULL, w0, 1, to0, w0, "star leaf");
  CHECK_OK(MPI_Comm_free(&c));
}

/* Each rank names r -> r+1 (weight 100+r); rank 0 names p-1 -> 0 once more
 * (weight 7). Each end lists its edges by (naming rank, position). */
static void general(void) {
  const int sources[2] = {rank, p - 1}, degrees[2] = {1, 1};
  const int dests[2] = {(rank + 1) % p, 0}, weights[2] = {100 + rank, 7};
  MPI_Comm c = MPI_COMM_NULL;
  CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? 2 : 1, sources, degrees, dests,
                                 weights, MPI_INFO_NULL, 0, &c));
  expect_topo(c, MPI_DIST_GRAPH, "MPI_Dist_graph_create");
  int in = 0, out = 0, src[3], sw[3], dst[3], dw[3];
  const int prev = (rank + p - 1) % p;
  if (rank == 0) { /* origin 0 names both in-edges here when p is 1 */
    src[in] = p - 1, sw[in++] = p == 1 ? 100 : 7;
    src[in] = p - 1, sw[in++] = p == 1 ? 7 : 100 + p - 1;
  } else {
    src[in] = prev, sw[in++] = 100 + prev;
  }
  if (rank == p - 1 && p > 1) {
    dst[out] = 0, dw[out++] = 7; /* named by rank 0 */
    dst[out] = 0, dw[out++] = 100 + rank;
  } else if (p == 1) {
    dst[out] = 0, dw[out++] = 100;
    dst[out] = 0, dw[out++] = 7;
  } else {
    dst[out] = rank + 1, dw[out++] = 100 + rank;
  }
  expect_dist(c, in, src, sw, out, dst, dw, "MPI_Dist_graph_create");
  CHECK_OK(MPI_Comm_free(&c));
}

static void graph(void) {
  int index[MAXP], edges[2 * MAXP];
  for (int i = 0; i < p; ++i) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + 1) % p;
    edges[2 * i + 1] = (i + p - 1) % p;
  }
  MPI_Comm c = MPI_COMM_NULL;
  CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, p, index, edges, 1, &c));
  expect_topo(c, MPI_GRAPH, "graph");
  int nn = -1, ne = -1;
  CHECK_OK(MPI_Graphdims_get(c, &nn, &ne));
  CHECK(nn == p && ne == 2 * p, "MPI_Graphdims_get: %d nodes %d edges", nn, ne);
  int gi[MAXP + 1], ge[2 * MAXP + 1];
  for (int i = 0; i <= MAXP; ++i) gi[i] = SENTINEL;
  for (int i = 0; i <= 2 * MAXP; ++i) ge[i] = SENTINEL;
  CHECK_OK(MPI_Graph_get(c, p, 2 * p, gi, ge));
  for (int i = 0; i < p; ++i) CHECK(gi[i] == index[i], "MPI_Graph_get index[%d] = %d", i, gi[i]);
  for (int i = 0; i < 2 * p; ++i)
    CHECK(ge[i] == edges[i], "MPI_Graph_get edges[%d] = %d", i, ge[i]);
  CHECK(gi[p] == SENTINEL && ge[2 * p] == SENTINEL, "MPI_Graph_get wrote past maxindex/maxedges");
  const int other = p - 1 - rank;
  int n = -1, nb[3] = {SENTINEL, SENTINEL, SENTINEL};
  CHECK_OK(MPI_Graph_neighbors_count(c, other, &n));
  CHECK(n == 2, "MPI_Graph_neighbors_count(%d) = %d", other, n);
  CHECK_OK(MPI_Graph_neighbors(c, other, 2, nb));
  CHECK(nb[0] == (other + 1) % p && nb[1] == (other + p - 1) % p && nb[2] == SENTINEL,
        "MPI_Graph_neighbors(%d) = %d %d %d", other, nb[0], nb[1], nb[2]);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  expect_class(MPI_Graph_neighbors_count(c, p, &n), MPI_ERR_RANK, "MPI_Graph_neighbors_count(p)");
  expect_class(MPI_Dist_graph_neighbors_count(c, &n, &n, &n), MPI_ERR_TOPOLOGY,
               "MPI_Dist_graph_neighbors_count on a graph");
  CHECK_OK(MPI_Comm_free(&c));
  /* A graph of one node with a self loop: only rank 0 is in it. */
  const int i1[1] = {1}, e1[1] = {0};
  int newrank = -5;
  CHECK_OK(MPI_Graph_map(MPI_COMM_WORLD, 1, i1, e1, &newrank));
  CHECK(newrank == (rank == 0 ? 0 : MPI_UNDEFINED), "MPI_Graph_map gave %d", newrank);
  CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, 1, i1, e1, 0, &c));
  CHECK((c == MPI_COMM_NULL) == (rank != 0), "one-node graph: rank %d got %s", rank,
        c == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
  if (c != MPI_COMM_NULL) CHECK_OK(MPI_Comm_free(&c));
}

static void errors(void) {
  MPI_Comm c = (MPI_Comm)SENTINEL;
  const int ok[1] = {0}, bad[1] = {p}, neg[1] = {-1};
  expect_topo(MPI_COMM_WORLD, MPI_UNDEFINED, "MPI_COMM_WORLD");
  expect_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, ok, MPI_UNWEIGHTED, 0, ok,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
               MPI_ERR_ARG, "negative indegree");
  int rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, MPI_UNWEIGHTED, 0, ok,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c);
  expect_class(rc, MPI_ERR_RANK, "source out of range");
  expect_message(rc, "MPI_Dist_graph_create_adjacent", "sources[0]");
  expect_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok, MPI_WEIGHTS_EMPTY, 0, ok,
                                              MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &c),
               MPI_ERR_ARG, "MPI_WEIGHTS_EMPTY with an edge");
  expect_class(
      MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok, neg, 0, ok, ok, MPI_INFO_NULL, 0, &c),
      MPI_ERR_ARG, "negative weight");
  expect_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok, MPI_UNWEIGHTED, 0, ok, ok,
                                              MPI_INFO_NULL, 0, &c),
               MPI_ERR_ARG, "MPI_UNWEIGHTED on one side only");
  rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, neg, ok, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c);
  expect_class(rc, MPI_ERR_ARG, "negative degree");
  expect_message(rc, "MPI_Dist_graph_create", "degrees[0]");
  const int one[1] = {1};
  expect_class(
      MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok, one, bad, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
      MPI_ERR_RANK, "destination out of range");
  /* Collective verdicts, on every rank: out-edges nobody lists as in-edges. */
  const int next[1] = {(rank + 1) % p};
  expect_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 1, next,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
               MPI_ERR_TOPOLOGY, "inconsistent adjacent graph");
  /* Rank 0 weighted, the others not. */
  if (p > 1) {
    const int prev[1] = {(rank + p - 1) % p}, w[1] = {1};
    expect_class(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, prev, rank == 0 ? w : MPI_UNWEIGHTED, 1,
                                       next, rank == 0 ? w : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
        MPI_ERR_ARG, "MPI_UNWEIGHTED on some ranks only");
  }
  CHECK(c == (MPI_Comm)SENTINEL, "a refused creator wrote its communicator");
  const int index[1] = {1};
  expect_class(MPI_Graph_create(MPI_COMM_WORLD, 1, index, bad, 0, &c), MPI_ERR_RANK,
               "graph edge out of range");
  expect_class(MPI_Graph_create(MPI_COMM_WORLD, p + 1, index, ok, 0, &c), MPI_ERR_ARG,
               "nnodes above the size");
  CHECK(c == (MPI_Comm)SENTINEL, "a refused MPI_Graph_create wrote its communicator");
  int n = 0;
  expect_class(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &n), MPI_ERR_TOPOLOGY,
               "MPI_Graph_neighbors_count without a topology");
  const int dims[1] = {p}, periods[1] = {0};
  MPI_Comm cart = MPI_COMM_NULL;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
  expect_topo(cart, MPI_CART, "cart");
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  int s[2];
  expect_class(MPI_Dist_graph_neighbors(cart, 2, s, MPI_UNWEIGHTED, 2, s, MPI_UNWEIGHTED),
               MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors on a Cartesian communicator");
  CHECK_OK(MPI_Comm_free(&cart));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  mp_rank = rank;
  CHECK(p <= MAXP, "at most %d ranks", MAXP);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  adjacent();
  general();
  graph();
  errors();
  if (rank == 0) printf("mp_topo_graph: ok on %d ranks\n", p);
  MPI_Finalize();
  return 0;
}
