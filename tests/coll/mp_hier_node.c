/* Blocking barrier, bcast, reduce and allreduce of communicators spanning
 * (virtual) nodes, whose node phases run through each node's same-node
 * area (src/coll/hier_node.cc). Run with NICQ_NODE_RANKS set; ctest reads
 * the plan dump to see that the node phases took the area.
 *
 * On world, on world reversed (leaders are no longer the lowest world
 * ranks) and, from 4 ranks, on world without rank 1 (its node mate is
 * alone there): allreduce and reduce (MPI_SUM on doubles, MPI_MAX on ints)
 * in place and not, reduce and bcast from every root, sizes of one item,
 * past the area's 8 KiB small limit, past its 64 KiB chunk and of several
 * chunks, a bcast whose root sends a vector type; barrier with each rank
 * arriving late in turn: the late rank writes the barrier's number in
 * shared memory just before it enters, and every rank must read that
 * number (or a later one) right after it leaves. */
#include <stdint.h>
#include <string.h>

#include "coll_check.h"
#include "job_word.h"

static int rank, p;
static volatile int* g_word; /* shared by every rank of the job (one host) */
static int g_barriers;

static const int kCounts[] = {1, 1025, 8193, 40000}; /* doubles: 8 B .. 320 KB */
#define NCOUNTS (int)(sizeof kCounts / sizeof kCounts[0])

static double In(int r, int i) {
  return (double)((r * 7 + i * 3) % 23 + (r == i % 5));
}

static void Allreduces(MPI_Comm comm, const char* what) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  for (int c = 0; c < NCOUNTS; ++c) {
    const int count = kCounts[c];
    double* in = malloc((size_t)count * sizeof(double));
    double* out = malloc((size_t)count * sizeof(double));
    int* iin = malloc((size_t)count * sizeof(int));
    int* iout = malloc((size_t)count * sizeof(int));
    for (int in_place = 0; in_place < 2; ++in_place) {
      for (int i = 0; i < count; ++i) in[i] = In(me, i), out[i] = in_place ? in[i] : -1;
      CHECK_OK(MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, count, MPI_DOUBLE, MPI_SUM, comm));
      for (int i = 0; i < count; ++i) {
        double want = 0;
        for (int r = 0; r < n; ++r) want += In(r, i);
        CHECK(out[i] == want, "%s allreduce sum count %d in_place %d [%d]: %g, want %g", what,
              count, in_place, i, out[i], want);
      }
      for (int i = 0; i < count; ++i)
        iin[i] = (me * 13 + i) % (n + 3), iout[i] = in_place ? iin[i] : -1;
      CHECK_OK(MPI_Allreduce(in_place ? MPI_IN_PLACE : iin, iout, count, MPI_INT, MPI_MAX, comm));
      for (int i = 0; i < count; ++i) {
        int want = 0;
        for (int r = 0; r < n; ++r)
          if ((r * 13 + i) % (n + 3) > want) want = (r * 13 + i) % (n + 3);
        CHECK(iout[i] == want, "%s allreduce max count %d in_place %d [%d]: %d, want %d", what,
              count, in_place, i, iout[i], want);
      }
    }
    free(in);
    free(out);
    free(iin);
    free(iout);
  }
}

static void Reduces(MPI_Comm comm, const char* what) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  for (int c = 0; c < NCOUNTS; ++c) {
    const int count = kCounts[c];
    double* in = malloc((size_t)count * sizeof(double));
    double* out = malloc((size_t)count * sizeof(double));
    for (int root = 0; root < n; ++root)
      for (int in_place = 0; in_place < 2; ++in_place) {
        const int ip = in_place && me == root;
        for (int i = 0; i < count; ++i) in[i] = In(me, i) * (1 + root), out[i] = ip ? in[i] : -7;
        CHECK_OK(MPI_Reduce(ip ? MPI_IN_PLACE : in, out, count, MPI_DOUBLE, MPI_SUM, root, comm));
        for (int i = 0; i < count; ++i) {
          double want = -7;
          if (me == root) {
            want = 0;
            for (int r = 0; r < n; ++r) want += In(r, i) * (1 + root);
          }
          CHECK(out[i] == want, "%s reduce count %d root %d in_place %d [%d]: %g, want %g", what,
                count, root, in_place, i, out[i], want);
        }
      }
    free(in);
    free(out);
  }
}

static void Bcasts(MPI_Comm comm, const char* what) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  for (int c = 0; c < NCOUNTS; ++c) {
    const int count = kCounts[c];
    double* buf = malloc((size_t)count * 2 * sizeof(double));
    for (int root = 0; root < n; ++root) {
      for (int i = 0; i < count; ++i) buf[i] = me == root ? In(root, i) + 0.5 : -1;
      CHECK_OK(MPI_Bcast(buf, count, MPI_DOUBLE, root, comm));
      for (int i = 0; i < count; ++i)
        CHECK(buf[i] == In(root, i) + 0.5, "%s bcast count %d root %d [%d]: %g", what, count, root,
              i, buf[i]);
      /* Every other double on the root, plain doubles elsewhere. */
      MPI_Datatype every_other;
      CHECK_OK(MPI_Type_vector(count, 1, 2, MPI_DOUBLE, &every_other));
      CHECK_OK(MPI_Type_commit(&every_other));
      for (int i = 0; i < 2 * count; ++i) buf[i] = me == root ? In(root, i) : -2;
      if (me == root)
        CHECK_OK(MPI_Bcast(buf, 1, every_other, root, comm));
      else
        CHECK_OK(MPI_Bcast(buf, count, MPI_DOUBLE, root, comm));
      if (me != root)
        for (int i = 0; i < count; ++i)
          CHECK(buf[i] == In(root, 2 * i), "%s vector bcast count %d root %d [%d]: %g", what, count,
                root, i, buf[i]);
      MPI_Type_free(&every_other);
    }
    free(buf);
  }
}

static void Barriers(MPI_Comm comm, const char* what) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  for (int late = 0; late < n; ++late)
    for (int k = 0; k < 3; ++k) {
      const int id = ++g_barriers;
      if (me == late) {
        SleepMs(5);
        __atomic_store_n(g_word, id, __ATOMIC_SEQ_CST);
      }
      CHECK_OK(MPI_Barrier(comm));
      const int seen = __atomic_load_n(g_word, __ATOMIC_SEQ_CST);
      /* The next barrier's late rank may have written already. */
      CHECK(seen >= id, "%s barrier %d (rank %d late): left it before the late rank came (%d)",
            what, id, late, seen);
    }
}

static void All(MPI_Comm comm, const char* what) {
  Allreduces(comm, what);
  Reduces(comm, what);
  Bcasts(comm, what);
  Barriers(comm, what);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_rank = rank;
  g_word = MapJobWord("nicq-test-hier");
  All(MPI_COMM_WORLD, "world");
  MPI_Comm reversed, holed;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &reversed));
  All(reversed, "reversed");
  MPI_Comm_free(&reversed);
  if (p >= 4) {
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 1 ? MPI_UNDEFINED : 0, rank, &holed));
    if (holed != MPI_COMM_NULL) {
      All(holed, "without rank 1");
      MPI_Comm_free(&holed);
    }
  }
  /* Each kind once more on world, in this order (the ctest reads the plan
   * dump's lines in it), then the verdict. */
  double one = 1, sum = 0;
  CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  CHECK_OK(MPI_Reduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, p - 1, MPI_COMM_WORLD));
  CHECK_OK(MPI_Bcast(&one, 1, MPI_DOUBLE, p - 1, MPI_COMM_WORLD));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) {
    fprintf(stderr, "hier node: ok with %d ranks\n", p);
    fflush(stderr);
  }
  munmap((void*)g_word, 4096);
  MPI_Finalize();
  return 0;
}
