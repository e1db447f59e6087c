/* The short paths of small point-to-point messages against the general
 * ones, interleaved in one stream between ranks 0 and 1 (other ranks only
 * take part in the barriers):
 *   sends: MPI_Isend and MPI_Send of a contiguous type (the one-pass post
 *   and the same-node one-frame send), MPI_Issend (synchronous: the op
 *   path), a vector type (staged through a request's buffer), and messages
 *   above the eager limit (rendezvous);
 *   receives: posted before the message came (matched on arrival) or after
 *   (taken from the unexpected list: an eager one completes without an op),
 *   contiguous or vector, by name or with MPI_ANY_SOURCE / MPI_ANY_TAG,
 *   completed by MPI_Wait, MPI_Waitall or MPI_Recv.
 * Every message carries its sequence number and a pattern: each receive
 * checks the data, the order (non-overtaking), MPI_SOURCE, MPI_TAG and the
 * count. Then truncation of an unexpected and of a posted eager message
 * under MPI_ERRORS_RETURN, MPI_PROC_NULL, and argument errors that must
 * leave the request handle as it was; last, one bad argument at a time in
 * the short path's shape (world or self, a predefined type), which the full
 * checks must still report and which must change nothing, and the edges of
 * the valid range on that path. */
#include <time.h>

#include "mp_check.h"

enum { kMessages = 60, kSmall = 6, kLarge = 40000, kStride = 3 };

static MPI_Datatype g_vector; /* kSmall ints, every kStride-th */
/* The barriers' communicator: their messages must not meet the wildcard
 * receives of the stream. */
static MPI_Comm g_bar;

/* What message k is: its tag, its length in ints, how it is sent. */
static int tag_of(int k) {
  return 5 + k % 3;
}
static int kind_of(int k) {
  return k % 5; /* 0 Isend, 1 Issend, 2 Isend vector, 3 Isend large, 4 Send */
}
static int ints_of(int k) {
  return kind_of(k) == 3 ? kLarge : kSmall;
}
static int value(int k, int i) {
  return k * 100003 + i * 7 + 1;
}

static void fill(int* buf, int k, int n) {
  for (int i = 0; i < n; ++i) buf[i] = value(k, i);
}

/* Rank 0: all messages in order; the nonblocking ones are waited at the end. */
static void send_stream(int* bufs[kMessages], int* vec_bufs[kMessages]) {
  MPI_Request reqs[kMessages];
  int nreq = 0;
  for (int k = 0; k < kMessages; ++k) {
    const int n = ints_of(k), tag = tag_of(k);
    fill(bufs[k], k, n);
    switch (kind_of(k)) {
      case 0:
        CHECK_OK(MPI_Isend(bufs[k], n, MPI_INT, 1, tag, MPI_COMM_WORLD, &reqs[nreq++]));
        break;
      case 1:
        CHECK_OK(MPI_Issend(bufs[k], n, MPI_INT, 1, tag, MPI_COMM_WORLD, &reqs[nreq++]));
        break;
      case 2:
        for (int i = 0; i < kSmall; ++i) vec_bufs[k][i * kStride] = value(k, i);
        CHECK_OK(MPI_Isend(vec_bufs[k], 1, g_vector, 1, tag, MPI_COMM_WORLD, &reqs[nreq++]));
        break;
      case 3:
        CHECK_OK(MPI_Isend(bufs[k], n, MPI_INT, 1, tag, MPI_COMM_WORLD, &reqs[nreq++]));
        break;
      default:
        CHECK_OK(MPI_Send(bufs[k], n, MPI_INT, 1, tag, MPI_COMM_WORLD));
        break;
    }
  }
  MPI_Status st[kMessages];
  CHECK_OK(MPI_Waitall(nreq, reqs, st));
  for (int i = 0; i < nreq; ++i) CHECK(reqs[i] == MPI_REQUEST_NULL, "send request %d not freed", i);
}

/* Checks message k as received into `got` (n ints) with status st. */
static void check_message(const char* how, int k, const int* got, const MPI_Status* st) {
  const int n = ints_of(k);
  CHECK(st->MPI_SOURCE == 0, "%s: message %d: MPI_SOURCE %d", how, k, st->MPI_SOURCE);
  CHECK(st->MPI_TAG == tag_of(k), "%s: message %d: MPI_TAG %d, expected %d", how, k, st->MPI_TAG,
        tag_of(k));
  int count = -1;
  CHECK_OK(MPI_Get_count(st, MPI_INT, &count));
  CHECK(count == n, "%s: message %d: count %d, expected %d", how, k, count, n);
  for (int i = 0; i < n; ++i)
    CHECK(got[i] == value(k, i),
          "%s: message %d: int %d is %d, expected %d (message %d's; order or data is wrong)", how,
          k, i, got[i], value(k, i), (got[i] - 1) / 100003);
}

/* The receive form of message k (rank 1), by k and the phase. */
static int recv_form(int k, int phase) {
  return (k + phase) % 4; /* 0 Irecv named, 1 Irecv wildcards, 2 Irecv vector, 3 Recv */
}

/* Rank 1, receives posted after the messages were sent: one at a time. */
static void receive_late(int* buf, int* vec_buf) {
  /* Rank 0 does not wait before its first synchronous send completes: the
   * eager messages ahead of it are here after this nap. */
  struct timespec nap = {0, 20 * 1000 * 1000};
  nanosleep(&nap, NULL);
  for (int k = 0; k < kMessages; ++k) {
    const int n = ints_of(k);
    int form = recv_form(k, 0);
    if (form == 2 && n != kSmall) form = 0;
    MPI_Status st;
    MPI_Request r = MPI_REQUEST_NULL;
    memset(buf, 0, sizeof(int) * kLarge);
    switch (form) {
      case 0:
        CHECK_OK(MPI_Irecv(buf, kLarge, MPI_INT, 0, tag_of(k), MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Wait(&r, &st));
        break;
      case 1:
        CHECK_OK(MPI_Irecv(buf, kLarge, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Waitall(1, &r, &st));
        break;
      case 2:
        memset(vec_buf, 0, sizeof(int) * kSmall * kStride);
        CHECK_OK(MPI_Irecv(vec_buf, 1, g_vector, MPI_ANY_SOURCE, tag_of(k), MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Wait(&r, &st));
        for (int i = 0; i < kSmall; ++i) buf[i] = vec_buf[i * kStride];
        break;
      default:
        CHECK_OK(MPI_Recv(buf, kLarge, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        break;
    }
    CHECK(r == MPI_REQUEST_NULL, "late receive %d: request not freed", k);
    check_message("receive posted late", k, buf, &st);
  }
}

/* Rank 1, every receive posted before the sends start, then one Waitall. */
static void receive_early(int* bufs[kMessages], int* vec_bufs[kMessages], MPI_Request* reqs) {
  for (int k = 0; k < kMessages; ++k) {
    int form = recv_form(k, 1);
    if (form == 2 && ints_of(k) != kSmall) form = 0;
    memset(bufs[k], 0, sizeof(int) * (size_t)ints_of(k));
    if (form == 2) {
      memset(vec_bufs[k], 0, sizeof(int) * kSmall * kStride);
      CHECK_OK(MPI_Irecv(vec_bufs[k], 1, g_vector, 0, tag_of(k), MPI_COMM_WORLD, &reqs[k]));
    } else if (form == 1) {
      CHECK_OK(MPI_Irecv(bufs[k], ints_of(k), MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                         &reqs[k]));
    } else {
      CHECK_OK(MPI_Irecv(bufs[k], ints_of(k), MPI_INT, 0, tag_of(k), MPI_COMM_WORLD, &reqs[k]));
    }
  }
}

static void check_early(int* bufs[kMessages], int* vec_bufs[kMessages], MPI_Request* reqs) {
  MPI_Status st[kMessages];
  CHECK_OK(MPI_Waitall(kMessages, reqs, st));
  for (int k = 0; k < kMessages; ++k) {
    CHECK(reqs[k] == MPI_REQUEST_NULL, "early receive %d: request not freed", k);
    int form = recv_form(k, 1);
    if (form == 2 && ints_of(k) == kSmall)
      for (int i = 0; i < kSmall; ++i) bufs[k][i] = vec_bufs[k][i * kStride];
    check_message("receive posted early", k, bufs[k], &st[k]);
  }
}

/* An eager message longer than the receive buffer: MPI_ERR_TRUNCATE, the
 * buffer's part of the data, and the stream goes on. */
static void truncation(int me) {
  int big[16], small[8], next[4];
  if (me == 0) {
    for (int late = 0; late < 2; ++late) {
      mp_barrier(g_bar);
      fill(big, 900 + late, 16);
      fill(next, 950 + late, 4);
      CHECK_OK(MPI_Send(big, 16, MPI_INT, 1, 9, MPI_COMM_WORLD));
      CHECK_OK(MPI_Send(next, 4, MPI_INT, 1, 9, MPI_COMM_WORLD));
      mp_barrier(g_bar);
    }
    return;
  }
  if (me != 1) {
    mp_barrier(g_bar);
    mp_barrier(g_bar);
    mp_barrier(g_bar);
    mp_barrier(g_bar);
    return;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (int late = 0; late < 2; ++late) {
    MPI_Request r;
    MPI_Status st;
    memset(small, 0, sizeof small);
    if (!late) CHECK_OK(MPI_Irecv(small, 8, MPI_INT, 0, 9, MPI_COMM_WORLD, &r));
    mp_barrier(g_bar);
    if (late) {
      /* Both messages are here once the second one is (same sender, in order). */
      MPI_Status pst;
      int flag = 0;
      double deadline = MPI_Wtime() + 60;
      while (!flag) {
        CHECK_OK(MPI_Iprobe(0, 9, MPI_COMM_WORLD, &flag, &pst));
        CHECK(flag || MPI_Wtime() < deadline, "the 16-int message never came");
      }
      CHECK_OK(MPI_Irecv(small, 8, MPI_INT, 0, 9, MPI_COMM_WORLD, &r));
    }
    int rc = MPI_Wait(&r, &st);
    mp_expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Irecv"); /* the request's call */
    CHECK(r == MPI_REQUEST_NULL, "truncated receive: request not freed");
    CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 9, "truncated receive: status %d/%d", st.MPI_SOURCE,
          st.MPI_TAG);
    for (int i = 0; i < 8; ++i)
      CHECK(small[i] == value(900 + late, i), "truncated receive (%s): int %d is %d",
            late ? "late" : "posted", i, small[i]);
    memset(next, 0, sizeof next);
    CHECK_OK(MPI_Recv(next, 4, MPI_INT, 0, 9, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 4; ++i)
      CHECK(next[i] == value(950 + late, i), "message after a truncated one: int %d is %d", i,
            next[i]);
    mp_barrier(g_bar);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_PROC_NULL, and bad arguments that must change nothing. */
static void proc_null_and_errors(void) {
  int x = 7;
  MPI_Request r[2];
  MPI_Status st[2];
  CHECK_OK(MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r[0]));
  CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r[1]));
  CHECK_OK(MPI_Waitall(2, r, st));
  int count = -1;
  CHECK_OK(MPI_Get_count(&st[1], MPI_INT, &count));
  CHECK(st[1].MPI_SOURCE == MPI_PROC_NULL && st[1].MPI_TAG == MPI_ANY_TAG && count == 0,
        "MPI_PROC_NULL receive: status %d/%d count %d", st[1].MPI_SOURCE, st[1].MPI_TAG, count);
  CHECK(x == 7, "MPI_PROC_NULL receive wrote the buffer");

  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Request keep = (MPI_Request)12345;
  mp_expect_class(MPI_Isend(&x, 1, MPI_INT, size, 3, MPI_COMM_WORLD, &keep), MPI_ERR_RANK,
                  "MPI_Isend");
  mp_expect_class(MPI_Irecv(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &keep), MPI_ERR_TAG,
                  "MPI_Irecv");
  mp_expect_class(MPI_Isend(&x, -1, MPI_INT, 0, 3, MPI_COMM_WORLD, &keep), MPI_ERR_COUNT,
                  "MPI_Isend");
  CHECK(keep == (MPI_Request)12345, "a failed call changed the request handle to %d", (int)keep);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* rc must be class cls with a message naming `call` and `what` (the
 * argument at fault). */
static void expect_error(int rc, int cls, const char* call, const char* what) {
  mp_expect_class(rc, cls, call);
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  CHECK(strstr(msg, what) != NULL, "%s: message does not name \"%s\": %s", call, what, msg);
}

/* The shape of the short path (MPI_COMM_WORLD or MPI_COMM_SELF, a
 * predefined contiguous type) with one bad argument: the full checks still
 * report it (class, call and argument), and nothing changes: no request
 * handle written, no receive buffer touched, no message sent (rank 1 finds
 * none afterwards). Then the edges of the valid range on the same path:
 * tag MPI_TAG_UB, the last rank, count 0 with a NULL buffer. */
static void fast_path_errors(int me, int size) {
  int* tag_ub = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && tag_ub && *tag_ub > 0, "no MPI_TAG_UB");
  const int ub = *tag_ub;
  if (me == 0) {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int x[2] = {41, 42};
    MPI_Request keep = (MPI_Request)12345;
    MPI_Status st;
    expect_error(MPI_Send(x, 1, MPI_INT, size, 3, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send",
                 "destination rank");
    expect_error(MPI_Send(x, 1, MPI_INT, 1, ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send",
                 "invalid tag");
    expect_error(MPI_Send(x, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send",
                 "invalid tag");
    expect_error(MPI_Send(x, -1, MPI_INT, 1, 3, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send",
                 "negative count");
    expect_error(MPI_Send(x, 1, MPI_DATATYPE_NULL, 1, 3, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Send",
                 "datatype");
    expect_error(MPI_Send(NULL, 1, MPI_INT, 1, 3, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Send",
                 "buffer is NULL");
    expect_error(MPI_Send(x, 1, MPI_INT, 1, 3, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Send",
                 "MPI_COMM_NULL");
    expect_error(MPI_Send(x, 1, MPI_INT, 1, 3, MPI_COMM_SELF), MPI_ERR_RANK, "MPI_Send",
                 "destination rank");
    expect_error(MPI_Isend(x, 1, MPI_INT, -3, 3, MPI_COMM_WORLD, &keep), MPI_ERR_RANK, "MPI_Isend",
                 "destination rank");
    expect_error(MPI_Isend(x, 1, MPI_INT, 1, -2, MPI_COMM_WORLD, &keep), MPI_ERR_TAG, "MPI_Isend",
                 "invalid tag");
    expect_error(MPI_Isend(x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Isend",
                 "request");
    expect_error(MPI_Isend(NULL, 2, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, &keep), MPI_ERR_BUFFER,
                 "MPI_Isend", "buffer is NULL");
    expect_error(MPI_Recv(x, 1, MPI_INT, size, 3, MPI_COMM_WORLD, &st), MPI_ERR_RANK, "MPI_Recv",
                 "source rank");
    expect_error(MPI_Recv(x, 1, MPI_INT, 1, ub + 1, MPI_COMM_WORLD, &st), MPI_ERR_TAG, "MPI_Recv",
                 "invalid tag");
    expect_error(MPI_Recv(x, -4, MPI_INT, 1, 3, MPI_COMM_WORLD, &st), MPI_ERR_COUNT, "MPI_Recv",
                 "negative count");
    expect_error(MPI_Irecv(x, 1, MPI_INT, -7, 3, MPI_COMM_WORLD, &keep), MPI_ERR_RANK, "MPI_Irecv",
                 "source rank");
    expect_error(MPI_Irecv(x, 1, MPI_INT, 1, -9, MPI_COMM_WORLD, &keep), MPI_ERR_TAG, "MPI_Irecv",
                 "invalid tag");
    expect_error(MPI_Irecv(x, 1, MPI_DATATYPE_NULL, 1, 3, MPI_COMM_WORLD, &keep), MPI_ERR_TYPE,
                 "MPI_Irecv", "datatype");
    expect_error(MPI_Irecv(x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "MPI_Irecv",
                 "request");
    CHECK(keep == (MPI_Request)12345, "a failed call changed the request handle to %d", (int)keep);
    CHECK(x[0] == 41 && x[1] == 42, "a failed receive wrote the buffer: %d %d", x[0], x[1]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    /* The edges, each the last message of its kind: tag MPI_TAG_UB to the
     * last rank, and an empty one with a NULL buffer. */
    int v = 777;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, size - 1, ub, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(NULL, 0, MPI_INT, 1, 4, MPI_COMM_WORLD));
  }
  if (me == size - 1) {
    int v = 0;
    MPI_Status st;
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, 0, ub, MPI_COMM_WORLD, &st));
    CHECK(v == 777 && st.MPI_TAG == ub && st.MPI_SOURCE == 0, "tag MPI_TAG_UB: %d tag %d from %d",
          v, st.MPI_TAG, st.MPI_SOURCE);
  }
  if (me == 1) {
    MPI_Request r;
    MPI_Status st;
    CHECK_OK(MPI_Irecv(NULL, 0, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, &st));
    int count = -1;
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0 && st.MPI_TAG == 4, "empty message: count %d tag %d (a failed send went out?)",
          count, st.MPI_TAG);
  }
  mp_barrier(g_bar);
  /* Every message rank 0 sent is received: none of the failed sends left one. */
  int pending = 0;
  MPI_Status pst;
  CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pending, &pst));
  CHECK(!pending, "a message from rank %d tag %d is left over (a failed send sent it)",
        pst.MPI_SOURCE, pst.MPI_TAG);
}

int main(int argc, char** argv) {
  int me, size;
  mp_init(&argc, &argv, &me, &size);
  CHECK(size >= 2, "needs 2 ranks");
  CHECK_OK(MPI_Type_vector(kSmall, 1, kStride, MPI_INT, &g_vector));
  CHECK_OK(MPI_Type_commit(&g_vector));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &g_bar));
  int* bufs[kMessages];
  int* vec_bufs[kMessages];
  for (int k = 0; k < kMessages; ++k) {
    bufs[k] = calloc(kLarge, sizeof(int));
    vec_bufs[k] = calloc(kSmall * kStride, sizeof(int));
  }
  int* buf = calloc(kLarge, sizeof(int));
  int* vec_buf = calloc(kSmall * kStride, sizeof(int));
  MPI_Request early[kMessages];

  for (int round = 0; round < 3; ++round) {
    /* Late receives: rank 0 has sent (or started) everything first. */
    if (me == 0) send_stream(bufs, vec_bufs);
    if (me == 1) receive_late(buf, vec_buf);
    mp_barrier(g_bar);
    /* Early receives: all posted before the first send. */
    if (me == 1) receive_early(bufs, vec_bufs, early);
    mp_barrier(g_bar);
    if (me == 0) send_stream(bufs, vec_bufs);
    if (me == 1) check_early(bufs, vec_bufs, early);
    mp_barrier(g_bar);
  }
  truncation(me);
  proc_null_and_errors();
  mp_barrier(g_bar);
  fast_path_errors(me, size);
  mp_barrier(g_bar);

  for (int k = 0; k < kMessages; ++k) {
    free(bufs[k]);
    free(vec_bufs[k]);
  }
  free(buf);
  free(vec_buf);
  CHECK_OK(MPI_Type_free(&g_vector));
  CHECK_OK(MPI_Comm_free(&g_bar));
  if (me == 0) printf("fast paths: OK\n");
  MPI_Finalize();
  return 0;
}
