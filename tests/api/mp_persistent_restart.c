/* Persistent point-to-point requests restarted 10^4 times, what MPI_Start
 * keeps from one start to the next under test: every rank sends to its
 * right neighbour an 8-byte message (one ring frame) and a 4 KiB one, and
 * receives them with a named-source request and a wildcard one
 * (MPI_ANY_SOURCE, MPI_ANY_TAG). The contents change every iteration; data,
 * source, tag and count are checked every iteration, and both receive
 * buffers are poisoned before each start, so a start that reported the
 * last iteration's completion, reused its status or skipped a post fails.
 * Iterations alternate MPI_Startall with MPI_Start one by one and the
 * completion call (Waitall, Wait, Testall).
 *
 * Then the rules around it: MPI_Start of an active request fails with
 * MPI_ERR_REQUEST and leaves it running; MPI_Cancel of an inactive request
 * fails and leaves it startable; an active receive nobody sends to is
 * cancelled and restarts to receive; a request freed while active still
 * delivers; a start to MPI_PROC_NULL completes at once with its status. */
#include "mp_check.h"

#define ITERS 10000
#define BIG 4096 /* bytes of the second message */

static long small_value(int from, int iter) {
  return (long)from * 1000003L + (long)iter * 7919L + 11;
}

static void poison(long* small, unsigned char* big) {
  *small = -1;
  memset(big, 0xEE, BIG);
}

static void check_round(int iter, int left, long small, const unsigned char* big,
                        const MPI_Status* st) {
  CHECK(small == small_value(left, iter), "iter %d: small %ld, expected %ld", iter, small,
        small_value(left, iter));
  for (int i = 0; i < BIG; ++i)
    CHECK(big[i] == mp_pattern((size_t)i, BIG, left * 131 + iter), "iter %d: big[%d] = %d", iter, i,
          big[i]);
  int n = -1;
  CHECK_OK(MPI_Get_count(&st[0], MPI_LONG, &n));
  CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 5 && n == 1,
        "iter %d: small status source %d tag %d count %d", iter, st[0].MPI_SOURCE, st[0].MPI_TAG,
        n);
  CHECK_OK(MPI_Get_count(&st[1], MPI_BYTE, &n));
  CHECK(st[1].MPI_SOURCE == left && st[1].MPI_TAG == 6 && n == BIG,
        "iter %d: wildcard status source %d tag %d count %d", iter, st[1].MPI_SOURCE, st[1].MPI_TAG,
        n);
}

/* Starts the four requests the way `iter` selects. */
static void start_round(MPI_Request* reqs, int iter) {
  if (iter % 3 == 0) {
    CHECK_OK(MPI_Startall(4, reqs));
  } else {
    for (int k = 0; k < 4; ++k) CHECK_OK(MPI_Start(&reqs[k]));
  }
}

int main(int argc, char** argv) {
  int rank, size;
  mp_init(&argc, &argv, &rank, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  /* The full count on the same-node transport, whose small-send and
   * restart paths this is about; a fifth elsewhere keeps the group short. */
  const char* prov = getenv("NICQ_PROVIDER");
  const int iters = prov && strcmp(prov, "shm") == 0 ? ITERS : ITERS / 5;

  long small_out = 0, small_in = 0;
  unsigned char* big_out = malloc(BIG);
  unsigned char* big_in = malloc(BIG);
  /* The requests' own communicator: the wildcard receive must see only
   * the ring's messages, not mp_barrier's. */
  MPI_Comm ring;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &ring));
  MPI_Request reqs[4];
  /* Only the left neighbour sends here, small before big: the named
   * receive, started first, takes the small message and the wildcard one
   * the big message (MPI order), whichever arrives before its start. */
  CHECK_OK(MPI_Recv_init(&small_in, 1, MPI_LONG, left, 5, ring, &reqs[0]));
  CHECK_OK(MPI_Recv_init(big_in, BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, ring, &reqs[1]));
  CHECK_OK(MPI_Send_init(&small_out, 1, MPI_LONG, right, 5, ring, &reqs[2]));
  CHECK_OK(MPI_Send_init(big_out, BIG, MPI_BYTE, right, 6, ring, &reqs[3]));

  for (int iter = 0; iter < iters; ++iter) {
    small_out = small_value(rank, iter);
    mp_fill(big_out, BIG, rank * 131 + iter);
    poison(&small_in, big_in);
    start_round(reqs, iter);
    MPI_Status st[4];
    if (iter % 2 == 0) {
      CHECK_OK(MPI_Waitall(4, reqs, st));
    } else if (iter % 5 == 1) {
      for (int k = 0; k < 4; ++k) CHECK_OK(MPI_Wait(&reqs[k], &st[k]));
    } else {
      int flag = 0;
      while (!flag) CHECK_OK(MPI_Testall(4, reqs, &flag, st));
    }
    for (int k = 0; k < 4; ++k)
      CHECK(reqs[k] != MPI_REQUEST_NULL, "iter %d: handle %d lost", iter, k);
    check_round(iter, left, small_in, big_in, st);
  }
  mp_barrier(MPI_COMM_WORLD);

  /* MPI_Start of an active request: MPI_ERR_REQUEST, and the request keeps
   * running to its normal completion. */
  poison(&small_in, big_in);
  small_out = small_value(rank, iters);
  mp_fill(big_out, BIG, rank * 131 + iters);
  CHECK_OK(MPI_Startall(4, reqs));
  int rc = MPI_Start(&reqs[0]), cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_REQUEST, "MPI_Start of an active request: class %d", cls);
  rc = MPI_Startall(4, reqs);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_REQUEST, "MPI_Startall of active requests: class %d", cls);
  MPI_Status st[4];
  CHECK_OK(MPI_Waitall(4, reqs, st));
  check_round(iters, left, small_in, big_in, st);

  /* MPI_Cancel of an inactive request fails; the request still starts. */
  rc = MPI_Cancel(&reqs[0]);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_REQUEST, "MPI_Cancel of an inactive request: class %d", cls);
  mp_barrier(MPI_COMM_WORLD);

  /* An active receive nobody sends to yet: cancelled, then restarted to
   * receive the message sent after the barrier. */
  small_in = -1;
  CHECK_OK(MPI_Start(&reqs[0]));
  CHECK_OK(MPI_Cancel(&reqs[0]));
  CHECK_OK(MPI_Wait(&reqs[0], &st[0]));
  int cancelled = 0;
  CHECK_OK(MPI_Test_cancelled(&st[0], &cancelled));
  CHECK(cancelled && small_in == -1, "cancel of an unmatched receive: flag %d, data %ld", cancelled,
        small_in);
  mp_barrier(MPI_COMM_WORLD);
  small_out = small_value(rank, iters + 1);
  CHECK_OK(MPI_Start(&reqs[0]));
  CHECK_OK(MPI_Start(&reqs[2]));
  CHECK_OK(MPI_Wait(&reqs[2], MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Wait(&reqs[0], &st[0]));
  CHECK_OK(MPI_Test_cancelled(&st[0], &cancelled));
  CHECK(!cancelled && small_in == small_value(left, iters + 1) && st[0].MPI_SOURCE == left,
        "restart after cancel: flag %d data %ld source %d", cancelled, small_in, st[0].MPI_SOURCE);

  /* A send freed while active still delivers; its handle is gone. */
  mp_barrier(MPI_COMM_WORLD);
  small_out = small_value(rank, iters + 2);
  small_in = -1;
  CHECK_OK(MPI_Start(&reqs[0]));
  CHECK_OK(MPI_Start(&reqs[2]));
  CHECK_OK(MPI_Request_free(&reqs[2]));
  CHECK(reqs[2] == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
  CHECK_OK(MPI_Wait(&reqs[0], &st[0]));
  CHECK(small_in == small_value(left, iters + 2), "freed active send delivered %ld", small_in);

  /* MPI_PROC_NULL: complete at once, status source MPI_PROC_NULL, count 0. */
  MPI_Request null_req[2];
  CHECK_OK(MPI_Recv_init(&small_in, 1, MPI_LONG, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &null_req[0]));
  CHECK_OK(MPI_Send_init(&small_out, 1, MPI_LONG, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &null_req[1]));
  for (int round = 0; round < 3; ++round) {
    small_in = -7;
    CHECK_OK(MPI_Startall(2, null_req));
    CHECK_OK(MPI_Waitall(2, null_req, st));
    int n = -1;
    CHECK_OK(MPI_Get_count(&st[0], MPI_LONG, &n));
    CHECK(st[0].MPI_SOURCE == MPI_PROC_NULL && n == 0 && small_in == -7,
          "MPI_PROC_NULL receive: source %d count %d data %ld", st[0].MPI_SOURCE, n, small_in);
  }
  for (int k = 0; k < 2; ++k) CHECK_OK(MPI_Request_free(&null_req[k]));
  CHECK_OK(MPI_Request_free(&reqs[0]));
  CHECK_OK(MPI_Request_free(&reqs[1]));
  CHECK_OK(MPI_Request_free(&reqs[3]));
  CHECK_OK(MPI_Comm_free(&ring));
  free(big_out);
  free(big_in);
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("persistent restart: %d iterations ok\n", iters);
  MPI_Finalize();
  return 0;
}
