/* Host instructions of the completion calls on the shape of a halo
 * exchange or osu_mbw_mr: each iteration posts two MPI_Irecv and two
 * MPI_Isend of `bytes` to the left and right neighbours (MPI_COMM_WORLD,
 * MPI_BYTE), then completes the four requests with one form:
 *
 *   waitall   MPI_Waitall(4)
 *   testall   MPI_Testall(4) until the flag is set
 *   waitany   MPI_Waitany(4) four times
 *   waitsome  MPI_Waitsome(4) until every request is completed
 *   test      MPI_Test of each request in turn until all are completed
 *
 * With -d 1 two empty MPI_Sendrecv with the neighbours (one each way)
 * come between the posts and the completion calls, so that these find
 * every request done (a neighbour's message sent after the ring's one
 * has arrived, so the ring's has been matched): their fixed cost, without
 * the wait loops whose passes vary with timing. (A barrier need not do
 * this: nicq's same-node barrier does not poll the point-to-point
 * rings.)
 *
 * Each form's iteration is a function of its own, not inlined, so that
 * `valgrind --tool=callgrind --toggle-collect=<form>_iteration` (or
 * --toggle-collect=MPI_Waitall and the like) counts exactly its calls, and
 * bench/callgrind_passes.py splits off the progress passes
 * (docs/performance.md). MPI API only: it builds with any MPI's mpicc.
 *
 * usage: nicq_completion [-i iterations] [-b bytes] [-d 0|1] [-f form]...
 * Prints one line per form with the microseconds per iteration and the
 * completion calls per iteration, and checks the received data at the end
 * of each form. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring {
  int rank, left, right, bytes, done_first;
  long calls; /* completion calls made */
  char *send_left, *send_right, *recv_left, *recv_right;
};

static void fail(const char* what, int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fprintf(stderr, "nicq_completion: %s failed: %s\n", what, msg);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void ok(int rc, const char* what) {
  if (rc != MPI_SUCCESS) fail(what, rc);
}

static void post(struct ring* r, MPI_Request q[4]) {
  ok(MPI_Irecv(r->recv_left, r->bytes, MPI_BYTE, r->left, 1, MPI_COMM_WORLD, &q[0]), "MPI_Irecv");
  ok(MPI_Irecv(r->recv_right, r->bytes, MPI_BYTE, r->right, 2, MPI_COMM_WORLD, &q[1]), "MPI_Irecv");
  ok(MPI_Isend(r->send_left, r->bytes, MPI_BYTE, r->left, 2, MPI_COMM_WORLD, &q[2]), "MPI_Isend");
  ok(MPI_Isend(r->send_right, r->bytes, MPI_BYTE, r->right, 1, MPI_COMM_WORLD, &q[3]), "MPI_Isend");
  if (r->done_first) {
    ok(MPI_Sendrecv(NULL, 0, MPI_BYTE, r->right, 3, NULL, 0, MPI_BYTE, r->left, 3, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE),
       "MPI_Sendrecv");
    ok(MPI_Sendrecv(NULL, 0, MPI_BYTE, r->left, 4, NULL, 0, MPI_BYTE, r->right, 4, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE),
       "MPI_Sendrecv");
  }
}

static __attribute__((noinline)) void waitall_iteration(struct ring* r) {
  MPI_Request q[4];
  MPI_Status st[4];
  post(r, q);
  ok(MPI_Waitall(4, q, st), "MPI_Waitall");
  ++r->calls;
}

static __attribute__((noinline)) void testall_iteration(struct ring* r) {
  MPI_Request q[4];
  MPI_Status st[4];
  int flag = 0;
  post(r, q);
  for (; !flag; ++r->calls) ok(MPI_Testall(4, q, &flag, st), "MPI_Testall");
}

static __attribute__((noinline)) void waitany_iteration(struct ring* r) {
  MPI_Request q[4];
  MPI_Status st;
  int index;
  post(r, q);
  for (int i = 0; i < 4; ++i, ++r->calls) ok(MPI_Waitany(4, q, &index, &st), "MPI_Waitany");
}

static __attribute__((noinline)) void waitsome_iteration(struct ring* r) {
  MPI_Request q[4];
  MPI_Status st[4];
  int indices[4], out = 0;
  post(r, q);
  for (int left = 4; left > 0; left -= out) {
    ok(MPI_Waitsome(4, q, &out, indices, st), "MPI_Waitsome");
    ++r->calls;
    if (out == MPI_UNDEFINED) break;
  }
}

static __attribute__((noinline)) void test_iteration(struct ring* r) {
  MPI_Request q[4];
  MPI_Status st;
  int left = 4;
  post(r, q);
  while (left > 0) {
    for (int i = 0; i < 4; ++i) {
      if (q[i] == MPI_REQUEST_NULL) continue;
      int flag = 0;
      ok(MPI_Test(&q[i], &flag, &st), "MPI_Test");
      ++r->calls;
      left -= flag;
    }
  }
}

struct form {
  const char* name;
  void (*iteration)(struct ring*);
};
static const struct form kForms[] = {{"waitall", waitall_iteration},
                                     {"testall", testall_iteration},
                                     {"waitany", waitany_iteration},
                                     {"waitsome", waitsome_iteration},
                                     {"test", test_iteration}};
enum { kFormCount = sizeof kForms / sizeof kForms[0] };

static void fill(struct ring* r, int round) {
  for (int i = 0; i < r->bytes; ++i) {
    r->send_left[i] = (char)(r->rank * 7 + round + 1);
    r->send_right[i] = (char)(r->rank * 7 + round + 2);
    r->recv_left[i] = r->recv_right[i] = 0;
  }
}

static void check(const struct ring* r, int round, const char* form) {
  for (int i = 0; i < r->bytes; ++i) {
    /* the left neighbour's send_right, the right one's send_left */
    if (r->recv_left[i] != (char)(r->left * 7 + round + 2) ||
        r->recv_right[i] != (char)(r->right * 7 + round + 1)) {
      fprintf(stderr, "nicq_completion: %s: wrong data at byte %d\n", form, i);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size;
  struct ring r;
  memset(&r, 0, sizeof r);
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  r.left = (r.rank - 1 + size) % size;
  r.right = (r.rank + 1) % size;
  r.bytes = 8;
  int iters = 1000, chosen[kFormCount], nchosen = 0;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "-i") == 0) iters = atoi(argv[a + 1]);
    if (strcmp(argv[a], "-b") == 0) r.bytes = atoi(argv[a + 1]);
    if (strcmp(argv[a], "-d") == 0) r.done_first = atoi(argv[a + 1]);
    if (strcmp(argv[a], "-f") == 0)
      for (int f = 0; f < kFormCount; ++f)
        if (strcmp(argv[a + 1], kForms[f].name) == 0 && nchosen < kFormCount) chosen[nchosen++] = f;
  }
  if (nchosen == 0)
    for (int f = 0; f < kFormCount; ++f) chosen[nchosen++] = f;
  r.send_left = malloc(r.bytes + 1);
  r.send_right = malloc(r.bytes + 1);
  r.recv_left = malloc(r.bytes + 1);
  r.recv_right = malloc(r.bytes + 1);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (int c = 0; c < nchosen; ++c) {
    const struct form* f = &kForms[chosen[c]];
    fill(&r, c);
    r.calls = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) f->iteration(&r);
    double us = (MPI_Wtime() - t0) * 1e6 / iters;
    check(&r, c, f->name);
    if (r.rank == 0)
      printf("%-9s %d bytes %d iterations %.3f us, %.2f completion calls per iteration\n", f->name,
             r.bytes, iters, us, (double)r.calls / iters);
  }
  free(r.send_left);
  free(r.send_right);
  free(r.recv_left);
  free(r.recv_right);
  MPI_Finalize();
  return 0;
}
