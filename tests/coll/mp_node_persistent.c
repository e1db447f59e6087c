/* Persistent allreduce on the same-node collective area
 * (src/coll/node_persistent.cc; the shm column, where nicq's shm transport
 * carries every rank). argv[1]:
 *   data    8 B, 64 KiB and 1 MiB + 3 elements, sums of doubles and ints
 *           and a max, separate buffers and MPI_IN_PLACE, many starts in
 *           a row with the inputs changed between starts; float sums with
 *           inexact values give the same bits on every rank
 *   asleep  one rank sleeps (no MPI call) between MPI_Start and MPI_Wait
 *           while the others wait, each rank in turn, before and after
 *           its start; blocking collectives between start and wait
 *   slots   more live requests than the area has op slots (the rest keep
 *           the schedule), started together and waited in another order,
 *           freed and made again
 *   join    large float sums and reduces whose result depends on the fold
 *           order, sizes one item around the 128 KiB fold chunks, separate
 *           buffers and MPI_IN_PLACE (a reduce's root first and last), with
 *           one rank computing (a sleep, no MPI call) for a varying time
 *           between start and wait, so that the others start the chunks
 *           alone and it joins them part-way; every element must carry
 *           the bits of in_0 + (in_1 + (... + in_{p-1})) computed here
 *           (with NICQ_NODE_COLL=staged|off, where the schedule runs
 *           them, the value to within 1)
 * "all" (default) runs every one. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "node_check.h"

static void Data(void) {
  const int kStarts = 12;
  for (size_t c = 0; c < sizeof kCounts / sizeof kCounts[0]; ++c) {
    const long n = kCounts[c];
    double* in = malloc(n * sizeof(double));
    double* out = malloc(n * sizeof(double));
    MPI_Request req;
    CHECK_OK(MPI_Allreduce_init(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &req));
    for (int s = 0; s < kStarts; ++s) {
      Fill(in, n, s);
      memset(out, 0xff, n * sizeof(double));
      CHECK_OK(MPI_Start(&req));
      CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
      CheckSum(out, n, s, "double sum");
    }
    CHECK_OK(MPI_Request_free(&req));

    /* In place: the buffer is refilled before every start. */
    CHECK_OK(MPI_Allreduce_init(MPI_IN_PLACE, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &req));
    for (int s = 0; s < kStarts; ++s) {
      Fill(out, n, s + 100);
      CHECK_OK(MPI_Start(&req));
      int done = 0;
      while (!done) CHECK_OK(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
      CheckSum(out, n, s + 100, "in-place double sum");
    }
    CHECK_OK(MPI_Request_free(&req));

    /* Ints and a max: another kernel and item size. */
    int* iin = malloc(n * sizeof(int));
    int* iout = malloc(n * sizeof(int));
    CHECK_OK(MPI_Allreduce_init(iin, iout, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &req));
    for (int s = 0; s < 3; ++s) {
      for (long i = 0; i < n; ++i) iin[i] = (int)((i * 31 + rank * 17 + s) % 1000);
      CHECK_OK(MPI_Start(&req));
      CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
      for (long i = 0; i < n; ++i) {
        int want = 0;
        for (int r = 0; r < p; ++r) {
          const int v = (int)((i * 31 + r * 17 + s) % 1000);
          want = v > want ? v : want;
        }
        CHECK(iout[i] == want, "int max count %ld: [%ld] = %d, expected %d", n, i, iout[i], want);
      }
    }
    CHECK_OK(MPI_Request_free(&req));

    /* Inexact float sums: the order of the fold matters, so only one
     * order on every rank gives the same bits everywhere. */
    float* fin = malloc(n * sizeof(float));
    float* fout = malloc(n * sizeof(float));
    CHECK_OK(MPI_Allreduce_init(fin, fout, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &req));
    for (int s = 0; s < 3; ++s) {
      for (long i = 0; i < n; ++i)
        fin[i] = 0.35f + 0.1f * (float)((i + s + rank) % 3) + 1e7f * (float)(rank == 1);
      CHECK_OK(MPI_Start(&req));
      CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
      CheckSameBits(fout, n * sizeof(float), "float sum");
    }
    CHECK_OK(MPI_Request_free(&req));
    free(in), free(out), free(iin), free(iout), free(fin), free(fout);
  }
}

static void Asleep(void) {
  const long n = kCounts[2];
  double* in = malloc(n * sizeof(double));
  double* out = malloc(n * sizeof(double));
  double* small_in = malloc(sizeof(double));
  double* small_out = malloc(sizeof(double));
  MPI_Request req[2];
  CHECK_OK(MPI_Allreduce_init(in, out, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &req[0]));
  CHECK_OK(MPI_Allreduce_init(small_in, small_out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &req[1]));
  int s = 0;
  for (int sleeper = 0; sleeper < p; ++sleeper) {
    for (int before_start = 0; before_start < 2; ++before_start) {
      for (int which = 0; which < 2; ++which, ++s) {
        const long count = which == 0 ? n : 1;
        double* bin = which == 0 ? in : small_in;
        double* bout = which == 0 ? out : small_out;
        Fill(bin, count, s);
        memset(bout, 0, count * sizeof(double));
        if (rank == sleeper && before_start) usleep(100000);
        CHECK_OK(MPI_Start(&req[which]));
        if (rank == sleeper && !before_start) usleep(100000);
        CHECK_OK(MPI_Wait(&req[which], MPI_STATUS_IGNORE));
        CheckSum(bout, count, s, which == 0 ? "1 MiB with a sleeper" : "8 B with a sleeper");
      }
    }
  }
  /* Blocking collectives (on the same area) between start and wait. */
  for (int k = 0; k < 4; ++k, ++s) {
    Fill(in, n, s);
    Fill(small_in, 1, s);
    CHECK_OK(MPI_Start(&req[0]));
    CHECK_OK(MPI_Start(&req[1]));
    double x = rank, y = 0;
    CHECK_OK(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == p * (p - 1) / 2.0, "blocking allreduce between start and wait: %g", y);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == k % p) usleep(20000);
    CHECK_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    CheckSum(out, n, s, "1 MiB around blocking collectives");
    CheckSum(small_out, 1, s, "8 B around blocking collectives");
  }
  CHECK_OK(MPI_Request_free(&req[0]));
  CHECK_OK(MPI_Request_free(&req[1]));
  free(in), free(out), free(small_in), free(small_out);
}

/* Float input that makes the fold order visible: magnitudes differ by
 * rank, so (a + b) + c and a + (b + c) round differently. */
static float JoinIn(int r, long i, int s) {
  return 0.1f * (float)((i * 7 + s + r * 3) % 11) + (r == 1 ? 3e6f : r == 2 ? -2.9e6f : 0.5f);
}
static float JoinWant(long i, int s) {
  float acc = JoinIn(p - 1, i, s);
  for (int r = p - 2; r >= 0; --r) acc = JoinIn(r, i, s) + acc;
  return acc;
}

static void Join(void) {
  /* Staged or off, large messages keep the schedule, whose algorithm
   * associates differently: there the sums are checked to a tolerance. */
  const char* node_coll = getenv("NICQ_NODE_COLL");
  const int area_order =
      !node_coll || (strcmp(node_coll, "staged") != 0 && strcmp(node_coll, "off") != 0);
  enum { kChunk = 131072 / sizeof(float) };
  const long counts[] = {kChunk + 1, 2 * kChunk - 1, 2 * kChunk, 3 * kChunk + 1, 4L << 20};
  const int sleeps_us[] = {0, 150, 600, 2500, 9000};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const long n = counts[c];
    float* in = malloc(n * sizeof(float));
    float* out = malloc(n * sizeof(float));
    for (int form = 0; form < 4; ++form) {
      /* 0: allreduce, 1: allreduce in place, 2: reduce to rank 0 in
       * place, 3: reduce to the last rank in place. */
      const int root = form == 2 ? 0 : p - 1;
      const int reduce = form >= 2, in_place = form >= 1;
      const int gets = !reduce || rank == root;
      const void* send = in_place && gets ? MPI_IN_PLACE : in;
      float* fill = in_place && gets ? out : in;
      MPI_Request req;
      if (reduce)
        CHECK_OK(MPI_Reduce_init(send, out, (int)n, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &req));
      else
        CHECK_OK(MPI_Allreduce_init(send, out, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &req));
      for (int s = 0; s < (int)(sizeof sleeps_us / sizeof sleeps_us[0]); ++s) {
        for (long i = 0; i < n; ++i) fill[i] = JoinIn(rank, i, s + form);
        if (!(in_place && gets)) memset(out, 0xff, n * sizeof(float));
        CHECK_OK(MPI_Start(&req));
        if (rank == (s + form) % p) usleep(sleeps_us[s]);
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (!gets) continue;
        for (long i = 0; i < n; ++i) {
          const float want = JoinWant(i, s + form);
          const int wrong = area_order ? memcmp(&out[i], &want, sizeof want) != 0
                                       : !(fabsf(out[i] - want) <= 1.0f);
          if (wrong) {
            CHECK(0, "form %d count %ld sleep %d us: [%ld] = %.9g, expected %.9g (rank order)",
                  form, n, sleeps_us[s], i, out[i], want);
            break;
          }
        }
      }
      CHECK_OK(MPI_Request_free(&req));
    }
    free(in), free(out);
  }
}

enum { kLive = 20 }; /* more than the area's op slots */

static void Slots(void) {
  double in[kLive][4], out[kLive][4];
  MPI_Request req[kLive];
  for (int round = 0; round < 3; ++round) {
    for (int j = 0; j < kLive; ++j)
      CHECK_OK(MPI_Allreduce_init(in[j], out[j], 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &req[j]));
    for (int s = 0; s < 3; ++s) {
      for (int j = 0; j < kLive; ++j) {
        Fill(in[j], 4, s + j);
        CHECK_OK(MPI_Start(&req[j]));
      }
      /* Waited from the last: the first ones complete through progress. */
      for (int j = kLive - 1; j >= 0; --j) {
        CHECK_OK(MPI_Wait(&req[j], MPI_STATUS_IGNORE));
        CheckSum(out[j], 4, s + j, "one of many live requests");
      }
    }
    /* Freed in a different order on each rank. */
    for (int j = 0; j < kLive; ++j) {
      const int k = rank % 2 ? kLive - 1 - j : j;
      CHECK_OK(MPI_Request_free(&req[k]));
    }
  }
}

int main(int argc, char** argv) {
  CHECK_OK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_rank = rank;
  const char* mode = argc > 1 ? argv[1] : "all";
  const int all = strcmp(mode, "all") == 0;
  if (all || strcmp(mode, "data") == 0) Data();
  if (all || strcmp(mode, "asleep") == 0) Asleep();
  if (all || strcmp(mode, "slots") == 0) Slots();
  if (all || strcmp(mode, "join") == 0) Join();
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf("NODEP-OK %s\n", mode);
  CHECK_OK(MPI_Finalize());
  return 0;
}
