/* Persistent allreduce and reduce whose op the NIC cannot combine run as
 * trigger plans with a host fold step (src/coll/offload_host_fold.h), not on
 * the host schedule. Usage: mp_host_fold [pairs] [force] (pairs: enqueued
 * start/wait pairs per chain, default 16; force: every request's info sets
 * nicq_algorithm=offload, which takes the plan on the emulated backend).
 *
 * Three ops, each on allreduce, allreduce in place, reduce at root p - 1 and
 * reduce in place there:
 *  - "matmul": a user op, not commutative, on a contiguous type of four
 *    unsigned ints (a 2x2 matrix, products wrap): the result depends on the
 *    order the contributions are folded in;
 *  - "usum": a commutative user op (unsigned sum) on MPI_UNSIGNED, one op
 *    per request, freed right after its init;
 *  - "minloc": MPI_MINLOC on MPI_2INT, a predefined pair no atomic table
 *    has, with ties in the values (the lower index wins);
 *  - "strided matmul" and "strided sum" (MPI_SUM): the matrix product and a
 *    predefined op on a noncontiguous type (four unsigned ints two apart),
 *    which the plan packs and unpacks in host steps; the gaps of recvbuf
 *    must stay untouched.
 * Every rank steps all ranks' buffers through MPI's definition (the fold in
 * rank order, written here apart from nicq's kernels) to know what its own
 * must hold; in place each epoch reads what the previous one wrote, so a
 * queued chain's result depends on how many epochs ran. A reduce's non-root
 * recvbuf must stay untouched.
 *
 * Per form: four MPI_Start/MPI_Wait epochs with data changing per epoch,
 * each checked; then MPI_Match, a timed queued pair, and `pairs` enqueued
 * pairs. On the emulated backend (no NICQ_OFFLOAD=native) every host thread
 * then sleeps with no MPI call, and NICQX_Queue_waits_completed (which
 * drives no progress) must say every wait completed before MPI_Queue_fence:
 * the emulator's agent ran the fold. On native the fold runs in the host's
 * progress, so the chain is checked at the fence. The ctest run
 * (NICQ_PLAN_DUMP=text) counts the plans and their fold steps in the dump,
 * so a form that falls back to the host schedule fails. */
#include <string.h>

#include "asleep_check.h"
#include "coll_check.h"

#define MAXP 4
#define N 3     /* items per buffer */
#define MAXI 24 /* unsigned ints per buffer, at most (N items of 7) */

static int nprocs, native;
static MPI_Info g_info = MPI_INFO_NULL;
/* mat: a 2x2 matrix, four contiguous unsigned ints; smat: the same four
 * two ints apart (MPI_Type_vector(4, 1, 2): extent 7 ints, gaps between). */
static MPI_Datatype mat, smat, t_unsigned, t_2int;
static MPI_Op op_matmul, op_smatmul, op_usum, op_sum, op_minloc;

enum { REF_MATMUL, REF_SUM, REF_MINLOC };
typedef struct {
  const char* name;
  int words;  /* unsigned ints of data per item */
  int stride; /* unsigned ints from one item to the next in a buffer */
  int gap;    /* unsigned ints from one data word to the next */
  MPI_Op* op;
  MPI_Datatype* type;
  int ref;   /* what the reference computes */
  int fresh; /* a user op created for each request and freed after init */
} Op;

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

static void usum_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const unsigned* a = in;
  unsigned* b = inout;
  for (int i = 0; i < *len; i++) b[i] += a[i];
}

/* The reference: acc = x op acc for one item (its data words, compact),
 * as MPI defines each op. */
static void ref_combine(const Op* o, const unsigned* x, unsigned* acc) {
  if (o->ref == REF_MATMUL) {
    matmul(x, acc, 1);
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

typedef struct {
  int all, in_place;
} Form;

/* Every rank's buffers: sb[r] its sendbuf, rb[r] its recvbuf. */
static unsigned sb[MAXP][MAXI], rb[MAXP][MAXI];
static const unsigned kUntouched = 0xdeadbeefu, kSendGap = 0x5a5a5a5au;

static int root_of(const Form* f) {
  return f->all ? 0 : nprocs - 1;
}
static int in_place_at(const Form* f, int r) {
  return f->in_place && (f->all || r == root_of(f));
}
/* Where data word w of item k lies in a buffer. */
static int at(const Op* o, int k, int w) {
  return k * o->stride + w * o->gap;
}

/* Fills every rank's buffers for `epoch` (in place: the recvbuf); gaps of
 * a recvbuf hold kUntouched, which no epoch may change. */
static void prepare(const Op* o, const Form* f, int epoch) {
  for (int r = 0; r < nprocs; r++) {
    for (int i = 0; i < MAXI; i++) sb[r][i] = kSendGap, rb[r][i] = kUntouched;
    for (int k = 0; k < N; k++)
      for (int w = 0; w < o->words; w++) {
        const unsigned v = input_word(o, epoch, r, k, w);
        sb[r][at(o, k, w)] = v;
        if (in_place_at(f, r)) rb[r][at(o, k, w)] = v;
      }
  }
}

/* One epoch of MPI's definition over every rank's buffers. */
static void step(const Op* o, const Form* f) {
  unsigned res[N][4], x[4];
  for (int r = nprocs - 1; r >= 0; r--) {
    const unsigned* in = in_place_at(f, r) ? rb[r] : sb[r];
    for (int k = 0; k < N; k++) {
      for (int w = 0; w < o->words; w++) x[w] = in[at(o, k, w)];
      if (r == nprocs - 1)
        memcpy(res[k], x, sizeof x);
      else
        ref_combine(o, x, res[k]);
    }
  }
  for (int r = 0; r < nprocs; r++)
    if (f->all || r == root_of(f))
      for (int k = 0; k < N; k++)
        for (int w = 0; w < o->words; w++) rb[r][at(o, k, w)] = res[k][w];
}

static unsigned mine_s[MAXI], mine_r[MAXI];

static void load_mine(int me) {
  memcpy(mine_s, sb[me], sizeof mine_s);
  memcpy(mine_r, rb[me], sizeof mine_r);
}

static void check_mine(const Op* o, const Form* f, int me, const char* when) {
  for (int i = 0; i < MAXI; i++)
    CHECK(mine_r[i] == rb[me][i], "%s %s%s %s: recvbuf word %d is %u, want %u", o->name,
          f->all ? "allreduce" : "reduce", f->in_place ? " (in place)" : "", when, i, mine_r[i],
          rb[me][i]);
}

static void make_request(const Op* o, const Form* f, int me, MPI_Request* req) {
  MPI_Op op = *o->op;
  /* A fresh op, freed right after init: the request must keep it alive
   * (MPI 4.1 6.9.5). */
  if (o->fresh) CHECK_OK(MPI_Op_create(&usum_fn, 1, &op));
  const void* s = in_place_at(f, me) ? MPI_IN_PLACE : (const void*)mine_s;
  if (f->all)
    CHECK_OK(MPI_Allreduce_init(s, mine_r, N, *o->type, op, MPI_COMM_WORLD, g_info, req));
  else
    CHECK_OK(MPI_Reduce_init(s, mine_r, N, *o->type, op, root_of(f), MPI_COMM_WORLD, g_info, req));
  if (o->fresh) CHECK_OK(MPI_Op_free(&op));
}

static void run_form(const Op* o, const Form* f, int pairs) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Request req;
  prepare(o, f, 0);
  load_mine(me);
  make_request(o, f, me, &req);
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
          o->name, f->all ? "allreduce" : "reduce", f->in_place ? " (in place)" : "", done - done0,
          enq - enq0, slept);
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
    printf("host_fold: %s %s%s: 4 started epochs and %d enqueued pairs %s, data right\n", o->name,
           f->all ? "allreduce" : "reduce", f->in_place ? " (in place)" : "", pairs,
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
  t_unsigned = MPI_UNSIGNED;
  t_2int = MPI_2INT;
  op_sum = MPI_SUM;
  op_minloc = MPI_MINLOC;
  CHECK_OK(MPI_Op_create(&matmul_fn, 0, &op_matmul));
  CHECK_OK(MPI_Op_create(&smatmul_fn, 0, &op_smatmul));
  CHECK_OK(MPI_Op_create(&usum_fn, 1, &op_usum));
  static const Op ops[] = {
      {"matmul", 4, 4, 1, &op_matmul, &mat, REF_MATMUL, 0},
      {"usum", 1, 1, 1, &op_usum, &t_unsigned, REF_SUM, 1},
      {"minloc", 2, 2, 1, &op_minloc, &t_2int, REF_MINLOC, 0},
      {"strided matmul", 4, 7, 2, &op_smatmul, &smat, REF_MATMUL, 0},
      {"strided sum", 4, 7, 2, &op_sum, &smat, REF_SUM, 0},
  };
  static const Form forms[] = {{1, 0}, {1, 1}, {0, 0}, {0, 1}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    for (size_t j = 0; j < sizeof forms / sizeof forms[0]; j++) run_form(&ops[i], &forms[j], pairs);
  CHECK_OK(MPI_Op_free(&op_matmul));
  CHECK_OK(MPI_Op_free(&op_smatmul));
  CHECK_OK(MPI_Op_free(&op_usum));
  CHECK_OK(MPI_Type_free(&mat));
  CHECK_OK(MPI_Type_free(&smat));
  if (g_info != MPI_INFO_NULL) CHECK_OK(MPI_Info_free(&g_info));
  MPI_Finalize();
  return 0;
}
