/* OSU-style MPI_Allreduce latency (and overlap with -t) on all ranks, in
 * the form chosen with --form blocking|nonblocking|persistent|queued.
 * Floats summed, as osu_allreduce; sizes 4 B to 4 MiB by default. Each
 * size ends with a checked run: the result is cleared, one allreduce runs
 * in the same form, and every element must be the exact sum (small
 * integers, so float sums are exact). See osu_coll.h for the forms. */
#include "osu_coll.h"

struct allreduce_ctx {
  float* send;
  float* recv;
  int rank, ranks;
};

/* Contributions differ per rank, element and size, so a stale result of
 * an earlier size or a missing contribution is seen. */
static float contribution(int rank, long i, long size) {
  return (float)(rank + 1 + i % 13 + (size / 4) % 7);
}

static void prepare(void* p, long size) {
  struct allreduce_ctx* a = p;
  for (long i = 0; i < size / 4; ++i) {
    a->send[i] = contribution(a->rank, i, size);
    a->recv[i] = -1;
  }
}

static int blocking(void* p, long size) {
  struct allreduce_ctx* a = p;
  return MPI_Allreduce(a->send, a->recv, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static int begin(void* p, long size, MPI_Request* req) {
  struct allreduce_ctx* a = p;
  return MPI_Iallreduce(a->send, a->recv, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, req);
}

#if OSU_HAVE_PERSISTENT_COLL
static int init(void* p, long size, MPI_Request* req) {
  struct allreduce_ctx* a = p;
  return MPI_Allreduce_init(a->send, a->recv, (int)(size / 4), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                            MPI_INFO_NULL, req);
}
#endif

static void check(void* p, long size, struct osu_coll_state* s) {
  struct allreduce_ctx* a = p;
  const long count = size / 4;
  for (long i = 0; i < count; ++i) a->recv[i] = -1;
  osu_coll_once(s);
  for (long i = 0; i < count; ++i) {
    float expected = 0;
    for (int r = 0; r < a->ranks; ++r) expected += contribution(r, i, size);
    if (a->recv[i] != expected)
      osu_fail("allreduce of %ld floats: element %ld is %g, expected %g", count, i,
               (double)a->recv[i], (double)expected);
  }
}

static void setup(void* p, const struct osu_options* o, int rank, int ranks) {
  struct allreduce_ctx* a = p;
  long max = o->max_size < 4 ? 4 : o->max_size;
  a->send = (float*)osu_buffer(max, 0);
  a->recv = (float*)osu_buffer(max, 0);
  a->rank = rank;
  a->ranks = ranks;
}

int main(int argc, char** argv) {
  /* static: its buffers stay reachable until exit (LeakSanitizer) */
  static struct allreduce_ctx a;
  struct osu_coll c = {"Allreduce Latency Test", &a, setup, prepare, blocking, begin, NULL, check};
#if OSU_HAVE_PERSISTENT_COLL
  c.init = init;
#endif
  return osu_coll_main(argc, argv, &c, 4, 4L << 20, OSU_ACCEPT_FORM | OSU_ACCEPT_OVERLAP);
}
