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
 *  - "usum": a commutative user op (unsigned sum) on MPI_UNSIGNED;
 *  - "minloc": MPI_MINLOC on MPI_2INT, a predefined pair no atomic table
 *    has, with ties in the values (the lower index wins).
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
#define N 3 /* items per buffer */
#define W 4 /* unsigned ints per item, at most */

static int nprocs, native;
static MPI_Info g_info = MPI_INFO_NULL;
static MPI_Datatype mat;
static MPI_Op op_matmul, op_usum;

typedef struct {
  const char* name;
  int words;  /* unsigned ints per item */
  MPI_Op* op; /* NULL: MPI_MINLOC on MPI_2INT */
} Op;

static void matmul_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const unsigned* a = in;
  unsigned* b = inout;
  for (int i = 0; i < *len; i++, a += 4, b += 4) {
    const unsigned r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
    const unsigned r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
    b[0] = r0, b[1] = r1, b[2] = r2, b[3] = r3;
  }
}

static void usum_fn(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  const unsigned* a = in;
  unsigned* b = inout;
  for (int i = 0; i < *len; i++) b[i] += a[i];
}

/* The reference: acc = x op acc for one item, as MPI defines each op. */
static void ref_combine(const Op* o, const unsigned* x, unsigned* acc) {
  if (o->op == &op_matmul) {
    int one = 1;
    matmul_fn((void*)x, acc, &one, NULL);
  } else if (o->op == &op_usum) {
    acc[0] += x[0];
  } else {
    const int xv = (int)x[0], av = (int)acc[0];
    if (xv < av || (xv == av && (int)x[1] < (int)acc[1])) acc[0] = x[0], acc[1] = x[1];
  }
}

static unsigned input_word(const Op* o, int epoch, int r, int k, int w) {
  if (o->op == NULL) /* minloc: (value, index); values tie across ranks */
    return w == 0 ? (unsigned)((epoch * 7 + r * 3 + k) % 4) : (unsigned)(r * 10 + k);
  return (unsigned)(epoch * 31 + r * 7 + k * 3 + w + 1);
}

typedef struct {
  int all, in_place;
} Form;

/* Every rank's buffers: sb[r] its sendbuf, rb[r] its recvbuf. */
static unsigned sb[MAXP][N * W], rb[MAXP][N * W];
static const unsigned kUntouched = 0xdeadbeefu;

static int root_of(const Form* f) {
  return f->all ? 0 : nprocs - 1;
}
static int in_place_at(const Form* f, int r) {
  return f->in_place && (f->all || r == root_of(f));
}

/* Fills every rank's buffers for `epoch` (in place: the recvbuf). */
static void prepare(const Op* o, const Form* f, int epoch) {
  for (int r = 0; r < nprocs; r++)
    for (int k = 0; k < N; k++)
      for (int w = 0; w < o->words; w++) {
        const unsigned v = input_word(o, epoch, r, k, w);
        sb[r][k * o->words + w] = v;
        rb[r][k * o->words + w] = in_place_at(f, r) ? v : kUntouched;
      }
}

/* One epoch of MPI's definition over every rank's buffers. */
static void step(const Op* o, const Form* f) {
  unsigned res[N * W];
  const int last = nprocs - 1;
  const unsigned* xl = in_place_at(f, last) ? rb[last] : sb[last];
  memcpy(res, xl, sizeof res);
  for (int r = nprocs - 2; r >= 0; r--) {
    const unsigned* x = in_place_at(f, r) ? rb[r] : sb[r];
    for (int k = 0; k < N; k++) ref_combine(o, x + k * o->words, res + k * o->words);
  }
  for (int r = 0; r < nprocs; r++)
    if (f->all || r == root_of(f)) memcpy(rb[r], res, sizeof res);
}

static unsigned mine_s[N * W], mine_r[N * W];

static void load_mine(int me) {
  memcpy(mine_s, sb[me], sizeof mine_s);
  memcpy(mine_r, rb[me], sizeof mine_r);
}

static void check_mine(const Op* o, const Form* f, int me, const char* when) {
  for (int i = 0; i < N * o->words; i++)
    CHECK(mine_r[i] == rb[me][i], "%s %s%s %s: recvbuf word %d is %u, want %u", o->name,
          f->all ? "allreduce" : "reduce", f->in_place ? " (in place)" : "", when, i, mine_r[i],
          rb[me][i]);
}

static void make_request(const Op* o, const Form* f, int me, MPI_Request* req) {
  const MPI_Datatype t = o->op == &op_matmul ? mat : o->op ? MPI_UNSIGNED : MPI_2INT;
  const MPI_Op op = o->op ? *o->op : MPI_MINLOC;
  const void* s = in_place_at(f, me) ? MPI_IN_PLACE : (const void*)mine_s;
  if (f->all)
    CHECK_OK(MPI_Allreduce_init(s, mine_r, N, t, op, MPI_COMM_WORLD, g_info, req));
  else
    CHECK_OK(MPI_Reduce_init(s, mine_r, N, t, op, root_of(f), MPI_COMM_WORLD, g_info, req));
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
  CHECK_OK(MPI_Op_create(&matmul_fn, 0, &op_matmul));
  CHECK_OK(MPI_Op_create(&usum_fn, 1, &op_usum));
  static const Op ops[] = {{"matmul", 4, &op_matmul}, {"usum", 1, &op_usum}, {"minloc", 2, NULL}};
  static const Form forms[] = {{1, 0}, {1, 1}, {0, 0}, {0, 1}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    for (size_t j = 0; j < sizeof forms / sizeof forms[0]; j++) run_form(&ops[i], &forms[j], pairs);
  CHECK_OK(MPI_Op_free(&op_matmul));
  CHECK_OK(MPI_Op_free(&op_usum));
  CHECK_OK(MPI_Type_free(&mat));
  if (g_info != MPI_INFO_NULL) CHECK_OK(MPI_Info_free(&g_info));
  MPI_Finalize();
  return 0;
}
