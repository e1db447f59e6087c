/* OSU-style MPI_Reduce latency (and overlap with -t) to root 0, in the form
 * chosen with --form blocking|nonblocking|persistent|queued. MPI_CHAR
 * summed, as the standard micro-benchmarks reduce by default; sizes 1 B to
 * 1 MiB by default. Each size ends with a checked run: the root's result is
 * cleared, one reduce runs in the same form, and every element must be the
 * exact sum (small values: no char overflow on up to 16 ranks). */
#include "osu_coll.h"

struct reduce_ctx {
  char* send;
  char* recv;
  int rank, ranks;
};

/* Differs per rank, element and size: a stale or missing contribution shows. */
static char contribution(int rank, long i, long size) {
  return (char)((rank + i % 5 + size % 3) % 7);
}

static void prepare(void* p, long size) {
  struct reduce_ctx* a = p;
  for (long i = 0; i < size; ++i) {
    a->send[i] = contribution(a->rank, i, size);
    a->recv[i] = -1;
  }
}

static int blocking(void* p, long size) {
  struct reduce_ctx* a = p;
  return MPI_Reduce(a->send, a->recv, (int)size, MPI_CHAR, MPI_SUM, 0, MPI_COMM_WORLD);
}

static int begin(void* p, long size, MPI_Request* req) {
  struct reduce_ctx* a = p;
  return MPI_Ireduce(a->send, a->recv, (int)size, MPI_CHAR, MPI_SUM, 0, MPI_COMM_WORLD, req);
}

#if OSU_HAVE_PERSISTENT_COLL
static int init(void* p, long size, MPI_Request* req) {
  struct reduce_ctx* a = p;
  return MPI_Reduce_init(a->send, a->recv, (int)size, MPI_CHAR, MPI_SUM, 0, MPI_COMM_WORLD,
                         MPI_INFO_NULL, req);
}
#endif

static void check(void* p, long size, struct osu_coll_state* s) {
  struct reduce_ctx* a = p;
  for (long i = 0; i < size; ++i) a->recv[i] = -1;
  osu_coll_once(s);
  if (a->rank != 0) return;
  for (long i = 0; i < size; ++i) {
    int expected = 0;
    for (int r = 0; r < a->ranks; ++r) expected += contribution(r, i, size);
    if (a->recv[i] != (char)expected)
      osu_fail("reduce of %ld chars: element %ld is %d, expected %d", size, i, a->recv[i],
               expected);
  }
}

static void setup(void* p, const struct osu_options* o, int rank, int ranks) {
  struct reduce_ctx* a = p;
  long max = o->max_size < 1 ? 1 : o->max_size;
  a->send = (char*)osu_buffer(max, 0);
  a->recv = (char*)osu_buffer(max, 0);
  a->rank = rank;
  a->ranks = ranks;
}

int main(int argc, char** argv) {
  /* static: its buffers stay reachable until exit (LeakSanitizer) */
  static struct reduce_ctx a;
  struct osu_coll c = {"Reduce Latency Test", &a, setup, prepare, blocking, begin, NULL, check};
#if OSU_HAVE_PERSISTENT_COLL
  c.init = init;
#endif
  return osu_coll_main(argc, argv, &c, 1, 1L << 20, OSU_ACCEPT_FORM | OSU_ACCEPT_OVERLAP);
}
