/* Persistent collectives matched (MPI_Match, collective) and enqueued on a
 * queue exactly like point-to-point requests (chapter 13):
 *  - every persistent collective kind, on the host engine (and the
 *    offloaded nic_tree allreduce where the backend is native), matched,
 *    then enqueued with a persistent p2p ring on the same queue, several
 *    iterations with changing inputs, all results data-checked; starts and
 *    waits in different orders on different ranks;
 *  - the same requests started with plain MPI_Start/MPI_Wait after the
 *    match, and mixed with enqueued ones;
 *  - MPI_Imatch of a collective request;
 *  - matching a matched request again is an error; ranks matching
 *    different collective requests get MPI_ERR_MATCH on every rank (not a
 *    hang), and the requests match fine afterwards.
 * Usage: mp_coll_queue [iterations] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

enum {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kAllreduceD, /* double: the offloaded nic_tree plan on a native backend */
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kAllgather,
  kAllgatherv,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kReduceScatter,
  kReduceScatterBlock,
  kScan,
  kExscan,
  kKinds
};
static const char* const kNames[kKinds] = {"barrier",
                                           "bcast",
                                           "reduce",
                                           "allreduce",
                                           "allreduce(double)",
                                           "gather",
                                           "gatherv",
                                           "scatter",
                                           "scatterv",
                                           "allgather",
                                           "allgatherv",
                                           "alltoall",
                                           "alltoallv",
                                           "alltoallw",
                                           "reduce_scatter",
                                           "reduce_scatter_block",
                                           "scan",
                                           "exscan"};

#define N 3    /* items per rank (or per pair) */
#define MAXP 8 /* ranks this test supports */
static int rank, p;

/* Rank r's item i in iteration it. */
static int V(int r, int i, int it) {
  return r * 100 + i + it * 7;
}

/* Buffers of every kind (sized for MAXP ranks). */
static int in[kKinds][N * MAXP * MAXP], out[kKinds][N * MAXP * MAXP];
static double din[N], dout[N];
static int vcnt[MAXP], vdsp[MAXP], wcnt[MAXP], wdsp[MAXP], rcnt[MAXP], rdsp[MAXP];
static int wsd[MAXP], wrd[MAXP]; /* alltoallw byte displacements */
static MPI_Datatype wtypes[MAXP];
static MPI_Request req[kKinds];
/* p2p ring on the same queue. */
static int ring_s[N], ring_r[N];
static MPI_Request ring[2];

static void init_all(MPI_Comm comm) {
  MPI_Info info = MPI_INFO_NULL;
  int off = 0;
  for (int r = 0; r < p; ++r) {
    vcnt[r] = r + 1; /* v variants: rank r contributes r+1 items */
    vdsp[r] = off;
    off += r + 1;
    wtypes[r] = MPI_INT;
  }
  /* alltoallv/w: this rank sends j+1 items to rank j, receives rank+1 from each. */
  for (int j = 0, so = 0; j < p; ++j) {
    wcnt[j] = j + 1;
    wdsp[j] = so;
    wsd[j] = so * (int)sizeof(int);
    so += j + 1;
    rcnt[j] = rank + 1;
    rdsp[j] = j * (rank + 1);
    wrd[j] = rdsp[j] * (int)sizeof(int);
  }
  const int root_b = p - 1, root_g = 1 % p, root_sv = p - 1;
  CHECK_OK(MPI_Barrier_init(comm, info, &req[kBarrier]));
  CHECK_OK(MPI_Bcast_init(in[kBcast], N, MPI_INT, root_b, comm, info, &req[kBcast]));
  CHECK_OK(MPI_Reduce_init(in[kReduce], out[kReduce], N, MPI_INT, MPI_SUM, 0, comm, info,
                           &req[kReduce]));
  CHECK_OK(MPI_Allreduce_init(in[kAllreduce], out[kAllreduce], N, MPI_INT, MPI_SUM, comm, info,
                              &req[kAllreduce]));
  CHECK_OK(MPI_Allreduce_init(din, dout, N, MPI_DOUBLE, MPI_SUM, comm, info, &req[kAllreduceD]));
  CHECK_OK(MPI_Gather_init(in[kGather], N, MPI_INT, out[kGather], N, MPI_INT, root_g, comm, info,
                           &req[kGather]));
  CHECK_OK(MPI_Gatherv_init(in[kGatherv], rank + 1, MPI_INT, out[kGatherv], vcnt, vdsp, MPI_INT, 0,
                            comm, info, &req[kGatherv]));
  CHECK_OK(MPI_Scatter_init(in[kScatter], N, MPI_INT, out[kScatter], N, MPI_INT, 0, comm, info,
                            &req[kScatter]));
  CHECK_OK(MPI_Scatterv_init(in[kScatterv], vcnt, vdsp, MPI_INT, out[kScatterv], rank + 1, MPI_INT,
                             root_sv, comm, info, &req[kScatterv]));
  CHECK_OK(MPI_Allgather_init(in[kAllgather], N, MPI_INT, out[kAllgather], N, MPI_INT, comm, info,
                              &req[kAllgather]));
  CHECK_OK(MPI_Allgatherv_init(in[kAllgatherv], rank + 1, MPI_INT, out[kAllgatherv], vcnt, vdsp,
                               MPI_INT, comm, info, &req[kAllgatherv]));
  CHECK_OK(MPI_Alltoall_init(in[kAlltoall], N, MPI_INT, out[kAlltoall], N, MPI_INT, comm, info,
                             &req[kAlltoall]));
  CHECK_OK(MPI_Alltoallv_init(in[kAlltoallv], wcnt, wdsp, MPI_INT, out[kAlltoallv], rcnt, rdsp,
                              MPI_INT, comm, info, &req[kAlltoallv]));
  CHECK_OK(MPI_Alltoallw_init(in[kAlltoallw], wcnt, wsd, wtypes, out[kAlltoallw], rcnt, wrd, wtypes,
                              comm, info, &req[kAlltoallw]));
  CHECK_OK(MPI_Reduce_scatter_init(in[kReduceScatter], out[kReduceScatter], vcnt, MPI_INT, MPI_SUM,
                                   comm, info, &req[kReduceScatter]));
  CHECK_OK(MPI_Reduce_scatter_block_init(in[kReduceScatterBlock], out[kReduceScatterBlock], N,
                                         MPI_INT, MPI_SUM, comm, info, &req[kReduceScatterBlock]));
  CHECK_OK(MPI_Scan_init(in[kScan], out[kScan], N, MPI_INT, MPI_SUM, comm, info, &req[kScan]));
  CHECK_OK(
      MPI_Exscan_init(in[kExscan], out[kExscan], N, MPI_INT, MPI_SUM, comm, info, &req[kExscan]));
}

/* Inputs of iteration `it`; outputs poisoned. */
static void fill(int it) {
  memset(out, 0xff, sizeof out);
  for (int k = 0; k < kKinds; ++k)
    for (int i = 0; i < N * MAXP * MAXP; ++i) in[k][i] = V(rank, i, it);
  /* bcast: the root's values, others poisoned (the buffer is the output) */
  for (int i = 0; i < N; ++i) in[kBcast][i] = rank == p - 1 ? V(p - 1, i, it) : -1;
  for (int i = 0; i < N; ++i) din[i] = V(rank, i, it) + 0.5, dout[i] = -1;
  for (int i = 0; i < N; ++i) ring_s[i] = V(rank, i, it), ring_r[i] = -1;
}

static int sum_over(int i, int it, int ranks) {
  int s = 0;
  for (int r = 0; r < ranks; ++r) s += V(r, i, it);
  return s;
}

#define EXPECT(k, cond, fmt, ...) \
  CHECK(cond, "%s (%s) iteration %d: " fmt, kNames[k], how, it, __VA_ARGS__)

static void check(int it, const char* how) {
  for (int i = 0; i < N; ++i) {
    EXPECT(kBcast, in[kBcast][i] == V(p - 1, i, it), "[%d] = %d", i, in[kBcast][i]);
    if (rank == 0)
      EXPECT(kReduce, out[kReduce][i] == sum_over(i, it, p), "[%d] = %d", i, out[kReduce][i]);
    EXPECT(kAllreduce, out[kAllreduce][i] == sum_over(i, it, p), "[%d] = %d", i,
           out[kAllreduce][i]);
    EXPECT(kAllreduceD, dout[i] == sum_over(i, it, p) + 0.5 * p, "[%d] = %g", i, dout[i]);
    EXPECT(kScatter, out[kScatter][i] == V(0, rank * N + i, it), "[%d] = %d", i, out[kScatter][i]);
    EXPECT(kReduceScatterBlock, out[kReduceScatterBlock][i] == sum_over(rank * N + i, it, p),
           "[%d] = %d", i, out[kReduceScatterBlock][i]);
    EXPECT(kScan, out[kScan][i] == sum_over(i, it, rank + 1), "[%d] = %d", i, out[kScan][i]);
    if (rank > 0)
      EXPECT(kExscan, out[kExscan][i] == sum_over(i, it, rank), "[%d] = %d", i, out[kExscan][i]);
    const int left = (rank + p - 1) % p;
    CHECK(ring_r[i] == V(left, i, it), "p2p ring (%s) iteration %d: [%d] = %d", how, it, i,
          ring_r[i]);
  }
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < N; ++i) {
      if (rank == 1 % p) EXPECT(kGather, out[kGather][r * N + i] == V(r, i, it), "[%d]", r * N + i);
      EXPECT(kAllgather, out[kAllgather][r * N + i] == V(r, i, it), "[%d]", r * N + i);
      EXPECT(kAlltoall, out[kAlltoall][r * N + i] == V(r, rank * N + i, it), "[%d]", r * N + i);
    }
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < r + 1; ++i) {
      if (rank == 0) EXPECT(kGatherv, out[kGatherv][vdsp[r] + i] == V(r, i, it), "[%d]", r);
      EXPECT(kAllgatherv, out[kAllgatherv][vdsp[r] + i] == V(r, i, it), "[%d]", r);
    }
  for (int i = 0; i < rank + 1; ++i) {
    EXPECT(kScatterv, out[kScatterv][i] == V(p - 1, vdsp[rank] + i, it), "[%d]", i);
    EXPECT(kReduceScatter, out[kReduceScatter][i] == sum_over(vdsp[rank] + i, it, p), "[%d]", i);
  }
  /* alltoallv/w: from rank j, rank+1 items of j's block for me (offset sum_{m<rank}(m+1)). */
  const int my_off = rank * (rank + 1) / 2;
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < rank + 1; ++i) {
      EXPECT(kAlltoallv, out[kAlltoallv][rdsp[j] + i] == V(j, my_off + i, it), "[%d]", j);
      EXPECT(kAlltoallw, out[kAlltoallw][rdsp[j] + i] == V(j, my_off + i, it), "[%d]", j);
    }
}

/* Requests in the order this rank uses in iteration `it`: collectives
 * forwards or backwards (odd ranks reverse on odd iterations, unless
 * `same`), p2p last. */
static int order(int it, int same, MPI_Request* all) {
  const int rev = !same && (it % 2) && (rank % 2);
  for (int k = 0; k < kKinds; ++k) all[k] = req[rev ? kKinds - 1 - k : k];
  all[kKinds] = ring[0];
  all[kKinds + 1] = ring[1];
  return kKinds + 2;
}

static void enqueued(MPI_Queue* q, int it) {
  MPI_Request all[kKinds + 2];
  /* One at a time (start, wait, start, wait ...): the queue serializes the
   * collectives, so every rank must use the same order, as for blocking
   * collectives; all at once: any order. */
  const int serial = it % 3 == 2;
  const int n = order(it, serial, all);
  fill(it);
  if (serial) {
    for (int k = 0; k < n; ++k) {
      CHECK_OK(MPI_Enqueue_start(q, &all[k]));
      if (k >= kKinds) continue; /* the ring's send and receive must overlap */
      CHECK_OK(MPI_Enqueue_wait(q, &all[k], MPI_STATUS_IGNORE));
    }
    CHECK_OK(MPI_Enqueue_waitall(q, 2, &all[kKinds], MPI_STATUSES_IGNORE));
  } else {
    CHECK_OK(MPI_Enqueue_startall(q, n, all));
    CHECK_OK(MPI_Enqueue_waitall(q, n, all, MPI_STATUSES_IGNORE));
  }
  CHECK_OK(MPI_Queue_fence(q));
  check(it, "enqueued");
}

static void plain(int it) {
  MPI_Request all[kKinds + 2];
  const int n = order(it, 0, all);
  fill(it);
  CHECK_OK(MPI_Startall(kKinds, all));
  CHECK_OK(MPI_Startall(2, &all[kKinds]));
  CHECK_OK(MPI_Waitall(n, all, MPI_STATUSES_IGNORE));
  check(it, "MPI_Start");
}

/* Half the collectives with MPI_Start, the rest and the ring enqueued. */
static void mixed(MPI_Queue* q, int it) {
  fill(it);
  for (int k = 0; k < kKinds; k += 2) CHECK_OK(MPI_Start(&req[k]));
  for (int k = 1; k < kKinds; k += 2) CHECK_OK(MPI_Enqueue_start(q, &req[k]));
  CHECK_OK(MPI_Enqueue_startall(q, 2, ring));
  for (int k = 1; k < kKinds; k += 2) CHECK_OK(MPI_Enqueue_wait(q, &req[k], MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Enqueue_waitall(q, 2, ring, MPI_STATUSES_IGNORE));
  for (int k = 0; k < kKinds; k += 2) CHECK_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Queue_fence(q));
  check(it, "mixed");
}

/* Errors: matching twice, and ranks matching different requests. */
static void match_errors(MPI_Queue* q) {
  CHECK_ERR(MPI_Match(&req[kBcast]), MPI_ERR_MATCH);
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int a = rank, b[2] = {0, 0};
  MPI_Request ra, rb;
  CHECK_OK(MPI_Bcast_init(&a, 1, MPI_INT, 0, dup, MPI_INFO_NULL, &ra));
  CHECK_OK(MPI_Allreduce_init(&a, b, 1, MPI_INT, MPI_SUM, dup, MPI_INFO_NULL, &rb));
  if (p > 1) {
    /* rank 0 matches the bcast, the others the allreduce: all must fail */
    CHECK_ERR(MPI_Match(rank == 0 ? &ra : &rb), MPI_ERR_MATCH);
    int flag = 1;
    CHECK_OK(MPI_Is_matched(ra, &flag));
    CHECK(!flag, "bcast request matched after a failed match");
    CHECK_OK(MPI_Is_matched(rb, &flag));
    CHECK(!flag, "allreduce request matched after a failed match");
  }
  /* Nonblocking match, then the other one: both fine now. */
  MPI_Request m;
  CHECK_OK(MPI_Imatch(&ra, &m));
  CHECK_OK(MPI_Wait(&m, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Match(&rb));
  CHECK_ERR(MPI_Match(&rb), MPI_ERR_MATCH);
  for (int it = 0; it < 3; ++it) {
    a = rank == 0 ? 40 + it : -1;
    CHECK_OK(MPI_Start(&ra));
    CHECK_OK(MPI_Wait(&ra, MPI_STATUS_IGNORE));
    CHECK(a == 40 + it, "bcast after matching: %d", a);
    a = rank + it;
    CHECK_OK(MPI_Start(&rb));
    CHECK_OK(MPI_Wait(&rb, MPI_STATUS_IGNORE));
    CHECK(b[0] == p * (p - 1) / 2 + p * it, "allreduce after matching: %d", b[0]);
  }
  /* The dup's requests enqueued too (one queue serves every communicator). */
  for (int it = 0; it < 3; ++it) {
    a = rank == 0 ? 50 + it : -1;
    CHECK_OK(MPI_Enqueue_start(q, &ra));
    CHECK_OK(MPI_Enqueue_wait(q, &ra, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Queue_fence(q));
    CHECK(a == 50 + it, "enqueued bcast on a dup: %d", a);
    a = 2 * rank + it;
    CHECK_OK(MPI_Enqueue_start(q, &rb));
    CHECK_OK(MPI_Enqueue_wait(q, &rb, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Queue_fence(q));
    CHECK(b[0] == p * (p - 1) + p * it, "enqueued allreduce on a dup: %d", b[0]);
  }
  CHECK_OK(MPI_Request_free(&ra));
  CHECK_OK(MPI_Request_free(&rb));
  CHECK_OK(MPI_Comm_free(&dup));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(p <= MAXP, "at most %d ranks", MAXP);
  const int iters = argc > 1 ? atoi(argv[1]) : 6;
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  init_all(MPI_COMM_WORLD);
  CHECK_OK(MPI_Send_init(ring_s, N, MPI_INT, (rank + 1) % p, 5, MPI_COMM_WORLD, &ring[0]));
  CHECK_OK(MPI_Recv_init(ring_r, N, MPI_INT, (rank + p - 1) % p, 5, MPI_COMM_WORLD, &ring[1]));
  /* Before the match: collectives run as plain persistent requests. */
  plain(0);
  CHECK_ERR(MPI_Enqueue_start(&q, &req[kAllreduce]), MPI_ERR_MATCH);
  CHECK_OK(MPI_Matchall(kKinds, req));
  /* The receive first: on 2 ranks the send and the receive share peer and
   * tag, and the p2p match protocol tells their messages apart by posting
   * order only (the offer must meet the receive's match, not the send's). */
  MPI_Request ring_rs[2] = {ring[1], ring[0]};
  CHECK_OK(MPI_Matchall(2, ring_rs));
  for (int it = 1; it <= iters; ++it) enqueued(&q, it);
  for (int it = iters + 1; it <= iters + 2; ++it) plain(it);
  for (int it = iters + 3; it <= iters + 5; ++it) mixed(&q, it);
  enqueued(&q, iters + 6);
  match_errors(&q);
  CHECK_OK(MPI_Queue_free(&q));
  for (int k = 0; k < kKinds; ++k) CHECK_OK(MPI_Request_free(&req[k]));
  CHECK_OK(MPI_Request_free(&ring[0]));
  CHECK_OK(MPI_Request_free(&ring[1]));
  if (rank == 0) printf("mp_coll_queue: ok on %d ranks (%d iterations)\n", p, iters);
  MPI_Finalize();
  return 0;
}
