/* Nonblocking allreduce, reduce, bcast and barrier and persistent reduce,
 * bcast and barrier on the same-node collective area (src/coll/node_nonblocking.cc,
 * node_persistent.cc; the shm column, where nicq's shm transport carries
 * every rank). A blocking barrier first makes the area (nonblocking calls
 * take it only once it exists). argv[1]:
 *   many      40 calls in flight before the first wait (more than the
 *             area's reserved slots), allreduce of 8 B, 64 KiB and
 *             1 MiB + 3 doubles, separate and MPI_IN_PLACE, bcasts from
 *             every root and barriers among them, waited last first;
 *             then again completed by Test loops
 *   mixed     blocking collectives between the starts and the waits; a
 *             rank sleeping (no MPI call) between start and wait, each
 *             rank in turn; float sums with the same bits on every rank
 *   layout    bcast of a non-contiguous type (vector) into contiguous bytes
 *   persist   persistent bcast (every size, every root) and barrier
 *   reduce    nonblocking and persistent reduce: every size and root, in
 *             place at the root, more calls in flight than slots, the
 *             non-roots' receive buffers untouched
 * "all" (default) runs every one. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "node_check.h"

/* The root's bytes of a bcast: differ per call, per root and per byte. */
static unsigned char Byte(long i, int s, int root) {
  return (unsigned char)(i * 13 + s * 7 + root * 29 + (i >> 9));
}
static void CheckBytes(const unsigned char* b, long n, int s, int root, const char* what) {
  for (long i = 0; i < n; ++i)
    CHECK(b[i] == Byte(i, s, root), "%s %ld bytes call %d root %d: [%ld] = %d, expected %d", what,
          n, s, root, i, b[i], Byte(i, s, root));
}

enum { kCalls = 40 };

/* Call j of a batch: kind j % 4 (0, 1 allreduce: separate / in place,
 * 2 bcast, 3 barrier), size j / 4 % 3. */
struct Call {
  double *in, *out;
  unsigned char* bytes;
  long n;
  int root;
};

static void StartBatch(struct Call* c, MPI_Request* req, int batch) {
  for (int j = 0; j < kCalls; ++j) {
    const int s = batch * kCalls + j;
    c[j].n = kCounts[j / 4 % 3];
    c[j].root = j % p;
    switch (j % 4) {
      case 0:
        Fill(c[j].in, c[j].n, s);
        memset(c[j].out, 0xff, c[j].n * sizeof(double));
        CHECK_OK(MPI_Iallreduce(c[j].in, c[j].out, (int)c[j].n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                &req[j]));
        break;
      case 1:
        Fill(c[j].out, c[j].n, s);
        CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, c[j].out, (int)c[j].n, MPI_DOUBLE, MPI_SUM,
                                MPI_COMM_WORLD, &req[j]));
        break;
      case 2: {
        const long nb = c[j].n * 8 + (j & 1) * 3;
        for (long i = 0; i < nb; ++i)
          c[j].bytes[i] =
              rank == c[j].root ? Byte(i, s, c[j].root) : (unsigned char)~Byte(i, s, c[j].root);
        CHECK_OK(MPI_Ibcast(c[j].bytes, (int)nb, MPI_BYTE, c[j].root, MPI_COMM_WORLD, &req[j]));
        break;
      }
      default:
        CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &req[j]));
    }
  }
}

static void CheckCall(struct Call* c, int j, int batch) {
  const int s = batch * kCalls + j;
  switch (j % 4) {
    case 0:
    case 1:
      CheckSum(c[j].out, c[j].n, s, j % 4 ? "in-place iallreduce" : "iallreduce");
      break;
    case 2:
      CheckBytes(c[j].bytes, c[j].n * 8 + (j & 1) * 3, s, c[j].root, "ibcast");
      break;
  }
}

static struct Call* NewCalls(void) {
  struct Call* c = calloc(kCalls, sizeof *c);
  for (int j = 0; j < kCalls; ++j) {
    const long n = kCounts[j / 4 % 3];
    c[j].in = malloc(n * sizeof(double));
    c[j].out = malloc(n * sizeof(double));
    c[j].bytes = malloc(n * 8 + 3);
  }
  return c;
}
static void FreeCalls(struct Call* c) {
  for (int j = 0; j < kCalls; ++j) free(c[j].in), free(c[j].out), free(c[j].bytes);
  free(c);
}

static void Many(void) {
  struct Call* c = NewCalls();
  MPI_Request req[kCalls];
  for (int batch = 0; batch < 2; ++batch) {
    StartBatch(c, req, batch);
    for (int j = kCalls - 1; j >= 0; --j) {
      CHECK_OK(MPI_Wait(&req[j], MPI_STATUS_IGNORE));
      CHECK(req[j] == MPI_REQUEST_NULL, "call %d: request not freed by its wait", j);
      CheckCall(c, j, batch);
    }
  }
  /* Test loops: nothing waits, MPI_Testall alone drives them. */
  for (int batch = 2; batch < 4; ++batch) {
    StartBatch(c, req, batch);
    int done = 0;
    while (!done) {
      CHECK_OK(MPI_Testall(kCalls, req, &done, MPI_STATUSES_IGNORE));
      if (!done) usleep(50);
    }
    for (int j = 0; j < kCalls; ++j) CheckCall(c, j, batch);
  }
  FreeCalls(c);
}

static void Mixed(void) {
  struct Call* c = NewCalls();
  MPI_Request req[kCalls];
  int batch = 10;
  /* Blocking collectives (the same area) between the starts and the waits. */
  for (int k = 0; k < 2; ++k, ++batch) {
    StartBatch(c, req, batch);
    double x = rank, y = 0;
    CHECK_OK(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == p * (p - 1) / 2.0, "blocking allreduce among nonblocking ones: %g", y);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    int v = rank == k % p ? 1234 + k : -1;
    CHECK_OK(MPI_Bcast(&v, 1, MPI_INT, k % p, MPI_COMM_WORLD));
    CHECK(v == 1234 + k, "blocking bcast among nonblocking ones: %d", v);
    CHECK_OK(MPI_Waitall(kCalls, req, MPI_STATUSES_IGNORE));
    for (int j = 0; j < kCalls; ++j) CheckCall(c, j, batch);
  }
  /* A rank asleep (no MPI call) between start and wait, then before start. */
  for (int sleeper = 0; sleeper < p; ++sleeper) {
    for (int before = 0; before < 2; ++before, ++batch) {
      if (rank == sleeper && before) usleep(100000);
      StartBatch(c, req, batch);
      if (rank == sleeper && !before) usleep(100000);
      CHECK_OK(MPI_Waitall(kCalls, req, MPI_STATUSES_IGNORE));
      for (int j = 0; j < kCalls; ++j) CheckCall(c, j, batch);
    }
  }
  FreeCalls(c);
  /* Inexact float sums: one fold order on every rank gives the same bits. */
  for (size_t k = 0; k < sizeof kCounts / sizeof kCounts[0]; ++k) {
    const long n = kCounts[k];
    float* fin = malloc(n * sizeof(float));
    float* fout = malloc(n * sizeof(float));
    for (long i = 0; i < n; ++i)
      fin[i] = 0.35f + 0.1f * (float)((i + rank) % 3) + 1e7f * (float)(rank == 1);
    MPI_Request r;
    CHECK_OK(MPI_Iallreduce(fin, fout, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CheckSameBits(fout, n * sizeof(float), "iallreduce float sum");
    free(fin), free(fout);
  }
}

/* Root sends every other int of a vector; receivers take contiguous ints
 * (and the reverse), small and large. */
static void Layout(void) {
  const long counts[] = {3, 200000};
  for (int k = 0; k < 2; ++k) {
    const long n = counts[k];
    for (int root = 0; root < p; ++root) {
      MPI_Datatype vec;
      CHECK_OK(MPI_Type_vector((int)n, 1, 2, MPI_INT, &vec));
      CHECK_OK(MPI_Type_commit(&vec));
      int* buf = malloc(2 * n * sizeof(int));
      const int strided = (rank == root) == (k == 0);
      for (long i = 0; i < 2 * n; ++i) buf[i] = rank == root ? (int)(i * 5 + root) : -7;
      MPI_Request r;
      if (strided)
        CHECK_OK(MPI_Ibcast(buf, 1, vec, root, MPI_COMM_WORLD, &r));
      else
        CHECK_OK(MPI_Ibcast(buf, (int)n, MPI_INT, root, MPI_COMM_WORLD, &r));
      CHECK_OK(MPI_Type_free(&vec));
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      if (rank != root) {
        const int root_strided = k == 0;
        for (long i = 0; i < n; ++i) {
          const int want = (int)((root_strided ? 2 * i : i) * 5 + root);
          const long at = strided ? 2 * i : i;
          CHECK(buf[at] == want, "ibcast layout %ld ints root %d: [%ld] = %d, expected %d", n, root,
                at, buf[at], want);
          if (strided) CHECK(buf[2 * i + 1] == -7, "ibcast layout wrote a gap at %ld", 2 * i + 1);
        }
      }
      free(buf);
    }
  }
}

static void Persist(void) {
  for (size_t k = 0; k < sizeof kCounts / sizeof kCounts[0]; ++k) {
    const long nb = kCounts[k] * 8 + (long)k;
    unsigned char* b = malloc(nb);
    for (int root = 0; root < p; ++root) {
      MPI_Request r;
      CHECK_OK(MPI_Bcast_init(b, (int)nb, MPI_BYTE, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
      for (int s = 0; s < 6; ++s) {
        for (long i = 0; i < nb; ++i)
          b[i] = rank == root ? Byte(i, s, root) : (unsigned char)~Byte(i, s, root);
        if (rank == (s + 1) % p && s % 2) usleep(20000);
        CHECK_OK(MPI_Start(&r));
        if (s % 3 == 2) {
          int done = 0;
          while (!done) CHECK_OK(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
        } else {
          CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        CheckBytes(b, nb, s, root, "persistent bcast");
      }
      CHECK_OK(MPI_Request_free(&r));
    }
    free(b);
  }
  MPI_Request bar;
  CHECK_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &bar));
  for (int s = 0; s < 20; ++s) {
    if (rank == s % p) usleep(5000);
    CHECK_OK(MPI_Start(&bar));
    CHECK_OK(MPI_Wait(&bar, MPI_STATUS_IGNORE));
  }
  CHECK_OK(MPI_Request_free(&bar));
}

/* Reduce: only the root's buffer changes. */
static void Reduce(void) {
  enum { kReduces = 24 };
  double* in[kReduces];
  double* out[kReduces];
  MPI_Request req[kReduces];
  for (int batch = 0; batch < 2; ++batch) {
    for (int j = 0; j < kReduces; ++j) {
      const long n = kCounts[j % 3];
      const int root = j / 3 % p, s = batch * kReduces + j, in_place = j / 2 % 2 && rank == root;
      in[j] = malloc(n * sizeof(double));
      out[j] = malloc(n * sizeof(double));
      Fill(in_place ? out[j] : in[j], n, s);
      if (!in_place) memset(out[j], 0x5a, n * sizeof(double));
      CHECK_OK(MPI_Ireduce(in_place ? MPI_IN_PLACE : in[j], out[j], (int)n, MPI_DOUBLE, MPI_SUM,
                           root, MPI_COMM_WORLD, &req[j]));
    }
    for (int j = kReduces - 1; j >= 0; --j) {
      const long n = kCounts[j % 3];
      const int root = j / 3 % p, s = batch * kReduces + j;
      CHECK_OK(MPI_Wait(&req[j], MPI_STATUS_IGNORE));
      if (rank == root) {
        CheckSum(out[j], n, s, "ireduce");
      } else {
        const unsigned char* b = (const unsigned char*)out[j];
        for (long i = 0; i < n * (long)sizeof(double); ++i)
          CHECK(b[i] == 0x5a, "ireduce wrote a non-root's receive buffer at byte %ld", i);
      }
      free(in[j]), free(out[j]);
    }
  }
  for (size_t k = 0; k < sizeof kCounts / sizeof kCounts[0]; ++k) {
    const long n = kCounts[k];
    double* pin = malloc(n * sizeof(double));
    double* pout = malloc(n * sizeof(double));
    for (int root = 0; root < p; ++root) {
      MPI_Request r;
      CHECK_OK(MPI_Reduce_init(pin, pout, (int)n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &r));
      for (int s = 0; s < 4; ++s) {
        Fill(pin, n, s + root);
        memset(pout, 0x5a, n * sizeof(double));
        if (rank == (s + 1) % p && s % 2) usleep(20000);
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (rank == root)
          CheckSum(pout, n, s + root, "persistent reduce");
        else
          CHECK(((unsigned char*)pout)[0] == 0x5a && ((unsigned char*)pout)[n * 8 - 1] == 0x5a,
                "persistent reduce wrote a non-root's receive buffer");
      }
      CHECK_OK(MPI_Request_free(&r));
    }
    free(pin), free(pout);
  }
}

int main(int argc, char** argv) {
  CHECK_OK(MPI_Init(&argc, &argv));
  CHECK_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  CHECK_OK(MPI_Comm_size(MPI_COMM_WORLD, &p));
  g_rank = rank;
  const char* what = argc > 1 ? argv[1] : "all";
  const int all = strcmp(what, "all") == 0;
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (all || strcmp(what, "many") == 0) Many();
  if (all || strcmp(what, "mixed") == 0) Mixed();
  if (all || strcmp(what, "layout") == 0) Layout();
  if (all || strcmp(what, "persist") == 0) Persist();
  if (all || strcmp(what, "reduce") == 0) Reduce();
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("mp_node_nonblocking %s ok\n", what);
  CHECK_OK(MPI_Finalize());
  return 0;
}
