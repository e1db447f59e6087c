/* Helpers of the MPI-IO tests: a per-run file name every rank agrees on. */
#ifndef NICQ_TESTS_API_MP_FILE_UTIL_H
#define NICQ_TESTS_API_MP_FILE_UTIL_H

#include <stdlib.h>
#include <unistd.h>

#include "mp_check.h"

/* "<TMPDIR or /tmp>/nicq-<tag>-<rank 0's pid>-<n>", the same on every rank.
 * A file of that name already there was left by an earlier process with
 * the same pid (one stopped mid-test; pids come round again soon where
 * pid_max is small): rank 0 removes it, so MPI_MODE_EXCL and "missing"
 * names mean what the tests assume. */
static inline void mp_file_name(const char* tag, int n, char* out, int len) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    const char* dir = getenv("TMPDIR");
    snprintf(out, (size_t)len, "%s/nicq-%s-%ld-%d", dir && *dir ? dir : "/tmp", tag, (long)getpid(),
             n);
    unlink(out);
  }
  CHECK_OK(MPI_Bcast(out, len, MPI_CHAR, 0, MPI_COMM_WORLD));
}

static inline int mp_file_exists(const char* name) {
  return access(name, F_OK) == 0;
}

#endif
