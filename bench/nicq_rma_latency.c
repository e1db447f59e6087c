/* OSU-style one-sided latency between ranks 0 (origin) and 1 (target), as
 * osu_put_latency / osu_get_latency / osu_acc_latency /
 * osu_fop_latency / osu_cas_latency: the time of one operation together
 * with its synchronization, per iteration.
 *
 *   --op put | get | acc | fop | cas     (default put; fop and cas: 8 B)
 *   --sync lock | flush | fence | pscw   (default lock)
 *     lock   MPI_Win_lock(exclusive), the operation, MPI_Win_unlock
 *     flush  one MPI_Win_lock_all; the operation and MPI_Win_flush
 *     fence  the operation between two MPI_Win_fence on both ranks
 *     pscw   rank 1 posts and waits, rank 0 starts, operates, completes
 *
 * The window is MPI_Win_allocate'd (the suite's default). Data checks
 * after each size: puts leave rank 0's pattern at rank 1, gets bring rank
 * 1's pattern to rank 0, accumulates (MPI_SUM of 1 on long longs) and
 * fetch-and-adds count every iteration, compare-and-swap chains a counter
 * (each swap expects the previous one's value). Output: "# Size Latency (us)". */
#include "osu_util.h"

enum rma_op { OP_PUT, OP_GET, OP_ACC, OP_FOP, OP_CAS };
enum rma_sync { SYNC_LOCK, SYNC_FLUSH, SYNC_FENCE, SYNC_PSCW };
static const char* const op_names[] = {"put", "get", "acc", "fop", "cas"};
static const char* const sync_names[] = {"lock", "flush", "fence", "pscw"};

/* Takes --op and --sync out of argv (osu_parse knows neither). */
static int take_options(int* argc, char** argv, enum rma_op* op, enum rma_sync* sync) {
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    const int is_op = strcmp(argv[i], "--op") == 0, is_sync = strcmp(argv[i], "--sync") == 0;
    if (!is_op && !is_sync) {
      argv[out++] = argv[i];
      continue;
    }
    if (i + 1 >= *argc) return 1;
    const char* v = argv[++i];
    int found = 0;
    for (int k = 0; is_op && k < 5; ++k)
      if (strcmp(v, op_names[k]) == 0) *op = (enum rma_op)k, found = 1;
    for (int k = 0; is_sync && k < 4; ++k)
      if (strcmp(v, sync_names[k]) == 0) *sync = (enum rma_sync)k, found = 1;
    if (!found) return 1;
  }
  *argc = out;
  argv[out] = NULL;
  return 0;
}

struct ctx {
  enum rma_op op;
  enum rma_sync sync;
  MPI_Win win;
  MPI_Group peer;
  char *src, *dst;
};

/* One operation of `n` bytes from rank 0 to rank 1; iteration i (cas). */
static void operate(struct ctx* c, long n, long i) {
  long long one = 1, cmp = i, swap = i + 1;
  switch (c->op) {
    case OP_PUT:
      MPI_Put(c->src, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR, c->win);
      break;
    case OP_GET:
      MPI_Get(c->dst, (int)n, MPI_CHAR, 1, 0, (int)n, MPI_CHAR, c->win);
      break;
    case OP_ACC: {
      long long* ones = (long long*)c->src;
      MPI_Accumulate(ones, (int)(n / 8), MPI_LONG_LONG, 1, 0, (int)(n / 8), MPI_LONG_LONG, MPI_SUM,
                     c->win);
      break;
    }
    case OP_FOP:
      MPI_Fetch_and_op(&one, c->dst, MPI_LONG_LONG, 1, 0, MPI_SUM, c->win);
      break;
    case OP_CAS:
      MPI_Compare_and_swap(&swap, &cmp, c->dst, MPI_LONG_LONG, 1, 0, c->win);
      break;
  }
}

static void iteration(struct ctx* c, int rank, long n, long i) {
  switch (c->sync) {
    case SYNC_LOCK:
      if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
        operate(c, n, i);
        MPI_Win_unlock(1, c->win);
      }
      break;
    case SYNC_FLUSH:
      if (rank == 0) {
        operate(c, n, i);
        MPI_Win_flush(1, c->win);
      }
      break;
    case SYNC_FENCE:
      if (rank == 0) operate(c, n, i);
      MPI_Win_fence(0, c->win);
      break;
    case SYNC_PSCW:
      if (rank == 0) {
        MPI_Win_start(c->peer, 0, c->win);
        operate(c, n, i);
        MPI_Win_complete(c->win);
      } else {
        MPI_Win_post(c->peer, 0, c->win);
        MPI_Win_wait(c->win);
      }
      break;
  }
}

/* After a size: what the operations must have left, checked where it is. */
static void check(struct ctx* c, int rank, char* window, long n, long total) {
  if (c->op == OP_PUT && rank == 1)
    osu_check_bytes("put data at the target", window, n, osu_pattern(0, n));
  if (c->op == OP_GET && rank == 0)
    osu_check_bytes("get data at the origin", c->dst, n, osu_pattern(1, n));
  if (rank != 1) return;
  const long long* w = (const long long*)window;
  if (c->op == OP_ACC)
    for (long k = 0; k < n / 8; ++k)
      if (w[k] != total) osu_fail("accumulate element %ld is %lld, expected %ld", k, w[k], total);
  if ((c->op == OP_FOP || c->op == OP_CAS) && w[0] != total)
    osu_fail("%s counter is %lld, expected %ld", op_names[c->op], w[0], total);
}

int main(int argc, char** argv) {
  struct ctx c = {OP_PUT, SYNC_LOCK, MPI_WIN_NULL, MPI_GROUP_NULL, NULL, NULL};
  int bad = take_options(&argc, argv, &c.op, &c.sync);
  int rank, size;
  struct osu_options o;
  const long min = c.op == OP_PUT || c.op == OP_GET ? 1 : 8;
  const long max = c.op == OP_FOP || c.op == OP_CAS ? 8 : 4L << 20;
  if (osu_p2p_start(&argc, &argv, "nicq_rma_latency", 0, min, max, &o, &rank, &size) != 0) return 1;
  if (bad) {
    if (rank == 0)
      fprintf(stderr,
              "usage: nicq_rma_latency [--op put|get|acc|fop|cas] [--sync lock|flush|fence|pscw] "
              "[options]\n");
    MPI_Finalize();
    return 1;
  }
  if (c.op != OP_PUT && c.op != OP_GET && o.min_size < 8) o.min_size = 8;
  if (c.op == OP_FOP || c.op == OP_CAS) o.min_size = o.max_size = 8;
  MPI_Comm pair = osu_pair_comm(rank);
  char* window = NULL;
  MPI_Win_allocate(o.max_size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window, &c.win);
  c.src = osu_buffer(o.max_size, 0);
  c.dst = osu_buffer(o.max_size, 0);
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int peer = rank == 0 ? 1 : 0;
  MPI_Group_incl(world, 1, &peer, &c.peer);
  MPI_Group_free(&world);
  if (rank == 0) {
    char title[64];
    snprintf(title, sizeof title, "One-sided %s Latency Test (%s)", op_names[c.op],
             sync_names[c.sync]);
    osu_header(title, &o, size);
    printf("# %-10s%18s", "Size", "Latency (us)");
    osu_full_columns(&o, "us");
    printf("\n");
    fflush(stdout);
  }
  struct osu_progress progress;
  osu_progress_init(&progress, &o, rank);
  for (long n = o.min_size; n <= o.max_size; n = osu_next_size(n)) {
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    /* Fresh contents per size: patterns, and ones for the accumulates. */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, c.win);
    memset(window, c.op == OP_GET ? osu_pattern(rank, n) : 0, (size_t)o.max_size);
    MPI_Win_unlock(rank, c.win);
    memset(c.src, osu_pattern(rank, n), (size_t)n);
    if (c.op == OP_ACC)
      for (long k = 0; k < n / 8; ++k) ((long long*)c.src)[k] = 1;
    memset(c.dst, 0, (size_t)n);
    MPI_Barrier(MPI_COMM_WORLD);
    if (c.sync == SYNC_FLUSH && rank == 0) MPI_Win_lock_all(0, c.win);
    if (c.sync == SYNC_FENCE) MPI_Win_fence(0, c.win);
    double t0 = 0;
    /* A fence is collective over the window: every rank takes part. */
    if (rank < 2 || c.sync == SYNC_FENCE)
      for (int i = 0; i < iters + warmup; ++i) {
        if (i == warmup) t0 = MPI_Wtime();
        iteration(&c, rank, n, i);
      }
    const double us = (MPI_Wtime() - t0) * 1e6 / iters;
    if (c.sync == SYNC_FLUSH && rank == 0) MPI_Win_unlock_all(c.win);
    if (c.sync == SYNC_FENCE) MPI_Win_fence(MPI_MODE_NOSUCCEED, c.win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, c.win);
    if (rank < 2) check(&c, rank, window, n, (long)iters + warmup);
    MPI_Win_unlock(rank, c.win);
    if (rank < 2) osu_print_row(&o, pair, n, us, iters);
    osu_progress_done(&progress, &o, n);
  }
  MPI_Group_free(&c.peer);
  MPI_Win_free(&c.win);
  free(c.src);
  free(c.dst);
  MPI_Comm_free(&pair);
  MPI_Finalize();
  return 0;
}
