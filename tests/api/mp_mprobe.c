/* Matched probe and receive on 2-4 ranks:
 *  1. a matched message leaves matching: after MPI_Mprobe took message A,
 *     MPI_Iprobe and MPI_Recv with the same source and tag see message B;
 *     MPI_Mrecv then delivers A with A's status;
 *  2. MPI_Improbe finds nothing for a tag nobody sends, then finds a
 *     message that MPI_Imrecv receives;
 *  3. a rendezvous-sized message and a synchronous send through
 *     MPI_Mprobe + MPI_Mrecv_c;
 *  4. MPI_Mprobe(MPI_ANY_SOURCE) on rank 0 receives one message from every
 *     other rank;
 *  5. MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, and its receive's status;
 *     MPI_Mrecv of MPI_MESSAGE_NULL is MPI_ERR_REQUEST. */
#include "mp_check.h"

enum { kBig = 300000, kTagA = 7, kTagI = 8, kTagBig = 9, kTagSync = 10, kTagAny = 11 };

static void expect_status(const MPI_Status* st, int source, int tag, MPI_Datatype t, int count) {
  int n = -1;
  CHECK_OK(MPI_Get_count(st, t, &n));
  CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && n == count,
        "status source %d tag %d count %d, expected %d %d %d", st->MPI_SOURCE, st->MPI_TAG, n,
        source, tag, count);
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
  const int sender = rank % 2 == 1;
  unsigned char* big = malloc(kBig);
  CHECK(big != NULL, "out of memory");

  /* 1 */
  if (paired && sender) {
    int a[3] = {1, 2, 3}, b[5] = {10, 20, 30, 40, 50};
    CHECK_OK(MPI_Send(a, 3, MPI_INT, peer, kTagA, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(b, 5, MPI_INT, peer, kTagA, MPI_COMM_WORLD));
  } else if (paired) {
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    CHECK_OK(MPI_Mprobe(peer, kTagA, MPI_COMM_WORLD, &m, &st));
    CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC, "no message handle");
    expect_status(&st, peer, kTagA, MPI_INT, 3);
    /* Wait until B is here too, then neither probe nor receive may see A. */
    CHECK_OK(MPI_Probe(peer, kTagA, MPI_COMM_WORLD, &st));
    expect_status(&st, peer, kTagA, MPI_INT, 5);
    int b[5] = {0};
    CHECK_OK(MPI_Recv(b, 5, MPI_INT, peer, kTagA, MPI_COMM_WORLD, &st));
    expect_status(&st, peer, kTagA, MPI_INT, 5);
    CHECK(b[0] == 10 && b[4] == 50, "MPI_Recv got %d..%d, not message B", b[0], b[4]);
    int a[4] = {0, 0, 0, -1};
    CHECK_OK(MPI_Mrecv(a, 4, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL, "MPI_Mrecv did not reset the handle");
    expect_status(&st, peer, kTagA, MPI_INT, 3);
    CHECK(a[0] == 1 && a[1] == 2 && a[2] == 3 && a[3] == -1, "MPI_Mrecv data %d %d %d %d", a[0],
          a[1], a[2], a[3]);
  }
  mp_barrier(MPI_COMM_WORLD);

  /* 2 */
  if (paired && !sender) {
    int flag = 1;
    MPI_Message m = 12345;
    CHECK_OK(MPI_Improbe(peer, 4321, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE));
    CHECK(!flag && m == 12345, "MPI_Improbe found a message nobody sent");
  }
  mp_barrier(MPI_COMM_WORLD);
  if (paired && sender) {
    double d[2] = {1.5, -2.5};
    CHECK_OK(MPI_Send(d, 2, MPI_DOUBLE, peer, kTagI, MPI_COMM_WORLD));
  } else if (paired) {
    int flag = 0;
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    while (!flag) CHECK_OK(MPI_Improbe(MPI_ANY_SOURCE, kTagI, MPI_COMM_WORLD, &flag, &m, &st));
    expect_status(&st, peer, kTagI, MPI_DOUBLE, 2);
    double d[2] = {0, 0};
    MPI_Request r;
    CHECK_OK(MPI_Imrecv(d, 2, MPI_DOUBLE, &m, &r));
    CHECK(m == MPI_MESSAGE_NULL, "MPI_Imrecv did not reset the handle");
    CHECK_OK(MPI_Wait(&r, &st));
    expect_status(&st, peer, kTagI, MPI_DOUBLE, 2);
    CHECK(d[0] == 1.5 && d[1] == -2.5, "MPI_Imrecv data %g %g", d[0], d[1]);
  }

  /* 3 */
  if (paired && sender) {
    int v = 99;
    mp_fill(big, kBig, 3);
    CHECK_OK(MPI_Send(big, kBig, MPI_BYTE, peer, kTagBig, MPI_COMM_WORLD));
    CHECK_OK(MPI_Ssend(&v, 1, MPI_INT, peer, kTagSync, MPI_COMM_WORLD));
  } else if (paired) {
    MPI_Message m;
    MPI_Status st;
    CHECK_OK(MPI_Mprobe(peer, kTagBig, MPI_COMM_WORLD, &m, &st));
    expect_status(&st, peer, kTagBig, MPI_BYTE, kBig);
    memset(big, 0, kBig);
    CHECK_OK(MPI_Mrecv_c(big, kBig, MPI_BYTE, &m, &st));
    expect_status(&st, peer, kTagBig, MPI_BYTE, kBig);
    for (size_t i = 0; i < kBig; ++i)
      CHECK(big[i] == mp_pattern(i, kBig, 3), "byte %zu of the rendezvous message", i);
    int v = 0;
    CHECK_OK(MPI_Mprobe(peer, kTagSync, MPI_COMM_WORLD, &m, &st));
    CHECK_OK(MPI_Mrecv(&v, 1, MPI_INT, &m, &st));
    CHECK(v == 99, "synchronous message %d", v);
  }
  mp_barrier(MPI_COMM_WORLD);

  /* 4: on a communicator of its own, so MPI_ANY_TAG sees only these */
  MPI_Comm c4;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c4));
  if (rank == 0) {
    int seen = 0;
    for (int i = 1; i < size; ++i) {
      MPI_Message m;
      MPI_Status st, st2;
      CHECK_OK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c4, &m, &st));
      int v[2] = {-1, -1};
      CHECK_OK(MPI_Mrecv(v, 2, MPI_INT, &m, &st2));
      CHECK(st.MPI_SOURCE == st2.MPI_SOURCE && st2.MPI_TAG == kTagAny + st2.MPI_SOURCE,
            "probe source %d, receive source %d tag %d", st.MPI_SOURCE, st2.MPI_SOURCE,
            st2.MPI_TAG);
      CHECK(v[0] == st2.MPI_SOURCE * 3 && v[1] == -st2.MPI_SOURCE, "data %d %d from %d", v[0], v[1],
            st2.MPI_SOURCE);
      CHECK(!(seen & (1 << st2.MPI_SOURCE)), "rank %d received twice", st2.MPI_SOURCE);
      seen |= 1 << st2.MPI_SOURCE;
    }
  } else {
    int v[2] = {rank * 3, -rank};
    CHECK_OK(MPI_Send(v, 2, MPI_INT, 0, kTagAny + rank, c4));
  }
  CHECK_OK(MPI_Comm_free(&c4));

  /* 5 */
  {
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) gave message %d", (int)m);
    expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    int x = 5;
    memset(&st, 0x5a, sizeof st);
    CHECK_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && x == 5, "handle %d x %d", (int)m, x);
    expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    int flag = 0;
    CHECK_OK(MPI_Improbe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag && m == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL) flag %d", flag);
    MPI_Request r;
    CHECK_OK(MPI_Imrecv(&x, 1, MPI_INT, &m, &r));
    CHECK_OK(MPI_Wait(&r, &st));
    expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);

    m = MPI_MESSAGE_NULL;
    int rc = MPI_Mrecv(&x, 1, MPI_INT, &m, &st);
    int cls = 0;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "MPI_Mrecv(MPI_MESSAGE_NULL) gave class %d", cls);
  }
  mp_barrier(MPI_COMM_WORLD);
  free(big);
  if (rank == 0) printf("mp_mprobe: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
