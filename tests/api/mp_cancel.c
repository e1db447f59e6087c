/* MPI_Cancel on every kind of point-to-point request, ranks in pairs
 * (0,1), (2,3) (an odd last rank only joins the barriers):
 *  1. a receive nobody sends to (named source, MPI_ANY_SOURCE, persistent):
 *     the wait returns, MPI_Test_cancelled is true, the buffer untouched;
 *     the persistent receive then restarts and receives;
 *  2. an MPI_Issend never matched and a rendezvous MPI_Isend never matched:
 *     cancelled, and the receiver never sees them (probe, then the next
 *     message with the same tag is the one that arrives);
 *  3. an MPI_Issend already received: the cancel comes too late, the wait
 *     reports not cancelled and the data arrived;
 *  4. a persistent MPI_Ssend_init started and cancelled, then restarted and
 *     received. */
#include "mp_check.h"

enum { kBig = 1 << 20, kTagSync = 50, kTagBig = 51, kTagLate = 52, kTagPers = 53, kTagGo = 54 };

static int cancelled(const MPI_Status* st) {
  int flag = -1;
  CHECK_OK(MPI_Test_cancelled(st, &flag));
  return flag;
}

static void receives(int peer) {
  int x = 77;
  MPI_Request r;
  MPI_Status st;
  CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, peer, 999, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(r == MPI_REQUEST_NULL, "the wait did not free the request");
  CHECK(cancelled(&st) == 1, "receive not reported cancelled");
  CHECK(x == 77, "a cancelled receive wrote its buffer (%d)", x);

  CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Cancel(&r));
  int flag = 0;
  while (!flag) CHECK_OK(MPI_Test(&r, &flag, &st));
  CHECK(cancelled(&st) == 1, "MPI_ANY_SOURCE receive not reported cancelled");

  /* Persistent: cancelled once, then used for real (the peer sends after
   * the barrier). */
  CHECK_OK(MPI_Recv_init(&x, 1, MPI_INT, peer, kTagPers, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Start(&r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(r != MPI_REQUEST_NULL, "a persistent request was freed by its wait");
  CHECK(cancelled(&st) == 1, "persistent receive not reported cancelled");
  mp_barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Start(&r));
  CHECK_OK(MPI_Send(&(int){4242}, 1, MPI_INT, peer, kTagPers, MPI_COMM_WORLD));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(cancelled(&st) == 0 && x == 4242 && st.MPI_SOURCE == peer && st.MPI_TAG == kTagPers,
        "restarted persistent receive: x %d source %d tag %d", x, st.MPI_SOURCE, st.MPI_TAG);
  CHECK_OK(MPI_Request_free(&r));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int paired = !(size % 2 == 1 && rank == size - 1);
  const int peer = rank ^ 1;
  const int sender = rank % 2 == 0;
  unsigned char* big = malloc(kBig);
  CHECK(big != NULL, "out of memory");

  /* 1 */
  if (paired) {
    receives(peer);
  } else {
    mp_barrier(MPI_COMM_WORLD);
  }
  mp_barrier(MPI_COMM_WORLD);

  /* 2 */
  if (paired && sender) {
    int v = 1;
    MPI_Request r[2];
    MPI_Status st[2];
    mp_fill(big, kBig, 1);
    CHECK_OK(MPI_Issend(&v, 1, MPI_INT, peer, kTagSync, MPI_COMM_WORLD, &r[0]));
    CHECK_OK(MPI_Isend(big, kBig, MPI_BYTE, peer, kTagBig, MPI_COMM_WORLD, &r[1]));
    CHECK_OK(MPI_Cancel(&r[0]));
    CHECK_OK(MPI_Cancel(&r[1]));
    CHECK_OK(MPI_Waitall(2, r, st));
    CHECK(cancelled(&st[0]) == 1, "unmatched MPI_Issend not cancelled");
    CHECK(cancelled(&st[1]) == 1, "unmatched rendezvous MPI_Isend not cancelled");
  }
  mp_barrier(MPI_COMM_WORLD);
  if (paired && !sender) {
    int flag = 1;
    MPI_Status st;
    CHECK_OK(MPI_Iprobe(peer, kTagSync, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "a cancelled MPI_Issend is still visible to a probe");
    CHECK_OK(MPI_Iprobe(peer, kTagBig, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "a cancelled rendezvous send is still visible to a probe");
  }
  mp_barrier(MPI_COMM_WORLD);
  /* The next messages with those tags are the ones received. */
  if (paired && sender) {
    int v = 2;
    mp_fill(big, kBig, 2);
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, kTagSync, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(big, kBig, MPI_BYTE, peer, kTagBig, MPI_COMM_WORLD));
  } else if (paired) {
    int v = 0;
    MPI_Status st;
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, kTagSync, MPI_COMM_WORLD, &st));
    CHECK(v == 2, "received %d: the cancelled MPI_Issend was delivered", v);
    memset(big, 0, kBig);
    CHECK_OK(MPI_Recv(big, kBig, MPI_BYTE, peer, kTagBig, MPI_COMM_WORLD, &st));
    for (size_t i = 0; i < kBig; ++i)
      CHECK(big[i] == mp_pattern(i, kBig, 2), "byte %zu is from the cancelled send", i);
  }

  /* 3 */
  if (paired && sender) {
    int v = 3, go = 0;
    MPI_Request r;
    MPI_Status st;
    CHECK_OK(MPI_Issend(&v, 1, MPI_INT, peer, kTagLate, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Recv(&go, 1, MPI_INT, peer, kTagGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(cancelled(&st) == 0, "a received MPI_Issend was reported cancelled");
  } else if (paired) {
    int v = 0;
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, kTagLate, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(v == 3, "received %d", v);
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, kTagGo, MPI_COMM_WORLD));
  }
  mp_barrier(MPI_COMM_WORLD);

  /* 4 */
  if (paired && sender) {
    int v = 10;
    MPI_Request r;
    MPI_Status st;
    CHECK_OK(MPI_Ssend_init(&v, 1, MPI_INT, peer, kTagPers, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Start(&r));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(cancelled(&st) == 1, "started, unmatched MPI_Ssend_init not cancelled");
    v = 11;
    CHECK_OK(MPI_Start(&r));
    CHECK_OK(MPI_Send(&v, 0, MPI_INT, peer, kTagGo, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(cancelled(&st) == 0, "a received persistent send was reported cancelled");
    CHECK_OK(MPI_Request_free(&r));
  } else if (paired) {
    int v = 0;
    MPI_Status st;
    CHECK_OK(MPI_Recv(NULL, 0, MPI_INT, peer, kTagGo, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, kTagPers, MPI_COMM_WORLD, &st));
    CHECK(v == 11, "received %d: the cancelled start was delivered", v);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == kTagPers, "status source %d tag %d", st.MPI_SOURCE,
          st.MPI_TAG);
  }
  mp_barrier(MPI_COMM_WORLD);
  free(big);
  if (rank == 0) printf("mp_cancel: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
