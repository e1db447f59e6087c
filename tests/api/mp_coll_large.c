/* The large-count (_c) collectives run the int forms: MPI_Allreduce_c,
 * MPI_Bcast_c, MPI_Gatherv_c with MPI_Count counts and MPI_Aint
 * displacements, MPI_Ialltoall_c and MPI_Allgather_init_c (started twice)
 * move the right data; a count or array entry above INT_MAX is
 * MPI_ERR_COUNT naming the call and the argument, with the buffers
 * untouched, and the communicator still works afterwards. */
#include <limits.h>

#include "mp_check.h"

static void expect_count_error(int rc, const char* call, const char* arg) {
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING];
  CHECK(rc != MPI_SUCCESS, "%s accepted a count above INT_MAX", call);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_COUNT, "%s: error class %d, want MPI_ERR_COUNT", call, cls);
  MPI_Error_string(rc, msg, &len);
  CHECK(strstr(msg, call) != NULL, "message '%s' does not name %s", msg, call);
  CHECK(strstr(msg, arg) != NULL, "message '%s' does not name %s", msg, arg);
}

static void check_empty_status(const MPI_Status* st, const char* what) {
  int n = -1;
  CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE, "%s: MPI_SOURCE %d", what, st->MPI_SOURCE);
  CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: MPI_TAG %d", what, st->MPI_TAG);
  MPI_Get_count(st, MPI_INT, &n);
  CHECK(n == 0, "%s: count %d", what, n);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

  /* MPI_Allreduce_c */
  int in[5], out[5];
  for (int i = 0; i < 5; ++i) in[i] = (rank + 1) * (i + 1);
  CHECK_OK(MPI_Allreduce_c(in, out, (MPI_Count)5, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < 5; ++i)
    CHECK(out[i] == size * (size + 1) / 2 * (i + 1), "allreduce[%d] = %d", i, out[i]);

  /* MPI_Bcast_c from the last rank */
  double d[7];
  for (int i = 0; i < 7; ++i) d[i] = rank == size - 1 ? 0.5 * i + 3 : -1;
  CHECK_OK(MPI_Bcast_c(d, (MPI_Count)7, MPI_DOUBLE, size - 1, MPI_COMM_WORLD));
  for (int i = 0; i < 7; ++i) CHECK(d[i] == 0.5 * i + 3, "bcast[%d] = %g", i, d[i]);

  /* MPI_Gatherv_c at root 0: rank r sends r + 1 ints, placed in reverse rank
   * order with a gap of two ints after each block (the gaps stay -7). */
  int send[8], recv[64];
  for (int k = 0; k <= rank; ++k) send[k] = 100 * rank + k;
  MPI_Count counts[8];
  MPI_Aint displs[8];
  MPI_Aint at = 0;
  for (int r = size - 1; r >= 0; --r) {
    counts[r] = r + 1;
    displs[r] = at;
    at += r + 1 + 2;
  }
  for (int i = 0; i < 64; ++i) recv[i] = -7;
  CHECK_OK(MPI_Gatherv_c(send, (MPI_Count)(rank + 1), MPI_INT, recv, counts, displs, MPI_INT, 0,
                         MPI_COMM_WORLD));
  if (rank == 0) {
    for (int r = 0; r < size; ++r) {
      for (int k = 0; k <= r; ++k)
        CHECK(recv[displs[r] + k] == 100 * r + k, "gatherv block %d item %d = %d", r, k,
              recv[displs[r] + k]);
      CHECK(recv[displs[r] + r + 1] == -7 && recv[displs[r] + r + 2] == -7,
            "gatherv wrote into the gap after block %d", r);
    }
  }

  /* MPI_Ialltoall_c: two ints per peer */
  int a2a_in[16], a2a_out[16];
  for (int p = 0; p < size; ++p)
    for (int k = 0; k < 2; ++k) a2a_in[2 * p + k] = 1000 * rank + 10 * p + k;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status st;
  CHECK_OK(MPI_Ialltoall_c(a2a_in, (MPI_Count)2, MPI_INT, a2a_out, (MPI_Count)2, MPI_INT,
                           MPI_COMM_WORLD, &req));
  CHECK_OK(MPI_Wait(&req, &st));
  CHECK(req == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
  check_empty_status(&st, "ialltoall");
  for (int p = 0; p < size; ++p)
    for (int k = 0; k < 2; ++k)
      CHECK(a2a_out[2 * p + k] == 1000 * p + 10 * rank + k, "alltoall from %d item %d = %d", p, k,
            a2a_out[2 * p + k]);

  /* MPI_Allgather_init_c, started twice with new data */
  int ag_in[3], ag_out[24];
  CHECK_OK(MPI_Allgather_init_c(ag_in, (MPI_Count)3, MPI_INT, ag_out, (MPI_Count)3, MPI_INT,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &req));
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < 3; ++k) ag_in[k] = round * 10000 + rank * 10 + k;
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Wait(&req, &st));
    check_empty_status(&st, "allgather_init");
    for (int p = 0; p < size; ++p)
      for (int k = 0; k < 3; ++k)
        CHECK(ag_out[3 * p + k] == round * 10000 + p * 10 + k, "round %d allgather[%d][%d] = %d",
              round, p, k, ag_out[3 * p + k]);
  }
  CHECK(req != MPI_REQUEST_NULL, "persistent request freed by MPI_Wait");
  CHECK_OK(MPI_Request_free(&req));

  /* With MPI_IN_PLACE the send count is ignored, however large. */
  int ip[8];
  for (int p = 0; p < size; ++p) ip[p] = p == rank ? 50 + rank : -1;
  CHECK_OK(MPI_Allgather_c(MPI_IN_PLACE, (MPI_Count)INT_MAX + 7, MPI_INT, ip, (MPI_Count)1, MPI_INT,
                           MPI_COMM_WORLD));
  for (int p = 0; p < size; ++p) CHECK(ip[p] == 50 + p, "in-place allgather[%d] = %d", p, ip[p]);

  /* A count above INT_MAX: refused on every rank before anything moves (the
   * buffer is a few bytes; nothing may be read or written). */
  unsigned char tiny[4] = {1, 2, 3, 4};
  int rc = MPI_Bcast_c(tiny, (MPI_Count)INT_MAX + 1, MPI_BYTE, 0, MPI_COMM_WORLD);
  expect_count_error(rc, "MPI_Bcast_c", "count");
  CHECK(tiny[0] == 1 && tiny[3] == 4, "MPI_Bcast_c wrote the buffer");
  req = MPI_REQUEST_NULL;
  rc = MPI_Iallreduce_c(in, out, (MPI_Count)INT_MAX + 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
  expect_count_error(rc, "MPI_Iallreduce_c", "count");
  CHECK(req == MPI_REQUEST_NULL, "a refused MPI_Iallreduce_c set the request");

  /* Array entries above INT_MAX, on MPI_COMM_SELF (the check is local). */
  MPI_Count big[1] = {(MPI_Count)INT_MAX + 1};
  MPI_Aint zero[1] = {0};
  for (int i = 0; i < 8; ++i) recv[i] = -7;
  rc = MPI_Gatherv_c(send, (MPI_Count)1, MPI_INT, recv, big, zero, MPI_INT, 0, MPI_COMM_SELF);
  expect_count_error(rc, "MPI_Gatherv_c", "recvcounts[0]");
  CHECK(recv[0] == -7, "a refused MPI_Gatherv_c wrote the receive buffer");
  MPI_Count one[1] = {1};
  MPI_Aint far[1] = {(MPI_Aint)INT_MAX + 3};
  rc = MPI_Alltoallv_c(send, one, far, MPI_INT, recv, one, zero, MPI_INT, MPI_COMM_SELF);
  expect_count_error(rc, "MPI_Alltoallv_c", "sdispls[0]");

  /* The communicator still works. */
  CHECK_OK(MPI_Allreduce_c(in, out, (MPI_Count)5, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  for (int i = 0; i < 5; ++i) CHECK(out[i] == size * (i + 1), "max[%d] = %d", i, out[i]);

  MPI_Finalize();
  if (rank == 0) printf("mp_coll_large: ok on %d ranks\n", size);
  return 0;
}
