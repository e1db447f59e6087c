/* The ring exchange of Example 13.1 (draft chapter 13) on all ranks: each
 * rank sends a message to its left and right neighbours and receives one
 * from each. Per message size, four figures, then a data check:
 *
 *   Queued(us)    time per iteration of the queued ring: matched persistent
 *                 requests, Enqueue_startall(recvs), Enqueue_startall(sends),
 *                 Enqueue_waitall(4); a fence every WINDOW iterations (the
 *                 example enqueues 100 iterations per fence) and at the end
 *   Startall(us)  the same exchange with unmatched persistent requests and
 *                 MPI_Startall / MPI_Startall / MPI_Waitall
 *   Isend(us)     the same with MPI_Irecv / MPI_Isend / MPI_Waitall
 *   Enqueue(ns)   host time per enqueued start: the MPI_Enqueue_startall
 *                 calls of the first FRESH iterations after each fence,
 *                 timer cost removed, / 4 starts.
 *   Wait(ns)      host time per MPI_Enqueue_waitall call of the same
 *                 iterations, timer cost removed (a host-sequenced queue on
 *                 shm runs one progress pass there, which may begin the
 *                 operations of steps whose inputs have landed). Later iterations of a
 *                 window may wait for room (an implementation bounds how far
 *                 a request's enqueued starts run ahead: nicq 16 epochs),
 *                 which is communication time, not the host's enqueue cost
 *   Overlap(%)    OSU-style overlap of one queued iteration (enqueue,
 *                 compute, fence) with a calibrated compute loop that makes
 *                 no MPI call, sized to the slowest rank's (enqueue, fence)
 *
 * Messages to the right carry tag 1 and to the left tag 2, so the two
 * receives from one neighbour (2 ranks) are told apart. After each form
 * every rank checks both receive buffers hold its neighbours' values.
 * Built with an MPI without queues (MPICH, Open MPI: bench/compare.py) it
 * times the Startall and Isend forms only, so the queued figure of nicq has
 * another library's MPI_Startall to be read against. */
#include "osu_util.h"

#define WINDOW 100
#define FRESH 8

struct ring {
  int rank, left, right;
  long count; /* doubles per message */
  double *send_left, *send_right, *recv_left, *recv_right;
  MPI_Request reqs[4]; /* recv_left, recv_right, send_left, send_right */
#ifdef NICQ_MPI
  MPI_Queue queue;
#endif
};

static void ok(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  osu_fail("%s failed: %s", what, msg);
}

/* What `rank` sends to its left (dir 1) or right (dir 2) at this size. */
static double value(int rank, int dir, long count) {
  return rank * 10 + dir + (count % 97) * 1000;
}

static void fill(struct ring* r) {
  for (long i = 0; i < r->count; ++i) {
    r->send_left[i] = value(r->rank, 1, r->count);
    r->send_right[i] = value(r->rank, 2, r->count);
    r->recv_left[i] = r->recv_right[i] = -1;
  }
}

static void check(const struct ring* r, const char* form) {
  for (long i = 0; i < r->count; ++i) {
    if (r->recv_left[i] != value(r->left, 2, r->count))
      osu_fail("%s ring: recv_left[%ld] = %g, expected %g", form, i, r->recv_left[i],
               value(r->left, 2, r->count));
    if (r->recv_right[i] != value(r->right, 1, r->count))
      osu_fail("%s ring: recv_right[%ld] = %g, expected %g", form, i, r->recv_right[i],
               value(r->right, 1, r->count));
  }
}

static void make_requests(struct ring* r) {
  const int n = (int)r->count;
  ok(MPI_Recv_init(r->recv_left, n, MPI_DOUBLE, r->left, 1, MPI_COMM_WORLD, &r->reqs[0]), "recv");
  ok(MPI_Recv_init(r->recv_right, n, MPI_DOUBLE, r->right, 2, MPI_COMM_WORLD, &r->reqs[1]), "recv");
  ok(MPI_Send_init(r->send_left, n, MPI_DOUBLE, r->left, 2, MPI_COMM_WORLD, &r->reqs[2]), "send");
  ok(MPI_Send_init(r->send_right, n, MPI_DOUBLE, r->right, 1, MPI_COMM_WORLD, &r->reqs[3]), "send");
}

static void free_requests(struct ring* r) {
  for (int i = 0; i < 4; ++i) ok(MPI_Request_free(&r->reqs[i]), "MPI_Request_free");
}

/* One iteration of the Isend/Irecv ring; not inlined, so that callgrind's
 * --toggle-collect=isend_iteration counts exactly these calls. */
static __attribute__((noinline)) void isend_iteration(struct ring* r) {
  MPI_Request q[4];
  MPI_Status st[4];
  const int n = (int)r->count;
  MPI_Irecv(r->recv_left, n, MPI_DOUBLE, r->left, 1, MPI_COMM_WORLD, &q[0]);
  MPI_Irecv(r->recv_right, n, MPI_DOUBLE, r->right, 2, MPI_COMM_WORLD, &q[1]);
  MPI_Isend(r->send_left, n, MPI_DOUBLE, r->left, 2, MPI_COMM_WORLD, &q[2]);
  MPI_Isend(r->send_right, n, MPI_DOUBLE, r->right, 1, MPI_COMM_WORLD, &q[3]);
  ok(MPI_Waitall(4, q, st), "MPI_Waitall");
}

/* Microseconds per iteration of the Isend/Irecv ring. */
static double time_isend(struct ring* r, int iters, int warmup) {
  double t0 = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < warmup + iters; ++i) {
    if (i == warmup) t0 = MPI_Wtime();
    isend_iteration(r);
  }
  return (MPI_Wtime() - t0) * 1e6 / iters;
}

/* One iteration of the Startall ring. Not inlined, as enqueue_iteration:
 * `valgrind --tool=callgrind --toggle-collect=startall_iteration` counts
 * the instructions of exactly these calls (docs/performance.md, Run 24). */
static __attribute__((noinline)) void startall_iteration(struct ring* r) {
  MPI_Status st[4];
  ok(MPI_Startall(2, &r->reqs[0]), "MPI_Startall");
  ok(MPI_Startall(2, &r->reqs[2]), "MPI_Startall");
  ok(MPI_Waitall(4, r->reqs, st), "MPI_Waitall");
}

/* Microseconds per iteration with persistent requests and MPI_Startall. */
static double time_startall(struct ring* r, int iters, int warmup) {
  make_requests(r);
  double t0 = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < warmup + iters; ++i) {
    if (i == warmup) t0 = MPI_Wtime();
    startall_iteration(r);
  }
  double us = (MPI_Wtime() - t0) * 1e6 / iters;
  free_requests(r);
  return us;
}

#ifdef NICQ_MPI

/* Enqueues one iteration; when `timed`, returns the seconds spent in the
 * two Enqueue_startall calls (timer cost included), else 0: the clock is
 * read only in the iterations the Enqueue figure uses, so that the Queued
 * figure carries no timer cost that the Startall loop does not. */
static __attribute__((noinline)) double enqueue_iteration(struct ring* r, int timed,
                                                          double* in_wait) {
  double t0 = timed ? MPI_Wtime() : 0;
  ok(MPI_Enqueue_startall(&r->queue, 2, &r->reqs[0]), "MPI_Enqueue_startall(recvs)");
  ok(MPI_Enqueue_startall(&r->queue, 2, &r->reqs[2]), "MPI_Enqueue_startall(sends)");
  double t1 = timed ? MPI_Wtime() : 0;
  ok(MPI_Enqueue_waitall(&r->queue, 4, r->reqs, MPI_STATUSES_IGNORE), "MPI_Enqueue_waitall");
  if (timed) *in_wait += MPI_Wtime() - t1;
  return timed ? t1 - t0 : 0;
}

static void fence(struct ring* r) {
  ok(MPI_Queue_fence(&r->queue), "MPI_Queue_fence");
}

/* Seconds one MPI_Wtime call adds to an interval it bounds (about one
 * call's cost: half of each of the two), to take out of the enqueue figure. */
static double timer_cost(void) {
  const int n = 10000;
  volatile double sink = 0;
  double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) sink = MPI_Wtime();
  (void)sink;
  return (MPI_Wtime() - t0) / n;
}

/* `iters` queued iterations, a fence every WINDOW and one at the end: the
 * warm-up and the timed phase. Not inlined: `valgrind --tool=callgrind
 * --toggle-collect=queued_phase` counts exactly these calls, the queued
 * counterpart of startall_iteration's (docs/performance.md). When
 * `measure`, the first FRESH iterations of each window add their enqueue
 * and wait seconds to *in_enqueue and *in_wait and count in *fresh. */
static __attribute__((noinline)) void queued_phase(struct ring* r, int iters, int measure,
                                                   double* in_enqueue, int* fresh,
                                                   double* in_wait) {
  for (int i = 0; i < iters; ++i) {
    const int fresh_one = measure && i % WINDOW < FRESH;
    double spent = enqueue_iteration(r, fresh_one, in_wait);
    if (fresh_one) {
      *in_enqueue += spent;
      ++*fresh;
    }
    if (i % WINDOW == WINDOW - 1) fence(r);
  }
  fence(r);
}

struct queued_figures {
  double us, enqueue_ns, wait_ns, total, compute, pure;
};

static void time_queued(struct ring* r, int iters, int warmup, double pair_cost,
                        struct queued_figures* f) {
  make_requests(r);
  ok(MPI_Matchall(4, r->reqs), "MPI_Matchall");
  double in_wait = 0, in_enqueue = 0;
  int fresh = 0;
  queued_phase(r, warmup, 0, &in_enqueue, &fresh, &in_wait);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  queued_phase(r, iters, 1, &in_enqueue, &fresh, &in_wait);
  f->us = (MPI_Wtime() - t0) * 1e6 / iters;
  double ns = (in_enqueue - fresh * pair_cost) * 1e9 / (4.0 * fresh);
  f->enqueue_ns = ns > 0 ? ns : 0;
  ns = (in_wait - fresh * pair_cost) * 1e9 / fresh;
  f->wait_ns = ns > 0 ? ns : 0;
  check(r, "queued");
  /* Overlap: one iteration at a time, fenced. */
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    enqueue_iteration(r, 0, &in_wait);
    fence(r);
  }
  double pure = (MPI_Wtime() - t0) * 1e6 / iters, work = 0;
  MPI_Allreduce(&pure, &work, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    enqueue_iteration(r, 0, &in_wait);
    osu_compute_us(work);
    fence(r);
  }
  f->total = (MPI_Wtime() - t0) * 1e6 / iters;
  t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) osu_compute_us(work);
  f->compute = (MPI_Wtime() - t0) * 1e6 / iters;
  f->pure = pure;
  free_requests(r);
}
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct osu_options o;
  /* -t is implied (the last column); -S makes the compute phase sleep. */
  if (osu_parse_with(argc, argv, &o, OSU_ACCEPT_OVERLAP, 8, 1L << 20) != 0) {
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) osu_header("Queued Ring Test (Example 13.1)", &o, size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  struct ring r;
  memset(&r, 0, sizeof r);
  r.rank = rank;
  r.left = (rank - 1 + size) % size;
  r.right = (rank + 1) % size;
  r.send_left = (double*)osu_buffer(o.max_size, 0);
  r.send_right = (double*)osu_buffer(o.max_size, 0);
  r.recv_left = (double*)osu_buffer(o.max_size, 0);
  r.recv_right = (double*)osu_buffer(o.max_size, 0);
#ifdef NICQ_MPI
  ok(MPI_Queue_init(&r.queue, MPI_QUEUE_TYPE_DEFAULT, NULL), "MPI_Queue_init");
  osu_compute_calibrate();
  osu_compute_sleeps = o.sleep_compute;
  const double pair_cost = timer_cost();
#endif
  if (rank == 0) {
    printf("# fence every %d queued iterations; sizes are bytes per message\n", WINDOW);
#ifdef NICQ_MPI
    printf("# %-10s%14s%14s%14s%14s%12s%12s\n", "Size", "Queued(us)", "Startall(us)", "Isend(us)",
           "Enqueue(ns)", "Wait(ns)", "Overlap(%)");
#else
    printf("# queued form not supported by this MPI: Startall and Isend forms only\n");
    printf("# %-10s%14s%14s\n", "Size", "Startall(us)", "Isend(us)");
#endif
    fflush(stdout);
  }
  struct osu_progress progress;
  osu_progress_init(&progress, &o, rank);
  for (long n = o.min_size < 8 ? 8 : o.min_size; n <= o.max_size; n = osu_next_size(n)) {
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    r.count = n / 8;
    fill(&r);
    double isend = time_isend(&r, iters, warmup);
    check(&r, "isend");
    fill(&r);
    double startall = time_startall(&r, iters, warmup);
    check(&r, "startall");
#ifdef NICQ_MPI
    fill(&r);
    struct queued_figures f;
    time_queued(&r, iters, warmup, pair_cost, &f);
    double v[8] = {f.us, startall, isend, f.enqueue_ns, f.total, f.compute, f.pure, f.wait_ns},
           avg[8];
    for (int k = 0; k < 8; ++k) {
      double mn, mx;
      osu_stats(MPI_COMM_WORLD, v[k], &mn, &mx, &avg[k]);
    }
    if (rank == 0) {
      double overlap = avg[6] > 0 ? 100.0 - 100.0 * (avg[4] - avg[5]) / avg[6] : 0;
      overlap = overlap < 0 ? 0 : overlap > 100 ? 100 : overlap;
      printf("%-12ld%14.2f%14.2f%14.2f%14.1f%12.1f%12.2f\n", n, avg[0], avg[1], avg[2], avg[3],
             avg[7], overlap);
      fflush(stdout);
    }
#else
    double v[2] = {startall, isend}, avg[2];
    for (int k = 0; k < 2; ++k) {
      double mn, mx;
      osu_stats(MPI_COMM_WORLD, v[k], &mn, &mx, &avg[k]);
    }
    if (rank == 0) {
      printf("%-12ld%14.2f%14.2f\n", n, avg[0], avg[1]);
      fflush(stdout);
    }
#endif
    osu_progress_done(&progress, &o, n);
  }
#ifdef NICQ_MPI
  ok(MPI_Queue_free(&r.queue), "MPI_Queue_free");
#endif
  free(r.send_left);
  free(r.send_right);
  free(r.recv_left);
  free(r.recv_right);
  MPI_Finalize();
  return 0;
}
