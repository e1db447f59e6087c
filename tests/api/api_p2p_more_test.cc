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

}  // namespace
