/* OSU-style MPI_Barrier latency (and overlap with -t) on all ranks, in the
 * form chosen with --form blocking|nonblocking|persistent|queued. One row,
 * size 0, so the output parses like the other collectives'.
 *
 * The checked run: every rank but 0 passes one barrier and then sends
 * rank 0 a token; rank 0 first lets the others run for 20 ms, probes, and
 * must find no token (none can have left a barrier rank 0 has not
 * entered), then passes the barrier and receives all tokens. The pause
 * only gives a broken barrier the chance to show; no time is asserted. */
#include <time.h>

#include "osu_coll.h"

#define TOKEN_TAG 4242

struct barrier_ctx {
  int rank, ranks;
};

static void setup(void* p, const struct osu_options* o, int rank, int ranks) {
  struct barrier_ctx* b = p;
  (void)o;
  b->rank = rank;
  b->ranks = ranks;
}

static void prepare(void* p, long size) {
  (void)p;
  (void)size;
}

static int blocking(void* p, long size) {
  (void)p;
  (void)size;
  return MPI_Barrier(MPI_COMM_WORLD);
}

static int begin(void* p, long size, MPI_Request* req) {
  (void)p;
  (void)size;
  return MPI_Ibarrier(MPI_COMM_WORLD, req);
}

#if OSU_HAVE_PERSISTENT_COLL
static int init(void* p, long size, MPI_Request* req) {
  (void)p;
  (void)size;
  return MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, req);
}
#endif

static void check(void* p, long size, struct osu_coll_state* s) {
  struct barrier_ctx* b = p;
  (void)size;
  char token = 't';
  if (b->rank != 0) {
    osu_coll_once(s);
    osu_mpi_ok(MPI_Send(&token, 1, MPI_CHAR, 0, TOKEN_TAG, MPI_COMM_WORLD), "token send");
    return;
  }
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  int early = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, TOKEN_TAG, MPI_COMM_WORLD, &early, MPI_STATUS_IGNORE);
  if (early) osu_fail("a rank left the barrier before rank 0 entered it");
  osu_coll_once(s);
  for (int r = 1; r < b->ranks; ++r)
    osu_mpi_ok(
        MPI_Recv(&token, 1, MPI_CHAR, MPI_ANY_SOURCE, TOKEN_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "token receive");
}

int main(int argc, char** argv) {
  /* static: its buffers stay reachable until exit (LeakSanitizer) */
  static struct barrier_ctx b;
  struct osu_coll c = {"Barrier Latency Test", &b, setup, prepare, blocking, begin, NULL, check};
#if OSU_HAVE_PERSISTENT_COLL
  c.init = init;
#endif
  return osu_coll_main(argc, argv, &c, 0, 0, OSU_ACCEPT_FORM | OSU_ACCEPT_OVERLAP);
}
