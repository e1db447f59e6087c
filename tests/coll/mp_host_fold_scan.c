/* Persistent reduce_scatter_block, reduce_scatter, scan and exscan whose op
 * the NIC cannot combine run as trigger plans with a host fold step at rank
 * 0 (src/coll/offload_host_fold_scatter.cc), not on the host schedule.
 * Usage: mp_host_fold_scan [pairs] [force] (as mp_host_fold.c: pairs per
 * queued chain; force sets nicq_algorithm=offload in every request's info).
 *
 * Ops: the 2x2 matrix product (a user op, not commutative) on a contiguous
 * type of four unsigned ints; MPI_MINLOC on MPI_2INT (no atomic table has
 * the pair; ties in the values); and the matrix product and MPI_SUM on a
 * strided type (four unsigned ints two apart), which the plan packs and
 * unpacks in host steps. Each op on the four kinds, with and without
 * MPI_IN_PLACE; reduce_scatter's counts differ per rank (2, 1, 0, 3).
 *
 * Every rank steps all ranks' buffers through MPI's definition (prefixes
 * in rank order for scan and exscan, written here apart from nicq's
 * kernels) to know what its own recvbuf must hold, every word of it: the
 * gaps of a strided type, items past the own result and rank 0's exscan
 * recvbuf stay as they were. In place each epoch reads what the previous
 * one wrote, so a queued chain's result depends on how many epochs ran.
 * Per form: four MPI_Start/MPI_Wait epochs, then MPI_Match, a timed queued
 * pair and `pairs` queued pairs, checked asleep (emulated) or at the fence
 * (native) as in mp_host_fold.c. The ctest run counts the plans, fold steps
 * and pack steps in NICQ_PLAN_DUMP=text output. */
#include <string.h>

#include "asleep_check.h"
#include "coll_check.h"

#define MAXP 4
#define NB 2                 /* items per block of reduce_scatter_block */
#define NS 3                 /* items of scan and exscan */
#define MAXITEMS (MAXP * NB) /* items of one contribution, at most */
#define MAXI (MAXITEMS * 7)  /* unsigned ints per buffer, at most */

static int nprocs, native;
static MPI_Info g_info = MPI_INFO_NULL;
static MPI_Datatype mat, smat, t_2int;
static MPI_Op op_matmul, op_smatmul, op_sum, op_minloc;
static const int kRsCounts[MAXP] = {2, 1, 0, 3};

enum { REF_MATMUL, REF_SUM, REF_MINLOC };
typedef struct {
  const char* name;
  int words, stride, gap; /* data words per item; words item to item; word to word */
  MPI_Op* op;
  MPI_Datatype* type;
  int ref;
} Op;

enum { K_RSB, K_RS, K_SCAN, K_EXSCAN };
static const char* const kKindName[] = {"reduce_scatter_block", "reduce_scatter", "scan", "exscan"};
typedef struct {
  int kind, in_place;
} Form;

static void matmul(const unsigned* a, unsigned* b, int g) {
  const unsigned r0 = a[0] * b[0] + a[g] * b[2 * g], r1 = a[0] * b[g] + a[g] * b[3 * g];
  const unsigned r2 = a[2 * g] * b[0] + a[3 * g] * b[2 * g];
  const unsigned r3 = a[2 * g] * b[g] + a[3 * g] * b[3 * g];
  b[0] = r0, b[g] = r1, b[2 * g] = r2, b[3 * g] = r3;
}

static void matmul_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; i++) matmul((const unsigned*)in + 4 * i, (unsigned*)inout + 4 * i, 1);
}

static void smatmul_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; i++) matmul((const unsigned*)in + 7 * i, (unsigned*)inout + 7 * i, 2);
}

/* The reference: acc = acc op x for one item (data words, compact), MPI's
 * left-to-right order. */
static void ref_then(const Op* o, unsigned* acc, const unsigned* x) {
  if (o->ref == REF_MATMUL) {
    unsigned r[4];
    memcpy(r, x, sizeof r);
    matmul(acc, r, 1);
    memcpy(acc, r, sizeof r);
  } else if (o->ref == REF_SUM) {
    for (int w = 0; w < o->words; w++) acc[w] += x[w];
  } else {
    const int xv = (int)x[0], av = (int)acc[0];
    if (xv < av || (xv == av && (int)x[1] < (int)acc[1])) acc[0] = x[0], acc[1] = x[1];
  }
}

static unsigned input_word(const Op* o, int epoch, int r, int k, int w) {
  if (o->ref == REF_MINLOC) /* (value, index); values tie across ranks */
    return w == 0 ? (unsigned)((epoch * 7 + r * 3 + k) % 4) : (unsigned)(r * 10 + k);
  return (unsigned)(epoch * 31 + r * 7 + k * 3 + w + 1);
}

/* Items a contribution has, and items rank r receives. */
static int input_items(const Form* f) {
  int n = 0;
  switch (f->kind) {
    case K_RSB:
      return NB * nprocs;
    case K_RS:
      for (int j = 0; j < nprocs; j++) n += kRsCounts[j];
      return n;
    default:
      return NS;
  }
}
static int result_items(const Form* f, int r) {
  return f->kind == K_RSB ? NB : f->kind == K_RS ? kRsCounts[r] : NS;
}
/* The item of the whole contribution where rank r's result starts. */
static int result_first(const Form* f, int r) {
  int first = 0;
  if (f->kind == K_SCAN || f->kind == K_EXSCAN) return 0;
  for (int j = 0; j < r; j++) first += result_items(f, j);
  return first;
}

static unsigned sb[MAXP][MAXI], rb[MAXP][MAXI];
static const unsigned kUntouched = 0xdeadbeefu, kSendGap = 0x5a5a5a5au;

static int at(const Op* o, int k, int w) {
  return k * o->stride + w * o->gap;
}

/* Fills every rank's buffers for `epoch` (in place: the recvbuf); the rest
 * of a recvbuf holds kUntouched. */
static void prepare(const Op* o, const Form* f, int epoch) {
  for (int r = 0; r < nprocs; r++) {
    for (int i = 0; i < MAXI; i++) sb[r][i] = kSendGap, rb[r][i] = kUntouched;
    for (int k = 0; k < input_items(f); k++)
      for (int w = 0; w < o->words; w++) {
        const unsigned v = input_word(o, epoch, r, k, w);
        sb[r][at(o, k, w)] = v;
        if (f->in_place) rb[r][at(o, k, w)] = v;
      }
  }
}

/* One epoch of MPI's definition over every rank's buffers. */
static void step(const Op* o, const Form* f) {
  static unsigned pre[MAXP][MAXITEMS][4]; /* pre[r][k]: x_0 op ... op x_r, item k */
  const int items = input_items(f);
  for (int r = 0; r < nprocs; r++) {
    const unsigned* in = f->in_place ? rb[r] : sb[r];
    for (int k = 0; k < items; k++) {
      unsigned x[4];
      for (int w = 0; w < o->words; w++) x[w] = in[at(o, k, w)];
      memcpy(pre[r][k], r == 0 ? x : pre[r - 1][k], sizeof x);
      if (r > 0) ref_then(o, pre[r][k], x);
    }
  }
  for (int r = 0; r < nprocs; r++) {
    /* exscan: rank r gets prefix r - 1, rank 0 nothing; the others prefix
     * r (scan) or the whole reduction's block r. */
    const int from = f->kind == K_EXSCAN ? r - 1 : f->kind == K_SCAN ? r : nprocs - 1;
    if (from < 0) continue;
    const int first = result_first(f, r);
    for (int k = 0; k < result_items(f, r); k++)
      for (int w = 0; w < o->words; w++) rb[r][at(o, k, w)] = pre[from][first + k][w];
  }
}

static unsigned mine_s[MAXI], mine_r[MAXI];

static void load_mine(int me) {
  memcpy(mine_s, sb[me], sizeof mine_s);
  memcpy(mine_r, rb[me], sizeof mine_r);
}

static void check_mine(const Op* o, const Form* f, int me, const char* when) {
  for (int i = 0; i < MAXI; i++)
    CHECK(mine_r[i] == rb[me][i], "%s %s%s %s: recvbuf word %d is %u, want %u", o->name,
          kKindName[f->kind], f->in_place ? " (in place)" : "", when, i, mine_r[i], rb[me][i]);
}

static void make_request(const Op* o, const Form* f, MPI_Request* req) {
  const void* s = f->in_place ? MPI_IN_PLACE : (const void*)mine_s;
  switch (f->kind) {
    case K_RSB:
      CHECK_OK(MPI_Reduce_scatter_block_init(s, mine_r, NB, *o->type, *o->op, MPI_COMM_WORLD,
                                             g_info, req));
      break;
    case K_RS:
      CHECK_OK(MPI_Reduce_scatter_init(s, mine_r, kRsCounts, *o->type, *o->op, MPI_COMM_WORLD,
                                       g_info, req));
      break;
    case K_SCAN:
      CHECK_OK(MPI_Scan_init(s, mine_r, NS, *o->type, *o->op, MPI_COMM_WORLD, g_info, req));
      break;
    default:
      CHECK_OK(MPI_Exscan_init(s, mine_r, NS, *o->type, *o->op, MPI_COMM_WORLD, g_info, req));
  }
}

static void run_form(const Op* o, const Form* f, int pairs) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Request req;
  prepare(o, f, 0);
  load_mine(me);
  make_request(o, f, &req);
  for (int e = 1; e <= 4; e++) {
    prepare(o, f, e);
    load_mine(me);
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    step(o, f);
    check_mine(o, f, me, "MPI_Start epoch");
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  CHECK_OK(MPI_Match(&req));
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  prepare(o, f, 7);
  load_mine(me);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  const double t0 = MPI_Wtime();
  CHECK_OK(MPI_Enqueue_start(&q, &req));
  CHECK_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Queue_fence(&q));
  const double chain = (MPI_Wtime() - t0) * pairs;
  step(o, f);
  check_mine(o, f, me, "timed queued epoch");
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  long long done0 = 0, enq0 = 0, done = 0, enq = 0;
  CHECK_OK(NICQX_Queue_waits_completed(q, &done0, &enq0));
  prepare(o, f, 8);
  load_mine(me);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < pairs; i++) {
    CHECK_OK(MPI_Enqueue_start(&q, &req));
    CHECK_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
  }
  if (!native) {
    /* No MPI call from here to the fence but the non-progressing read. */
    const double slept = sleep_while_chain_runs(q, done0, pairs, chain, &done, &enq);
    CHECK(done - done0 == pairs && enq - enq0 == pairs,
          "%s %s%s: %lld of %lld enqueued waits completed while the host slept %.1f s (the fold "
          "did not run without MPI calls)",
          o->name, kKindName[f->kind], f->in_place ? " (in place)" : "", done - done0, enq - enq0,
          slept);
  }
  CHECK_OK(MPI_Queue_fence(&q));
  CHECK_OK(NICQX_Queue_waits_completed(q, &done, &enq));
  CHECK(done - done0 == pairs, "%s: %lld of %d enqueued waits completed at the fence", o->name,
        done - done0, pairs);
  for (int i = 0; i < pairs; i++) step(o, f);
  check_mine(o, f, me, native ? "after the chain's fence" : "after the asleep chain");
  CHECK_OK(MPI_Queue_free(&q));
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0)
    printf("host_fold_scan: %s %s%s: 4 started epochs and %d enqueued pairs %s, data right\n",
           o->name, kKindName[f->kind], f->in_place ? " (in place)" : "", pairs,
           native ? "at the fence" : "asleep");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int pairs = argc > 1 ? atoi(argv[1]) : 16;
  if (argc > 2 && !strcmp(argv[2], "force")) {
    CHECK_OK(MPI_Info_create(&g_info));
    CHECK_OK(MPI_Info_set(g_info, "nicq_algorithm", "offload"));
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  CHECK(nprocs >= 2 && nprocs <= MAXP, "run on 2 to %d ranks (got %d)", MAXP, nprocs);
  const char* offload = getenv("NICQ_OFFLOAD");
  native = offload && !strcmp(offload, "native");
  CHECK_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat));
  CHECK_OK(MPI_Type_commit(&mat));
  CHECK_OK(MPI_Type_vector(4, 1, 2, MPI_UNSIGNED, &smat));
  CHECK_OK(MPI_Type_commit(&smat));
  t_2int = MPI_2INT;
  op_sum = MPI_SUM;
  op_minloc = MPI_MINLOC;
  CHECK_OK(MPI_Op_create(&matmul_fn, 0, &op_matmul));
  CHECK_OK(MPI_Op_create(&smatmul_fn, 0, &op_smatmul));
  static const Op ops[] = {
      {"matmul", 4, 4, 1, &op_matmul, &mat, REF_MATMUL},
      {"minloc", 2, 2, 1, &op_minloc, &t_2int, REF_MINLOC},
      {"strided matmul", 4, 7, 2, &op_smatmul, &smat, REF_MATMUL},
      {"strided sum", 4, 7, 2, &op_sum, &smat, REF_SUM},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    for (int k = K_RSB; k <= K_EXSCAN; k++)
      for (int in_place = 0; in_place <= 1; in_place++) {
        const Form f = {k, in_place};
        run_form(&ops[i], &f, pairs);
      }
  CHECK_OK(MPI_Op_free(&op_matmul));
  CHECK_OK(MPI_Op_free(&op_smatmul));
  CHECK_OK(MPI_Type_free(&mat));
  CHECK_OK(MPI_Type_free(&smat));
  if (g_info != MPI_INFO_NULL) CHECK_OK(MPI_Info_free(&g_info));
  MPI_Finalize();
  return 0;
}
