/* A queued chain of persistent neighborhood collectives completes while
 * every host thread sleeps (issue 17 item 2: the halo exchange as a
 * resident trigger plan). Usage: mp_neighbor_asleep [pairs] [kind]
 * [offload] (pairs: enqueued start/wait pairs per chain, default 16, as far
 * as a queue runs ahead; kind: alltoall, allgather, alltoallv, allgatherv,
 * alltoallw, both = the first two (the default), v = the two v forms,
 * w = alltoallw, or all; offload: every persistent request carries the info
 * key nicq_algorithm=offload, which the emulated backend needs to take the
 * plan where ranks outnumber cores). The v and w forms place each block one int apart
 * (displacements stride B + 1), and the gaps must keep their values.
 * Alltoallw gives its blocks three datatypes in turn, each one contiguous
 * run, which the plan puts as they are: B MPI_INTs, one contiguous type of
 * B ints, and one struct type whose B ints start one int after its origin
 * (at a byte displacement one int lower). Then (w, strided blocks) every
 * second of the three is a vector of B ints two apart instead: the plan
 * packs those blocks at the start and unpacks them once they arrived, in
 * host steps, which on native run in the host's progress (the chain is
 * checked at the fence, not asleep) and elsewhere on the emulator's agent.
 *
 * Two persistent requests ping-pong the data: A sends from X and receives
 * into Y, B sends from Y and receives into X (alltoall: block j of the send
 * buffer to out-edge j; allgather: block 0 to every out-edge). A chain
 * enqueues A, B, A, ... so every epoch moves data the previous one
 * delivered, and every epoch's data differs: an epoch skipped, run twice,
 * run early (before its neighbour's previous epoch delivered) or landing
 * in the wrong block changes what ends up where. The expected buffers are
 * computed here from the topology queries alone (MPI 4.1 8.6 pairing:
 * Cartesian receive slot 2d from the -1 neighbour holds what it sent to its
 * +1 neighbour, slot 2d+1; on graphs the k-th edge q -> me in my sources is
 * the k-th edge to me in q's destinations), blocks of MPI_PROC_NULL
 * neighbours keep what they held.
 *
 * Topologies on 4 ranks: a periodic 2x2 grid (each neighbour is both the
 * -1 and the +1 neighbour of its dimension), a nonperiodic 2x2 grid
 * (MPI_PROC_NULL edges), and a distributed graph with a multi-edge
 * (r -> r+1 twice, r -> r+2 once).
 *
 * After a timed chain with a fence, each chain is enqueued and the host
 * sleeps in nanosleep with no MPI call (the timed chain's time, then
 * shorter steps while unfinished, at most 20 s: asleep_check.h); before the fence it reads,
 * through NICQX_Queue_waits_completed (which drives no progress), that
 * every enqueued wait completed. Then the fence and every block is checked.
 *
 * Last, plans only one rank unpacks (rank 0 receives into a strided
 * datatype; with w, also an alltoallw whose one block on rank 0 is
 * strided) must give the same data, the vector's gaps untouched
 * (MPI_Start/MPI_Wait, two epochs).
 * Runs where the plan is executed by the NIC (native on sockets) or the
 * emulator's agent (NICQ_PROGRESS_THREAD=1); where only host calls advance
 * it, it fails at the completion check. */
#include <string.h>
#include <time.h>

#include "asleep_check.h"
#include "coll_check.h"

#define MAXP 4
#define MAXD 4              /* largest degree */
#define B 2                 /* ints per block */
#define SZ (MAXD * (B + 1)) /* ints per buffer: blocks and the v forms' gaps */

typedef struct {
  int in, out;
  int src[MAXD], dst[MAXD];
} Nb;

static Nb nbs[MAXP];
static int is_cart;
static int nprocs;
static int stride; /* ints from one block to the next: B, or B + 1 (v forms) */
/* The persistent requests' info: nicq_algorithm=offload with the third
 * argument "offload" (the emulated backend declines the plan on its own
 * where ranks outnumber cores), else MPI_INFO_NULL. */
static MPI_Info g_plan_info = MPI_INFO_NULL;
/* Alltoallw with strided blocks (every third block a vector of B ints two
 * apart): those blocks' ints sit at 2 * item from the block's start. */
static int strided_w;
/* NICQ_OFFLOAD=native: the NIC runs the plans, host steps wait for MPI calls. */
static int native;

/* Where item b of block k sits, in ints from the block's start. */
static int item_at(int k, int b) {
  return strided_w && k % 3 == 1 ? 2 * b : b;
}

/* The block of `from`'s send buffer that lands in slot i of rank r. */
static int paired_block(int r, int i, int alltoall) {
  const Nb* me = &nbs[r];
  const int q = me->src[i];
  if (!alltoall) return 0;
  if (is_cart) return i ^ 1;
  int k = 0;
  for (int x = 0; x < i; x++) k += me->src[x] == q;
  for (int j = 0; j < nbs[q].out; j++)
    if (nbs[q].dst[j] == r && k-- == 0) return j;
  CHECK(0, "rank %d: in-edge %d from %d has no out-edge in the peer's list", r, i, q);
  return -1;
}

/* One epoch of the collective on the model of every rank's buffers. */
static void model_epoch(int (*send)[SZ], int (*recv)[SZ], int alltoall) {
  for (int r = 0; r < nprocs; r++) {
    for (int i = 0; i < nbs[r].in; i++) {
      const int q = nbs[r].src[i];
      if (q < 0) continue; /* MPI_PROC_NULL: the block keeps its value */
      const int j = paired_block(r, i, alltoall);
      for (int b = 0; b < B; b++)
        recv[r][i * stride + item_at(i, b)] = send[q][j * stride + item_at(j, b)];
    }
  }
}

static void fill(int (*x)[SZ], int (*y)[SZ], int round) {
  for (int r = 0; r < nprocs; r++)
    for (int k = 0; k < SZ; k++) {
      x[r][k] = 100000 * round + 1000 * r + k + 1;
      y[r][k] = -(100000 * round + 1000 * r + k + 1);
    }
}

static void run_chain(MPI_Queue q, MPI_Request* r, int pairs) {
  for (int i = 0; i < pairs; i++) {
    CHECK_OK(MPI_Enqueue_start(&q, &r[i % 2]));
    CHECK_OK(MPI_Enqueue_wait(&q, &r[i % 2], MPI_STATUS_IGNORE));
  }
}

/* Alltoallw's per-block datatypes (see the header): block k's type, count
 * and byte displacement when the block's B ints start at int k * stride. */
static MPI_Datatype w_types[4]; /* [3]: the strided vector */
static void w_block(int k, MPI_Datatype* type, int* count, MPI_Aint* disp) {
  *type = w_types[strided_w && k % 3 == 1 ? 3 : k % 3];
  *count = k % 3 == 0 ? B : 1;
  *disp = (MPI_Aint)sizeof(int) * (k * stride - (k % 3 == 2));
}

static void make_w_types(void) {
  w_types[0] = MPI_INT;
  CHECK_OK(MPI_Type_contiguous(B, MPI_INT, &w_types[1]));
  int len = B;
  MPI_Aint at = sizeof(int);
  MPI_Datatype in = MPI_INT;
  CHECK_OK(MPI_Type_create_struct(1, &len, &at, &in, &w_types[2]));
  CHECK_OK(MPI_Type_vector(B, 1, 2, MPI_INT, &w_types[3]));
  CHECK_OK(MPI_Type_commit(&w_types[1]));
  CHECK_OK(MPI_Type_commit(&w_types[2]));
  CHECK_OK(MPI_Type_commit(&w_types[3]));
}

static void check_chain(MPI_Comm c, const char* where, int alltoall, int v, int w, int pairs) {
  int rank;
  MPI_Comm_rank(c, &rank);
  /* Everyone's neighbour lists, for the model. */
  Nb me;
  memset(&me, 0xff, sizeof me);
  if (is_cart) {
    int nd;
    MPI_Cartdim_get(c, &nd);
    me.in = me.out = 2 * nd;
    for (int d = 0; d < nd; d++) {
      int lo, hi;
      CHECK_OK(MPI_Cart_shift(c, d, 1, &lo, &hi));
      me.src[2 * d] = me.dst[2 * d] = lo;
      me.src[2 * d + 1] = me.dst[2 * d + 1] = hi;
    }
  } else {
    int weighted;
    CHECK_OK(MPI_Dist_graph_neighbors_count(c, &me.in, &me.out, &weighted));
    CHECK_OK(
        MPI_Dist_graph_neighbors(c, MAXD, me.src, MPI_UNWEIGHTED, MAXD, me.dst, MPI_UNWEIGHTED));
  }
  CHECK(me.in == me.out && me.in <= MAXD, "%s: degrees %d/%d", where, me.in, me.out);
  CHECK_OK(MPI_Allgather(&me, sizeof me, MPI_BYTE, nbs, sizeof me, MPI_BYTE, c));

  static int x[SZ], y[SZ];
  static int mx[MAXP][SZ], my[MAXP][SZ];
  MPI_Request req[2];
  int counts[MAXD], displs[MAXD];
  stride = v ? B + 1 : B;
  for (int k = 0; k < MAXD; k++) {
    counts[k] = B;
    displs[k] = k * stride;
  }
  if (w) {
    int wcounts[MAXD];
    MPI_Aint wdispls[MAXD];
    MPI_Datatype wtypes[MAXD];
    for (int k = 0; k < MAXD; k++) w_block(k, &wtypes[k], &wcounts[k], &wdispls[k]);
    CHECK_OK(MPI_Neighbor_alltoallw_init(x, wcounts, wdispls, wtypes, y, wcounts, wdispls, wtypes,
                                         c, g_plan_info, &req[0]));
    CHECK_OK(MPI_Neighbor_alltoallw_init(y, wcounts, wdispls, wtypes, x, wcounts, wdispls, wtypes,
                                         c, g_plan_info, &req[1]));
  } else if (v && alltoall) {
    CHECK_OK(MPI_Neighbor_alltoallv_init(x, counts, displs, MPI_INT, y, counts, displs, MPI_INT, c,
                                         g_plan_info, &req[0]));
    CHECK_OK(MPI_Neighbor_alltoallv_init(y, counts, displs, MPI_INT, x, counts, displs, MPI_INT, c,
                                         g_plan_info, &req[1]));
  } else if (v) {
    CHECK_OK(MPI_Neighbor_allgatherv_init(x, B, MPI_INT, y, counts, displs, MPI_INT, c, g_plan_info,
                                          &req[0]));
    CHECK_OK(MPI_Neighbor_allgatherv_init(y, B, MPI_INT, x, counts, displs, MPI_INT, c, g_plan_info,
                                          &req[1]));
  } else if (alltoall) {
    CHECK_OK(MPI_Neighbor_alltoall_init(x, B, MPI_INT, y, B, MPI_INT, c, g_plan_info, &req[0]));
    CHECK_OK(MPI_Neighbor_alltoall_init(y, B, MPI_INT, x, B, MPI_INT, c, g_plan_info, &req[1]));
  } else {
    CHECK_OK(MPI_Neighbor_allgather_init(x, B, MPI_INT, y, B, MPI_INT, c, g_plan_info, &req[0]));
    CHECK_OK(MPI_Neighbor_allgather_init(y, B, MPI_INT, x, B, MPI_INT, c, g_plan_info, &req[1]));
  }
  CHECK_OK(MPI_Match(&req[0]));
  CHECK_OK(MPI_Match(&req[1]));
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  for (int round = 0; round < 2; round++) {
    /* Timed chain of one pair (A then B would need two: one suffices to
     * time an epoch), with a fence: it moves data, so the model runs it too. */
    fill(mx, my, round);
    memcpy(x, mx[rank], sizeof x);
    memcpy(y, my[rank], sizeof y);
    CHECK_OK(MPI_Barrier(c));
    const double t0 = MPI_Wtime();
    run_chain(q, req, 1);
    CHECK_OK(MPI_Queue_fence(&q));
    const double chain = (MPI_Wtime() - t0) * pairs;
    model_epoch(mx, my, alltoall);
    CHECK(memcmp(y, my[rank], sizeof y) == 0, "%s round %d: the timed epoch delivered wrong data",
          where, round);
    CHECK_OK(MPI_Barrier(c));

    long long done0 = 0, enq0 = 0, done = 0, enq = 0;
    CHECK_OK(NICQX_Queue_waits_completed(q, &done0, &enq0));
    CHECK(done0 == enq0, "%s round %d: %lld of %lld waits complete after a fence", where, round,
          done0, enq0);
    run_chain(q, req, pairs);
    if (strided_w && native) {
      /* The NIC cannot pack: the plans' host steps run in the host's
       * progress, so the chain completes in the fence's. */
      CHECK_OK(MPI_Queue_fence(&q));
      CHECK_OK(NICQX_Queue_waits_completed(q, &done, &enq));
      CHECK(done - done0 == pairs && enq - enq0 == pairs,
            "%s round %d: %lld of %lld enqueued waits completed at the fence, expected %d", where,
            round, done - done0, enq - enq0, pairs);
    } else {
      /* No MPI call from here to the fence but the non-progressing read. */
      const double slept = sleep_while_chain_runs(q, done0, pairs, chain, &done, &enq);
      CHECK(enq - enq0 == pairs, "%s round %d: %lld waits enqueued, expected %d", where, round,
            enq - enq0, pairs);
      CHECK(done - done0 == pairs,
            "%s round %d: %lld of %d enqueued waits completed while the host slept %.1f s (the "
            "chain did not advance without MPI calls)",
            where, round, done - done0, pairs, slept);
      CHECK_OK(MPI_Queue_fence(&q));
    }
    for (int e = 0; e < pairs; e++) {
      if (e % 2 == 0)
        model_epoch(mx, my, alltoall);
      else
        model_epoch(my, mx, alltoall);
    }
    for (int k = 0; k < SZ; k++) {
      CHECK(x[k] == mx[rank][k], "%s round %d: X[%d] (block %d) is %d, want %d", where, round, k,
            k / stride, x[k], mx[rank][k]);
      CHECK(y[k] == my[rank][k], "%s round %d: Y[%d] (block %d) is %d, want %d", where, round, k,
            k / stride, y[k], my[rank][k]);
    }
  }
  CHECK_OK(MPI_Request_free(&req[0]));
  CHECK_OK(MPI_Request_free(&req[1]));
  CHECK_OK(MPI_Queue_free(&q));
  if (rank == 0)
    printf("neighbor_asleep: %s %s: 2 rounds of %d enqueued pairs complete %s\n", where,
           w          ? (strided_w ? "alltoallw (strided blocks)" : "alltoallw")
           : alltoall ? (v ? "alltoallv" : "alltoall")
                      : (v ? "allgatherv" : "allgather"),
           pairs, strided_w && native ? "at the fence" : "asleep");
}

/* The periodic 2x2 grid, this rank in it, and the source of each of its
 * four neighbour slots (in the standard's order: -x, +x, -y, +y). */
static MPI_Comm periodic_grid(int* rank, int src[MAXD]) {
  int dims[2] = {2, 2}, periods[2] = {1, 1};
  MPI_Comm c;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
  MPI_Comm_rank(c, rank);
  for (int d = 0; d < 2; d++) CHECK_OK(MPI_Cart_shift(c, d, 1, &src[2 * d], &src[2 * d + 1]));
  return c;
}

/* Rank 0 receives each block as one strided vector (B ints, stride 2):
 * only its plan has a host step (the unpack), and the data must be right. */
static void check_mixed_types(void) {
  int rank, src[MAXD];
  MPI_Comm c = periodic_grid(&rank, src);
  MPI_Datatype strided;
  CHECK_OK(MPI_Type_vector(B, 1, 2, MPI_INT, &strided));
  CHECK_OK(MPI_Type_commit(&strided));
  const int ext = 2 * B - 1; /* ints between strided blocks */
  static int sbuf[MAXD * B], rbuf[MAXD * 2 * B];
  MPI_Request req;
  CHECK_OK(MPI_Neighbor_alltoall_init(sbuf, B, MPI_INT, rbuf, rank == 0 ? 1 : B,
                                      rank == 0 ? strided : MPI_INT, c, g_plan_info, &req));
  for (int e = 0; e < 2; e++) {
    for (int k = 0; k < MAXD * B; k++) sbuf[k] = 100000 * e + 1000 * rank + k;
    for (int k = 0; k < MAXD * 2 * B; k++) rbuf[k] = -1;
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < MAXD; i++)
      for (int b = 0; b < B; b++) {
        const int at = rank == 0 ? i * ext + 2 * b : i * B + b;
        const int want = 100000 * e + 1000 * src[i] + (i ^ 1) * B + b;
        CHECK(rbuf[at] == want, "mixed types, epoch %d: slot %d item %d is %d, want %d", e, i, b,
              rbuf[at], want);
      }
    if (rank == 0)
      for (int i = 0; i < MAXD; i++)
        for (int g = 1; g < ext; g += 2)
          CHECK(rbuf[i * ext + g] == -1, "mixed types: a gap of the strided slot %d was written",
                i);
  }
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Type_free(&strided));
  CHECK_OK(MPI_Comm_free(&c));
  if (rank == 0) printf("neighbor_asleep: a plan only rank 0 unpacks gives the right data\n");
}

/* Alltoallw on the periodic grid where rank 0 receives block 1 as one
 * strided vector: rank 0's blocks land in plan scratch and are unpacked,
 * and every block (and the vector's gaps) must be right. */
static void check_mixed_w(void) {
  int rank, src[MAXD];
  MPI_Comm c = periodic_grid(&rank, src);
  MPI_Datatype strided;
  CHECK_OK(MPI_Type_vector(B, 1, 2, MPI_INT, &strided));
  CHECK_OK(MPI_Type_commit(&strided));
  enum { SLOT = 2 * B }; /* ints per receive slot: room for the strided one */
  static int sbuf[MAXD * B], rbuf[MAXD * SLOT];
  int scounts[MAXD], rcounts[MAXD];
  MPI_Aint sdispls[MAXD], rdispls[MAXD];
  MPI_Datatype stypes[MAXD], rtypes[MAXD];
  for (int k = 0; k < MAXD; k++) {
    scounts[k] = rcounts[k] = B;
    stypes[k] = rtypes[k] = MPI_INT;
    sdispls[k] = (MPI_Aint)sizeof(int) * k * B;
    rdispls[k] = (MPI_Aint)sizeof(int) * k * SLOT;
  }
  if (rank == 0) {
    rcounts[1] = 1;
    rtypes[1] = strided;
  }
  MPI_Request req;
  CHECK_OK(MPI_Neighbor_alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
                                       rtypes, c, g_plan_info, &req));
  for (int e = 0; e < 2; e++) {
    for (int k = 0; k < MAXD * B; k++) sbuf[k] = 100000 * e + 1000 * rank + k;
    for (int k = 0; k < MAXD * SLOT; k++) rbuf[k] = -1;
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < MAXD; i++) {
      const int step = rank == 0 && i == 1 ? 2 : 1;
      for (int b = 0; b < B; b++) {
        const int got = rbuf[i * SLOT + b * step];
        const int want = 100000 * e + 1000 * src[i] + (i ^ 1) * B + b;
        CHECK(got == want, "mixed alltoallw, epoch %d: slot %d item %d is %d, want %d", e, i, b,
              got, want);
      }
      for (int k = i * SLOT; k < (i + 1) * SLOT; k++) {
        const int used = (k - i * SLOT) % step == 0 && (k - i * SLOT) / step < B;
        CHECK(used || rbuf[k] == -1, "mixed alltoallw: int %d outside the blocks was written", k);
      }
    }
  }
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Type_free(&strided));
  CHECK_OK(MPI_Comm_free(&c));
  if (rank == 0) printf("neighbor_asleep: an alltoallw only rank 0 unpacks gives the right data\n");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int pairs = argc > 1 ? atoi(argv[1]) : 16;
  const char* kind = argc > 2 ? argv[2] : "both";
  if (argc > 3 && strcmp(argv[3], "offload") == 0) {
    CHECK_OK(MPI_Info_create(&g_plan_info));
    CHECK_OK(MPI_Info_set(g_plan_info, "nicq_algorithm", "offload"));
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  CHECK(nprocs == MAXP, "run on %d ranks (got %d)", MAXP, nprocs);
  static const char* const kForms[5] = {"alltoall", "allgather", "alltoallv", "allgatherv",
                                        "alltoallw"};
  const char* offload = getenv("NICQ_OFFLOAD");
  native = offload && !strcmp(offload, "native");
  make_w_types();
  int any_w = 0;
  for (int form = 0; form < 5; form++) {
    const int w = form == 4, alltoall = form % 2 == 0, v = form >= 2 && !w;
    const int wanted = strcmp(kind, "all") == 0 || strcmp(kind, kForms[form]) == 0 ||
                       (strcmp(kind, "both") == 0 && form < 2) || (strcmp(kind, "v") == 0 && v) ||
                       (strcmp(kind, "w") == 0 && w);
    if (!wanted) continue;
    any_w |= w;
    for (strided_w = 0; strided_w <= w; strided_w++) {
      for (int periodic = 1; periodic >= 0; periodic--) {
        int dims[2] = {2, 2}, periods[2] = {periodic, periodic};
        MPI_Comm c;
        CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
        is_cart = 1;
        check_chain(c, periodic ? "periodic 2x2 grid" : "nonperiodic 2x2 grid", alltoall, v || w, w,
                    pairs);
        CHECK_OK(MPI_Comm_free(&c));
      }
      /* r -> r+1 (twice) and r -> r+2; in-edges listed in another order. */
      const int r = g_rank, p = nprocs;
      int dst[3] = {(r + 1) % p, (r + 2) % p, (r + 1) % p};
      int src[3] = {(r + p - 2) % p, (r + p - 1) % p, (r + p - 1) % p};
      MPI_Comm g;
      CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, MPI_UNWEIGHTED, 3, dst,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
      is_cart = 0;
      check_chain(g, "dist graph with a multi-edge", alltoall, v || w, w, pairs);
      CHECK_OK(MPI_Comm_free(&g));
    }
  }
  strided_w = 0;
  check_mixed_types();
  if (any_w) check_mixed_w();
  CHECK_OK(MPI_Type_free(&w_types[1]));
  CHECK_OK(MPI_Type_free(&w_types[2]));
  if (g_plan_info != MPI_INFO_NULL) CHECK_OK(MPI_Info_free(&g_plan_info));
  CHECK_OK(MPI_Type_free(&w_types[3]));
  MPI_Finalize();
  return 0;
}
