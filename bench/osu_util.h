/* Shared by the OSU-style benchmarks: options, buffers, data checks,
 * statistics, progress lines and output format. Plain C and the MPI API
 * only, so the same sources build with nicq's mpicc, mpicc.mpich and
 * mpicc.openmpi (bench/compare.sh).
 *
 * Options (as the OSU micro-benchmarks, plus the collective forms):
 *   -m min:max   message sizes in bytes, powers of two (default 1:4194304)
 *   -i iters     timed iterations per size (default 10000; sizes > 8 KiB use
 *                iters/10, at least 10)
 *   -x warmup    untimed iterations per size (default 200; > 8 KiB: warmup/10)
 *   -f           full statistics: min, max and average over the ranks that
 *                time, and the iteration count
 *   -q           no progress lines on stderr
 *   --form F     blocking | nonblocking | persistent | queued (collectives)
 *   -t, --overlap  OSU-style overlap of communication with a compute loop
 *   -S, --sleep-compute  with -t, the compute phase sleeps instead of
 *                spinning: the host thread waits on something else (an
 *                accelerator kernel, I/O) and the cores are free, which
 *                shows whether the library progresses without the
 *                application's thread (on machines with fewer cores than
 *                ranks plus progress threads, busy compute cannot)
 *   -M, --matched  match persistent requests first (MPI_Matchall, chapter 13)
 *
 * Every line that is not a result row starts with '#'. Progress lines
 * ("# size N done, M left") go to stderr from rank 0 at most every 5 s,
 * so only runs longer than that show them; -q turns them off. Stderr is
 * usually a pipe under a launcher, so a tty test would hide them always.
 * A failed data check prints "# ERROR ..." to stderr and aborts with code 2.
 */
#ifndef NICQ_BENCH_OSU_UTIL_H
#define NICQ_BENCH_OSU_UTIL_H

#include <getopt.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define OSU_LARGE_MESSAGE 8192
#define OSU_PROGRESS_PERIOD 5.0

enum osu_form { OSU_BLOCKING, OSU_NONBLOCKING, OSU_PERSISTENT, OSU_QUEUED };
static const char* const osu_form_names[] = {"blocking", "nonblocking", "persistent", "queued"};

/* Which of the optional options a program accepts. */
#define OSU_ACCEPT_FORM 1
#define OSU_ACCEPT_OVERLAP 2
#define OSU_ACCEPT_MATCHED 4

struct osu_options {
  long min_size, max_size;
  int iters, warmup;
  int full, quiet, overlap, matched, sleep_compute;
  enum osu_form form;
};

static inline void osu_usage(const char* prog, int accept) {
  fprintf(stderr, "usage: %s [-m min:max] [-i iterations] [-x warmup] [-f] [-q]%s%s%s\n", prog,
          accept & OSU_ACCEPT_FORM ? " [--form blocking|nonblocking|persistent|queued]" : "",
          accept & OSU_ACCEPT_OVERLAP ? " [-t|--overlap [-S|--sleep-compute]]" : "",
          accept & OSU_ACCEPT_MATCHED ? " [-M|--matched]" : "");
}

/* Returns 0 on success; prints usage and returns 1 on a bad option.
 * min/max are the program's default sizes. */
static inline int osu_parse_with(int argc, char** argv, struct osu_options* o, int accept, long min,
                                 long max) {
  static const struct option longopts[] = {{"form", required_argument, NULL, 'F'},
                                           {"overlap", no_argument, NULL, 't'},
                                           {"matched", no_argument, NULL, 'M'},
                                           {"full", no_argument, NULL, 'f'},
                                           {"sleep-compute", no_argument, NULL, 'S'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof *o);
  o->min_size = min;
  o->max_size = max;
  o->iters = 10000;
  o->warmup = 200;
  o->form = OSU_BLOCKING;
  int c, bad = 0;
  while (!bad && (c = getopt_long(argc, argv, "m:i:x:fqtSMh", longopts, NULL)) != -1) {
    switch (c) {
      case 'm': {
        char* colon = strchr(optarg, ':');
        if (colon) {
          o->min_size = colon == optarg ? o->min_size : atol(optarg);
          o->max_size = colon[1] ? atol(colon + 1) : o->max_size;
        } else {
          o->max_size = atol(optarg);
        }
        break;
      }
      case 'i':
        o->iters = atoi(optarg);
        break;
      case 'x':
        o->warmup = atoi(optarg);
        break;
      case 'f':
        o->full = 1;
        break;
      case 'q':
        o->quiet = 1;
        break;
      case 't':
        o->overlap = 1;
        bad = !(accept & OSU_ACCEPT_OVERLAP);
        break;
      case 'S':
        o->sleep_compute = 1;
        bad = !(accept & OSU_ACCEPT_OVERLAP);
        break;
      case 'M':
        o->matched = 1;
        bad = !(accept & OSU_ACCEPT_MATCHED);
        break;
      case 'F': {
        int found = 0;
        for (int f = 0; f < 4; ++f)
          if (strcmp(optarg, osu_form_names[f]) == 0) {
            o->form = (enum osu_form)f;
            found = 1;
          }
        bad = !found || !(accept & OSU_ACCEPT_FORM);
        break;
      }
      default:
        bad = 1;
    }
  }
  if (bad || o->min_size < 0 || o->max_size < o->min_size || o->iters < 1 || o->warmup < 0) {
    osu_usage(argv[0], accept);
    return 1;
  }
  return 0;
}

static inline int osu_parse(int argc, char** argv, struct osu_options* o) {
  return osu_parse_with(argc, argv, o, 0, 1, 4L << 20);
}

static inline int osu_iters(const struct osu_options* o, long size) {
  if (size <= OSU_LARGE_MESSAGE) return o->iters;
  return o->iters / 10 > 10 ? o->iters / 10 : 10;
}

static inline int osu_warmup(const struct osu_options* o, long size) {
  return size <= OSU_LARGE_MESSAGE ? o->warmup : o->warmup / 10;
}

/* The next size of the sweep: 0, 1, 2, 4, ... */
static inline long osu_next_size(long n) {
  return n ? n * 2 : 1;
}

static inline int osu_sizes_left(const struct osu_options* o, long done) {
  int left = 0;
  for (long n = osu_next_size(done); n <= o->max_size; n = osu_next_size(n)) ++left;
  return left;
}

/* Page-aligned and touched, so first-touch faults stay out of the timing. */
static inline char* osu_buffer(long size, int fill) {
  void* p = NULL;
  if (posix_memalign(&p, 4096, (size_t)(size > 0 ? size : 1)) != 0) {
    fprintf(stderr, "cannot allocate %ld bytes\n", size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(p, fill, (size_t)(size > 0 ? size : 1));
  return (char*)p;
}

/* A byte that differs per sender and per size, so a buffer left over from
 * an earlier size or written by the wrong peer fails the check. */
static inline char osu_pattern(int rank, long size) {
  long lg = 0;
  while ((1L << lg) < size) ++lg;
  return (char)('A' + (rank * 7 + lg) % 26);
}

static inline void osu_fail(const char* fmt, ...) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "# ERROR rank %d: ", rank);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

/* Every byte of buf[0..n) must be `expected`. */
static inline void osu_check_bytes(const char* what, const char* buf, long n, char expected) {
  for (long i = 0; i < n; ++i)
    if (buf[i] != expected)
      osu_fail("%s: byte %ld of %ld is 0x%02x, expected 0x%02x", what, i, n, (unsigned char)buf[i],
               (unsigned char)expected);
}

/* Zero-byte exchange between ranks 0 and 1: a barrier for two without
 * needing MPI_Barrier. */
static inline void osu_sync_pair(int rank) {
  char dummy = 0;
  if (rank == 0) {
    MPI_Send(&dummy, 0, MPI_CHAR, 1, 999, MPI_COMM_WORLD);
    MPI_Recv(&dummy, 0, MPI_CHAR, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(&dummy, 0, MPI_CHAR, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&dummy, 0, MPI_CHAR, 0, 999, MPI_COMM_WORLD);
  }
}

static inline void osu_library_line(void) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  char* nl = strchr(version, '\n');
  if (nl) *nl = '\0';
  printf("# library: %s\n", version);
}

/* "# <title>", the library and the rank count: the header every program
 * prints before its column line. */
static inline void osu_header(const char* title, const struct osu_options* o, int ranks) {
  printf("# nicq OSU-style %s\n", title);
  osu_library_line();
  printf("# ranks: %d, iterations: %d, warmup: %d\n", ranks, o->iters, o->warmup);
}

/* The column header of -f: appended to the program's own columns. */
static inline void osu_full_columns(const struct osu_options* o, const char* unit) {
  char min[32], max[32];
  snprintf(min, sizeof min, "Min(%s)", unit);
  snprintf(max, sizeof max, "Max(%s)", unit);
  if (o->full) printf("%16s%16s%12s", min, max, "Iterations");
}

/* Min, max and mean of `value` over `comm`; valid on its rank 0. Outside
 * the timed loops only. */
static inline void osu_stats(MPI_Comm comm, double value, double* min, double* max, double* avg) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  double sum = 0;
  MPI_Reduce(&value, min, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
  MPI_Reduce(&value, max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
  *avg = sum / n;
}

/* One result row, printed by rank 0 of `comm`: the mean of `value` over
 * comm, and with -f its min, max and the iterations. Every rank of comm
 * calls it (outside the timed loop). */
static inline void osu_print_row(const struct osu_options* o, MPI_Comm comm, long size,
                                 double value, int iters) {
  double min, max, avg;
  osu_stats(comm, value, &min, &max, &avg);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return;
  printf("%-12ld%18.2f", size, avg);
  if (o->full) printf("%16.2f%16.2f%12d", min, max, iters);
  printf("\n");
  fflush(stdout);
}

/* Ranks 0 and 1 of world, the two that time a point-to-point benchmark;
 * the others get a communicator of their own and idle. */
static inline MPI_Comm osu_pair_comm(int rank) {
  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : 1, rank, &pair);
  return pair;
}

/* The common start of a point-to-point benchmark: MPI_Init, the options
 * (extra flags in `accept`, sizes min..max by default) and at least 2 ranks.
 * Returns 0 with *rank and *size set; otherwise MPI is finalized and the caller
 * returns 1. */
static inline int osu_p2p_start(int* argc, char*** argv, const char* name, int accept, long min,
                                long max, struct osu_options* o, int* rank, int* size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  if (osu_parse_with(*argc, *argv, o, accept, min, max) != 0 || *size < 2) {
    if (*rank == 0 && *size < 2) fprintf(stderr, "%s needs 2 ranks\n", name);
    MPI_Finalize();
    return 1;
  }
  return 0;
}

/* ---- the compute loop of the overlap figures -------------------------- */

static volatile double osu_compute_sink;
static double osu_loops_per_us = 100;
static int osu_compute_sleeps; /* -S: the compute phase sleeps */

/* A dependent multiply-add chain: no memory traffic, no MPI call, and the
 * volatile sink keeps the compiler from dropping it. */
static inline void osu_compute_loops(long n) {
  double a = osu_compute_sink + 1.0;
  for (long i = 0; i < n; ++i) a = a * 0.9999999 + 1e-7;
  osu_compute_sink = a;
}

/* Loops per microsecond: the fastest of several runs, so a preemption
 * during calibration does not shorten every later compute phase. */
static inline void osu_compute_calibrate(void) {
  const long n = 2000000;
  double best = 1e30;
  for (int k = 0; k < 5; ++k) {
    double t0 = MPI_Wtime();
    osu_compute_loops(n);
    double t = MPI_Wtime() - t0;
    if (t < best) best = t;
  }
  if (best > 0) osu_loops_per_us = n / (best * 1e6);
}

static inline void osu_compute_us(double us) {
  if (osu_compute_sleeps) {
    const long long ns = (long long)(us * 1e3);
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    return;
  }
  osu_compute_loops((long)(us * osu_loops_per_us));
}

/* Rate-limited progress on stderr, rank 0 only. */
struct osu_progress {
  double start, last;
  int enabled;
};

static inline void osu_progress_init(struct osu_progress* p, const struct osu_options* o,
                                     int rank) {
  p->start = p->last = MPI_Wtime();
  p->enabled = rank == 0 && !o->quiet;
}

static inline void osu_progress_done(struct osu_progress* p, const struct osu_options* o,
                                     long size) {
  if (!p->enabled) return;
  double now = MPI_Wtime();
  if (now - p->last < OSU_PROGRESS_PERIOD) return;
  p->last = now;
  fprintf(stderr, "# size %ld done, %d left, %.0f s so far\n", size, osu_sizes_left(o, size),
          now - p->start);
  fflush(stderr);
}

#endif
