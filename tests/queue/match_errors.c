/* Failures and misuse around matching (13.2) on two ranks, each followed by
 * a check that nothing was left half-matched: the requests involved still
 * match, or are matched, and move the right data.
 *  B: MPI_Request_free of a request whose MPI_Imatch is under way fails
 *     and changes nothing. */
#include <string.h>
#include <unistd.h>

#include "check.h"

#define N 32

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
  static double x[N], y[N];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  QT_CHECK(size == 2, "run on 2 ranks (got %d)", size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Request m;

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
