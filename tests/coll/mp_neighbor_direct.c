/* Blocking neighborhood collectives whose calls post their messages
 * directly (src/coll/neighbor_direct.cc) next to calls that take the
 * schedule, every receive block and the gaps between blocks checked:
 *  1. a 1D periodic ring: MPI_Neighbor_alltoall and MPI_Neighbor_allgather
 *     called again and again on one communicator, alternating between two
 *     buffer pairs, with a new count each call (0 included);
 *  2. the same calls where rank 0 receives with a strided type, so its
 *     calls take the schedule while the others post directly: the messages
 *     and the blocking tag sequence must pair across the two paths;
 *  3. the ring freed and made again between calls (a new communicator may
 *     reuse the old one's address and context id);
 *  4. a distributed graph with multi-edges to the right neighbor: 8 edges
 *     each way (posted directly, the k-th send pairing with the k-th
 *     receive) alternating with 20 each way (40 messages: the schedule),
 *     and with the ring.
 * Usage: mp_neighbor_direct */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

#define MAXB 7          /* largest block, in ints */
#define MAXE 20         /* most edges per neighbor list */
#define SENT (-1)       /* receive sentinel */
#define SPAN (2 * MAXB) /* room per receive block (strided: 2 ints per item) */

static int rank_, size_;
static int sbuf[2][MAXE * MAXB], rbuf[2][MAXE * SPAN];

static int val(int seed, int q, int slot, int k) {
  return seed * 100000 + q * 1000 + slot * 10 + k;
}

/* The ring: slot 0 is the -1 neighbor, slot 1 the +1 neighbor; what a rank
 * sends to its -1 neighbor arrives in that neighbor's +1 slot. */
static MPI_Comm ring(void) {
  MPI_Comm c;
  int dims[1] = {size_}, periods[1] = {1};
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c));
  return c;
}

/* A strided receive type of n ints (one int, one hole), or MPI_INT. */
static MPI_Datatype recv_type(int n, int strided, int* rcount) {
  MPI_Datatype t = MPI_INT;
  *rcount = n;
  if (strided && n > 0) {
    MPI_Datatype v;
    CHECK_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &v));
    CHECK_OK(MPI_Type_create_resized(v, 0, (MPI_Aint)(SPAN * sizeof(int)), &t));
    CHECK_OK(MPI_Type_commit(&t));
    CHECK_OK(MPI_Type_free(&v));
    *rcount = 1;
  }
  return t;
}

/* Block i of the receive buffer: n ints at stride 1 (plain) or 2 (strided),
 * from sender `from` of its slot `slot`; every other int keeps SENT. */
static void check_blocks(const int* r, int nblocks, int n, int strided, int block_ints,
                         const int* from, const int* slot, int seed, const char* what) {
  const int stride = strided ? 2 : 1;
  for (int i = 0; i < nblocks; ++i)
    for (int x = 0; x < block_ints; ++x) {
      const int* at = r + i * block_ints + x;
      const int item = x % stride == 0 && x / stride < n ? x / stride : -1;
      const int want = item >= 0 ? val(seed, from[i], slot[i], item) : SENT;
      CHECK(*at == want, "%s seed %d: block %d int %d is %d, expected %d", what, seed, i, x, *at,
            want);
    }
}

static void ring_round(MPI_Comm c, int seed, int n, int strided, int b) {
  int src[2];
  CHECK_OK(MPI_Cart_shift(c, 0, 1, &src[0], &src[1]));
  int rcount;
  MPI_Datatype rt = recv_type(n, strided, &rcount);
  /* Strided blocks sit SPAN ints apart (the resized extent); plain ones n. */
  const int block_ints = strided && n > 0 ? SPAN : n;
  int slot[2] = {1, 0};

  for (int j = 0; j < 2; ++j)
    for (int k = 0; k < n; ++k) sbuf[b][j * n + k] = val(seed, rank_, j, k);
  for (int x = 0; x < 2 * SPAN; ++x) rbuf[b][x] = SENT;
  CHECK_OK(MPI_Neighbor_alltoall(sbuf[b], n, MPI_INT, rbuf[b], rcount, rt, c));
  check_blocks(rbuf[b], 2, n, strided, block_ints, src, slot, seed, "ring alltoall");

  /* allgather: one block (slot 0's values) to both neighbors. */
  int zero[2] = {0, 0};
  for (int x = 0; x < 2 * SPAN; ++x) rbuf[b][x] = SENT;
  CHECK_OK(MPI_Neighbor_allgather(sbuf[b], n, MPI_INT, rbuf[b], rcount, rt, c));
  check_blocks(rbuf[b], 2, n, strided, block_ints, src, zero, seed, "ring allgather");
  if (rt != MPI_INT) MPI_Type_free(&rt);
}

/* Every rank sends `edges` edges to its right neighbor and receives as many
 * from its left one; the k-th send pairs with the k-th receive. */
static void graph_round(int edges, int seed, int n) {
  int srcs[MAXE], dsts[MAXE];
  for (int e = 0; e < edges; ++e) {
    srcs[e] = (rank_ + size_ - 1) % size_;
    dsts[e] = (rank_ + 1) % size_;
  }
  MPI_Comm g;
  CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, edges, srcs, MPI_UNWEIGHTED, edges, dsts,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
  int from[MAXE], slot[MAXE];
  for (int e = 0; e < edges; ++e) {
    from[e] = srcs[e];
    slot[e] = e;
    for (int k = 0; k < n; ++k) sbuf[0][e * n + k] = val(seed, rank_, e, k);
  }
  for (int x = 0; x < edges * n; ++x) rbuf[0][x] = SENT;
  CHECK_OK(MPI_Neighbor_alltoall(sbuf[0], n, MPI_INT, rbuf[0], n, MPI_INT, g));
  check_blocks(rbuf[0], edges, n, 0, n, from, slot, seed,
               edges > 16 ? "graph (schedule)" : "graph");
  CHECK_OK(MPI_Comm_free(&g));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  g_rank = rank_;
  static const int counts[] = {3, 1, 7, 0, 5, 2};
  const int ncounts = (int)(sizeof counts / sizeof counts[0]);

  MPI_Comm c = ring();
  int seed = 1;
  for (int round = 0; round < 2 * ncounts; ++round, ++seed)
    ring_round(c, seed, counts[round % ncounts], 0, round & 1); /* 1 */
  for (int round = 0; round < 2 * ncounts; ++round, ++seed)
    ring_round(c, seed, counts[round % ncounts], rank_ == 0 && (round & 2), round & 1); /* 2 */
  CHECK_OK(MPI_Comm_free(&c));

  for (int again = 0; again < 3; ++again) { /* 3 */
    c = ring();
    ring_round(c, seed++, counts[again], 0, again & 1);
    ring_round(c, seed++, counts[again + 1], rank_ == 0, 0);
    CHECK_OK(MPI_Comm_free(&c));
  }

  c = ring();
  for (int round = 0; round < 4; ++round) { /* 4 */
    graph_round(8, seed++, counts[round]);
    graph_round(MAXE, seed++, counts[round + 1]);
    ring_round(c, seed++, counts[round + 2], 0, round & 1);
  }
  CHECK_OK(MPI_Comm_free(&c));

  if (rank_ == 0) printf("mp_neighbor_direct: %d ranks ok\n", size_);
  MPI_Finalize();
  return 0;
}
