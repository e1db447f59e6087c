/* Persistent dense collectives as resident exchange plans on the native
 * backend (src/coll/offload_dense.h), and the reductions reduce_scatter_block,
 * reduce_scatter, scan and exscan as plans of remote atomics
 * (src/coll/offload_reduce_scan.h). Usage: mp_dense_asleep [pairs] [kind]
 * [force] (kind: barrier, bcast, gather, gatherv, scatter, scatterv, allgather,
 * allgatherv, alltoall, alltoallv, alltoallw, bcast_vec, allgather_vec,
 * alltoall_vec, reduce_scatter_block, reduce_scatter, scan, exscan, vec (the
 * three _vec forms), mixed, dense (every form but the reductions, with the
 * mixed, negative-displacement and fallback checks), reductions (the last
 * four), or all; default all; pairs: enqueued start/wait pairs per chain,
 * default 16; force: every request's info sets nicq_algorithm=offload, which
 * takes the plan on any backend).
 *
 * Reductions (MPI_UNSIGNED, MPI_SUM; in place on every rank too): every
 * rank steps all ranks' buffers through MPI's definition to know what its
 * own must hold (in place, each epoch reads what the previous one wrote, so
 * the queued chain's result depends on how many epochs ran).
 * reduce_scatter's counts are vcount(r): rank 1's block is empty; exscan's
 * rank 0 buffer must stay as it was.
 *
 * For each kind, and for its in-place form where MPI has one (allgather(v)
 * on every rank, gather(v) and scatter(v) at the root), on a root that is
 * not rank 0:
 *  - four MPI_Start/MPI_Wait epochs, the send data differing per epoch
 *    (value = 100000 * epoch + 1000 * sender + index + 1), every receive
 *    buffer reset to -1 before each and checked whole after it: each block
 *    where MPI puts it, every gap and zero-count block still -1;
 *  - MPI_Match, then `pairs` MPI_Enqueue_start/MPI_Enqueue_wait pairs while
 *    every host thread sleeps in nanosleep with no MPI call (a timed
 *    one-pair chain's time per pair, then shorter steps while unfinished,
 *    at most 20 s: asleep_check.h); NICQX_Queue_waits_completed (which drives no progress) must say
 *    every wait completed BEFORE MPI_Queue_fence; then the data is checked.
 * The v forms use uneven counts with a zero (gatherv/scatterv/allgatherv:
 * rank 1 contributes nothing; alltoallv: the edge s -> r carries
 * (s + r) % 3 ints), blocks one int apart in reverse rank order, and for
 * allgatherv receive displacements that differ per rank.
 * Alltoallw: the edge s -> r carries 2 * ((s + r) % 3) ints (zero for
 * some), sent as MPI_INTs to even ranks and as pairs (a contiguous type of
 * two ints) to odd ones, received the other way round, at byte
 * displacements laid out as alltoallv's. The _vec forms move strided
 * vectors (B ints two apart): bcast on both sides, allgather into them,
 * alltoall from and into them; their plans pack and unpack in host steps,
 * which on native run only in the host's progress, so there the chain is
 * checked at the fence (every wait complete, then the data) instead of
 * asleep.
 * Barrier: before each MPI_Start a rank (one per epoch in turn, after a
 * short sleep) writes the epoch into its own file in a shared directory;
 * after MPI_Wait every rank's file must hold at least that epoch.
 *
 * Last (kind all or mixed), a gather the root receives as strided
 * vectors (only its plan unpacks), an alltoallv at negative displacements
 * (packed and unpacked), and an in-place alltoall on the host schedule,
 * each with the right data.
 *
 * The ctest run (NICQ_PLAN_DUMP=text) counts the dump lines naming the
 * request's algorithm "<kind> puts (offloaded)" with a trigger plan, so a
 * kind that silently falls back to the host schedule fails, and the
 * pack/unpack host steps of the plans; on native with no progress thread
 * the asleep check fails too. */
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "asleep_check.h"
#include "coll_check.h"

#define MAXP 4
#define B 3                         /* ints per block of the plain forms */
#define SZ (MAXP * (2 * B + 2) + 2) /* ints per buffer, gaps included */

static int nprocs, root;
/* NICQ_OFFLOAD=native: the NIC runs the plans, host steps wait for MPI calls. */
static int native;
/* MPI_INFO_NULL, or nicq_algorithm=offload ("force": any backend). */
static MPI_Info g_info = MPI_INFO_NULL;

static int val(int epoch, int sender, int k) {
  return 100000 * epoch + 1000 * sender + k + 1;
}

/* v forms: rank j contributes vcount(j) ints (rank 1: none). */
static int vcount(int j) {
  return j == 1 ? 0 : 1 + j % 3;
}
/* alltoallv: the edge s -> r carries (s + r) % 3 ints. */
static int vcount2(int s, int r) {
  return (s + r) % 3;
}
/* alltoallw: the edge s -> r carries 2 * ((s + r) % 3) ints, as MPI_INTs
 * or as pairs (a contiguous type of two ints), by the peer's parity. */
static int wcount2(int s, int r) {
  return 2 * ((s + r) % 3);
}
/* The edge counts of the alltoall(v/w) form running. */
static int (*edge_count)(int, int) = vcount2;
/* B ints two apart (a gap after each but the last): SEXT ints of extent. */
#define SEXT (2 * B - 1)
static MPI_Datatype strided, int_pair;
/* Where rank j's block lands on receiver `me` (v forms): reverse rank
 * order, one int of gap after each block, shifted by one int on odd ranks
 * (allgatherv's displacements then differ per rank). `cnt(j)` = block size. */
static int rev_displ(int me, int j, int (*cnt)(int, int), int other) {
  int at = me % 2;
  for (int k = nprocs - 1; k > j; k--) at += cnt(k, other) + 1;
  return at;
}
static int cnt_v(int j, int unused) {
  (void)unused;
  return vcount(j);
}
static int cnt_edge(int j, int me) {
  return edge_count(j, me);
}
/* alltoall(v/w) sender layout: blocks in rank order, one int gap each. */
static int fwd_displ(int me, int r) {
  int at = 0;
  for (int k = 0; k < r; k++) at += edge_count(me, k) + 1;
  return at;
}

typedef struct {
  const char* name;
  int v, in_place;
  /* The form's blocks are strided vectors: its plan packs and unpacks in
   * host steps. */
  int strided;
} Form;

static int sbuf[SZ], rbuf[SZ], want[SZ];
static int scounts[MAXP], sdispls[MAXP], rcounts[MAXP], rdispls[MAXP];
/* Epochs the next check expects to have run on the prepared data: in
 * place, each reduction epoch reads what the previous one wrote. */
static int g_epochs = 1;

static int is_reduction(const char* n) {
  return !strncmp(n, "reduce_scatter", 14) || !strcmp(n, "scan") || !strcmp(n, "exscan");
}
/* Reductions: MPI_UNSIGNED with MPI_SUM (in place the values grow epoch
 * after epoch and wrap, as unsigned sums do on both sides). Items rank j
 * contributes: reduce_scatter_block B per block, reduce_scatter vcount(r)
 * for block r (rank 1's block is empty), scan/exscan B. */
static int red_block(const char* n, int r) {
  return !strcmp(n, "reduce_scatter") ? vcount(r) : B;
}
static int red_items(const char* n) {
  if (strncmp(n, "reduce_scatter", 14)) return B;
  int t = 0;
  for (int r = 0; r < nprocs; r++) t += red_block(n, r);
  return t;
}
/* Every rank's buffers, stepped through `g_epochs` epochs of MPI's
 * definition; this rank's row is what the plan must leave. */
static void simulate_reduction(const Form* f, int me, int e) {
  static unsigned in[MAXP][SZ], out[MAXP][SZ], res[MAXP][SZ];
  const char* n = f->name;
  const int items = red_items(n);
  for (int j = 0; j < nprocs; j++)
    for (int k = 0; k < SZ; k++) {
      in[j][k] = k < items ? (unsigned)val(e, j, k) : (unsigned)-1;
      out[j][k] = f->in_place ? in[j][k] : (unsigned)-1;
    }
  for (int ep = 0; ep < g_epochs; ep++) {
    for (int r = 0; r < nprocs; r++) {
      if (!strncmp(n, "reduce_scatter", 14)) {
        int displ = 0;
        for (int q = 0; q < r; q++) displ += red_block(n, q);
        for (int k = 0; k < red_block(n, r); k++) {
          unsigned acc = 0;
          for (int j = 0; j < nprocs; j++)
            acc += f->in_place ? out[j][displ + k] : in[j][displ + k];
          res[r][k] = acc;
        }
      } else {
        const int upto = !strcmp(n, "scan") ? r : r - 1;
        for (int k = 0; k < B; k++) {
          unsigned acc = 0;
          for (int j = 0; j <= upto; j++) acc += f->in_place ? out[j][k] : in[j][k];
          res[r][k] = acc;
        }
      }
    }
    for (int r = 0; r < nprocs; r++) {
      const int c = !strncmp(n, "reduce_scatter", 14) ? red_block(n, r)
                    : !strcmp(n, "exscan") && r == 0  ? 0
                                                      : B;
      for (int k = 0; k < c; k++) out[r][k] = res[r][k];
    }
  }
  for (int k = 0; k < SZ; k++) {
    want[k] = (int)out[me][k];
    if (f->in_place)
      rbuf[k] = (int)in[me][k];
    else
      sbuf[k] = (int)in[me][k];
  }
}

/* Fills the send side of epoch e (and, in place, the rank's own block in
 * rbuf), resets rbuf elsewhere to -1, and computes `want`. */
static void prepare(const Form* f, int me, int e) {
  const int is_root = me == root;
  for (int k = 0; k < SZ; k++) sbuf[k] = rbuf[k] = want[k] = -1;
  const char* n = f->name;
  if (is_reduction(n)) {
    simulate_reduction(f, me, e);
  } else if (!strcmp(n, "bcast_vec")) {
    for (int k = 0; k < B; k++) {
      want[2 * k] = val(e, root, k);
      if (is_root) rbuf[2 * k] = want[2 * k];
    }
  } else if (!strcmp(n, "allgather_vec")) {
    for (int k = 0; k < B; k++) sbuf[k] = val(e, me, k);
    for (int j = 0; j < nprocs; j++)
      for (int k = 0; k < B; k++) want[j * SEXT + 2 * k] = val(e, j, k);
  } else if (!strcmp(n, "alltoall_vec")) {
    for (int r = 0; r < nprocs; r++)
      for (int k = 0; k < B; k++) sbuf[r * SEXT + 2 * k] = val(e, me, 10 * r + k);
    for (int j = 0; j < nprocs; j++)
      for (int k = 0; k < B; k++) want[j * SEXT + 2 * k] = val(e, j, 10 * me + k);
  } else if (!strcmp(n, "bcast")) {
    for (int k = 0; k < B; k++) {
      want[k] = val(e, root, k);
      if (is_root) rbuf[k] = want[k];
    }
  } else if (!strcmp(n, "gather") || !strcmp(n, "gatherv")) {
    const int cnt = f->v ? vcount(me) : B;
    for (int k = 0; k < cnt; k++) sbuf[k] = val(e, me, k);
    if (!is_root) return;
    for (int j = 0; j < nprocs; j++) {
      const int at = f->v ? rdispls[j] : j * B, c = f->v ? vcount(j) : B;
      for (int k = 0; k < c; k++) want[at + k] = val(e, j, k);
      if (j == me && f->in_place)
        for (int k = 0; k < c; k++) rbuf[at + k] = want[at + k];
    }
  } else if (!strcmp(n, "scatter") || !strcmp(n, "scatterv")) {
    if (is_root)
      for (int r = 0; r < nprocs; r++) {
        const int at = f->v ? sdispls[r] : r * B, c = f->v ? vcount(r) : B;
        for (int k = 0; k < c; k++) sbuf[at + k] = val(e, root, 10 * r + k);
      }
    if (is_root && f->in_place) {
      /* The root's block stays in the send buffer, which must be intact. */
      memcpy(want, sbuf, sizeof want);
      return;
    }
    const int c = f->v ? vcount(me) : B;
    for (int k = 0; k < c; k++) want[k] = val(e, root, 10 * me + k);
  } else if (!strcmp(n, "allgather") || !strcmp(n, "allgatherv")) {
    const int cnt = f->v ? vcount(me) : B;
    for (int k = 0; k < cnt; k++) sbuf[k] = val(e, me, k);
    for (int j = 0; j < nprocs; j++) {
      const int at = f->v ? rdispls[j] : j * B, c = f->v ? vcount(j) : B;
      for (int k = 0; k < c; k++) want[at + k] = val(e, j, k);
      if (j == me && f->in_place)
        for (int k = 0; k < c; k++) rbuf[at + k] = want[at + k];
    }
  } else if (!strncmp(n, "alltoall", 8)) {
    /* alltoallw's displacements are bytes; its ints sit where alltoallv's would. */
    for (int r = 0; r < nprocs; r++) {
      const int at = f->v ? fwd_displ(me, r) : r * B, c = f->v ? edge_count(me, r) : B;
      for (int k = 0; k < c; k++) sbuf[at + k] = val(e, me, 10 * r + k);
    }
    for (int j = 0; j < nprocs; j++) {
      const int at = f->v ? rev_displ(me, j, cnt_edge, me) : j * B,
                c = f->v ? edge_count(j, me) : B;
      for (int k = 0; k < c; k++) want[at + k] = val(e, j, 10 * me + k);
    }
  }
}

static void make_request(const Form* f, int me, MPI_Request* req) {
  const char* n = f->name;
  const int is_root = me == root;
  void* s = f->in_place && (is_root || !strncmp(n, "allgather", 9) || is_reduction(n))
                ? MPI_IN_PLACE
                : sbuf;
  MPI_Comm c = MPI_COMM_WORLD;
  MPI_Info i = g_info;
  if (!strcmp(n, "barrier")) {
    CHECK_OK(MPI_Barrier_init(c, i, req));
  } else if (!strcmp(n, "bcast_vec")) {
    CHECK_OK(MPI_Bcast_init(rbuf, 1, strided, root, c, i, req));
  } else if (!strcmp(n, "allgather_vec")) {
    CHECK_OK(MPI_Allgather_init(sbuf, B, MPI_INT, rbuf, 1, strided, c, i, req));
  } else if (!strcmp(n, "alltoall_vec")) {
    CHECK_OK(MPI_Alltoall_init(sbuf, 1, strided, rbuf, 1, strided, c, i, req));
  } else if (!strcmp(n, "alltoallw")) {
    /* To (from) an even rank: MPI_INTs (pairs); odd: pairs (MPI_INTs). */
    int sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
    MPI_Datatype st[MAXP], rt[MAXP];
    for (int r = 0; r < nprocs; r++) {
      st[r] = r % 2 ? int_pair : MPI_INT;
      sc[r] = edge_count(me, r) / (r % 2 ? 2 : 1);
      sd[r] = (int)sizeof(int) * fwd_displ(me, r);
      rt[r] = r % 2 ? MPI_INT : int_pair;
      rc[r] = edge_count(r, me) / (r % 2 ? 1 : 2);
      rd[r] = (int)sizeof(int) * rev_displ(me, r, cnt_edge, me);
    }
    CHECK_OK(MPI_Alltoallw_init(sbuf, sc, sd, st, rbuf, rc, rd, rt, c, i, req));
  } else if (!strcmp(n, "bcast")) {
    CHECK_OK(MPI_Bcast_init(rbuf, B, MPI_INT, root, c, i, req));
  } else if (!strcmp(n, "gather")) {
    CHECK_OK(MPI_Gather_init(s, B, MPI_INT, rbuf, B, MPI_INT, root, c, i, req));
  } else if (!strcmp(n, "gatherv")) {
    CHECK_OK(
        MPI_Gatherv_init(s, vcount(me), MPI_INT, rbuf, rcounts, rdispls, MPI_INT, root, c, i, req));
  } else if (!strcmp(n, "scatter")) {
    void* r = f->in_place && is_root ? MPI_IN_PLACE : rbuf;
    CHECK_OK(MPI_Scatter_init(sbuf, B, MPI_INT, r, B, MPI_INT, root, c, i, req));
  } else if (!strcmp(n, "scatterv")) {
    void* r = f->in_place && is_root ? MPI_IN_PLACE : rbuf;
    CHECK_OK(MPI_Scatterv_init(sbuf, scounts, sdispls, MPI_INT, r, vcount(me), MPI_INT, root, c, i,
                               req));
  } else if (!strcmp(n, "allgather")) {
    CHECK_OK(MPI_Allgather_init(s, B, MPI_INT, rbuf, B, MPI_INT, c, i, req));
  } else if (!strcmp(n, "allgatherv")) {
    CHECK_OK(
        MPI_Allgatherv_init(s, vcount(me), MPI_INT, rbuf, rcounts, rdispls, MPI_INT, c, i, req));
  } else if (!strcmp(n, "alltoall")) {
    CHECK_OK(MPI_Alltoall_init(sbuf, B, MPI_INT, rbuf, B, MPI_INT, c, i, req));
  } else if (!strcmp(n, "alltoallv")) {
    CHECK_OK(MPI_Alltoallv_init(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, c,
                                i, req));
  } else if (!strcmp(n, "reduce_scatter_block")) {
    CHECK_OK(MPI_Reduce_scatter_block_init(s, rbuf, B, MPI_UNSIGNED, MPI_SUM, c, i, req));
  } else if (!strcmp(n, "reduce_scatter")) {
    CHECK_OK(MPI_Reduce_scatter_init(s, rbuf, rcounts, MPI_UNSIGNED, MPI_SUM, c, i, req));
  } else if (!strcmp(n, "scan")) {
    CHECK_OK(MPI_Scan_init(s, rbuf, B, MPI_UNSIGNED, MPI_SUM, c, i, req));
  } else if (!strcmp(n, "exscan")) {
    CHECK_OK(MPI_Exscan_init(s, rbuf, B, MPI_UNSIGNED, MPI_SUM, c, i, req));
  } else {
    CHECK(0, "unknown kind %s", n);
  }
}

static void check_data(const Form* f, int me, const char* where, int e) {
  if (!strcmp(f->name, "barrier")) return;
  const int* got = rbuf;
  if (!strncmp(f->name, "scatter", 7) && f->in_place && me == root) got = sbuf;
  for (int k = 0; k < SZ; k++)
    CHECK(got[k] == want[k], "%s%s %s epoch %d: int %d is %d, want %d", f->name,
          f->in_place ? " (in place)" : "", where, e, k, got[k], want[k]);
}

/* Barrier: every rank's epoch file in `dir` must say it started epoch e. */
static char dir[256];
static void mark_epoch(int me, int e) {
  char path[300];
  snprintf(path, sizeof path, "%s/r%d", dir, me);
  FILE* fp = fopen(path, "w");
  CHECK(fp != NULL, "cannot write %s", path);
  fprintf(fp, "%d\n", e);
  fclose(fp);
}
static void check_all_started(int e) {
  for (int r = 0; r < nprocs; r++) {
    char path[300];
    snprintf(path, sizeof path, "%s/r%d", dir, r);
    FILE* fp = fopen(path, "r");
    int got = -1;
    if (fp) {
      if (fscanf(fp, "%d", &got) != 1) got = -1;
      fclose(fp);
    }
    CHECK(got >= e, "barrier epoch %d completed before rank %d started it (its file says %d)", e, r,
          got);
  }
}

static void run_form(const Form* f, int pairs) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int barrier = !strcmp(f->name, "barrier");
  /* v layouts. */
  for (int j = 0; j < nprocs; j++) {
    edge_count = !strcmp(f->name, "alltoallw") ? wcount2 : vcount2;
    if (!strcmp(f->name, "alltoallv")) {
      scounts[j] = vcount2(me, j);
      sdispls[j] = fwd_displ(me, j);
      rcounts[j] = vcount2(j, me);
      rdispls[j] = rev_displ(me, j, cnt_edge, me);
    } else {
      scounts[j] = rcounts[j] = vcount(j);
      sdispls[j] = rdispls[j] = rev_displ(me, j, cnt_v, 0);
    }
  }
  MPI_Request req;
  prepare(f, me, 0);
  make_request(f, me, &req);
  for (int e = 1; e <= 4; e++) {
    prepare(f, me, e);
    if (barrier) {
      if (me == e % nprocs) sleep_seconds(0.02); /* a late rank */
      mark_epoch(me, e);
    }
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (barrier) check_all_started(e);
    check_data(f, me, "MPI_Start", e);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* before the next epoch resets the buffers */
  }

  CHECK_OK(MPI_Match(&req));
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  const int e = 7;
  prepare(f, me, e);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  const double t0 = MPI_Wtime();
  CHECK_OK(MPI_Enqueue_start(&q, &req));
  CHECK_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Queue_fence(&q));
  const double chain = (MPI_Wtime() - t0) * pairs;
  check_data(f, me, "timed queued epoch", e);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  long long done0 = 0, enq0 = 0, done = 0, enq = 0;
  CHECK_OK(NICQX_Queue_waits_completed(q, &done0, &enq0));
  g_epochs = pairs;
  prepare(f, me, e + 1);
  g_epochs = 1;
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < pairs; i++) {
    CHECK_OK(MPI_Enqueue_start(&q, &req));
    CHECK_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
  }
  if (f->strided && native) {
    /* The NIC cannot pack: the plan's host steps run in the host's
     * progress, so the chain completes in the fence's. */
    CHECK_OK(MPI_Queue_fence(&q));
    CHECK_OK(NICQX_Queue_waits_completed(q, &done, &enq));
    CHECK(done - done0 == pairs && enq - enq0 == pairs,
          "%s: %lld of %lld enqueued waits completed at the fence, expected %d", f->name,
          done - done0, enq - enq0, pairs);
    check_data(f, me, "after the chain's fence", e + 1);
  } else {
    /* No MPI call from here to the fence but the non-progressing read. */
    const double slept = sleep_while_chain_runs(q, done0, pairs, chain, &done, &enq);
    CHECK(enq - enq0 == pairs, "%s: %lld waits enqueued, expected %d", f->name, enq - enq0, pairs);
    CHECK(done - done0 == pairs,
          "%s%s: %lld of %d enqueued waits completed while the host slept %.1f s (the chain did "
          "not advance without MPI calls)",
          f->name, f->in_place ? " (in place)" : "", done - done0, pairs, slept);
    CHECK_OK(MPI_Queue_fence(&q));
    check_data(f, me, "after the asleep chain", e + 1);
  }
  CHECK_OK(MPI_Queue_free(&q));
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0)
    printf("dense_asleep: %s%s: 4 started epochs and %d enqueued pairs %s, data right\n", f->name,
           f->in_place ? " (in place)" : "", pairs,
           f->strided && native ? "at the fence" : "asleep");
}

/* The root gathers each block as one strided vector, the others send
 * contiguous ints: only the root's plan has a host step (the unpack), and
 * the data must be right, the vector's gaps untouched. */
static void check_mixed(void) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  static int s[B], r[MAXP * SEXT];
  MPI_Request req;
  CHECK_OK(MPI_Gather_init(s, B, MPI_INT, r, 1, strided, root, MPI_COMM_WORLD, g_info, &req));
  for (int e = 0; e < 2; e++) {
    for (int k = 0; k < B; k++) s[k] = val(e, me, k);
    for (int k = 0; k < MAXP * SEXT; k++) r[k] = -1;
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (me == root) {
      for (int j = 0; j < nprocs; j++) {
        for (int k = 0; k < B; k++)
          CHECK(r[j * SEXT + 2 * k] == val(e, j, k),
                "mixed gather epoch %d: block %d item %d is %d, want %d", e, j, k,
                r[j * SEXT + 2 * k], val(e, j, k));
        for (int g = 1; g < SEXT; g += 2)
          CHECK(r[j * SEXT + g] == -1, "mixed gather: a gap of block %d was written", j);
      }
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  CHECK_OK(MPI_Request_free(&req));
  if (me == 0) printf("dense_asleep: a gather only the root unpacks, data right\n");
}

/* Alltoallv whose buffers are passed one int in, so block 0's send and
 * receive displacements are -1 int: a put cannot land below its
 * receiver's buffer, so every rank packs and unpacks in host steps (a
 * one-run block otherwise needs neither), and the data must be right, the
 * int around each block untouched. */
static void check_negative(void) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  static int s[MAXP * B + 1], r[MAXP * B + 2];
  int counts[MAXP], displs[MAXP];
  for (int j = 0; j < nprocs; j++) {
    counts[j] = B;
    displs[j] = j * B - 1;
  }
  MPI_Request req;
  CHECK_OK(MPI_Alltoallv_init(s + 1, counts, displs, MPI_INT, r + 1, counts, displs, MPI_INT,
                              MPI_COMM_WORLD, g_info, &req));
  for (int e = 0; e < 2; e++) {
    for (int j = 0; j < nprocs; j++)
      for (int k = 0; k < B; k++) s[j * B + k] = val(e, me, 10 * j + k);
    for (int k = 0; k < MAXP * B + 2; k++) r[k] = -1;
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < MAXP * B + 2; k++) {
      const int j = k / B, want = k < nprocs * B ? val(e, j, 10 * me + k % B) : -1;
      CHECK(r[k] == want, "negative displacements, epoch %d: int %d is %d, want %d", e, k, r[k],
            want);
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  CHECK_OK(MPI_Request_free(&req));
  if (me == 0) printf("dense_asleep: an alltoallv at negative displacements, data right\n");
}

/* In-place alltoall, which the plan cannot take (a block could be
 * overwritten before it went out): the host schedule runs it on every
 * rank (no "puts (offloaded)" dump line), with the right data. */
/* Sends this process's stderr to a temporary file (the plan dump lines of
 * what runs next) until end_capture, which returns what was written. */
static int capture_stderr(FILE** file) {
  fflush(stderr);
  *file = tmpfile();
  CHECK(*file != NULL, "tmpfile failed");
  const int saved = dup(2);
  CHECK(saved >= 0 && dup2(fileno(*file), 2) == 2, "redirecting stderr failed");
  return saved;
}

static void end_capture(FILE* file, int saved, char* text, size_t cap) {
  fflush(stderr);
  CHECK(dup2(saved, 2) == 2, "restoring stderr failed");
  close(saved);
  rewind(file);
  const size_t n = fread(text, 1, cap - 1, file);
  text[n] = '\0';
  fclose(file);
}

static void check_fallback(void) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  static int r[MAXP * B];
  MPI_Request req;
  /* With plan dumps on, init prints the collective's plan line: it must be
   * the host's, never a trigger plan's. */
  const char* dump = getenv("NICQ_PLAN_DUMP");
  const int dumps = dump && *dump && !getenv("NICQ_PLAN_DUMP_FILE");
  FILE* captured = NULL;
  const int saved = dumps ? capture_stderr(&captured) : -1;
  CHECK_OK(MPI_Alltoall_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, B, MPI_INT, MPI_COMM_WORLD,
                             g_info, &req));
  if (dumps) {
    static char text[1 << 16];
    end_capture(captured, saved, text, sizeof text);
    CHECK(strstr(text, "coll plan: alltoall") != NULL,
          "in-place alltoall: init printed no plan line (got '%s')", text);
    CHECK(strstr(text, "(offloaded)") == NULL && strstr(text, "engine=trigger plan") == NULL,
          "in-place alltoall took a trigger plan: '%s'", text);
    fputs(text, stderr);
  }
  for (int e = 0; e < 2; e++) {
    for (int j = 0; j < nprocs; j++)
      for (int k = 0; k < B; k++) r[j * B + k] = val(e, me, 10 * j + k);
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int j = 0; j < nprocs; j++)
      for (int k = 0; k < B; k++)
        CHECK(r[j * B + k] == val(e, j, 10 * me + k),
              "in-place alltoall epoch %d: block %d item %d is %d, want %d", e, j, k, r[j * B + k],
              val(e, j, 10 * me + k));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  CHECK_OK(MPI_Request_free(&req));
  if (me == 0) printf("dense_asleep: an in-place alltoall runs on the host\n");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int pairs = argc > 1 ? atoi(argv[1]) : 16;
  const char* kind = argc > 2 ? argv[2] : "all";
  if (argc > 3 && !strcmp(argv[3], "force")) {
    CHECK_OK(MPI_Info_create(&g_info));
    CHECK_OK(MPI_Info_set(g_info, "nicq_algorithm", "offload"));
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  CHECK(nprocs >= 2 && nprocs <= MAXP, "run on 2 to %d ranks (got %d)", MAXP, nprocs);
  root = nprocs - 1;
  if (g_rank == 0) {
    snprintf(dir, sizeof dir, "/tmp/nicq_dense_asleep_XXXXXX");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp failed");
  }
  CHECK_OK(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
  const char* offload = getenv("NICQ_OFFLOAD");
  native = offload && !strcmp(offload, "native");
  CHECK_OK(MPI_Type_vector(B, 1, 2, MPI_INT, &strided));
  CHECK_OK(MPI_Type_commit(&strided));
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &int_pair));
  CHECK_OK(MPI_Type_commit(&int_pair));
  static const Form forms[] = {
      {"barrier", 0, 0, 0},
      {"bcast", 0, 0, 0},
      {"gather", 0, 0, 0},
      {"gather", 0, 1, 0},
      {"gatherv", 1, 0, 0},
      {"gatherv", 1, 1, 0},
      {"scatter", 0, 0, 0},
      {"scatter", 0, 1, 0},
      {"scatterv", 1, 0, 0},
      {"scatterv", 1, 1, 0},
      {"allgather", 0, 0, 0},
      {"allgather", 0, 1, 0},
      {"allgatherv", 1, 0, 0},
      {"allgatherv", 1, 1, 0},
      {"alltoall", 0, 0, 0},
      {"alltoallv", 1, 0, 0},
      {"alltoallw", 1, 0, 0},
      {"bcast_vec", 0, 0, 1},
      {"allgather_vec", 0, 0, 1},
      {"alltoall_vec", 0, 0, 1},
      {"reduce_scatter_block", 0, 0, 0},
      {"reduce_scatter_block", 0, 1, 0},
      {"reduce_scatter", 1, 0, 0},
      {"reduce_scatter", 1, 1, 0},
      {"scan", 0, 0, 0},
      {"scan", 0, 1, 0},
      {"exscan", 0, 0, 0},
      {"exscan", 0, 1, 0},
  };
  /* "vec": the strided forms. */
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    const int red = is_reduction(forms[i].name);
    if (!strcmp(kind, "all") || !strcmp(kind, forms[i].name) || (!strcmp(kind, "dense") && !red) ||
        (!strcmp(kind, "reductions") && red) || (!strcmp(kind, "vec") && forms[i].strided))
      run_form(&forms[i], pairs);
  }
  if (!strcmp(kind, "all") || !strcmp(kind, "dense") || !strcmp(kind, "mixed")) {
    check_mixed();
    check_negative();
    check_fallback();
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) {
    char path[300];
    for (int r = 0; r < nprocs; r++) {
      snprintf(path, sizeof path, "%s/r%d", dir, r);
      unlink(path);
    }
    rmdir(dir);
  }
  CHECK_OK(MPI_Type_free(&strided));
  CHECK_OK(MPI_Type_free(&int_pair));
  if (g_info != MPI_INFO_NULL) CHECK_OK(MPI_Info_free(&g_info));
  MPI_Finalize();
  return 0;
}
