/* OSU-style one-sided benchmarks between ranks 0 (origin) and 1 (target).
 *
 *   --op put|get|acc|get_acc|fop|cas   the operation (default put)
 *   --sync lock|flush|flush_local|lock_all|pscw|fence   the synchronization
 *   --win create|allocate|dynamic      how the target window is made
 *   --bw                               bandwidth: 64 ops per epoch (put, get)
 *   --target-polls                     the passive target waits out the run
 *                                      in an MPI_Test loop (inside MPI's
 *                                      progress) instead of MPI_Barrier
 * plus the common options of osu_util.h (-m, -i, -x, -f, -q).
 *
 * Latency (us) is the time of one operation and its synchronization:
 *   lock       MPI_Win_lock(exclusive) + op + MPI_Win_unlock per iteration
 *   flush      one shared lock; op + MPI_Win_flush per iteration
 *   flush_local  one shared lock; op + MPI_Win_flush_local per iteration
 *   lock_all   MPI_Win_lock_all + op + MPI_Win_unlock_all per iteration
 *   pscw       origin MPI_Win_start + op + MPI_Win_complete, target
 *              MPI_Win_post + MPI_Win_wait, per iteration
 *   fence      MPI_Win_fence + op (origin) + MPI_Win_fence, per iteration
 * acc and get_acc accumulate MPI_INT with MPI_SUM (size/4 elements), fop
 * and cas one MPI_LONG_LONG (their size column is 8). Bandwidth (MB/s)
 * issues 64 ops per epoch and counts every byte moved.
 *
 * Data checks after each size: a put leaves the origin's pattern in every
 * byte of the target window, a get brings the target's pattern; acc,
 * get_acc and fop add 1 per operation (warm-up included), so the target
 * holds the exact count; cas swaps i for i+1 each time, so the target ends
 * at the count and the last fetched value is one less.
 * The same source builds with any MPI's mpicc (bench/compare.sh). */
#include "osu_util.h"

enum rma_op { OP_PUT, OP_GET, OP_ACC, OP_GET_ACC, OP_FOP, OP_CAS };
enum rma_sync { SYNC_LOCK, SYNC_FLUSH, SYNC_FLUSH_LOCAL, SYNC_LOCK_ALL, SYNC_PSCW, SYNC_FENCE };
enum rma_win { WIN_CREATE, WIN_ALLOCATE, WIN_DYNAMIC };
static const char* const op_names[] = {"put", "get", "acc", "get_acc", "fop", "cas"};
static const char* const sync_names[] = {"lock",     "flush", "flush_local",
                                         "lock_all", "pscw",  "fence"};
static const char* const win_names[] = {"create", "allocate", "dynamic"};
#define RMA_WINDOW 64

struct rma_setup {
  enum rma_op op;
  enum rma_sync sync;
  enum rma_win win;
  int bw;
  int target_polls;
};

static int pick(const char* value, const char* const* names, int n) {
  for (int i = 0; i < n; ++i)
    if (strcmp(value, names[i]) == 0) return i;
  return -1;
}

/* Takes this program's own options out of argv (the rest go to osu_util). */
static int parse_rma(int* argc, char** argv, struct rma_setup* s) {
  memset(s, 0, sizeof *s);
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    int* field = NULL;
    const char* const* names = NULL;
    int n = 0;
    if (strcmp(argv[i], "--op") == 0) {
      field = (int*)&s->op, names = op_names, n = 6;
    } else if (strcmp(argv[i], "--sync") == 0) {
      field = (int*)&s->sync, names = sync_names, n = 6;
    } else if (strcmp(argv[i], "--win") == 0) {
      field = (int*)&s->win, names = win_names, n = 3;
    } else if (strcmp(argv[i], "--bw") == 0) {
      s->bw = 1;
      continue;
    } else if (strcmp(argv[i], "--target-polls") == 0) {
      s->target_polls = 1;
      continue;
    } else {
      argv[out++] = argv[i];
      continue;
    }
    if (i + 1 >= *argc || (*field = pick(argv[i + 1], names, n)) < 0) return 1;
    ++i;
  }
  *argc = out;
  argv[out] = NULL;
  return s->bw && s->op != OP_PUT && s->op != OP_GET;
}

/* The target's window memory, made as --win says; *disp is where the data
 * starts (an address for a dynamic window, else 0). */
static MPI_Win make_window(const struct rma_setup* s, long bytes, char** base, MPI_Aint* disp) {
  MPI_Win win;
  *disp = 0;
  if (s->win == WIN_ALLOCATE) {
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, base, &win);
    memset(*base, 0, (size_t)bytes);
  } else if (s->win == WIN_CREATE) {
    *base = osu_buffer(bytes, 0);
    MPI_Win_create(*base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  } else {
    *base = osu_buffer(bytes, 0);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_attach(win, *base, bytes);
    MPI_Aint mine;
    MPI_Get_address(*base, &mine);
    /* The origin learns the target's address. */
    MPI_Bcast(&mine, 1, MPI_AINT, 1, MPI_COMM_WORLD);
    *disp = mine;
  }
  return win;
}

static void free_window(const struct rma_setup* s, MPI_Win* win, char* base) {
  if (s->win == WIN_DYNAMIC) MPI_Win_detach(*win, base);
  MPI_Win_free(win);
  if (s->win != WIN_ALLOCATE) free(base);
}

/* One operation of `n` bytes from the origin to the target at `disp`. */
static void issue(const struct rma_setup* s, char* local, char* result, long n, MPI_Aint disp,
                  long long iteration, MPI_Win win) {
  static const long long one_ll = 1;
  long long compare = iteration, swap = iteration + 1;
  switch (s->op) {
    case OP_PUT:
      MPI_Put(local, (int)n, MPI_CHAR, 1, disp, (int)n, MPI_CHAR, win);
      break;
    case OP_GET:
      MPI_Get(local, (int)n, MPI_CHAR, 1, disp, (int)n, MPI_CHAR, win);
      break;
    case OP_ACC:
      MPI_Accumulate(local, (int)(n / 4), MPI_INT, 1, disp, (int)(n / 4), MPI_INT, MPI_SUM, win);
      break;
    case OP_GET_ACC:
      MPI_Get_accumulate(local, (int)(n / 4), MPI_INT, result, (int)(n / 4), MPI_INT, 1, disp,
                         (int)(n / 4), MPI_INT, MPI_SUM, win);
      break;
    case OP_FOP:
      MPI_Fetch_and_op(&one_ll, result, MPI_LONG_LONG, 1, disp, MPI_SUM, win);
      break;
    case OP_CAS:
      MPI_Compare_and_swap(&swap, &compare, result, MPI_LONG_LONG, 1, disp, win);
      break;
  }
}

/* Opens the epoch of one iteration (or of the whole run for flush). */
static void epoch_open(const struct rma_setup* s, int rank, MPI_Group peer, MPI_Win win) {
  switch (s->sync) {
    case SYNC_LOCK:
      if (rank == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
      break;
    case SYNC_LOCK_ALL:
      if (rank == 0) MPI_Win_lock_all(0, win);
      break;
    case SYNC_PSCW:
      if (rank == 0)
        MPI_Win_start(peer, 0, win);
      else
        MPI_Win_post(peer, 0, win);
      break;
    case SYNC_FENCE:
      MPI_Win_fence(0, win);
      break;
    default:
      break;
  }
}

static void epoch_close(const struct rma_setup* s, int rank, MPI_Win win) {
  switch (s->sync) {
    case SYNC_LOCK:
      if (rank == 0) MPI_Win_unlock(1, win);
      break;
    case SYNC_FLUSH:
      if (rank == 0) MPI_Win_flush(1, win);
      break;
    case SYNC_FLUSH_LOCAL:
      if (rank == 0) MPI_Win_flush_local(1, win);
      break;
    case SYNC_LOCK_ALL:
      if (rank == 0) MPI_Win_unlock_all(win);
      break;
    case SYNC_PSCW:
      if (rank == 0)
        MPI_Win_complete(win);
      else
        MPI_Win_wait(win);
      break;
    case SYNC_FENCE:
      MPI_Win_fence(0, win);
      break;
  }
}

/* Rank 0 reads back what the target holds after a run of `total` ops. */
static void check_size(const struct rma_setup* s, int rank, long n, long long total, char* local,
                       char* result, char* target, MPI_Win win) {
  if (s->target_polls) {
    /* The target polls MPI (each MPI_Test is a progress pass) until the
     * origin is done, as a target that calls MPI in a loop would. */
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (rank == 0) MPI_Wait(&req, MPI_STATUS_IGNORE);
    while (rank != 0 && !done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win); /* the target's own view */
    MPI_Win_unlock(1, win);
  }
  if (rank == 1 && s->op == OP_PUT) osu_check_bytes("put target", target, n, osu_pattern(0, n));
  if (rank == 0 && s->op == OP_GET) osu_check_bytes("get origin", local, n, osu_pattern(1, n));
  if (rank == 1 && (s->op == OP_ACC || s->op == OP_GET_ACC)) {
    const int* v = (const int*)target;
    for (long i = 0; i < n / 4; ++i)
      if (v[i] != (int)total)
        osu_fail("accumulate target element %ld is %d, expected %lld", i, v[i], total);
  }
  if (rank == 1 && (s->op == OP_FOP || s->op == OP_CAS)) {
    long long v;
    memcpy(&v, target, sizeof v);
    if (v != total) osu_fail("%s target is %lld, expected %lld", op_names[s->op], v, total);
  }
  if (rank == 0 && (s->op == OP_FOP || s->op == OP_CAS)) {
    long long v;
    memcpy(&v, result, sizeof v);
    if (v != total - 1)
      osu_fail("%s fetched %lld last, expected %lld", op_names[s->op], v, total - 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* NICQ_BENCH_STATS=1: the origin prints nicq's lock-staging counters of the
 * window (MPI_Win_get_info keys; other libraries print nothing). */
static void print_window_stats(MPI_Win win) {
  static const char* const keys[] = {"nicq_rma_lock_staged_puts", "nicq_rma_lock_stage_applied",
                                     "nicq_rma_lock_stage_reclaimed"};
  MPI_Info info;
  if (MPI_Win_get_info(win, &info) != MPI_SUCCESS) return;
  for (int i = 0; i < 3; ++i) {
    char value[64];
    int flag = 0;
    MPI_Info_get(info, keys[i], sizeof value - 1, value, &flag);
    if (flag) printf("# %s = %s\n", keys[i], value);
  }
  MPI_Info_free(&info);
}

int main(int argc, char** argv) {
  struct rma_setup s;
  int bad = parse_rma(&argc, argv, &s);
  int rank, size;
  struct osu_options o;
  const int atomic = s.op == OP_FOP || s.op == OP_CAS;
  const long min = atomic ? 8 : (s.op == OP_ACC || s.op == OP_GET_ACC ? 4 : 1);
  if (osu_p2p_start(&argc, &argv, "nicq_onesided", 0, min, atomic ? 8 : 4L << 20, &o, &rank, &size))
    return 1;
  if (bad || size != 2) {
    if (rank == 0)
      fprintf(stderr,
              "usage: nicq_onesided [--op put|get|acc|get_acc|fop|cas] [--sync "
              "lock|flush|flush_local|lock_all|pscw|fence] [--win create|allocate|dynamic] [--bw] "
              "[--target-polls] (2 ranks; --bw with put or get)\n");
    MPI_Finalize();
    return 1;
  }
  if (atomic) o.min_size = o.max_size = 8;
  const long per_epoch = s.bw ? RMA_WINDOW : 1;
  char* target = NULL;
  MPI_Aint disp = 0;
  MPI_Win win = make_window(&s, o.max_size, &target, &disp);
  char* local = osu_buffer(o.max_size, 0);
  char* result = osu_buffer(o.max_size > 8 ? o.max_size : 8, 0);
  MPI_Group world, peer;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int other = 1 - rank;
  MPI_Group_incl(world, 1, &other, &peer);
  if (rank == 0) {
    char title[96];
    snprintf(title, sizeof title, "MPI_%s %s Test (%s, window %s)", op_names[s.op],
             s.bw ? "Bandwidth" : "Latency", sync_names[s.sync], win_names[s.win]);
    osu_header(title, &o, size);
    printf("# %-10s%18s", "Size", s.bw ? "Bandwidth (MB/s)" : "Latency (us)");
    osu_full_columns(&o, s.bw ? "MB/s" : "us");
    printf("\n");
    fflush(stdout);
  }
  struct osu_progress progress;
  osu_progress_init(&progress, &o, rank);
  for (long n = o.min_size; n <= o.max_size; n = osu_next_size(n)) {
    if ((s.op == OP_ACC || s.op == OP_GET_ACC) && n % 4) continue;
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    const long long total = (long long)(iters + warmup) * per_epoch;
    if (s.op == OP_ACC || s.op == OP_GET_ACC) {
      for (long i = 0; i < n / 4; ++i) ((int*)local)[i] = 1;
    } else {
      memset(local, rank == 0 && s.op == OP_GET ? 0 : osu_pattern(rank, n), (size_t)n);
    }
    /* Each size starts from a zeroed target (or the target's pattern for get). */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(target, s.op == OP_GET ? osu_pattern(1, n) : 0, (size_t)n);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if ((s.sync == SYNC_FLUSH || s.sync == SYNC_FLUSH_LOCAL) && rank == 0)
      MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    double t0 = 0;
    long long done = 0;
    for (int i = 0; i < iters + warmup; ++i) {
      if (i == warmup) t0 = MPI_Wtime();
      epoch_open(&s, rank, peer, win);
      if (rank == 0)
        for (long k = 0; k < per_epoch; ++k) issue(&s, local, result, n, disp, done++, win);
      epoch_close(&s, rank, win);
    }
    const double elapsed = MPI_Wtime() - t0;
    if ((s.sync == SYNC_FLUSH || s.sync == SYNC_FLUSH_LOCAL) && rank == 0) MPI_Win_unlock(1, win);
    check_size(&s, rank, n, total, local, result, target, win);
    const double value =
        s.bw ? (double)n * per_epoch * iters / elapsed / 1e6 : elapsed * 1e6 / iters;
    /* The origin's time is the result; the target's row is not printed. */
    double shown = value;
    MPI_Bcast(&shown, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    osu_print_row(&o, MPI_COMM_WORLD, atomic ? 8 : n, shown, iters);
    osu_progress_done(&progress, &o, n);
  }
  if (getenv("NICQ_BENCH_STATS") && rank == 0) print_window_stats(win);
  MPI_Group_free(&peer);
  MPI_Group_free(&world);
  free_window(&s, &win, target);
  free(local);
  free(result);
  MPI_Finalize();
  return 0;
}
