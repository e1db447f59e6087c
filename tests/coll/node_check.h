/* Shared data of the same-node area tests (mp_node_persistent.c,
 * mp_node_nonblocking.c): inputs whose sums are exact, their checks, and
 * the every-rank-has-the-same-bits check. The including file sets `rank`
 * and `p` after MPI_Init. */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "coll_check.h"

static int rank, p;

static const int kCounts[] = {1, 8192, 131072 + 3}; /* doubles: 8 B, 64 KiB, 1 MiB + 3 */

/* Input element i of rank r for call (or start) s: small integers, so sums are exact. */
static double In(int r, long i, int s) {
  return (double)((r * 7 + i * 3 + s * 5) % 23 + (r == (int)(i % p)));
}
static double Sum(long i, int s) {
  double v = 0;
  for (int r = 0; r < p; ++r) v += In(r, i, s);
  return v;
}
static void Fill(double* buf, long n, int s) {
  for (long i = 0; i < n; ++i) buf[i] = In(rank, i, s);
}
static void CheckSum(const double* out, long n, int s, const char* what) {
  for (long i = 0; i < n; ++i)
    CHECK(out[i] == Sum(i, s), "%s count %ld call %d: [%ld] = %g, expected %g", what, n, s, i,
          out[i], Sum(i, s));
}

/* Every rank holds the same bytes in buf (compared with rank 0's). */
static void CheckSameBits(const void* buf, size_t bytes, const char* what) {
  void* zero = malloc(bytes);
  if (rank == 0) memcpy(zero, buf, bytes);
  CHECK_OK(MPI_Bcast(zero, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
  CHECK(memcmp(zero, buf, bytes) == 0, "%s: rank %d's result differs from rank 0's bits", what,
        rank);
  free(zero);
}
