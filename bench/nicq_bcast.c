/* OSU-style MPI_Bcast latency (and overlap with -t) from root 0 on all
 * ranks, in the form chosen with --form blocking|nonblocking|persistent|
 * queued; bytes, 1 B to 1 MiB by default as osu_bcast. Each size ends with
 * a checked run: the non-roots clear their buffer, one broadcast runs in
 * the same form, and every byte must be the root's pattern for that size.
 * See osu_coll.h for the forms. */
#include "osu_coll.h"

struct bcast_ctx {
  char* buf;
  int rank;
};

static void setup(void* p, const struct osu_options* o, int rank, int ranks) {
  struct bcast_ctx* b = p;
  (void)ranks;
  b->buf = osu_buffer(o->max_size, 0);
  b->rank = rank;
}

static void prepare(void* p, long size) {
  struct bcast_ctx* b = p;
  memset(b->buf, b->rank == 0 ? osu_pattern(0, size) : 0, (size_t)size);
}

static int blocking(void* p, long size) {
  struct bcast_ctx* b = p;
  return MPI_Bcast(b->buf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD);
}

static int begin(void* p, long size, MPI_Request* req) {
  struct bcast_ctx* b = p;
  return MPI_Ibcast(b->buf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD, req);
}

#if OSU_HAVE_PERSISTENT_COLL
static int init(void* p, long size, MPI_Request* req) {
  struct bcast_ctx* b = p;
  return MPI_Bcast_init(b->buf, (int)size, MPI_CHAR, 0, MPI_COMM_WORLD, MPI_INFO_NULL, req);
}
#endif

static void check(void* p, long size, struct osu_coll_state* s) {
  struct bcast_ctx* b = p;
  if (b->rank != 0) memset(b->buf, 0, (size_t)size);
  osu_coll_once(s);
  osu_check_bytes("bcast from root 0", b->buf, size, osu_pattern(0, size));
}

int main(int argc, char** argv) {
  /* static: its buffers stay reachable until exit (LeakSanitizer) */
  static struct bcast_ctx b;
  struct osu_coll c = {"Broadcast Latency Test", &b, setup, prepare, blocking, begin, NULL, check};
#if OSU_HAVE_PERSISTENT_COLL
  c.init = init;
#endif
  return osu_coll_main(argc, argv, &c, 1, 1L << 20, OSU_ACCEPT_FORM | OSU_ACCEPT_OVERLAP);
}
