/* Failures and misuse around matching (13.2) on two ranks, each followed by
 * a check that nothing was left half-matched: the requests involved still
 * match, or are matched, and move the right data.
 *  C: MPI_Matchall where beginning request 1 fails (counters exhausted,
 *     NICQ_OFFLOAD_COUNTERS small): request 0 finishes its match anyway, so
 *     the peer that already sent it an offer does not hang;
 *  E: MPI_Matchall naming a collective whose MPI_Imatch is under way fails
 *     before beginning anything;
 *  D: MPI_Matchall where one match fails (truncation) while another is
 *     still under way: that one still completes;
 *  A: the status of a completed match request is empty, its failure
 *     reports MPI_ERR_TRUNCATE (as MPI_Match does) with its own message,
 *     and it cannot be cancelled, done or not;
 *  B: MPI_Request_free of a request whose MPI_Imatch is under way fails
 *     and changes nothing. */
#include <string.h>
#include <unistd.h>

#include "check.h"

#define N 32
#define MAXFILL 1024

/* The call failed with class `cls`, its message containing `has` (if not
 * NULL) and not `hasnt` (if not NULL). */
static void expect_err(int rc, int cls, const char* has, const char* hasnt, const char* what,
                       int line) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0, c = -1;
  if (rc == MPI_SUCCESS) QT_FAIL("line %d: %s succeeded; expected class %d", line, what, cls);
  MPI_Error_class(rc, &c);
  MPI_Error_string(rc, msg, &len);
  if (c != cls) QT_FAIL("line %d: %s: class %d, expected %d (%s)", line, what, c, cls, msg);
  if (has && !strstr(msg, has))
    QT_FAIL("line %d: %s: message lacks \"%s\": %s", line, what, has, msg);
  if (hasnt && strstr(msg, hasnt))
    QT_FAIL("line %d: %s: message has \"%s\": %s", line, what, hasnt, msg);
}
#define EXPECT_ERR(cls, has, hasnt, call) expect_err((call), cls, has, hasnt, #call, __LINE__)

static int matched(MPI_Request r) {
  int f = 0;
  QT_OK(MPI_Is_matched(r, &f));
  return f;
}

/* Drives progress until `r` is matched; fails after 20 s. */
static void wait_matched(MPI_Request r, const char* what) {
  double t0 = MPI_Wtime();
  while (!matched(r)) {
    if (MPI_Wtime() - t0 > 20) QT_FAIL("%s is still not matched after 20 s", what);
    usleep(100);
  }
}

/* Sends x (or receives into y) through two matched requests and checks. */
static void exchange(MPI_Request s, MPI_Request r, double* x, double* y, int n, double base) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int it = 0; it < 3; ++it) {
    for (int i = 0; i < n; ++i) {
      if (x) x[i] = base + rank * 1000 + it * 100 + i;
      if (y) y[i] = -1;
    }
    MPI_Request both[2] = {r, s};
    if (r != MPI_REQUEST_NULL) QT_OK(MPI_Start(&both[0]));
    if (s != MPI_REQUEST_NULL) QT_OK(MPI_Start(&both[1]));
    QT_OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    if (y)
      for (int i = 0; i < n; ++i)
        QT_CHECK(y[i] == base + (1 - rank) * 1000 + it * 100 + i, "base %g epoch %d: y[%d] = %g",
                 base, it, i, y[i]);
  }
}

int main(int argc, char* argv[]) {
  int rank, size;
  static double x[N], y[N], big[2 * N], small[N / 2], dsum[4], dres[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  QT_CHECK(size == 2, "run on 2 ranks (got %d)", size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int peer = 1 - rank;
  MPI_Request s, r, m;
  MPI_Status st;

  /* C: rank 0 takes every offload counter with MPI_PROC_NULL matches, then
   * frees one: MPI_Matchall({recv, send}) begins the receive (one counter)
   * and fails on the send (two). Rank 1 matches both normally; its send's
   * offer is answered by rank 0's receive, which must go on matching. */
  QT_OK(MPI_Recv_init(y, N, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r));
  QT_OK(MPI_Send_init(x, N, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &s));
  if (rank == 0) {
    static MPI_Request fill[MAXFILL];
    int nfill = 0, rc = MPI_SUCCESS;
    while (nfill < MAXFILL) {
      QT_OK(MPI_Send_init(x, 1, MPI_DOUBLE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &fill[nfill]));
      rc = MPI_Match(&fill[nfill]);
      if (rc != MPI_SUCCESS) break;
      ++nfill;
    }
    QT_CHECK(nfill < MAXFILL && nfill >= 3, "%d counters (run with NICQ_OFFLOAD_COUNTERS=64)",
             nfill);
    EXPECT_ERR(MPI_ERR_NO_MEM, NULL, NULL, rc);
    QT_OK(MPI_Request_free(&fill[nfill])); /* the one that failed: unmatched */
    QT_OK(MPI_Request_free(&fill[--nfill]));
    /* Two counters left: a receive takes one, or two with resident epochs
     * (its start counter); either way the send (two) cannot have its own. */
    QT_OK(MPI_Request_free(&fill[--nfill]));
    MPI_Request rs[2] = {r, s};
    EXPECT_ERR(MPI_ERR_NO_MEM, "array_of_requests[1]", NULL, MPI_Matchall(2, rs));
    QT_CHECK(!matched(s), "the send that failed to begin is matched");
    /* The receive was begun: it is being matched, not matchable again. */
    EXPECT_ERR(MPI_ERR_MATCH, NULL, NULL, MPI_Match(&r));
    QT_OK(MPI_Request_free(&fill[--nfill]));
    QT_OK(MPI_Request_free(&fill[--nfill]));
    QT_OK(MPI_Match(&s));
    wait_matched(r, "C: rank 0's receive begun by the failed MPI_Matchall");
    while (nfill > 0) QT_OK(MPI_Request_free(&fill[--nfill]));
  } else {
    MPI_Request rs[2] = {r, s};
    QT_OK(MPI_Matchall(2, rs));
  }
  exchange(s, r, x, y, N, 1e6);
  QT_OK(MPI_Request_free(&s));
  QT_OK(MPI_Request_free(&r));
  QT_CHECK(s == MPI_REQUEST_NULL && r == MPI_REQUEST_NULL, "freed handles not nulled");

  /* E: a collective whose MPI_Imatch is under way, in an MPI_Matchall with
   * point-to-point requests: refused before any of them begins. */
  MPI_Request coll, mc;
  QT_OK(
      MPI_Allreduce_init(dsum, dres, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &coll));
  QT_OK(MPI_Recv_init(y, N, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &r));
  QT_OK(MPI_Send_init(x, N, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &s));
  QT_OK(MPI_Imatch(&coll, &mc));
  MPI_Request three[3] = {s, r, coll};
  EXPECT_ERR(MPI_ERR_MATCH, "array_of_requests[2]", NULL, MPI_Matchall(3, three));
  QT_CHECK(!matched(s) && !matched(r), "E: a failed MPI_Matchall matched requests");
  QT_OK(MPI_Wait(&mc, MPI_STATUS_IGNORE));
  MPI_Request two[2] = {s, r};
  QT_OK(MPI_Matchall(2, two));
  exchange(s, r, x, y, N, 2e6);
  for (int i = 0; i < 4; ++i) dsum[i] = (rank + 1) * (i + 1);
  QT_OK(MPI_Start(&coll));
  QT_OK(MPI_Wait(&coll, MPI_STATUS_IGNORE));
  for (int i = 0; i < 4; ++i) QT_CHECK(dres[i] == 3 * (i + 1), "E: allreduce[%d] = %g", i, dres[i]);
  QT_OK(MPI_Request_free(&coll));
  QT_OK(MPI_Request_free(&s));
  QT_OK(MPI_Request_free(&r));

  /* D: rank 1 matches a receive that truncates rank 0's send (tag 3) and a
   * good one (tag 4) at once; rank 0 offers the good send only after the
   * bad match failed, so rank 1's MPI_Matchall returns while the good
   * receive is still matching: it must complete all the same. */
  if (rank == 0) {
    MPI_Request sbig, sok;
    QT_OK(MPI_Send_init(big, 2 * N, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD, &sbig));
    QT_OK(MPI_Send_init(x, N, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, &sok));
    EXPECT_ERR(MPI_ERR_TRUNCATE, "bytes", NULL, MPI_Match(&sbig));
    QT_OK(MPI_Imatch(&sok, &m));
    double t0 = MPI_Wtime();
    for (int f = 0; !f;) {
      QT_OK(MPI_Test(&m, &f, MPI_STATUS_IGNORE));
      if (!f && MPI_Wtime() - t0 > 20) QT_FAIL("D: the good send is not matched after 20 s");
      if (!f) usleep(100);
    }
    exchange(sok, MPI_REQUEST_NULL, x, NULL, N, 3e6);
    QT_OK(MPI_Request_free(&sbig));
    QT_OK(MPI_Request_free(&sok));
  } else {
    MPI_Request rd[2];
    QT_OK(MPI_Recv_init(small, N / 2, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, &rd[0]));
    QT_OK(MPI_Recv_init(y, N, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD, &rd[1]));
    EXPECT_ERR(MPI_ERR_TRUNCATE, "array_of_requests[0]", NULL, MPI_Matchall(2, rd));
    QT_CHECK(!matched(rd[0]), "D: the truncating receive is matched");
    wait_matched(rd[1], "D: the good receive of the failed MPI_Matchall");
    exchange(MPI_REQUEST_NULL, rd[1], NULL, y, N, 3e6);
    QT_OK(MPI_Request_free(&rd[0]));
    QT_OK(MPI_Request_free(&rd[1]));
  }

  /* A: the match request. A finished plain receive leaves its peer and
   * tag (4242) in the request slot MPI_Imatch takes next. */
  int dummy = 0;
  if (rank == 0)
    QT_OK(MPI_Send_init(big, 2 * N, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, &s));
  else
    QT_OK(MPI_Recv_init(small, N / 2, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD, &s));
  QT_OK(MPI_Irecv(&dummy, 1, MPI_INT, MPI_PROC_NULL, 4242, MPI_COMM_WORLD, &m));
  QT_OK(MPI_Wait(&m, MPI_STATUS_IGNORE));
  QT_OK(MPI_Imatch(&s, &m));
  EXPECT_ERR(MPI_ERR_REQUEST, "cannot be cancelled", NULL, MPI_Cancel(&m));
  QT_CHECK(m != MPI_REQUEST_NULL, "A: a failed MPI_Cancel changed the handle");
  /* Truncation: the same class on both sides and through both calls. */
  EXPECT_ERR(MPI_ERR_TRUNCATE, "bytes", "4242", MPI_Wait(&m, &st));
  QT_CHECK(m == MPI_REQUEST_NULL, "A: the failed match request was not freed");
  QT_CHECK(!matched(s), "A: a truncating match left the request matched");
  QT_OK(MPI_Request_free(&s));
  if (rank == 0)
    QT_OK(MPI_Send_init(big, 2 * N, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD, &s));
  else
    QT_OK(MPI_Recv_init(small, N / 2, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, &s));
  EXPECT_ERR(MPI_ERR_TRUNCATE, "bytes", NULL, MPI_Match(&s));
  QT_OK(MPI_Request_free(&s));

  /* A match that succeeds: an empty status, seen by
   * MPI_Request_get_status, MPI_Wait and MPI_Waitall; no cancel once done. */
  QT_OK(MPI_Send_init(x, N, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &s));
  QT_OK(MPI_Recv_init(y, N, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r));
  MPI_Request sr[2] = {s, r};
  QT_OK(MPI_Imatchall(2, sr, &m));
  double t0 = MPI_Wtime();
  for (int f = 0; !f;) {
    memset(&st, 0x5a, sizeof st);
    QT_OK(MPI_Request_get_status(m, &f, &st));
    if (!f && MPI_Wtime() - t0 > 20) QT_FAIL("A: MPI_Imatchall not done after 20 s");
    if (!f) usleep(100);
  }
  QT_CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
           "A: MPI_Request_get_status of a match request: source %d tag %d", st.MPI_SOURCE,
           st.MPI_TAG);
  EXPECT_ERR(MPI_ERR_REQUEST, "cannot be cancelled", NULL, MPI_Cancel(&m));
  memset(&st, 0x5a, sizeof st);
  QT_OK(MPI_Wait(&m, &st));
  int count = -1;
  QT_OK(MPI_Get_count(&st, MPI_BYTE, &count));
  QT_CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && count == 0,
           "A: MPI_Wait of a match request: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
           count);
  exchange(s, r, x, y, N, 4e6);
  QT_OK(MPI_Request_free(&s));
  QT_OK(MPI_Request_free(&r));
  QT_OK(MPI_Send_init(x, N, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD, &s));
  QT_OK(MPI_Recv_init(y, N, MPI_DOUBLE, peer, 8, MPI_COMM_WORLD, &r));
  MPI_Request ms[2];
  QT_OK(MPI_Imatch(&r, &ms[0]));
  QT_OK(MPI_Imatch(&s, &ms[1]));
  MPI_Status sts[2];
  memset(sts, 0x5a, sizeof sts);
  QT_OK(MPI_Waitall(2, ms, sts));
  for (int i = 0; i < 2; ++i) {
    QT_OK(MPI_Get_count(&sts[i], MPI_BYTE, &count));
    QT_CHECK(sts[i].MPI_SOURCE == MPI_ANY_SOURCE && sts[i].MPI_TAG == MPI_ANY_TAG &&
                 sts[i].MPI_ERROR == MPI_SUCCESS && count == 0,
             "A: MPI_Waitall status %d: source %d tag %d error %d count %d", i, sts[i].MPI_SOURCE,
             sts[i].MPI_TAG, sts[i].MPI_ERROR, count);
  }
  exchange(s, r, x, y, N, 5e6);
  QT_OK(MPI_Request_free(&s));
  QT_OK(MPI_Request_free(&r));

  /* B: MPI_Request_free while the request's MPI_Imatch is under way (its
   * peer has not begun matching yet): refused, the request unchanged; it
   * then matches and carries data. Rank 0 as the sender, then rank 1 as
   * the receiver. */
  for (int who = 0; who < 2; ++who) {
    const int tag = 10 + who;
    MPI_Request q;
    if (rank == 0)
      QT_OK(MPI_Send_init(x, N, MPI_DOUBLE, 1, tag, MPI_COMM_WORLD, &q));
    else
      QT_OK(MPI_Recv_init(y, N, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD, &q));
    if (rank == who) {
      const MPI_Request before = q;
      QT_OK(MPI_Imatch(&q, &m));
      EXPECT_ERR(MPI_ERR_REQUEST, "matching in progress", NULL, MPI_Request_free(&q));
      QT_CHECK(q == before, "B: a refused MPI_Request_free changed the handle");
      QT_CHECK(!matched(q), "B: matched before the peer matched");
      QT_OK(MPI_Barrier(MPI_COMM_WORLD));
      QT_OK(MPI_Wait(&m, MPI_STATUS_IGNORE));
    } else {
      QT_OK(MPI_Barrier(MPI_COMM_WORLD));
      QT_OK(MPI_Match(&q));
    }
    QT_CHECK(matched(q), "B: not matched");
    if (rank == 0)
      exchange(q, MPI_REQUEST_NULL, x, NULL, N, 6e6 + who);
    else
      exchange(MPI_REQUEST_NULL, q, NULL, y, N, 6e6 + who);
    QT_OK(MPI_Request_free(&q));
  }

  QT_OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Finalize();
  if (rank == 0) printf("match_errors: all checks passed\n");
  return 0;
}
