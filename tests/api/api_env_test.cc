// The MPI API over a one-process fake runtime: environment, error codes and
// messages, error handlers, info objects, communicators and groups.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "mpi.h"

namespace {

std::string ErrorString(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  EXPECT_EQ(MPI_Error_string(code, buf, &len), MPI_SUCCESS);
  EXPECT_EQ(static_cast<int>(std::strlen(buf)), len);
  return buf;
}

int ErrorClass(int code) {
  int cls = -1;
  EXPECT_EQ(MPI_Error_class(code, &cls), MPI_SUCCESS);
  return cls;
}

class Api : public ::testing::Test {
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

TEST(ApiLifecycle, CallsBeforeInitAreReported) {
  int flag = 1;
  EXPECT_EQ(MPI_Initialized(&flag), MPI_SUCCESS);
  if (flag) GTEST_SKIP() << "needs a fresh process (ctest runs each test alone)";
  EXPECT_EQ(flag, 0);
  int rank = -5;
  int rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER);
  EXPECT_EQ(rank, -5);
  std::string msg = ErrorString(rc);
  EXPECT_NE(msg.find("MPI_Comm_rank"), std::string::npos) << msg;
  EXPECT_NE(msg.find("before MPI_Init"), std::string::npos) << msg;
  // Version queries work at any time.
  int v = 0, sv = 0;
  EXPECT_EQ(MPI_Get_version(&v, &sv), MPI_SUCCESS);
  EXPECT_EQ(v, 4);
  EXPECT_EQ(sv, 1);
}

TEST(ApiLifecycle, InitQueryFinalize) {
  int provided = -1, already = 0;
  MPI_Initialized(&already);
  if (already) GTEST_SKIP() << "needs a fresh process (ctest runs each test alone)";
  ASSERT_EQ(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
  EXPECT_EQ(provided, MPI_THREAD_MULTIPLE);
  int q = -1, main = 0, flag = 0;
  EXPECT_EQ(MPI_Query_thread(&q), MPI_SUCCESS);
  EXPECT_EQ(q, MPI_THREAD_MULTIPLE);
  EXPECT_EQ(MPI_Is_thread_main(&main), MPI_SUCCESS);
  EXPECT_EQ(main, 1);
  EXPECT_EQ(MPI_Initialized(&flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  int size = 0;
  EXPECT_EQ(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 1);
  EXPECT_EQ(MPI_Finalize(), MPI_SUCCESS);
  EXPECT_EQ(MPI_Finalized(&flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  int rc = MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_OTHER);
  EXPECT_NE(ErrorString(rc).find("after MPI_Finalize"), std::string::npos);
  EXPECT_EQ(ErrorClass(MPI_Init(nullptr, nullptr)), MPI_ERR_OTHER);
}

TEST_F(Api, ErrorCodesCarryTheirMessage) {
  int rc = MPI_Send(nullptr, 0, MPI_INT, 7, 0, MPI_COMM_WORLD);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_RANK);
  EXPECT_EQ(ErrorString(rc), "MPI_Send(rank 0): invalid destination rank 7 (communicator size 1)");
  EXPECT_LE(rc, MPI_ERR_LASTCODE);
  // Plain classes give their class text.
  EXPECT_NE(ErrorString(MPI_ERR_TRUNCATE).find("truncated"), std::string::npos);
  EXPECT_EQ(ErrorClass(MPI_ERR_TAG), MPI_ERR_TAG);
  EXPECT_EQ(ErrorString(MPI_SUCCESS).rfind("MPI_SUCCESS", 0), 0u);
  int cls = 0;
  EXPECT_NE(MPI_Error_class(-4, &cls), MPI_SUCCESS);
}

TEST_F(Api, ManyErrorsKeepRecentMessages) {
  int codes[10];
  for (int i = 0; i < 10; ++i) codes[i] = MPI_Send(nullptr, 0, MPI_INT, 100 + i, 0, MPI_COMM_WORLD);
  for (int i = 0; i < 10; ++i)
    EXPECT_NE(ErrorString(codes[i]).find("rank " + std::to_string(100 + i)), std::string::npos);
}

int g_handler_calls = 0;
int g_handler_code = 0;
void CountingHandler(MPI_Comm* comm, int* code, ...) {
  ++g_handler_calls;
  g_handler_code = *code;
  EXPECT_EQ(*comm, MPI_COMM_WORLD);
}

TEST_F(Api, UserErrorHandler) {
  MPI_Errhandler eh;
  ASSERT_EQ(MPI_Comm_create_errhandler(CountingHandler, &eh), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh), MPI_SUCCESS);
  MPI_Errhandler got;
  ASSERT_EQ(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got), MPI_SUCCESS);
  EXPECT_EQ(got, eh);
  int rc = MPI_Send(nullptr, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_BUFFER);
  EXPECT_EQ(g_handler_calls, 1);
  EXPECT_EQ(g_handler_code, rc);
  EXPECT_EQ(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER), MPI_SUCCESS);
  EXPECT_EQ(g_handler_calls, 2);
  ASSERT_EQ(MPI_Errhandler_free(&eh), MPI_SUCCESS);
  EXPECT_EQ(eh, MPI_ERRHANDLER_NULL);
  ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
}

TEST_F(Api, FatalHandlerAbortsWithMessage) {
  EXPECT_EXIT(
      {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Send(nullptr, 0, MPI_INT, 0, -3, MPI_COMM_WORLD);
      },
      ::testing::ExitedWithCode(MPI_ERR_TAG), "MPI_Send\\(rank 0\\): invalid tag -3");
}

TEST_F(Api, Info) {
  MPI_Info info;
  ASSERT_EQ(MPI_Info_create(&info), MPI_SUCCESS);
  EXPECT_EQ(MPI_Info_set(info, "alpha", "1"), MPI_SUCCESS);
  EXPECT_EQ(MPI_Info_set(info, "beta", "two"), MPI_SUCCESS);
  EXPECT_EQ(MPI_Info_set(info, "alpha", "one"), MPI_SUCCESS);  // replaces
  int n = 0, flag = 0, len = 0;
  EXPECT_EQ(MPI_Info_get_nkeys(info, &n), MPI_SUCCESS);
  EXPECT_EQ(n, 2);
  char key[MPI_MAX_INFO_KEY + 1], value[16];
  EXPECT_EQ(MPI_Info_get_nthkey(info, 1, key), MPI_SUCCESS);
  EXPECT_STREQ(key, "beta");
  EXPECT_EQ(MPI_Info_get(info, "alpha", sizeof(value) - 1, value, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_STREQ(value, "one");
  EXPECT_EQ(MPI_Info_get(info, "alpha", 2, value, &flag), MPI_SUCCESS);  // truncated copy
  EXPECT_STREQ(value, "on");
  EXPECT_EQ(MPI_Info_get_valuelen(info, "beta", &len, &flag), MPI_SUCCESS);
  EXPECT_EQ(len, 3);
  EXPECT_EQ(MPI_Info_get(info, "gamma", 15, value, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);
  MPI_Info copy;
  ASSERT_EQ(MPI_Info_dup(info, &copy), MPI_SUCCESS);
  EXPECT_EQ(MPI_Info_delete(info, "alpha"), MPI_SUCCESS);
  EXPECT_EQ(ErrorClass(MPI_Info_delete(info, "alpha")), MPI_ERR_INFO_NOKEY);
  EXPECT_EQ(MPI_Info_get_nkeys(copy, &n), MPI_SUCCESS);
  EXPECT_EQ(n, 2);  // the duplicate is independent
  EXPECT_EQ(ErrorClass(MPI_Info_get_nthkey(info, 5, key)), MPI_ERR_ARG);
  std::string longkey(MPI_MAX_INFO_KEY + 1, 'k');
  EXPECT_EQ(ErrorClass(MPI_Info_set(info, longkey.c_str(), "v")), MPI_ERR_INFO);
  EXPECT_EQ(MPI_Info_free(&info), MPI_SUCCESS);
  EXPECT_EQ(info, MPI_INFO_NULL);
  EXPECT_EQ(MPI_Info_free(&copy), MPI_SUCCESS);
  EXPECT_EQ(ErrorClass(MPI_Info_get_nkeys(MPI_INFO_NULL, &n)), MPI_ERR_INFO);
}

TEST_F(Api, CommunicatorsAndGroups) {
  MPI_Comm dup, split, none;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
  int result = -1;
  EXPECT_EQ(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_CONGRUENT);
  EXPECT_EQ(MPI_Comm_compare(dup, dup, &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_IDENT);
  MPI_Errhandler eh;
  EXPECT_EQ(MPI_Comm_get_errhandler(dup, &eh), MPI_SUCCESS);
  EXPECT_EQ(eh, MPI_ERRORS_RETURN);  // inherited from the parent
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, 3, 0, &split), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none), MPI_SUCCESS);
  EXPECT_EQ(none, MPI_COMM_NULL);
  EXPECT_EQ(MPI_Comm_set_name(dup, "mine"), MPI_SUCCESS);
  char name[MPI_MAX_OBJECT_NAME];
  int len = 0;
  EXPECT_EQ(MPI_Comm_get_name(dup, name, &len), MPI_SUCCESS);
  EXPECT_STREQ(name, "mine");
  EXPECT_EQ(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len), MPI_SUCCESS);
  EXPECT_STREQ(name, "MPI_COMM_WORLD");

  MPI_Group g, sub;
  ASSERT_EQ(MPI_Comm_group(dup, &g), MPI_SUCCESS);
  int size = 0, rank = -1;
  EXPECT_EQ(MPI_Group_size(g, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 1);
  EXPECT_EQ(MPI_Group_rank(g, &rank), MPI_SUCCESS);
  EXPECT_EQ(rank, 0);
  int r0 = 0, out = -1;
  ASSERT_EQ(MPI_Group_incl(g, 1, &r0, &sub), MPI_SUCCESS);
  EXPECT_EQ(MPI_Group_translate_ranks(sub, 1, &r0, g, &out), MPI_SUCCESS);
  EXPECT_EQ(out, 0);
  EXPECT_EQ(MPI_Group_compare(g, sub, &result), MPI_SUCCESS);
  EXPECT_EQ(result, MPI_IDENT);
  int bad = 4;
  MPI_Group untouched = MPI_GROUP_NULL;
  EXPECT_EQ(ErrorClass(MPI_Group_incl(g, 1, &bad, &untouched)), MPI_ERR_RANK);
  EXPECT_EQ(untouched, MPI_GROUP_NULL);
  EXPECT_EQ(MPI_Group_free(&sub), MPI_SUCCESS);
  EXPECT_EQ(MPI_Group_free(&g), MPI_SUCCESS);
  EXPECT_EQ(g, MPI_GROUP_NULL);

  EXPECT_EQ(MPI_Comm_free(&split), MPI_SUCCESS);
  EXPECT_EQ(MPI_Comm_free(&dup), MPI_SUCCESS);
  EXPECT_EQ(dup, MPI_COMM_NULL);
  MPI_Comm world = MPI_COMM_WORLD;
  EXPECT_EQ(ErrorClass(MPI_Comm_free(&world)), MPI_ERR_COMM);
  EXPECT_EQ(world, MPI_COMM_WORLD);
  int r = -1;
  EXPECT_EQ(ErrorClass(MPI_Comm_rank(dup, &r)), MPI_ERR_COMM);      // MPI_COMM_NULL
  EXPECT_EQ(ErrorClass(MPI_Comm_rank(MPI_INT, &r)), MPI_ERR_COMM);  // wrong kind
}

TEST_F(Api, TagUpperBoundAttribute) {
  int* ub = nullptr;
  int flag = 0;
  ASSERT_EQ(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag), MPI_SUCCESS);
  ASSERT_EQ(flag, 1);
  EXPECT_GE(*ub, 32767);
  // The bound is usable, one above it is not.
  int x = 1, y = 0;
  MPI_Status st;
  EXPECT_EQ(MPI_Sendrecv(&x, 1, MPI_INT, 0, *ub, &y, 1, MPI_INT, 0, *ub, MPI_COMM_WORLD, &st),
            MPI_SUCCESS);
  EXPECT_EQ(y, 1);
  EXPECT_EQ(ErrorClass(MPI_Send(&x, 1, MPI_INT, 0, *ub + 1, MPI_COMM_WORLD)), MPI_ERR_TAG);
  EXPECT_EQ(ErrorClass(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &ub, &flag)), MPI_ERR_KEYVAL);
}

TEST_F(Api, MiscEnvironment) {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  EXPECT_EQ(MPI_Get_processor_name(name, &len), MPI_SUCCESS);
  EXPECT_GT(len, 0);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  EXPECT_EQ(MPI_Get_library_version(lib, &len), MPI_SUCCESS);
  EXPECT_NE(std::string(lib).find("nicq"), std::string::npos);
  EXPECT_GT(MPI_Wtick(), 0.0);
  double t0 = MPI_Wtime(), t1 = MPI_Wtime();
  EXPECT_LE(t0, t1);
}

}  // namespace
