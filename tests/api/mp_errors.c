/* Every argument error under MPI_ERRORS_RETURN: the call returns the right
 * class, MPI_Error_string names the call, the argument and this rank, and
 * nothing changed (output handles untouched, no message sent: a normal
 * exchange afterwards still matches). Also truncation across processes,
 * errors on a freed communicator, and a user error handler on a dup. */
#include "mp_check.h"

static void expect_error(int rc, int cls, const char* text, const char* what, int rank) {
  int got = -1;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  CHECK(rc != MPI_SUCCESS, "%s: succeeded, expected class %d", what, cls);
  CHECK_OK(MPI_Error_class(rc, &got));
  CHECK_OK(MPI_Error_string(rc, msg, &len));
  CHECK(got == cls, "%s: class %d, expected %d (%s)", what, got, cls, msg);
  CHECK(strstr(msg, text) != NULL, "%s: message \"%s\" lacks \"%s\"", what, msg, text);
  char rank_text[32];
  snprintf(rank_text, sizeof(rank_text), "(rank %d)", rank);
  CHECK(strstr(msg, rank_text) != NULL, "%s: message \"%s\" lacks \"%s\"", what, msg, rank_text);
}
#define EXPECT_ERROR(call, cls, text) expect_error((call), (cls), (text), #call, rank)

static int handler_calls = 0;
static void count_errors(MPI_Comm* comm, int* code, ...) {
  ++handler_calls;
}

int main(int argc, char** argv) {
  int rank, size;
  mp_init(&argc, &argv, &rank, &size);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int* tag_ub = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB %d", flag ? *tag_ub : -1);

  int buf[8] = {0}, peer = (rank + 1) % size;
  MPI_Request req = MPI_REQUEST_NULL;
  char text[128];
  snprintf(text, sizeof(text), "invalid destination rank %d (communicator size %d)", size, size);
  EXPECT_ERROR(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, text);
  EXPECT_ERROR(MPI_Isend(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK, "MPI_Isend");
  EXPECT_ERROR(MPI_Recv(buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
               MPI_ERR_RANK, "invalid source rank");
  EXPECT_ERROR(MPI_Send(buf, 1, MPI_INT, peer, -2, MPI_COMM_WORLD), MPI_ERR_TAG, "invalid tag -2");
  EXPECT_ERROR(MPI_Ssend(buf, 1, MPI_INT, peer, *tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG,
               "MPI_Ssend");
  EXPECT_ERROR(MPI_Irecv(buf, 1, MPI_INT, peer, -3, MPI_COMM_WORLD, &req), MPI_ERR_TAG,
               "invalid tag -3");
  EXPECT_ERROR(MPI_Bsend(buf, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
               "negative count -1");
  EXPECT_ERROR(MPI_Rsend(buf, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
               "MPI_DATATYPE_NULL");
  MPI_Datatype uncommitted;
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
  EXPECT_ERROR(MPI_Send_init(buf, 1, uncommitted, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_TYPE,
               "not committed");
  CHECK_OK(MPI_Type_free(&uncommitted));
  EXPECT_ERROR(MPI_Issend(NULL, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER,
               "buffer is NULL");
  EXPECT_ERROR(MPI_Send(buf, 1, MPI_INT, peer, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
  EXPECT_ERROR(MPI_Sendrecv(buf, 4, MPI_INT, peer, 0, buf + 2, 4, MPI_INT, peer, 0, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE),
               MPI_ERR_BUFFER, "overlap");
  EXPECT_ERROR(MPI_Wait(&buf[0], MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "invalid request");
  EXPECT_ERROR(MPI_Request_free(&req), MPI_ERR_REQUEST, "MPI_REQUEST_NULL");
  EXPECT_ERROR(MPI_Type_contiguous(-1, MPI_INT, &uncommitted), MPI_ERR_COUNT, "negative count");
  int bad_op = MPI_OP_NULL;
  EXPECT_ERROR(MPI_Reduce_local(buf, buf + 4, 1, MPI_INT, bad_op), MPI_ERR_OP, "invalid op");
  EXPECT_ERROR(MPI_Reduce_local(buf, buf + 4, 1, MPI_DOUBLE_INT, MPI_SUM), MPI_ERR_OP,
               "not defined");
  CHECK(req == MPI_REQUEST_NULL, "a failed call changed the request handle");

  /* A freed communicator is reported, not used. */
  MPI_Comm dup, saved;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  saved = dup;
  CHECK_OK(MPI_Comm_free(&dup));
  EXPECT_ERROR(MPI_Send(buf, 1, MPI_INT, peer, 0, saved), MPI_ERR_COMM, "invalid communicator");

  /* A user handler on a duplicate sees the error; the world's stays RETURN. */
  MPI_Errhandler eh;
  CHECK_OK(MPI_Comm_create_errhandler(count_errors, &eh));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Comm_set_errhandler(dup, eh));
  EXPECT_ERROR(MPI_Send(buf, 1, MPI_INT, size, 0, dup), MPI_ERR_RANK, "destination");
  CHECK(handler_calls == 1, "user handler called %d times", handler_calls);
  CHECK_OK(MPI_Errhandler_free(&eh));

  /* Nothing was sent by the failed calls: the next message from the left is this one. */
  if (size > 1) {
    int left = (rank + size - 1) % size, v = rank + 1000, got = -1;
    MPI_Status st;
    CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, peer, 0, &got, 1, MPI_INT, left, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &st));
    CHECK(got == left + 1000 && st.MPI_TAG == 0, "after errors got %d tag %d", got, st.MPI_TAG);

    /* Truncation across processes: 8 ints into room for 2. */
    int small[2] = {-1, -1};
    for (int i = 0; i < 8; ++i) buf[i] = 10 + i;
    MPI_Request sreq;
    CHECK_OK(MPI_Isend(buf, 8, MPI_INT, peer, 5, MPI_COMM_WORLD, &sreq));
    EXPECT_ERROR(MPI_Recv(small, 2, MPI_INT, left, 5, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE,
                 "MPI_Recv");
    CHECK_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
  }
  CHECK_OK(MPI_Comm_free(&dup));
  mp_barrier(MPI_COMM_WORLD);

  /* A collective whose message does not fit: the error names the step,
   * its size and the peer (the last rank receives 4 ints of the root's 8
   * from its parent in the tree). */
  if (size == 2) {
    int b[8] = {0};
    if (rank == 0) {
      CHECK_OK(MPI_Bcast(b, 8, MPI_INT, 0, MPI_COMM_WORLD));
    } else {
      EXPECT_ERROR(MPI_Bcast(b, 4, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_TRUNCATE,
                   "receiving 16 bytes from rank 0");
    }
    mp_barrier(MPI_COMM_WORLD);
  }
  /* The root's own gatherv block larger than its recvcounts entry: refused
   * before anything moves (so only the root calls). */
  if (rank == 0) {
    int mine[4] = {1, 2, 3, 4}, all[64] = {0}, counts[16], displs[16];
    for (int i = 0; i < size && i < 16; ++i) counts[i] = 2, displs[i] = 4 * i;
    EXPECT_ERROR(MPI_Gatherv(mine, 4, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD),
                 MPI_ERR_TRUNCATE, "recvcounts[0]");
    CHECK(all[0] == 0, "the refused gatherv wrote the receive buffer");
  }
  if (rank == 0) printf("errors OK (%d ranks)\n", size);
  MPI_Finalize();
  return 0;
}
