/* A communicator whose same-node collective area one rank cannot map (its
 * shm_open of the area fails, as when it has no descriptor left) runs its
 * collectives on the point-to-point schedules instead, with the right data,
 * on every rank; the area's absence is remembered, and a later communicator
 * whose area maps uses it again. The failure is injected by this program's
 * own shm_open, which takes the library's place for the areas' names
 * ("/nicq-coll-") on the last rank while `g_refuse` is set. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>

#include "coll_check.h"

static int g_refuse;
static int g_refused;

int shm_open(const char* name, int oflag, mode_t mode) {
  static int (*real)(const char*, int, mode_t);
  if (g_refuse && strncmp(name, "/nicq-coll-", 11) == 0) {
    ++g_refused;
    errno = EMFILE;
    return -1;
  }
  if (!real) real = (int (*)(const char*, int, mode_t))dlsym(RTLD_NEXT, "shm_open");
  return real(name, oflag, mode);
}

/* Barrier, bcast (small and large), allreduce (blocking, nonblocking and
 * persistent) and reduce on `comm`, data checked on every rank. */
static void Collectives(MPI_Comm comm, int round) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  CHECK_OK(MPI_Barrier(comm));
  int small = rank == 0 ? 1000 + round : -1;
  CHECK_OK(MPI_Bcast(&small, 1, MPI_INT, 0, comm));
  CHECK(small == 1000 + round, "round %d: bcast got %d", round, small);
  enum { kLarge = 1 << 16 };
  static int large[kLarge];
  for (int i = 0; i < kLarge; ++i) large[i] = rank == p - 1 ? i * 3 + round : -1;
  CHECK_OK(MPI_Bcast(large, kLarge, MPI_INT, p - 1, comm));
  for (int i = 0; i < kLarge; ++i)
    CHECK(large[i] == i * 3 + round, "round %d: large bcast [%d] = %d", round, i, large[i]);
  long long mine[3] = {rank + 1, rank * round, 7}, sum[3] = {0, 0, 0};
  CHECK_OK(MPI_Allreduce(mine, sum, 3, MPI_LONG_LONG, MPI_SUM, comm));
  CHECK(sum[0] == (long long)p * (p + 1) / 2 && sum[1] == (long long)round * p * (p - 1) / 2 &&
            sum[2] == 7LL * p,
        "round %d: allreduce %lld %lld %lld", round, sum[0], sum[1], sum[2]);
  /* The nonblocking and persistent forms, which look the area up too. */
  int one = 1, count = 0;
  MPI_Request req;
  CHECK_OK(MPI_Iallreduce(&one, &count, 1, MPI_INT, MPI_SUM, comm, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(count == p, "round %d: iallreduce %d", round, count);
  int value = 0, total = 0;
  CHECK_OK(MPI_Allreduce_init(&value, &total, 1, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req));
  for (int epoch = 1; epoch <= 3; ++epoch) {
    value = rank * epoch + round;
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(total == epoch * p * (p - 1) / 2 + round * p, "round %d epoch %d: persistent %d", round,
          epoch, total);
  }
  CHECK_OK(MPI_Request_free(&req));
  double d = rank, dmax = -1;
  CHECK_OK(MPI_Reduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, 0, comm));
  if (rank == 0) CHECK(dmax == p - 1, "round %d: reduce max %g", round, dmax);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  /* The last rank refuses the new communicator's area. */
  MPI_Comm refused;
  g_refuse = g_rank == p - 1;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &refused));
  MPI_Comm_set_errhandler(refused, MPI_ERRORS_RETURN);
  for (int round = 1; round <= 3; ++round) Collectives(refused, round);
  g_refuse = 0;
  /* Tried once, never again: a later call does not retry the mapping. */
  const int refused_before = g_refused;
  Collectives(refused, 4);
  CHECK(g_refused == refused_before, "the area was tried again");
  int tried = g_refused, any = 0;
  CHECK_OK(MPI_Allreduce(&tried, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  CHECK(any > 0, "no rank was refused an area: the injection did not run");

  /* A fresh communicator maps its area and runs on it. */
  MPI_Comm fresh;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &fresh));
  Collectives(fresh, 5);
  CHECK_OK(MPI_Comm_free(&fresh));
  CHECK_OK(MPI_Comm_free(&refused));
  if (g_rank == 0) printf("NODE-AREA-REFUSED-OK: %d ranks\n", p);
  MPI_Finalize();
  return 0;
}
