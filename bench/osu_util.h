/* Shared by the OSU-style benchmarks: options, buffers, output format.
 * Plain C and the MPI API only, so the same sources build with nicq's
 * mpicc, mpicc.mpich and mpicc.openmpi (bench/compare.sh).
 *
 * Options (as OSU micro-benchmarks):
 *   -m min:max   message sizes in bytes, powers of two (default 1:4194304)
 *   -i iters     timed iterations per size (default 10000; sizes > 8 KiB use
 *                iters/10, at least 10)
 *   -x warmup    untimed iterations per size (default 200; > 8 KiB: warmup/10)
 */
#ifndef NICQ_BENCH_OSU_UTIL_H
#define NICQ_BENCH_OSU_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OSU_LARGE_MESSAGE 8192

struct osu_options {
  long min_size, max_size;
  int iters, warmup;
};

static void osu_usage(const char* prog) {
  fprintf(stderr, "usage: %s [-m min:max] [-i iterations] [-x warmup]\n", prog);
}

/* Returns 0 on success; prints usage and returns 1 on a bad option. */
static int osu_parse(int argc, char** argv, struct osu_options* o) {
  o->min_size = 1;
  o->max_size = 4L << 20;
  o->iters = 10000;
  o->warmup = 200;
  int c;
  while ((c = getopt(argc, argv, "m:i:x:h")) != -1) {
    switch (c) {
      case 'm': {
        char* colon = strchr(optarg, ':');
        if (colon) {
          o->min_size = colon == optarg ? 1 : atol(optarg);
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
      default:
        osu_usage(argv[0]);
        return 1;
    }
  }
  if (o->min_size < 0 || o->max_size < o->min_size || o->iters < 1 || o->warmup < 0) {
    osu_usage(argv[0]);
    return 1;
  }
  return 0;
}

static int osu_iters(const struct osu_options* o, long size) {
  if (size <= OSU_LARGE_MESSAGE) return o->iters;
  return o->iters / 10 > 10 ? o->iters / 10 : 10;
}

static int osu_warmup(const struct osu_options* o, long size) {
  return size <= OSU_LARGE_MESSAGE ? o->warmup : o->warmup / 10;
}

/* Page-aligned and touched, so first-touch faults stay out of the timing. */
static char* osu_buffer(long size, int fill) {
  void* p = NULL;
  if (posix_memalign(&p, 4096, (size_t)(size > 0 ? size : 1)) != 0) {
    fprintf(stderr, "cannot allocate %ld bytes\n", size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(p, fill, (size_t)(size > 0 ? size : 1));
  return (char*)p;
}

/* Zero-byte exchange between ranks 0 and 1: a barrier for two without
 * needing MPI_Barrier. */
static void osu_sync_pair(int rank) {
  char dummy = 0;
  if (rank == 0) {
    MPI_Send(&dummy, 0, MPI_CHAR, 1, 999, MPI_COMM_WORLD);
    MPI_Recv(&dummy, 0, MPI_CHAR, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(&dummy, 0, MPI_CHAR, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&dummy, 0, MPI_CHAR, 0, 999, MPI_COMM_WORLD);
  }
}

static void osu_library_line(void) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  char* nl = strchr(version, '\n');
  if (nl) *nl = '\0';
  printf("# library: %s\n", version);
}

#endif
