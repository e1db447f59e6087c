/* The driver shared by the collective benchmarks (nicq_allreduce,
 * nicq_bcast, nicq_barrier): one collective in four forms, OSU-style
 * latency or overlap rows, -f statistics, progress lines, data checks.
 *
 * A benchmark describes its collective with a struct osu_coll (how to run
 * it blocking, how to begin it nonblocking, how to create its persistent
 * request, how to check a result) and hands it to osu_coll_main.
 *
 * Forms and what one timed iteration is:
 *   blocking     MPI_Allreduce(...)
 *   nonblocking  MPI_Iallreduce(..., &req); MPI_Wait(&req)
 *   persistent   MPI_Start(&req); MPI_Wait(&req)       (request made per size)
 *   queued       MPI_Enqueue_start(q, &req); MPI_Enqueue_wait(q, &req);
 *                MPI_Queue_fence(q)                    (request matched per size)
 * Overlap (-t), as the OSU nonblocking collective benchmarks: t_pure is the
 * form's latency, the compute loop (calibrated, no MPI call) is set to the
 * largest t_pure over the ranks, t_total times begin; compute; complete,
 * t_compute times the compute loop alone, and
 *   overlap = 100 - 100 * (t_total - t_compute) / t_pure, kept in [0, 100].
 * --compute-rank R (implies -t): only rank R computes between begin and
 * complete, the others complete at once (an engine where whoever is inside
 * MPI does the work can finish the operation for R meanwhile); the row
 * gives rank R's t_total and t_compute, t_pure averaged over the ranks as
 * before, and rank R's overlap. With one rank doing the whole operation
 * while R computes, compute = t_pure cannot hide it (that rank does twice
 * its share): --compute-scale F sets compute = F x the largest t_pure.
 *
 * t_compute above comes from a separate loop of compute phases. A sleeping
 * compute (-S) lasts as long as the timer lets it, which varies from one
 * phase to the next (asked 2.3 us, slept 7-9 us), so a line after each
 * overlap row, starting with "# in-loop", splits the timed loop itself
 * (OSU's own overlap tests time their compute inside the loop too):
 *   compute  the compute phases of the timed loop, measured there
 *   start    time in begin (MPI_Start, MPI_I..., the enqueue calls)
 *   wait     time in complete after the compute (MPI_Wait, the fence)
 *   overlap  100 - 100 * (t_total - compute) / t_pure with that compute,
 *            i.e. what start + wait leave of the pure time
 *   done     (nicq, persistent form) the share of iterations whose
 *            operation had finished when the compute ended, read with
 *            NICQX_Request_work_done (no progress); below 100 % the wait
 *            found work left, at 100 % what is left is the calls' own cost;
 *            "their wait": the mean wait of the iterations found done (the
 *            completion's own cost), the largest over the ranks
 * each the mean over the ranks (done: the lowest rank's).
 */
#ifndef NICQ_BENCH_OSU_COLL_H
#define NICQ_BENCH_OSU_COLL_H

#include "osu_util.h"

/* Persistent collectives are MPI 4; Open MPI 4.1 has them as MPIX_. */
#if defined(OPEN_MPI) && OPEN_MPI && MPI_VERSION < 4
#include <mpi-ext.h>
#endif
#if MPI_VERSION >= 4
#define OSU_HAVE_PERSISTENT_COLL 1
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define OSU_HAVE_PERSISTENT_COLL 1
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Bcast_init MPIX_Bcast_init
#define MPI_Barrier_init MPIX_Barrier_init
#define MPI_Neighbor_allgather_init MPIX_Neighbor_allgather_init
#define MPI_Neighbor_alltoall_init MPIX_Neighbor_alltoall_init
#else
#define OSU_HAVE_PERSISTENT_COLL 0
#endif
/* Queues and matching (draft chapter 13) come with nicq's mpi.h. */
#ifdef NICQ_MPI
#define OSU_HAVE_QUEUE 1
#else
#define OSU_HAVE_QUEUE 0
#endif

/* ---- the collective under test ---------------------------------------- */

struct osu_coll_state;

struct osu_coll {
  const char* title; /* "Allreduce Latency Test" */
  void* ctx;
  /* After MPI_Init and the options: buffers for o->max_size bytes. */
  void (*setup)(void* ctx, const struct osu_options* o, int rank, int ranks);
  /* Buffers for `size` bytes, results cleared. */
  void (*prepare)(void* ctx, long size);
  int (*blocking)(void* ctx, long size);
  int (*begin)(void* ctx, long size, MPI_Request* req);
  int (*init)(void* ctx, long size, MPI_Request* req); /* NULL: no persistent form */
  /* Runs one checked operation through osu_coll_once and aborts through
   * osu_fail on a wrong result. */
  void (*check)(void* ctx, long size, struct osu_coll_state* s);
};

struct osu_coll_state {
  const struct osu_coll* c;
  enum osu_form form;
  long size;
  MPI_Request req;
#if OSU_HAVE_QUEUE
  MPI_Queue queue;
#endif
};

static inline void osu_mpi_ok(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  osu_fail("%s failed: %s", what, msg);
}

/* Begins one operation (queued: enqueues its start and its wait). */
static inline void osu_coll_begin(struct osu_coll_state* s) {
  switch (s->form) {
    case OSU_BLOCKING:
      osu_mpi_ok(s->c->blocking(s->c->ctx, s->size), "blocking call");
      break;
    case OSU_NONBLOCKING:
      osu_mpi_ok(s->c->begin(s->c->ctx, s->size, &s->req), "begin");
      break;
    case OSU_PERSISTENT:
      osu_mpi_ok(MPI_Start(&s->req), "MPI_Start");
      break;
    case OSU_QUEUED:
#if OSU_HAVE_QUEUE
      osu_mpi_ok(MPI_Enqueue_start(&s->queue, &s->req), "MPI_Enqueue_start");
      osu_mpi_ok(MPI_Enqueue_wait(&s->queue, &s->req, MPI_STATUS_IGNORE), "MPI_Enqueue_wait");
#endif
      break;
  }
}

static inline void osu_coll_complete(struct osu_coll_state* s) {
  if (s->form == OSU_NONBLOCKING || s->form == OSU_PERSISTENT)
    osu_mpi_ok(MPI_Wait(&s->req, MPI_STATUS_IGNORE), "MPI_Wait");
#if OSU_HAVE_QUEUE
  if (s->form == OSU_QUEUED) osu_mpi_ok(MPI_Queue_fence(&s->queue), "MPI_Queue_fence");
#endif
}

static inline void osu_coll_once(struct osu_coll_state* s) {
  osu_coll_begin(s);
  osu_coll_complete(s);
}

/* Creates (and for queued, matches) the request of this size. Returns 0,
 * or 1 with the reason printed when this MPI cannot run the form here. */
static inline int osu_coll_setup(struct osu_coll_state* s, int rank) {
  s->req = MPI_REQUEST_NULL;
  if (s->form != OSU_PERSISTENT && s->form != OSU_QUEUED) return 0;
  int rc = s->c->init(s->c->ctx, s->size, &s->req);
  if (rc == MPI_SUCCESS && s->form == OSU_QUEUED) {
#if OSU_HAVE_QUEUE
    rc = MPI_Match(&s->req);
#endif
  }
  int ok = rc == MPI_SUCCESS, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_ok) return 0;
  if (rank == 0) {
    char msg[MPI_MAX_ERROR_STRING] = "failed on another rank";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, msg, &len);
    printf("# %s form stops at size %ld: %s\n", osu_form_names[s->form], s->size, msg);
  }
  if (s->req != MPI_REQUEST_NULL) MPI_Request_free(&s->req);
  return 1;
}

/* Where the time of a timed loop went (microseconds per iteration), see
 * the header's "# in-loop" line. */
struct osu_loop_split {
  double compute, start, wait;
  double done_share; /* -1: not known (not nicq's persistent form) */
  double wait_done;  /* mean wait of the iterations found done (-1: none) */
};

/* Whether the started operation has finished, read without progress
 * (nicq's persistent form only; -1 where this MPI cannot tell). */
static inline int osu_coll_work_done(struct osu_coll_state* s) {
#ifdef NICQ_MPI
  int flag = 0;
  if (s->form == OSU_PERSISTENT && NICQX_Request_work_done(s->req, &flag) == MPI_SUCCESS)
    return flag;
#else
  (void)s;
#endif
  return -1;
}

/* Mean microseconds per iteration of begin [compute] complete; with
 * `split`, also where the time went inside the loop. */
static inline double osu_coll_time_split(struct osu_coll_state* s, int iters, int warmup,
                                         double compute_us, struct osu_loop_split* split) {
  double t0 = 0, in_start = 0, in_compute = 0, in_wait = 0, in_wait_done = 0;
  int done = 0, known = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < iters + warmup; ++i) {
    if (i == warmup) t0 = MPI_Wtime(), in_start = in_compute = in_wait = in_wait_done = 0, done = 0;
    const double b0 = split ? MPI_Wtime() : 0;
    osu_coll_begin(s);
    const double c0 = split ? MPI_Wtime() : 0;
    if (compute_us > 0) osu_compute_us(compute_us);
    if (split) {
      const double w0 = MPI_Wtime();
      const int d = compute_us > 0 ? osu_coll_work_done(s) : -1;
      known &= d >= 0;
      done += d > 0;
      osu_coll_complete(s);
      const double w1 = MPI_Wtime();
      in_start += c0 - b0;
      in_compute += w0 - c0;
      in_wait += w1 - w0;
      if (d > 0) in_wait_done += w1 - w0;
    } else {
      osu_coll_complete(s);
    }
  }
  const double t = (MPI_Wtime() - t0) * 1e6 / iters;
  if (split) {
    split->start = in_start * 1e6 / iters;
    split->compute = in_compute * 1e6 / iters;
    split->wait = in_wait * 1e6 / iters;
    split->done_share = known ? 100.0 * done / iters : -1;
    split->wait_done = done > 0 ? in_wait_done * 1e6 / done : -1;
  }
  return t;
}

static inline double osu_coll_time(struct osu_coll_state* s, int iters, int warmup,
                                   double compute_us) {
  return osu_coll_time_split(s, iters, warmup, compute_us, NULL);
}

static inline double osu_compute_time(int iters, double compute_us) {
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) osu_compute_us(compute_us);
  return (MPI_Wtime() - t0) * 1e6 / iters;
}

/* Prints `value`'s average over the ranks, and with -f its min, max and
 * the iterations. */
static inline void osu_coll_print_full(const struct osu_options* o, double value, int iters,
                                       int rank) {
  double min, max, avg;
  osu_stats(MPI_COMM_WORLD, value, &min, &max, &avg);
  if (rank != 0) return;
  if (o->full) printf("%16.2f%16.2f%12d", min, max, iters);
}

/* Takes "NAME value" (or "NAME=value") out of argv (the shared option
 * parser does not know it); the value's text, or NULL when absent. */
static inline const char* osu_take_option(int* argc, char** argv, const char* name) {
  const char* value = NULL;
  const size_t len = strlen(name);
  for (int i = 1; i < *argc; ++i) {
    int used = 0;
    if (strcmp(argv[i], name) == 0 && i + 1 < *argc) {
      value = argv[i + 1];
      used = 2;
    } else if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=') {
      value = argv[i] + len + 1;
      used = 1;
    }
    if (!used) continue;
    for (int j = i; j + used <= *argc; ++j) argv[j] = argv[j + used];
    *argc -= used;
    --i;
  }
  return value;
}

static inline int osu_coll_main(int argc, char** argv, const struct osu_coll* c, long min, long max,
                                int accept) {
  MPI_Init(&argc, &argv);
  const char* compute_rank_arg = osu_take_option(&argc, argv, "--compute-rank");
  const char* compute_scale_arg = osu_take_option(&argc, argv, "--compute-scale");
  const int compute_rank = compute_rank_arg ? atoi(compute_rank_arg) : -1;
  const double compute_scale = compute_scale_arg ? atof(compute_scale_arg) : 1.0;
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  struct osu_options o;
  if (osu_parse_with(argc, argv, &o, accept, min, max) != 0) {
    MPI_Finalize();
    return 1;
  }
  /* Sizes below the program's smallest (one float for allreduce) mean
   * nothing; a program with no sizes (barrier) has one row, size 0. */
  if (o.min_size < min) o.min_size = min;
  if (compute_rank >= 0) {
    if (!(accept & OSU_ACCEPT_OVERLAP) || compute_rank >= ranks) {
      if (rank == 0)
        fprintf(stderr, "--compute-rank %d: no such rank or no overlap mode\n", compute_rank);
      MPI_Finalize();
      return 1;
    }
    o.overlap = 1;
  }
  if (max == 0) o.min_size = o.max_size = 0;
  c->setup(c->ctx, &o, rank, ranks);
  struct osu_coll_state s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.form = o.form;
  if (rank == 0) {
    osu_header(c->title, &o, ranks);
    printf("# form: %s%s\n", osu_form_names[o.form],
           o.overlap ? (o.sleep_compute ? ", overlap (compute sleeps)" : ", overlap") : "");
    if (compute_rank >= 0)
      printf("# only rank %d computes; its overall, compute and overlap\n", compute_rank);
    if (compute_scale != 1.0)
      printf("# compute = %.2f x the largest pure latency\n", compute_scale);
  }
  const char* unsupported = NULL;
  if (o.overlap && o.form == OSU_BLOCKING) unsupported = "overlap needs a nonblocking form";
  if (o.form == OSU_PERSISTENT && (!OSU_HAVE_PERSISTENT_COLL || !c->init))
    unsupported = "form not supported by this MPI";
  if (o.form == OSU_QUEUED && (!OSU_HAVE_QUEUE || !c->init))
    unsupported = "form not supported by this MPI";
  if (unsupported) {
    if (rank == 0) printf("# %s\n", unsupported);
    MPI_Finalize();
    return 0;
  }
#if OSU_HAVE_QUEUE
  if (o.form == OSU_QUEUED)
    osu_mpi_ok(MPI_Queue_init(&s.queue, MPI_QUEUE_TYPE_DEFAULT, NULL), "MPI_Queue_init");
#endif
  if (o.overlap) osu_compute_calibrate();
  osu_compute_sleeps = o.sleep_compute;
  if (rank == 0) {
    if (o.overlap)
      printf("# %-10s%16s%16s%16s%12s%s", "Size", "Overall(us)", "Compute(us)", "Pure Comm.(us)",
             "Overlap(%)", compute_rank >= 0 ? "        Wait(us)" : "");
    else
      printf("# %-10s%18s", "Size", "Avg Latency(us)");
    osu_full_columns(&o, "us");
    printf("\n");
    fflush(stdout);
  }
  struct osu_progress progress;
  osu_progress_init(&progress, &o, rank);
  for (long n = o.min_size; n <= o.max_size; n = osu_next_size(n)) {
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    s.size = n;
    c->prepare(c->ctx, n);
    if (osu_coll_setup(&s, rank) != 0) break;
    double pure = osu_coll_time(&s, iters, warmup, 0);
    if (!o.overlap) {
      double min, max, avg;
      osu_stats(MPI_COMM_WORLD, pure, &min, &max, &avg);
      if (rank == 0) {
        printf("%-12ld%18.2f", n, avg);
        if (o.full) printf("%16.2f%16.2f%12d", min, max, iters);
      }
    } else {
      double work = 0;
      MPI_Allreduce(&pure, &work, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      work *= compute_scale;
      const double my_work = compute_rank < 0 || rank == compute_rank ? work : 0;
      struct osu_loop_split split;
      double total = osu_coll_time_split(&s, iters, warmup, my_work, &split);
      double in_wait = split.wait;
      double compute = osu_compute_time(iters, my_work);
      double t_total, t_compute, t_pure, dummy;
      osu_stats(MPI_COMM_WORLD, compute, &dummy, &dummy, &t_compute);
      osu_stats(MPI_COMM_WORLD, pure, &dummy, &dummy, &t_pure);
      osu_stats(MPI_COMM_WORLD, total, &dummy, &dummy, &t_total);
      if (compute_rank >= 0) {
        double mine[3] = {total, compute, in_wait};
        MPI_Bcast(mine, 3, MPI_DOUBLE, compute_rank, MPI_COMM_WORLD);
        t_total = mine[0];
        t_compute = mine[1];
        in_wait = mine[2];
      }
      if (rank == 0) {
        double overlap = t_pure > 0 ? 100.0 - 100.0 * (t_total - t_compute) / t_pure : 0;
        overlap = overlap < 0 ? 0 : overlap > 100 ? 100 : overlap;
        printf("%-12ld%16.2f%16.2f%16.2f%12.2f", n, t_total, t_compute, t_pure, overlap);
        /* The computing rank's time left in complete after its compute. */
        if (compute_rank >= 0) printf("%16.2f", in_wait);
      }
      osu_coll_print_full(&o, total, iters, rank);
      /* The loop's own split, means over the ranks (done: the lowest). */
      double loop[4] = {split.compute, split.start, split.wait, total}, mean[4], done_min = 0;
      MPI_Allreduce(loop, mean, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      MPI_Allreduce(&split.done_share, &done_min, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      double wait_done_max = 0;
      MPI_Allreduce(&split.wait_done, &wait_done_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (rank == 0) {
        for (int k = 0; k < 4; ++k) mean[k] /= ranks;
        double in_loop = t_pure > 0 ? 100.0 - 100.0 * (mean[3] - mean[0]) / t_pure : 0;
        in_loop = in_loop < 0 ? 0 : in_loop > 100 ? 100 : in_loop;
        printf("\n# in-loop: compute %.2f us, start %.2f us, wait %.2f us, overlap %.2f %%",
               mean[0], mean[1], mean[2], in_loop);
        if (done_min >= 0) printf(", done %.1f %%", done_min);
        if (wait_done_max >= 0) printf(" (their wait %.2f us)", wait_done_max);
      }
    }
    if (rank == 0) {
      printf("\n");
      fflush(stdout);
    }
    c->check(c->ctx, n, &s);
    if (s.req != MPI_REQUEST_NULL) MPI_Request_free(&s.req);
    osu_progress_done(&progress, &o, n);
  }
#if OSU_HAVE_QUEUE
  if (o.form == OSU_QUEUED) MPI_Queue_free(&s.queue);
#endif
  MPI_Finalize();
  return 0;
}

#endif
