// Point-to-point through the API over the one-process fake runtime: data
// through noncontiguous datatypes, argument errors (class, message, nothing
// changed), request table reuse, completion semantics, persistent requests,
// cancel, and no allocation in MPI_Start once warm.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <numeric>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "mpi.h"

// Counts operator new calls so the hot-path test can check for zero.
static std::atomic<long> g_allocs{0};
void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

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

class ApiP2p : public ::testing::Test {
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

TEST_F(ApiP2p, SelfSendRecvWithVectorTypes) {
  MPI_Datatype column;
  ASSERT_EQ(MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &column), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&column), MPI_SUCCESS);
  double matrix[16], out[16] = {};
  std::iota(matrix, matrix + 16, 0.0);
  MPI_Request r;
  ASSERT_EQ(MPI_Irecv(out, 1, column, 0, 5, MPI_COMM_WORLD, &r), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(matrix + 1, 1, column, 0, 5, MPI_COMM_WORLD), MPI_SUCCESS);
  MPI_Status st;
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[4 * i], matrix[4 * i + 1]);
  EXPECT_EQ(out[1], 0.0);  // gaps untouched
  EXPECT_EQ(st.MPI_SOURCE, 0);
  EXPECT_EQ(st.MPI_TAG, 5);
  int count = -1, elems = -1;
  EXPECT_EQ(MPI_Get_count(&st, column, &count), MPI_SUCCESS);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(MPI_Get_elements(&st, column, &elems), MPI_SUCCESS);
  EXPECT_EQ(elems, 4);
  EXPECT_EQ(MPI_Get_count(&st, MPI_DOUBLE, &count), MPI_SUCCESS);
  EXPECT_EQ(count, 4);
  EXPECT_EQ(MPI_Get_count(&st, MPI_LONG_DOUBLE, &count), MPI_SUCCESS);
  EXPECT_EQ(count, 2);
  EXPECT_EQ(MPI_Get_count(&st, MPI_DOUBLE_INT, &count), MPI_SUCCESS);
  EXPECT_EQ(count, MPI_UNDEFINED);
  ASSERT_EQ(MPI_Type_free(&column), MPI_SUCCESS);
}

TEST_F(ApiP2p, ArgumentErrorsChangeNothing) {
  int buf[4] = {1, 2, 3, 4};
  MPI_Request r = 12345;
  MPI_Datatype vec;
  ASSERT_EQ(MPI_Type_vector(2, 1, 2, MPI_INT, &vec), MPI_SUCCESS);  // not committed
  struct Case {
    int rc, cls;
    const char* text;
  } cases[] = {
      {MPI_Isend(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK,
       "MPI_Isend(rank 0): invalid destination rank 1 (communicator size 1)"},
      {MPI_Isend(buf, 1, MPI_INT, 0, -1, MPI_COMM_WORLD, &r), MPI_ERR_TAG, "invalid tag -1"},
      {MPI_Isend(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT, "negative count -1"},
      {MPI_Isend(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE,
       "datatype is MPI_DATATYPE_NULL"},
      {MPI_Isend(buf, 1, vec, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE, "not committed"},
      {MPI_Isend(nullptr, 2, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_BUFFER,
       "buffer is NULL with count 2"},
      {MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM, "MPI_COMM_NULL"},
      {MPI_Irecv(buf, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK, "invalid source rank 3"},
      {MPI_Irecv(buf, 1, MPI_INT, MPI_ANY_SOURCE, -7, MPI_COMM_WORLD, &r), MPI_ERR_TAG,
       "invalid tag -7"},
      {MPI_Recv_init(buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, nullptr), MPI_ERR_ARG,
       "request is NULL"},
      {MPI_Sendrecv(buf, 2, MPI_INT, 0, 0, buf + 1, 2, MPI_INT, 0, 0, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE),
       MPI_ERR_BUFFER, "overlap"},
      {MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_REQUEST, "invalid request handle 12345"},
      {MPI_Start(&r), MPI_ERR_REQUEST, "invalid request handle"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ErrorClass(c.rc), c.cls) << ErrorString(c.rc);
    EXPECT_NE(ErrorString(c.rc).find(c.text), std::string::npos) << ErrorString(c.rc);
  }
  EXPECT_EQ(r, 12345);  // no request was created or changed
  EXPECT_EQ(buf[1], 2);
  int flag = 0;
  EXPECT_EQ(MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);  // no erroneous send left a message behind
  ASSERT_EQ(MPI_Type_free(&vec), MPI_SUCCESS);
}

TEST_F(ApiP2p, TruncationIsReported) {
  int big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[2] = {};
  MPI_Request r;
  ASSERT_EQ(MPI_Isend(big, 8, MPI_INT, 0, 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
  MPI_Status st;
  int rc = MPI_Recv(small, 2, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_TRUNCATE);
  EXPECT_NE(ErrorString(rc).find("MPI_Recv(rank 0)"), std::string::npos) << ErrorString(rc);
  EXPECT_EQ(small[1], 2);
  ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  // In a multi-completion call the error goes into the status.
  MPI_Request rs[2];
  MPI_Status sts[2];
  ASSERT_EQ(MPI_Irecv(small, 2, MPI_INT, 0, 2, MPI_COMM_WORLD, &rs[0]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Isend(big, 8, MPI_INT, 0, 2, MPI_COMM_WORLD, &rs[1]), MPI_SUCCESS);
  rc = MPI_Waitall(2, rs, sts);
  EXPECT_EQ(ErrorClass(rc), MPI_ERR_IN_STATUS);
  EXPECT_EQ(ErrorClass(sts[0].MPI_ERROR), MPI_ERR_TRUNCATE);
  EXPECT_EQ(sts[1].MPI_ERROR, MPI_SUCCESS);
  EXPECT_EQ(rs[0], MPI_REQUEST_NULL);
}

TEST_F(ApiP2p, WaitanyWaitsomeTestsomeSemantics) {
  int a = 1, b = 2, x = 0, y = 0;
  MPI_Request reqs[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int index = -5;
  MPI_Status st;
  // All null: MPI_UNDEFINED and an empty status.
  ASSERT_EQ(MPI_Waitany(4, reqs, &index, &st), MPI_SUCCESS);
  EXPECT_EQ(index, MPI_UNDEFINED);
  EXPECT_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
  EXPECT_EQ(st.MPI_TAG, MPI_ANY_TAG);
  int outcount = -5, indices[4];
  ASSERT_EQ(MPI_Waitsome(4, reqs, &outcount, indices, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(outcount, MPI_UNDEFINED);
  int flag = 0;
  ASSERT_EQ(MPI_Testany(4, reqs, &index, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_TRUE(flag);
  EXPECT_EQ(index, MPI_UNDEFINED);

  ASSERT_EQ(MPI_Irecv(&x, 1, MPI_INT, 0, 10, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Irecv(&y, 1, MPI_INT, 0, 11, MPI_COMM_WORLD, &reqs[3]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Testsome(4, reqs, &outcount, indices, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(outcount, 0);
  ASSERT_EQ(MPI_Send(&b, 1, MPI_INT, 0, 11, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Waitany(4, reqs, &index, &st), MPI_SUCCESS);
  EXPECT_EQ(index, 3);
  EXPECT_EQ(st.MPI_TAG, 11);
  EXPECT_EQ(y, 2);
  EXPECT_EQ(reqs[3], MPI_REQUEST_NULL);
  ASSERT_EQ(MPI_Send(&a, 1, MPI_INT, 0, 10, MPI_COMM_WORLD), MPI_SUCCESS);
  MPI_Status sts[4];
  ASSERT_EQ(MPI_Waitsome(4, reqs, &outcount, indices, sts), MPI_SUCCESS);
  ASSERT_EQ(outcount, 1);
  EXPECT_EQ(indices[0], 1);
  EXPECT_EQ(sts[0].MPI_TAG, 10);
  EXPECT_EQ(x, 1);
  EXPECT_EQ(MPI_Testall(4, reqs, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_TRUE(flag);
}

TEST_F(ApiP2p, TestallIsAllOrNothing) {
  int x = 0, y = 0, v = 9;
  MPI_Request reqs[2];
  ASSERT_EQ(MPI_Irecv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Irecv(&y, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD), MPI_SUCCESS);
  int flag = 1;
  ASSERT_EQ(MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_FALSE(flag);
  EXPECT_NE(reqs[0], MPI_REQUEST_NULL);  // done but not completed by a failed Testall
  ASSERT_EQ(MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  EXPECT_TRUE(flag);
  EXPECT_EQ(reqs[0], MPI_REQUEST_NULL);
  EXPECT_EQ(reqs[1], MPI_REQUEST_NULL);
}

TEST_F(ApiP2p, PersistentRequestsRestartManyTimes) {
  MPI_Datatype vec;
  ASSERT_EQ(MPI_Type_vector(3, 1, 2, MPI_INT, &vec), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&vec), MPI_SUCCESS);
  int src[6], dst[6];
  MPI_Request reqs[2];
  ASSERT_EQ(MPI_Recv_init(dst, 1, vec, 0, 3, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send_init(src, 1, vec, 0, 3, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_free(&vec), MPI_SUCCESS);  // the requests keep it alive
  // Inactive persistent requests complete at once with an empty status.
  MPI_Status st;
  ASSERT_EQ(MPI_Wait(&reqs[0], &st), MPI_SUCCESS);
  EXPECT_EQ(st.MPI_SOURCE, MPI_ANY_SOURCE);
  int live = nicq::api::LiveRequests();
  for (int it = 0; it < 500; ++it) {
    for (int i = 0; i < 6; ++i) src[i] = it * 10 + i;
    std::fill(dst, dst + 6, -1);
    ASSERT_EQ(MPI_Startall(2, reqs), MPI_SUCCESS);
    EXPECT_EQ(ErrorClass(MPI_Start(&reqs[0])), MPI_ERR_REQUEST);  // already active
    ASSERT_EQ(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    ASSERT_NE(reqs[0], MPI_REQUEST_NULL);  // persistent handles survive
    for (int i = 0; i < 6; i += 2) ASSERT_EQ(dst[i], it * 10 + i);
    ASSERT_EQ(dst[1], -1);
  }
  EXPECT_EQ(nicq::api::LiveRequests(), live);
  ASSERT_EQ(MPI_Request_free(&reqs[0]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Request_free(&reqs[1]), MPI_SUCCESS);
  EXPECT_EQ(reqs[0], MPI_REQUEST_NULL);
  EXPECT_EQ(nicq::api::LiveRequests(), live - 2);
}

TEST_F(ApiP2p, StartAndCompletionDoNotAllocateOnceWarm) {
  double src[64], dst[64];
  MPI_Request reqs[2];
  ASSERT_EQ(MPI_Recv_init(dst, 64, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, &reqs[0]), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send_init(src, 64, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, &reqs[1]), MPI_SUCCESS);
  for (int it = 0; it < 10; ++it) {
    ASSERT_EQ(MPI_Startall(2, reqs), MPI_SUCCESS);
    ASSERT_EQ(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  }
  long before = g_allocs.load();
  for (int it = 0; it < 100; ++it) {
    src[0] = it;
    (void)MPI_Start(&reqs[0]);
    (void)MPI_Start(&reqs[1]);
    (void)MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  }
  EXPECT_EQ(g_allocs.load() - before, 0);
  EXPECT_EQ(dst[0], 99.0);
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
}

TEST_F(ApiP2p, RequestSlotsAreReused) {
  int v = 1, w = 0;
  int live = nicq::api::LiveRequests();
  for (int i = 0; i < 1000; ++i) {
    MPI_Request r;
    ASSERT_EQ(MPI_Irecv(&w, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    ASSERT_EQ(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  }
  EXPECT_EQ(nicq::api::LiveRequests(), live);
}

TEST_F(ApiP2p, CancelReceives) {
  int x = 0;
  MPI_Request r;
  ASSERT_EQ(MPI_Irecv(&x, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, &r), MPI_SUCCESS);
  ASSERT_EQ(MPI_Cancel(&r), MPI_SUCCESS);
  MPI_Status st;
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  int flag = 0;
  ASSERT_EQ(MPI_Test_cancelled(&st, &flag), MPI_SUCCESS);
  EXPECT_TRUE(flag);
  // Persistent receive: cancel one activation, then use it normally.
  ASSERT_EQ(MPI_Recv_init(&x, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, &r), MPI_SUCCESS);
  EXPECT_EQ(ErrorClass(MPI_Cancel(&r)), MPI_ERR_REQUEST);  // inactive
  ASSERT_EQ(MPI_Start(&r), MPI_SUCCESS);
  ASSERT_EQ(MPI_Cancel(&r), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  ASSERT_EQ(MPI_Test_cancelled(&st, &flag), MPI_SUCCESS);
  EXPECT_TRUE(flag);
  int v = 5;
  ASSERT_EQ(MPI_Start(&r), MPI_SUCCESS);
  ASSERT_EQ(MPI_Send(&v, 1, MPI_INT, 0, 78, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  ASSERT_EQ(MPI_Test_cancelled(&st, &flag), MPI_SUCCESS);
  EXPECT_FALSE(flag);
  EXPECT_EQ(x, 5);
  ASSERT_EQ(MPI_Request_free(&r), MPI_SUCCESS);
}

TEST_F(ApiP2p, ProcNullAndProbeAndSendModes) {
  int x = 3;
  MPI_Status st;
  ASSERT_EQ(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st), MPI_SUCCESS);
  EXPECT_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  EXPECT_EQ(st.MPI_TAG, MPI_ANY_TAG);
  int count = -1;
  EXPECT_EQ(MPI_Get_count(&st, MPI_INT, &count), MPI_SUCCESS);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(x, 3);
  ASSERT_EQ(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);

  char attach[1024];
  ASSERT_EQ(MPI_Buffer_attach(attach, sizeof(attach)), MPI_SUCCESS);
  int data[3] = {7, 8, 9}, got[3];
  ASSERT_EQ(MPI_Bsend(data, 3, MPI_INT, 0, 21, MPI_COMM_WORLD), MPI_SUCCESS);
  MPI_Request sreq;
  ASSERT_EQ(MPI_Issend(data, 3, MPI_INT, 0, 22, MPI_COMM_WORLD, &sreq), MPI_SUCCESS);
  int flag = 1;
  ASSERT_EQ(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_FALSE(flag);  // synchronous: not matched yet
  ASSERT_EQ(MPI_Probe(0, 22, MPI_COMM_WORLD, &st), MPI_SUCCESS);
  EXPECT_EQ(MPI_Get_count(&st, MPI_INT, &count), MPI_SUCCESS);
  EXPECT_EQ(count, 3);
  ASSERT_EQ(MPI_Recv(got, 3, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(got[2], 9);
  ASSERT_EQ(MPI_Recv(got, 3, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st), MPI_SUCCESS);
  EXPECT_EQ(st.MPI_TAG, 22);
  ASSERT_EQ(MPI_Wait(&sreq, MPI_STATUS_IGNORE), MPI_SUCCESS);
  void* back = nullptr;
  int size = 0;
  ASSERT_EQ(MPI_Buffer_detach(&back, &size), MPI_SUCCESS);
  EXPECT_EQ(back, attach);
  EXPECT_EQ(size, 1024);

  int y = 0;
  MPI_Request rr;
  ASSERT_EQ(MPI_Irecv(&y, 1, MPI_INT, 0, 23, MPI_COMM_WORLD, &rr), MPI_SUCCESS);
  ASSERT_EQ(MPI_Rsend(&x, 1, MPI_INT, 0, 23, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&rr, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(y, 3);
  int buf[2] = {4, 5};
  ASSERT_EQ(MPI_Sendrecv_replace(buf, 2, MPI_INT, 0, 1, 0, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
  EXPECT_EQ(buf[1], 5);
}

TEST_F(ApiP2p, RequestFreeOfActiveReceiveStillDelivers) {
  int x = 0, v = 42;
  MPI_Request r;
  ASSERT_EQ(MPI_Irecv(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, &r), MPI_SUCCESS);
  ASSERT_EQ(MPI_Request_free(&r), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  ASSERT_EQ(MPI_Send(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(x, 42);
  int flag = 0;
  MPI_Status st;
  ASSERT_EQ(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st), MPI_SUCCESS);
  EXPECT_TRUE(flag);
}

}  // namespace

namespace {

// A stand-in for a collective engine: counts the calls the API makes.
struct EngineCalls {
  int start = 0, complete = 0, free = 0;
} g_engine;

nicq::Status EngineStart(nicq::Request* q) {
  ++g_engine.start;
  q->status = nicq::RequestStatus{};
  q->status.bytes = 8;
  q->MarkDone();  // completes at once
  return nicq::Status::Ok();
}
nicq::Status EngineComplete(nicq::Request* q) {
  ++g_engine.complete;
  return nicq::Status::Ok();
}
nicq::Status EngineFree(nicq::Request* q) {
  ++g_engine.free;
  return nicq::Status::Ok();
}
const nicq::RequestOps kEngineOps = {EngineStart, EngineFree, nullptr, EngineComplete};

TEST_F(ApiP2p, EngineRequestsUseTheirOps) {
  g_engine = {};
  MPI_Request h = MPI_REQUEST_NULL;
  nicq::Request* q = nicq::api::AllocEngineRequest(MPI_COMM_WORLD, "MPI_Allreduce_init", true, &h);
  ASSERT_NE(q, nullptr);
  q->kind = nicq::ReqKind::kPersistentColl;
  q->ops = &kEngineOps;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(MPI_Start(&h), MPI_SUCCESS);
    MPI_Status st;
    ASSERT_EQ(MPI_Wait(&h, &st), MPI_SUCCESS);
    EXPECT_NE(h, MPI_REQUEST_NULL);
    EXPECT_EQ(st.nicq_count, 8);
  }
  EXPECT_EQ(g_engine.start, 3);
  EXPECT_EQ(g_engine.complete, 3);
  ASSERT_EQ(MPI_Start(&h), MPI_SUCCESS);
  int rc = MPI_Cancel(&h);  // done already: completes normally
  EXPECT_EQ(rc, MPI_SUCCESS);
  ASSERT_EQ(MPI_Wait(&h, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(g_engine.free, 0);
  ASSERT_EQ(MPI_Request_free(&h), MPI_SUCCESS);
  EXPECT_EQ(g_engine.free, 1);
  EXPECT_EQ(h, MPI_REQUEST_NULL);
}

}  // namespace

namespace {

struct Particle {
  char tag;
  double x;
  int id;
};

TEST_F(ApiP2p, StructIndexedResizedAndPack) {
  // A struct type matching the C struct, padded to its alignment.
  int lens[3] = {1, 1, 1};
  MPI_Aint disps[3] = {offsetof(Particle, tag), offsetof(Particle, x), offsetof(Particle, id)};
  MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, ptype;
  ASSERT_EQ(MPI_Type_create_struct(3, lens, disps, types, &ptype), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&ptype), MPI_SUCCESS);
  int size = 0;
  MPI_Aint lb = -1, extent = 0;
  ASSERT_EQ(MPI_Type_size(ptype, &size), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_extent(ptype, &lb, &extent), MPI_SUCCESS);
  EXPECT_EQ(size, 1 + 8 + 4);
  EXPECT_EQ(lb, 0);
  EXPECT_EQ(extent, static_cast<MPI_Aint>(sizeof(Particle)));
  Particle out[2] = {{'a', 1.5, 7}, {'b', -2.5, 9}}, in[2] = {};
  ASSERT_EQ(
      MPI_Sendrecv(out, 2, ptype, 0, 1, in, 2, ptype, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
      MPI_SUCCESS);
  EXPECT_EQ(in[1].tag, 'b');
  EXPECT_EQ(in[1].x, -2.5);
  EXPECT_EQ(in[1].id, 9);

  // Indexed: ints 0,1 and 3 of each item.
  int blens[2] = {2, 1}, idx[2] = {0, 3};
  MPI_Datatype indexed;
  ASSERT_EQ(MPI_Type_indexed(2, blens, idx, MPI_INT, &indexed), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&indexed), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_size(indexed, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 12);
  ASSERT_EQ(MPI_Type_get_extent(indexed, &lb, &extent), MPI_SUCCESS);
  EXPECT_EQ(extent, 16);

  // Resized: an int with extent 8 makes a contiguous type take every other int.
  MPI_Datatype wide, every_other;
  ASSERT_EQ(MPI_Type_create_resized(MPI_INT, 0, 8, &wide), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_contiguous(3, wide, &every_other), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&every_other), MPI_SUCCESS);

  // Pack both into one buffer and unpack them again.
  int src[8] = {10, 11, 12, 13, 14, 15, 16, 17}, dst[8];
  char packed[64];
  int position = 0, need = 0;
  ASSERT_EQ(MPI_Pack_size(1, indexed, MPI_COMM_WORLD, &need), MPI_SUCCESS);
  EXPECT_EQ(need, 12);
  ASSERT_EQ(MPI_Pack(src, 1, indexed, packed, sizeof(packed), &position, MPI_COMM_WORLD),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Pack(src, 1, every_other, packed, sizeof(packed), &position, MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(position, 24);
  const int* words = reinterpret_cast<const int*>(packed);
  EXPECT_EQ(words[2], 13);
  EXPECT_EQ(words[4], 12);
  int small_pos = 60;
  EXPECT_EQ(
      ErrorClass(MPI_Pack(src, 1, indexed, packed, sizeof(packed), &small_pos, MPI_COMM_WORLD)),
      MPI_ERR_TRUNCATE);
  EXPECT_EQ(small_pos, 60);
  std::fill(dst, dst + 8, -1);
  position = 0;
  ASSERT_EQ(MPI_Unpack(packed, 24, &position, dst, 1, indexed, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(dst[0], 10);
  EXPECT_EQ(dst[2], -1);
  EXPECT_EQ(dst[3], 13);
  std::fill(dst, dst + 8, -1);
  ASSERT_EQ(MPI_Unpack(packed, 24, &position, dst, 1, every_other, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(dst[0], 10);
  EXPECT_EQ(dst[1], -1);
  EXPECT_EQ(dst[4], 14);
  EXPECT_EQ(ErrorClass(MPI_Unpack(packed, 24, &position, dst, 1, indexed, MPI_COMM_WORLD)),
            MPI_ERR_TRUNCATE);
  for (MPI_Datatype* t : {&ptype, &indexed, &wide, &every_other})
    ASSERT_EQ(MPI_Type_free(t), MPI_SUCCESS);
}

}  // namespace
