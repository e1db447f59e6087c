/* Buffered sends pick their buffer as MPI-4.1 says: the communicator's,
 * else the buffer of the session the communicator derives from, else the
 * process's. Two sessions each attach a buffer; a communicator made from
 * each session's group (and a dup of it, and one made from a subgroup)
 * must copy its messages into its own session's buffer and never into the
 * other's; MPI_COMM_WORLD, derived from no session, uses the process
 * buffer, or has none. Where a message was copied is read from the
 * buffers themselves: each message carries a pattern unique to its path. */
#define _GNU_SOURCE
#include <string.h>

#include "mp_check.h"

enum { kMsg = 200, kBuf = 4096 };

static int rank, size, right, left;

static int error_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

static void fill(char* msg, int path) {
  for (int i = 0; i < kMsg; ++i) msg[i] = (char)(path * 37 + rank * 11 + i * 3 + 1);
}

static int holds(const char* buf, const char* msg) {
  return memmem(buf, kBuf, msg, kMsg) != NULL;
}

/* A buffered message on `comm` along the ring; its copy must be in `in`
 * and not in `not_in` (either may be NULL). Received data checked. */
static void bsend_into(MPI_Comm comm, int path, const char* in, const char* not_in,
                       const char* what) {
  char msg[kMsg], got[kMsg], want[kMsg];
  fill(msg, path);
  CHECK_OK(MPI_Bsend(msg, kMsg, MPI_CHAR, right, path, comm));
  if (in) CHECK(holds(in, msg), "%s: the message was not copied into its buffer", what);
  if (not_in) CHECK(!holds(not_in, msg), "%s: the message went through another buffer", what);
  CHECK_OK(MPI_Recv(got, kMsg, MPI_CHAR, left, path, comm, MPI_STATUS_IGNORE));
  const int me = rank;
  rank = left; /* the sender's pattern */
  fill(want, path);
  rank = me;
  CHECK(!memcmp(got, want, kMsg), "%s: received data differs", what);
}

static MPI_Comm comm_of(MPI_Session s, const char* tag, int drop_last) {
  MPI_Group g, sub;
  CHECK_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
  int last[1] = {size - 1};
  CHECK_OK(MPI_Group_excl(g, drop_last, last, &sub));
  MPI_Comm c = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_create_from_group(sub, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
  CHECK_OK(MPI_Group_free(&sub));
  CHECK_OK(MPI_Group_free(&g));
  return c;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  right = (rank + 1) % size;
  left = (rank + size - 1) % size;
  static char buf1[kBuf], buf2[kBuf], cbuf[kBuf], pbuf[kBuf];
  MPI_Session s1, s2;
  CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1));
  CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
  MPI_Comm c1 = comm_of(s1, "nicq.test.s1", 0), c2 = comm_of(s2, "nicq.test.s2", 0);
  CHECK_OK(MPI_Session_attach_buffer(s2, buf2, kBuf)); /* attached first: no "first wins" */
  CHECK_OK(MPI_Session_attach_buffer(s1, buf1, kBuf));

  bsend_into(c1, 1, buf1, buf2, "session 1's communicator");
  bsend_into(c2, 2, buf2, buf1, "session 2's communicator");
  MPI_Comm d1;
  CHECK_OK(MPI_Comm_dup(c1, &d1));
  bsend_into(d1, 3, buf1, buf2, "a dup of session 1's communicator");
  CHECK_OK(MPI_Comm_free(&d1));

  /* A communicator's own buffer comes first. */
  CHECK_OK(MPI_Comm_attach_buffer(c2, cbuf, kBuf));
  bsend_into(c2, 4, cbuf, buf2, "session 2's communicator with a buffer of its own");
  void* back;
  int back_size;
  CHECK_OK(MPI_Comm_detach_buffer(c2, &back, &back_size));
  CHECK(back == cbuf && back_size == kBuf, "comm detach %p %d", back, back_size);

  /* MPI_COMM_WORLD derives from no session: no process buffer, no buffer. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  char msg[kMsg];
  fill(msg, 5);
  const int rc = MPI_Bsend(msg, kMsg, MPI_CHAR, right, 5, MPI_COMM_WORLD);
  CHECK(error_class(rc) == MPI_ERR_BUFFER, "bsend on world with only session buffers: class %d",
        error_class(rc));
  CHECK(!holds(buf1, msg) && !holds(buf2, msg), "world's refused message reached a session buffer");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  CHECK_OK(MPI_Buffer_attach(pbuf, kBuf));
  bsend_into(MPI_COMM_WORLD, 6, pbuf, buf1, "world with a process buffer");
  fill(msg, 6);
  CHECK(!holds(buf2, msg), "world's message went through session 2's buffer");

  /* Made from a subgroup of session 2's group (all but the last rank). */
  if (size > 1 && rank < size - 1) {
    MPI_Comm sub = comm_of(s2, "nicq.test.s2.sub", 1);
    int n;
    MPI_Comm_size(sub, &n);
    const int r = right, l = left;
    right = (rank + 1) % n;
    left = (rank + n - 1) % n;
    bsend_into(sub, 7, buf2, buf1, "a communicator from a subgroup of session 2");
    right = r;
    left = l;
    CHECK_OK(MPI_Comm_free(&sub));
  }

  CHECK_OK(MPI_Buffer_detach(&back, &back_size));
  CHECK(back == pbuf, "process detach %p", back);
  CHECK_OK(MPI_Comm_free(&c1));
  CHECK_OK(MPI_Comm_free(&c2));
  CHECK_OK(MPI_Session_detach_buffer(s1, &back, &back_size));
  CHECK(back == buf1 && back_size == kBuf, "session 1 detach %p %d", back, back_size);
  CHECK_OK(MPI_Session_detach_buffer(s2, &back, &back_size));
  CHECK(back == buf2 && back_size == kBuf, "session 2 detach %p %d", back, back_size);
  CHECK_OK(MPI_Session_finalize(&s1));
  CHECK_OK(MPI_Session_finalize(&s2));
  MPI_Finalize();
  if (rank == 0) printf("session_buffers: %d ranks ok\n", size);
  return 0;
}
