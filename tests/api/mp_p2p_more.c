/* More point-to-point on 2-4 ranks in a ring:
 *  1. MPI_Isendrecv and MPI_Isendrecv_replace (data and status), and both
 *     with MPI_PROC_NULL peers (complete with the MPI_PROC_NULL status);
 *  2. MPI_Request_get_status_all/_any/_some leave requests as they are: the
 *     waits after them free the requests and report the same statuses;
 *  3. generalized requests: query_fn fills the status at MPI_Request_get_status
 *     and at the wait, free_fn runs once after the wait, cancel_fn gets the
 *     completion flag;
 *  4. MPI_BOTTOM with a struct type of absolute addresses in MPI_Send,
 *     MPI_Irecv and MPI_Send_init; MPI_BOTTOM with MPI_INT is MPI_ERR_BUFFER;
 *  5. MPI-4.1 buffers: a communicator's buffer, MPI_BUFFER_AUTOMATIC,
 *     MPI_Buffer_iflush, a session's buffer;
 *  6. large counts: _c calls move data, MPI_Get_count_c reports a count
 *     above INT_MAX, a negative count is MPI_ERR_COUNT, a count above
 *     INT_MAX to MPI_PROC_NULL is accepted. */
#include <limits.h>

#include "mp_check.h"

static int error_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

static void expect_status(const MPI_Status* st, int source, int tag, MPI_Datatype t, int count) {
  int n = -1;
  CHECK_OK(MPI_Get_count(st, t, &n));
  CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && n == count,
        "status source %d tag %d count %d, expected %d %d %d", st->MPI_SOURCE, st->MPI_TAG, n,
        source, tag, count);
}

/* ---- generalized requests ---- */
struct greq {
  int queries, frees, cancels, last_complete;
};
static int query_fn(void* extra, MPI_Status* st) {
  struct greq* g = extra;
  ++g->queries;
  CHECK(g->frees == 0, "query_fn after free_fn");
  st->MPI_SOURCE = 5;
  st->MPI_TAG = 6;
  MPI_Status_set_elements(st, MPI_INT, 3);
  MPI_Status_set_cancelled(st, g->cancels > 0);
  return MPI_SUCCESS;
}
static int free_fn(void* extra) {
  ++((struct greq*)extra)->frees;
  return MPI_SUCCESS;
}
static int cancel_fn(void* extra, int complete) {
  struct greq* g = extra;
  ++g->cancels;
  g->last_complete = complete;
  return MPI_SUCCESS;
}

static void generalized(void) {
  struct greq g = {0, 0, 0, -1};
  MPI_Request r;
  MPI_Status st;
  int flag = 1;
  CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &g, &r));
  CHECK_OK(MPI_Test(&r, &flag, &st));
  CHECK(!flag && g.queries == 0, "incomplete generalized request: flag %d queries %d", flag,
        g.queries);
  CHECK_OK(MPI_Grequest_complete(r));
  CHECK_OK(MPI_Request_get_status(r, &flag, &st));
  CHECK(flag && g.queries == 1 && g.frees == 0, "get_status: flag %d queries %d frees %d", flag,
        g.queries, g.frees);
  expect_status(&st, 5, 6, MPI_INT, 3);
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(r == MPI_REQUEST_NULL && g.queries == 2 && g.frees == 1, "wait: queries %d frees %d",
        g.queries, g.frees);
  expect_status(&st, 5, 6, MPI_INT, 3);
  int c = -1;
  CHECK_OK(MPI_Test_cancelled(&st, &c));
  CHECK(c == 0, "not cancelled, reported %d", c);

  /* Cancelled before completion: cancel_fn sees complete = 0. */
  struct greq h = {0, 0, 0, -1};
  CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &h, &r));
  CHECK_OK(MPI_Cancel(&r));
  CHECK(h.cancels == 1 && h.last_complete == 0, "cancel_fn %d complete %d", h.cancels,
        h.last_complete);
  CHECK_OK(MPI_Grequest_complete(r));
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK_OK(MPI_Test_cancelled(&st, &c));
  CHECK(c == 1 && h.frees == 1, "cancelled %d frees %d", c, h.frees);

  /* Freed before completion: free_fn runs once it completes, query never. */
  struct greq k = {0, 0, 0, -1};
  CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &k, &r));
  MPI_Request keep = r;
  CHECK_OK(MPI_Request_free(&r));
  CHECK(k.frees == 0, "free_fn ran before completion");
  CHECK_OK(MPI_Grequest_complete(keep));
  MPI_Request none = MPI_REQUEST_NULL;
  CHECK_OK(MPI_Wait(&none, MPI_STATUS_IGNORE)); /* a completion call sweeps freed requests */
  CHECK(k.frees == 1 && k.queries == 0, "freed request: frees %d queries %d", k.frees, k.queries);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* 1 */
  {
    int out[4], in[6] = {-1, -1, -1, -1, -1, -1};
    for (int i = 0; i < 4; ++i) out[i] = rank * 10 + i;
    MPI_Request r;
    MPI_Status st;
    CHECK_OK(
        MPI_Isendrecv(out, 4, MPI_INT, right, 20, in, 6, MPI_INT, left, 20, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "wait left the request");
    expect_status(&st, left, 20, MPI_INT, 4);
    for (int i = 0; i < 4; ++i) CHECK(in[i] == left * 10 + i, "in[%d] = %d", i, in[i]);
    CHECK(in[4] == -1, "wrote past the message");

    double v[3] = {rank, rank + 0.5, -rank};
    CHECK_OK(MPI_Isendrecv_replace(v, 3, MPI_DOUBLE, right, 21, left, 21, MPI_COMM_WORLD, &r));
    int flag = 0;
    while (!flag) CHECK_OK(MPI_Request_get_status(r, &flag, &st));
    expect_status(&st, left, 21, MPI_DOUBLE, 3);
    CHECK(r != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    flag = 0;
    while (!flag) CHECK_OK(MPI_Test(&r, &flag, &st));
    expect_status(&st, left, 21, MPI_DOUBLE, 3);
    CHECK(v[0] == left && v[1] == left + 0.5 && v[2] == -left, "replace got %g %g %g", v[0], v[1],
          v[2]);

    in[0] = -7;
    CHECK_OK(MPI_Isendrecv(out, 4, MPI_INT, MPI_PROC_NULL, 22, in, 6, MPI_INT, MPI_PROC_NULL, 22,
                           MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, &st));
    expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_INT, 0);
    CHECK(in[0] == -7, "MPI_PROC_NULL receive wrote the buffer");
    CHECK_OK(MPI_Isendrecv_replace(v, 3, MPI_DOUBLE, MPI_PROC_NULL, 23, MPI_PROC_NULL, 23,
                                   MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, &st));
    expect_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_DOUBLE, 0);
    CHECK(v[0] == left, "MPI_PROC_NULL replace changed the buffer");
    /* Cancelled: the receive from nobody is withdrawn (the send to
     * MPI_PROC_NULL is complete). */
    CHECK_OK(MPI_Isendrecv(out, 4, MPI_INT, MPI_PROC_NULL, 26, in, 6, MPI_INT, left, 26,
                           MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    int cancelled = 0;
    CHECK_OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled == 1 && in[0] == -7, "cancelled MPI_Isendrecv: %d, in[0] %d", cancelled, in[0]);
    /* Freed while pending: it still completes, and its slot is swept. */
    in[0] = -1;
    CHECK_OK(
        MPI_Isendrecv(out, 4, MPI_INT, right, 24, in, 6, MPI_INT, left, 24, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    int token = 0;
    CHECK_OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 25, &token, 1, MPI_INT, left, 25,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[0] == left * 10, "a freed MPI_Isendrecv did not receive (%d)", in[0]);
    mp_barrier(MPI_COMM_WORLD); /* every rank's pair is done: the next wait sweeps it */
    MPI_Request none = MPI_REQUEST_NULL;
    CHECK_OK(MPI_Wait(&none, MPI_STATUS_IGNORE));
    int rc =
        MPI_Isendrecv(out, 4, MPI_INT, right, 20, in, 6, MPI_INT, left, 20, MPI_COMM_WORLD, NULL);
    CHECK(error_class(rc) == MPI_ERR_ARG, "NULL request: class %d", error_class(rc));
  }
  mp_barrier(MPI_COMM_WORLD);

  /* 2 */
  {
    int a = -1, b = -1, c = -1;
    MPI_Request r[3];
    MPI_Status st[3];
    int idx[3];
    CHECK_OK(MPI_Irecv(&a, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &r[0]));
    CHECK_OK(MPI_Irecv(&b, 1, MPI_INT, left, 31, MPI_COMM_WORLD, &r[1]));
    r[2] = MPI_REQUEST_NULL;
    const MPI_Request r0 = r[0], r1 = r[1];
    int flag = 1, index = -5, outcount = -5;
    CHECK_OK(MPI_Request_get_status_all(3, r, &flag, st));
    CHECK(!flag, "get_status_all true before anything was sent");
    CHECK_OK(MPI_Request_get_status_any(3, r, &index, &flag, st));
    CHECK(!flag && index == MPI_UNDEFINED, "get_status_any flag %d index %d", flag, index);
    CHECK_OK(MPI_Request_get_status_some(3, r, &outcount, idx, st));
    CHECK(outcount == 0, "get_status_some outcount %d", outcount);
    mp_barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Send(&(int){rank + 100}, 1, MPI_INT, right, 30, MPI_COMM_WORLD));
    flag = 0;
    while (!flag) CHECK_OK(MPI_Request_get_status_any(3, r, &index, &flag, &st[0]));
    CHECK(index == 0 && r[0] == r0, "get_status_any index %d (handle kept: %d)", index, r[0] == r0);
    expect_status(&st[0], left, 30, MPI_INT, 1);
    CHECK(a == left + 100, "data visible after get_status_any: %d", a);
    CHECK_OK(MPI_Request_get_status_some(3, r, &outcount, idx, st));
    /* The second message may be here already (the neighbour runs ahead). */
    CHECK(outcount >= 1 && idx[0] == 0 && r[0] == r0, "get_status_some %d", outcount);
    expect_status(&st[0], left, 30, MPI_INT, 1);
    CHECK_OK(MPI_Send(&(int){rank + 200}, 1, MPI_INT, right, 31, MPI_COMM_WORLD));
    flag = 0;
    while (!flag) CHECK_OK(MPI_Request_get_status_all(3, r, &flag, st));
    CHECK(r[0] == r0 && r[1] == r1, "get_status_all freed a request");
    expect_status(&st[0], left, 30, MPI_INT, 1);
    expect_status(&st[1], left, 31, MPI_INT, 1);
    CHECK(st[2].MPI_SOURCE == MPI_ANY_SOURCE && st[2].MPI_TAG == MPI_ANY_TAG,
          "null request's status %d %d", st[2].MPI_SOURCE, st[2].MPI_TAG);
    memset(st, 0, sizeof st);
    CHECK_OK(MPI_Waitall(3, r, st));
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "waitall kept the requests");
    expect_status(&st[0], left, 30, MPI_INT, 1);
    expect_status(&st[1], left, 31, MPI_INT, 1);
    CHECK(b == left + 200 && c == -1, "b %d", b);
  }

  /* 3 */
  generalized();
  mp_barrier(MPI_COMM_WORLD);

  /* 4 */
  {
    struct {
      int i;
      double d;
    } out = {rank, rank * 1.25}, in = {-1, -1};
    MPI_Aint disp[2];
    int lens[2] = {1, 1};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, tout, tin;
    MPI_Get_address(&out.i, &disp[0]);
    MPI_Get_address(&out.d, &disp[1]);
    CHECK_OK(MPI_Type_create_struct(2, lens, disp, types, &tout));
    CHECK_OK(MPI_Type_commit(&tout));
    MPI_Get_address(&in.i, &disp[0]);
    MPI_Get_address(&in.d, &disp[1]);
    CHECK_OK(MPI_Type_create_struct(2, lens, disp, types, &tin));
    CHECK_OK(MPI_Type_commit(&tin));
    MPI_Request r;
    MPI_Status st;
    CHECK_OK(MPI_Irecv(MPI_BOTTOM, 1, tin, left, 40, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Send(MPI_BOTTOM, 1, tout, right, 40, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(in.i == left && in.d == left * 1.25, "MPI_BOTTOM receive %d %g", in.i, in.d);
    int n = -1;
    CHECK_OK(MPI_Get_count(&st, tin, &n));
    CHECK(n == 1 && st.MPI_SOURCE == left, "count %d source %d", n, st.MPI_SOURCE);
    MPI_Request p;
    in.i = -1;
    CHECK_OK(MPI_Send_init(MPI_BOTTOM, 1, tout, right, 41, MPI_COMM_WORLD, &p));
    CHECK_OK(MPI_Start(&p));
    CHECK_OK(MPI_Recv(MPI_BOTTOM, 1, tin, left, 41, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Wait(&p, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Request_free(&p));
    CHECK(in.i == left, "MPI_BOTTOM persistent send %d", in.i);
    MPI_Type_free(&tout);
    MPI_Type_free(&tin);
    int rc = MPI_Send(MPI_BOTTOM, 1, MPI_INT, right, 42, MPI_COMM_WORLD);
    CHECK(error_class(rc) == MPI_ERR_BUFFER, "MPI_BOTTOM with MPI_INT: class %d", error_class(rc));
  }
  mp_barrier(MPI_COMM_WORLD);

  /* 5 */
  {
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int bufsize = 2 * (64 + MPI_BSEND_OVERHEAD);
    char* cbuf = malloc(bufsize);
    CHECK_OK(MPI_Comm_attach_buffer(dup, cbuf, bufsize));
    int rc = MPI_Comm_attach_buffer(dup, cbuf, bufsize);
    CHECK(error_class(rc) == MPI_ERR_BUFFER, "second attach: class %d", error_class(rc));
    char msg[64];
    for (int k = 0; k < 2; ++k) {
      memset(msg, 'a' + rank + k, sizeof msg);
      CHECK_OK(MPI_Bsend(msg, 64, MPI_CHAR, right, 50 + k, dup));
    }
    /* Too large for the communicator's buffer; and no buffer serves
     * MPI_COMM_WORLD (no process buffer is attached). */
    char too_big[200] = {0};
    rc = MPI_Bsend(too_big, 200, MPI_CHAR, right, 52, dup);
    CHECK(error_class(rc) == MPI_ERR_BUFFER, "oversized bsend: class %d", error_class(rc));
    rc = MPI_Bsend(msg, 1, MPI_CHAR, right, 52, MPI_COMM_WORLD);
    CHECK(error_class(rc) == MPI_ERR_BUFFER, "bsend without a buffer: class %d", error_class(rc));
    for (int k = 0; k < 2; ++k) {
      char got[64];
      CHECK_OK(MPI_Recv(got, 64, MPI_CHAR, left, 50 + k, dup, MPI_STATUS_IGNORE));
      CHECK(got[0] == 'a' + left + k && got[63] == 'a' + left + k, "bsend data %c", got[0]);
    }
    CHECK_OK(MPI_Comm_flush_buffer(dup));
    void* back = NULL;
    int back_size = 0;
    CHECK_OK(MPI_Comm_detach_buffer(dup, &back, &back_size));
    CHECK(back == cbuf && back_size == bufsize, "detached %p %d", back, back_size);
    free(cbuf);

    /* Automatic: any number and size of messages. */
    CHECK_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
    enum { kLarge = 100000 };
    char* large = malloc(kLarge);
    char* got = malloc(kLarge);
    memset(large, rank + 1, kLarge);
    CHECK_OK(MPI_Bsend(large, kLarge, MPI_CHAR, right, 53, MPI_COMM_WORLD));
    memset(large, 0, kLarge); /* the message was copied */
    MPI_Request fr;
    CHECK_OK(MPI_Buffer_iflush(&fr));
    CHECK_OK(MPI_Recv(got, kLarge, MPI_CHAR, left, 53, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got[0] == left + 1 && got[kLarge - 1] == left + 1, "automatic bsend data %d", got[0]);
    CHECK_OK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Buffer_flush());
    CHECK_OK(MPI_Buffer_detach(&back, &back_size));
    CHECK(back == MPI_BUFFER_AUTOMATIC && back_size == 0, "automatic detach %p %d", back,
          back_size);
    free(large);
    free(got);

    MPI_Session s;
    CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    char sbuf[256];
    CHECK_OK(MPI_Session_attach_buffer(s, sbuf, sizeof sbuf));
    CHECK_OK(MPI_Session_flush_buffer(s));
    CHECK_OK(MPI_Session_iflush_buffer(s, &fr));
    CHECK_OK(MPI_Wait(&fr, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Session_detach_buffer(s, &back, &back_size));
    CHECK(back == sbuf && back_size == (int)sizeof sbuf, "session detach %p %d", back, back_size);
    CHECK_OK(MPI_Session_finalize(&s));

    /* A communicator freed with a buffer attached takes it along: a new
     * communicator (perhaps with the same context id) has none. */
    static char kept[512];
    CHECK_OK(MPI_Comm_attach_buffer(dup, kept, sizeof kept));
    CHECK_OK(MPI_Comm_free(&dup));
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    rc = MPI_Bsend(msg, 1, MPI_CHAR, right, 54, dup);
    CHECK(error_class(rc) == MPI_ERR_BUFFER, "bsend on a new communicator: class %d",
          error_class(rc));
    CHECK_OK(MPI_Comm_free(&dup));
  }
  mp_barrier(MPI_COMM_WORLD);

  /* 6 */
  {
    long long out[5], in[5] = {0};
    for (int i = 0; i < 5; ++i) out[i] = (long long)rank << 40 | i;
    MPI_Request r;
    MPI_Status st;
    CHECK_OK(MPI_Irecv_c(in, 5, MPI_LONG_LONG, left, 60, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Send_c(out, 5, MPI_LONG_LONG, right, 60, MPI_COMM_WORLD));
    CHECK_OK(MPI_Wait(&r, &st));
    MPI_Count n = -1;
    CHECK_OK(MPI_Get_count_c(&st, MPI_LONG_LONG, &n));
    CHECK(n == 5 && in[4] == ((long long)left << 40 | 4), "count %lld", (long long)n);
    CHECK_OK(MPI_Sendrecv_c(out, 2, MPI_LONG_LONG, right, 61, in, 5, MPI_LONG_LONG, left, 61,
                            MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Get_count_c(&st, MPI_LONG_LONG, &n));
    CHECK(n == 2 && st.MPI_SOURCE == left, "sendrecv_c count %lld", (long long)n);

    const MPI_Count huge = (MPI_Count)INT_MAX + 10;
    CHECK_OK(MPI_Status_set_elements_x(&st, MPI_BYTE, huge));
    CHECK_OK(MPI_Get_count_c(&st, MPI_BYTE, &n));
    CHECK(n == huge, "MPI_Get_count_c %lld", (long long)n);
    int small = 0;
    CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &small));
    CHECK(small == MPI_UNDEFINED, "MPI_Get_count of a huge count %d", small);
    CHECK_OK(MPI_Send_c(out, huge, MPI_BYTE, MPI_PROC_NULL, 62, MPI_COMM_WORLD));
    CHECK_OK(MPI_Recv_c(in, huge, MPI_BYTE, MPI_PROC_NULL, 62, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "huge MPI_PROC_NULL receive source %d", st.MPI_SOURCE);
    int rc = MPI_Send_c(out, -1, MPI_BYTE, right, 62, MPI_COMM_WORLD);
    CHECK(error_class(rc) == MPI_ERR_COUNT, "negative count: class %d", error_class(rc));
    rc = MPI_Isend_c(out, (MPI_Count)-5, MPI_INT, right, 62, MPI_COMM_WORLD, &r);
    CHECK(error_class(rc) == MPI_ERR_COUNT, "negative count: class %d", error_class(rc));
  }
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("mp_p2p_more: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
