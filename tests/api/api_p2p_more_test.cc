// Matched probe, MPI_Isendrecv, MPI_BOTTOM, large counts and generalized
// requests through the API over the one-process fake runtime: argument
// errors (class, message, nothing changed) and self messaging.
#include <gtest/gtest.h>

#include <climits>
#include <string>

#include "mpi.h"

namespace {

int ErrorClass(int code) {
  int cls = -1;
  MPI_Error_class(code, &cls);
  return cls;
}
std::string ErrorString(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, buf, &len);
  return buf;
}

class ApiP2pMore : public ::testing::Test {
 protected:
  void SetUp() override {
    int init = 0, fini = 0;
    MPI_Finalized(&fini);
    if (fini) GTEST_SKIP() << "MPI already finalized in this process";
    MPI_Initialized(&init);
    if (!init) {
      ASSERT_EQ(MPI_Init(nullptr, nullptr), MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
  }
};

TEST_F(ApiP2pMore, MatchedProbeTakesTheMessage) {
  int a[2] = {1, 2}, b = 3;
  ASSERT_EQ(MPI_Send(a, 2, MPI_INT, 0, 5, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(&b, 1, MPI_INT, 0, 5, MPI_COMM_WORLD), MPI_SUCCESS);
  MPI_Message m = MPI_MESSAGE_NULL;
  MPI_Status st;
  ASSERT_EQ(MPI_Mprobe(0, 5, MPI_COMM_WORLD, &m, &st), MPI_SUCCESS);
  int n = -1;
  MPI_Get_count(&st, MPI_INT, &n);
  EXPECT_EQ(n, 2);
  // The next receive gets the second message: the first left matching.
  int got = 0;
  ASSERT_EQ(MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st), MPI_SUCCESS);
  EXPECT_EQ(got, 3);
  int back[2] = {0, 0};
  ASSERT_EQ(MPI_Mrecv(back, 2, MPI_INT, &m, &st), MPI_SUCCESS);
  EXPECT_EQ(m, MPI_MESSAGE_NULL);
  EXPECT_EQ(back[0], 1);
  EXPECT_EQ(back[1], 2);
  EXPECT_EQ(st.MPI_TAG, 5);

  int flag = 1;
  m = 77;
  ASSERT_EQ(MPI_Improbe(0, 5, MPI_COMM_WORLD, &flag, &m, &st), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(m, 77);  // untouched when nothing matched
}

TEST_F(ApiP2pMore, MessageHandleErrors) {
  int x = 0;
  MPI_Message m = MPI_MESSAGE_NULL;
  int rc = MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_REQUEST);
  EXPECT_NE(ErrorString(rc).find("MPI_Mrecv"), std::string::npos) << ErrorString(rc);
  m = NICQ_HANDLE(NICQ_KIND_MESSAGE, 999);
  rc = MPI_Mrecv(&x, 1, MPI_INT, &m, MPI_STATUS_IGNORE);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_REQUEST);
  EXPECT_EQ(m, NICQ_HANDLE(NICQ_KIND_MESSAGE, 999));
  m = MPI_MESSAGE_NO_PROC;
  MPI_Request r = 12345;
  rc = MPI_Imrecv(&x, -1, MPI_INT, &m, &r);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_COUNT);
  EXPECT_EQ(m, MPI_MESSAGE_NO_PROC);  // a failed call changes nothing
  EXPECT_EQ(r, 12345);
  rc = MPI_Mprobe(0, 1, MPI_COMM_WORLD, nullptr, MPI_STATUS_IGNORE);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_ARG);
}

TEST_F(ApiP2pMore, IsendrecvSelfAndProcNull) {
  int out[3] = {4, 5, 6}, in[3] = {0, 0, 0};
  MPI_Request r;
  MPI_Status st;
  ASSERT_EQ(MPI_Isendrecv(out, 3, MPI_INT, 0, 9, in, 3, MPI_INT, 0, 9, MPI_COMM_WORLD, &r),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  EXPECT_EQ(in[2], 6);
  EXPECT_EQ(st.MPI_SOURCE, 0);
  EXPECT_EQ(st.MPI_TAG, 9);
  ASSERT_EQ(MPI_Isendrecv_replace(out, 3, MPI_INT, MPI_PROC_NULL, 9, MPI_PROC_NULL, 9,
                                  MPI_COMM_WORLD, &r),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  EXPECT_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  EXPECT_EQ(st.MPI_TAG, MPI_ANY_TAG);
  EXPECT_EQ(out[0], 4);
}

TEST_F(ApiP2pMore, BottomNeedsAbsoluteAddresses) {
  int value = 41, got = 0;
  MPI_Aint addr;
  MPI_Get_address(&value, &addr);
  int len = 1;
  MPI_Datatype t, in_t, types[1] = {MPI_INT};
  ASSERT_EQ(MPI_Type_create_struct(1, &len, &addr, types, &t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
  MPI_Get_address(&got, &addr);
  ASSERT_EQ(MPI_Type_create_struct(1, &len, &addr, types, &in_t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&in_t), MPI_SUCCESS);
  MPI_Request r;
  ASSERT_EQ(MPI_Irecv(MPI_BOTTOM, 1, in_t, 0, 3, MPI_COMM_WORLD, &r), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(MPI_BOTTOM, 1, t, 0, 3, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(got, 41);
  MPI_Type_free(&t);
  MPI_Type_free(&in_t);
  int rc = MPI_Send(MPI_BOTTOM, 2, MPI_INT, 0, 3, MPI_COMM_WORLD);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_BUFFER);
  EXPECT_NE(ErrorString(rc).find("absolute addresses"), std::string::npos) << ErrorString(rc);
}

TEST_F(ApiP2pMore, LargeCounts) {
  const MPI_Count huge = MPI_Count{INT_MAX} + 2;  // odd: not a whole number of doubles
  char c = 0;
  ASSERT_EQ(MPI_Send_c(&c, huge, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  MPI_Request r = 12345;
  int rc = MPI_Irecv_c(&c, -2, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &r);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_COUNT);
  EXPECT_NE(ErrorString(rc).find("MPI_Irecv_c"), std::string::npos) << ErrorString(rc);
  EXPECT_EQ(r, 12345);
  rc = MPI_Send_c(&c, MPI_Count{1} << 62, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_COUNT) << ErrorString(rc);
  MPI_Status st;
  ASSERT_EQ(MPI_Status_set_elements_x(&st, MPI_INT, huge), MPI_SUCCESS);
  MPI_Count n = 0;
  ASSERT_EQ(MPI_Get_count_c(&st, MPI_INT, &n), MPI_SUCCESS);
  EXPECT_EQ(n, huge);
  ASSERT_EQ(MPI_Get_count_c(&st, MPI_DOUBLE, &n), MPI_SUCCESS);
  EXPECT_EQ(n, MPI_UNDEFINED);  // not a whole number of doubles
}

int g_queries = 0, g_frees = 0;
int Query(void*, MPI_Status* st) {
  ++g_queries;
  st->MPI_SOURCE = 2;
  st->MPI_TAG = 3;
  return MPI_SUCCESS;
}
int FreeFn(void*) {
  ++g_frees;
  return MPI_ERR_OTHER;
}
int CancelFn(void*, int) {
  return MPI_SUCCESS;
}

TEST_F(ApiP2pMore, GeneralizedRequestErrors) {
  MPI_Request r;
  ASSERT_EQ(MPI_Grequest_start(Query, FreeFn, CancelFn, nullptr, &r), MPI_SUCCESS);
  int rc = MPI_Grequest_complete(MPI_REQUEST_NULL);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_REQUEST);
  ASSERT_EQ(MPI_Grequest_complete(r), MPI_SUCCESS);
  rc = MPI_Grequest_complete(r);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_REQUEST);
  MPI_Status st;
  rc = MPI_Wait(&r, &st);  // free_fn's error is the wait's
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER);
  EXPECT_NE(ErrorString(rc).find("free_fn"), std::string::npos) << ErrorString(rc);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  EXPECT_EQ(g_queries, 1);
  EXPECT_EQ(g_frees, 1);
}

// The completion calls' common case (every handle MPI_REQUEST_NULL or a
// live point-to-point request: no Call is made unless something fails)
// reports a request's own error as the checked path does: MPI_ERR_IN_STATUS
// naming the call with the code in the request's status for the array
// forms, the error itself for MPI_Test and MPI_Waitany; null entries and
// inactive persistent requests report an empty status and stay; an invalid
// handle among valid ones changes nothing.
TEST_F(ApiP2pMore, CompletionFastPathsKeepEveryError) {
  int big[4] = {1, 2, 3, 4}, small[2] = {0, 0}, unused = 0;
  MPI_Request persistent = MPI_REQUEST_NULL;
  ASSERT_EQ(MPI_Recv_init(&unused, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, &persistent), MPI_SUCCESS);
  auto post = [&](int tag, MPI_Request rs[4]) {
    ASSERT_EQ(MPI_Irecv(small, 2, MPI_INT, 0, tag, MPI_COMM_WORLD, &rs[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(big, 4, MPI_INT, 0, tag, MPI_COMM_WORLD, &rs[1]), MPI_SUCCESS);
    rs[2] = MPI_REQUEST_NULL;
    rs[3] = persistent;
  };
  MPI_Request rs[4];
  MPI_Status sts[4];
  for (MPI_Status& s : sts) s.MPI_SOURCE = s.MPI_TAG = s.MPI_ERROR = -7;

  // MPI_Testall: all or nothing, the truncation in its status.
  post(21, rs);
  int flag = 0, rc = MPI_SUCCESS;
  for (int spins = 0; !flag && spins < 100000; ++spins) rc = MPI_Testall(4, rs, &flag, sts);
  ASSERT_TRUE(flag);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_IN_STATUS);
  EXPECT_NE(ErrorString(rc).find("MPI_Testall"), std::string::npos) << ErrorString(rc);
  EXPECT_EQ(ErrorClass(sts[0].MPI_ERROR), MPI_ERR_TRUNCATE);
  EXPECT_EQ(sts[0].MPI_TAG, 21);
  EXPECT_EQ(sts[1].MPI_ERROR, MPI_SUCCESS);
  for (int i : {2, 3}) {
    EXPECT_EQ(sts[i].MPI_SOURCE, MPI_ANY_SOURCE) << i;
    EXPECT_EQ(sts[i].MPI_TAG, MPI_ANY_TAG) << i;
    EXPECT_EQ(sts[i].MPI_ERROR, MPI_SUCCESS) << i;
  }
  EXPECT_EQ(rs[0], MPI_REQUEST_NULL);
  EXPECT_EQ(rs[1], MPI_REQUEST_NULL);
  EXPECT_EQ(rs[3], persistent);
  EXPECT_EQ(small[1], 2);

  // MPI_Waitsome: the call that reports the receive fails with
  // MPI_ERR_IN_STATUS; the inactive entries are never reported.
  small[1] = 0;
  post(22, rs);
  bool saw_receive = false;
  for (int completed = 0; completed < 2;) {
    int out = -1, idx[4];
    MPI_Status ss[4];
    rc = MPI_Waitsome(4, rs, &out, idx, ss);
    ASSERT_GE(out, 1);
    for (int k = 0; k < out; ++k) {
      if (idx[k] == 0) {
        saw_receive = true;
        EXPECT_EQ(ErrorClass(rc), MPI_ERR_IN_STATUS);
        EXPECT_NE(ErrorString(rc).find("MPI_Waitsome"), std::string::npos) << ErrorString(rc);
        EXPECT_EQ(ErrorClass(ss[k].MPI_ERROR), MPI_ERR_TRUNCATE);
        EXPECT_EQ(ss[k].MPI_TAG, 22);
      } else {
        EXPECT_EQ(idx[k], 1);
      }
    }
    completed += out;
  }
  EXPECT_TRUE(saw_receive);
  int out = -1, idx[4];
  ASSERT_EQ(MPI_Waitsome(4, rs, &out, idx, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(out, MPI_UNDEFINED);
  EXPECT_EQ(rs[3], persistent);
  EXPECT_EQ(small[1], 2);

  // MPI_Waitany: the receive's own error, raised, with its index.
  post(23, rs);
  saw_receive = false;
  for (int n = 0; n < 2; ++n) {
    int index = -1;
    MPI_Status st;
    st.MPI_TAG = -7;
    rc = MPI_Waitany(4, rs, &index, &st);
    if (index == 0) {
      saw_receive = true;
      EXPECT_EQ(ErrorClass(rc), MPI_ERR_TRUNCATE);
      EXPECT_NE(ErrorString(rc).find("MPI_Irecv"), std::string::npos) << ErrorString(rc);
      EXPECT_EQ(st.MPI_TAG, 23);
    } else {
      EXPECT_EQ(index, 1);
      EXPECT_EQ(rc, MPI_SUCCESS);
    }
  }
  EXPECT_TRUE(saw_receive);
  int index = -1;
  ASSERT_EQ(MPI_Waitany(4, rs, &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(index, MPI_UNDEFINED);

  // MPI_Test: the same error, the handle freed.
  post(24, rs);
  MPI_Status st;
  flag = 0;
  for (int spins = 0; !flag && spins < 100000; ++spins) rc = MPI_Test(&rs[0], &flag, &st);
  ASSERT_TRUE(flag);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_TRUNCATE);
  EXPECT_EQ(st.MPI_TAG, 24);
  EXPECT_EQ(rs[0], MPI_REQUEST_NULL);
  ASSERT_EQ(MPI_Wait(&rs[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
  // An inactive persistent request tests complete, with an empty status.
  flag = 0;
  st.MPI_TAG = -7;
  ASSERT_EQ(MPI_Test(&rs[3], &flag, &st), MPI_SUCCESS);
  EXPECT_TRUE(flag);
  EXPECT_EQ(st.MPI_TAG, MPI_ANY_TAG);
  EXPECT_EQ(rs[3], persistent);

  // A stale handle after a live one: MPI_ERR_REQUEST, the live one kept.
  int x = 0, y = 5;
  MPI_Request live, stale;
  ASSERT_EQ(MPI_Irecv(&x, 1, MPI_INT, 0, 25, MPI_COMM_WORLD, &live), MPI_SUCCESS);
  ASSERT_EQ(MPI_Isend(&y, 1, MPI_INT, 0, 26, MPI_COMM_WORLD, &stale), MPI_SUCCESS);
  MPI_Request stale_copy = stale;
  int got = 0;
  ASSERT_EQ(MPI_Recv(&got, 1, MPI_INT, 0, 26, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&stale, MPI_STATUS_IGNORE), MPI_SUCCESS);
  MPI_Request pair[2] = {live, stale_copy};
  EXPECT_EQ(ErrorClass(MPI_Waitall(2, pair, MPI_STATUSES_IGNORE)), MPI_ERR_REQUEST);
  EXPECT_EQ(ErrorClass(MPI_Waitany(2, pair, &index, MPI_STATUS_IGNORE)), MPI_ERR_REQUEST);
  EXPECT_EQ(pair[0], live);
  ASSERT_EQ(MPI_Send(&y, 1, MPI_INT, 0, 25, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&live, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(x, 5);
  ASSERT_EQ(MPI_Request_free(&persistent), MPI_SUCCESS);
}

}  // namespace
