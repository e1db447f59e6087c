/* Nonblocking and persistent barrier, bcast, reduce and allreduce of
 * communicators spanning (virtual) nodes, whose node phases run on each
 * node's same-node area (src/coll/hier_async.cc). Run with
 * NICQ_NODE_RANKS set; ctest reads the plan dump to see that the node
 * phases took the area.
 *
 * On world, on world reversed (leaders are no longer the lowest world
 * ranks) and, from 4 ranks, on world without rank 1 (its node mate is
 * alone there), each after one blocking barrier (which makes the node
 * group a nonblocking call needs): allreduce (MPI_SUM on doubles, MPI_MAX
 * on ints) and reduce in place and not, reduce and bcast from every root,
 * 8 B to 320 KB (past the area's small limit and its chunks), a
 * nonblocking bcast whose root sends a vector type freed before the wait;
 * persistent requests started three times with the data changed between
 * starts; barriers with each rank late in turn (no rank may leave before
 * the late one entered); then nonblocking calls left outstanding together
 * on two communicators, small and large mixed, waited in reverse.
 * Argument "quick": 8 B and 320 KB only, on world and world reversed.
 * Argument "first": nonblocking calls are the first collectives of world,
 * of its dup, of world reversed (split), from 4 ranks of world without its
 * last rank (create), of a cartesian ring of world and of world merged from
 * an intercommunicator: their node groups are made at creation,
 * so ctest counts their plan lines (the single hierarchical schedule a call
 * without a node group takes prints none); then those of an idup'd
 * communicator, which prints lines only after a blocking barrier (the one
 * blocking collective of this run).
 * Argument "cap": world without its last rank makes 70 dups and keeps them,
 * so a dup of world then gets a context slot past the limit of groups made
 * at creation (while the last rank holds few communicators): its first
 * nonblocking calls take the single schedule on every rank alike, with the
 * right data; once the 70 are freed, a new dup's take the area again. */
#include <string.h>

#include "coll_check.h"
#include "job_word.h"

static int rank, p;
static volatile int* g_word; /* shared by every rank of the job (one host) */
static int g_barriers;

static const int kCounts[] = {1, 40000, 1025, 8193}; /* doubles: 8 B .. 320 KB */
/* "quick" (sockets, ~40 ms a blocked round trip under load): the first two
 * counts, and no communicator without rank 1. */
static int NCOUNTS = (int)(sizeof kCounts / sizeof kCounts[0]);

static double In(int r, int i, int k) {
  return (double)((r * 7 + i * 3 + k * 5) % 23 + (r == i % 5));
}

/* persistent: one request started 3 times (data changed before each);
 * else one nonblocking call per k. */
static void Allreduces(MPI_Comm comm, const char* what, int persistent) {
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
      const void* src = in_place ? MPI_IN_PLACE : in;
      const void* isrc = in_place ? MPI_IN_PLACE : iin;
      MPI_Request r[2];
      if (persistent) {
        CHECK_OK(
            MPI_Allreduce_init(src, out, count, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &r[0]));
        CHECK_OK(
            MPI_Allreduce_init(isrc, iout, count, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL, &r[1]));
      }
      for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < count; ++i) in[i] = In(me, i, k), out[i] = in_place ? in[i] : -1;
        for (int i = 0; i < count; ++i)
          iin[i] = (me * 13 + i + k) % (n + 3), iout[i] = in_place ? iin[i] : -1;
        if (persistent) {
          CHECK_OK(MPI_Startall(2, r));
        } else {
          CHECK_OK(MPI_Iallreduce(src, out, count, MPI_DOUBLE, MPI_SUM, comm, &r[0]));
          CHECK_OK(MPI_Iallreduce(isrc, iout, count, MPI_INT, MPI_MAX, comm, &r[1]));
        }
        CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < count; ++i) {
          double want = 0;
          for (int q = 0; q < n; ++q) want += In(q, i, k);
          CHECK(out[i] == want,
                "%s %s allreduce sum count %d in_place %d start %d [%d]: %g, want %g", what,
                persistent ? "persistent" : "nonblocking", count, in_place, k, i, out[i], want);
          int iwant = 0;
          for (int q = 0; q < n; ++q)
            if ((q * 13 + i + k) % (n + 3) > iwant) iwant = (q * 13 + i + k) % (n + 3);
          CHECK(iout[i] == iwant,
                "%s %s allreduce max count %d in_place %d start %d [%d]: %d, want %d", what,
                persistent ? "persistent" : "nonblocking", count, in_place, k, i, iout[i], iwant);
        }
      }
      if (persistent) {
        CHECK_OK(MPI_Request_free(&r[0]));
        CHECK_OK(MPI_Request_free(&r[1]));
      }
    }
    free(in);
    free(out);
    free(iin);
    free(iout);
  }
}

static void Reduces(MPI_Comm comm, const char* what, int persistent) {
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
        MPI_Request r;
        if (persistent)
          CHECK_OK(MPI_Reduce_init(ip ? MPI_IN_PLACE : in, out, count, MPI_DOUBLE, MPI_SUM, root,
                                   comm, MPI_INFO_NULL, &r));
        for (int k = 0; k < (persistent ? 2 : 1); ++k) {
          for (int i = 0; i < count; ++i)
            in[i] = In(me, i, k) * (1 + root), out[i] = ip ? in[i] : -7;
          if (persistent)
            CHECK_OK(MPI_Start(&r));
          else
            CHECK_OK(MPI_Ireduce(ip ? MPI_IN_PLACE : in, out, count, MPI_DOUBLE, MPI_SUM, root,
                                 comm, &r));
          CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
          for (int i = 0; i < count; ++i) {
            double want = -7;
            if (me == root) {
              want = 0;
              for (int q = 0; q < n; ++q) want += In(q, i, k) * (1 + root);
            }
            CHECK(out[i] == want,
                  "%s %s reduce count %d root %d in_place %d start %d [%d]: %g, want %g", what,
                  persistent ? "persistent" : "nonblocking", count, root, in_place, k, i, out[i],
                  want);
          }
        }
        if (persistent) CHECK_OK(MPI_Request_free(&r));
      }
    free(in);
    free(out);
  }
}

static void Bcasts(MPI_Comm comm, const char* what, int persistent) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  for (int c = 0; c < NCOUNTS; ++c) {
    const int count = kCounts[c];
    double* buf = malloc((size_t)count * 2 * sizeof(double));
    for (int root = 0; root < n; ++root) {
      MPI_Request r;
      if (persistent)
        CHECK_OK(MPI_Bcast_init(buf, count, MPI_DOUBLE, root, comm, MPI_INFO_NULL, &r));
      for (int k = 0; k < (persistent ? 2 : 1); ++k) {
        for (int i = 0; i < count; ++i) buf[i] = me == root ? In(root, i, k) + 0.5 : -1;
        if (persistent)
          CHECK_OK(MPI_Start(&r));
        else
          CHECK_OK(MPI_Ibcast(buf, count, MPI_DOUBLE, root, comm, &r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < count; ++i)
          CHECK(buf[i] == In(root, i, k) + 0.5, "%s %s bcast count %d root %d start %d [%d]: %g",
                what, persistent ? "persistent" : "nonblocking", count, root, k, i, buf[i]);
      }
      if (persistent) {
        CHECK_OK(MPI_Request_free(&r));
        continue;
      }
      /* Every other double on the root, freed before the wait; plain
       * doubles elsewhere. */
      MPI_Datatype every_other;
      CHECK_OK(MPI_Type_vector(count, 1, 2, MPI_DOUBLE, &every_other));
      CHECK_OK(MPI_Type_commit(&every_other));
      for (int i = 0; i < 2 * count; ++i) buf[i] = me == root ? In(root, i, 0) : -2;
      if (me == root)
        CHECK_OK(MPI_Ibcast(buf, 1, every_other, root, comm, &r));
      else
        CHECK_OK(MPI_Ibcast(buf, count, MPI_DOUBLE, root, comm, &r));
      MPI_Type_free(&every_other);
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      if (me != root)
        for (int i = 0; i < count; ++i)
          CHECK(buf[i] == In(root, 2 * i, 0), "%s vector ibcast count %d root %d [%d]: %g", what,
                count, root, i, buf[i]);
    }
    free(buf);
  }
}

static void Barriers(MPI_Comm comm, const char* what, int persistent) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  MPI_Request r;
  if (persistent) CHECK_OK(MPI_Barrier_init(comm, MPI_INFO_NULL, &r));
  for (int late = 0; late < n; ++late)
    for (int k = 0; k < 2; ++k) {
      const int id = ++g_barriers;
      if (me == late) {
        SleepMs(5);
        __atomic_store_n(g_word, id, __ATOMIC_SEQ_CST);
      }
      if (persistent)
        CHECK_OK(MPI_Start(&r));
      else
        CHECK_OK(MPI_Ibarrier(comm, &r));
      CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      const int seen = __atomic_load_n(g_word, __ATOMIC_SEQ_CST);
      /* The next barrier's late rank may have written already. */
      CHECK(seen >= id, "%s %s barrier %d (rank %d late): left it before the late rank came (%d)",
            what, persistent ? "persistent" : "nonblocking", id, late, seen);
    }
  if (persistent) CHECK_OK(MPI_Request_free(&r));
}

/* Calls left outstanding together on `a` and `b`: per communicator an
 * allreduce of 8 B, one of 320 KB, a bcast from its last rank and a reduce
 * to rank 0, all started before any is waited for (in reverse). */
static void Overlapping(MPI_Comm a, MPI_Comm b) {
  enum { kBig = 40000 };
  MPI_Comm comms[2] = {a, b};
  double* big[2];
  double small[2], bc[2][3], red[2][3];
  int me[2], n[2];
  MPI_Request r[8];
  for (int j = 0; j < 2; ++j) {
    MPI_Comm_rank(comms[j], &me[j]);
    MPI_Comm_size(comms[j], &n[j]);
    big[j] = malloc(kBig * sizeof(double));
    for (int i = 0; i < kBig; ++i) big[j][i] = In(me[j], i, j);
    small[j] = me[j] + 1 + j;
    for (int i = 0; i < 3; ++i) bc[j][i] = me[j] == n[j] - 1 ? 10 * j + i : -1;
    for (int i = 0; i < 3; ++i) red[j][i] = me[j] * (i + 1);
  }
  for (int j = 0; j < 2; ++j) {
    CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, &small[j], 1, MPI_DOUBLE, MPI_SUM, comms[j], &r[4 * j]));
    CHECK_OK(
        MPI_Iallreduce(MPI_IN_PLACE, big[j], kBig, MPI_DOUBLE, MPI_SUM, comms[j], &r[4 * j + 1]));
    CHECK_OK(MPI_Ibcast(bc[j], 3, MPI_DOUBLE, n[j] - 1, comms[j], &r[4 * j + 2]));
    CHECK_OK(MPI_Ireduce(me[j] == 0 ? MPI_IN_PLACE : red[j], red[j], 3, MPI_DOUBLE, MPI_SUM, 0,
                         comms[j], &r[4 * j + 3]));
  }
  for (int i = 7; i >= 0; --i) CHECK_OK(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
  for (int j = 0; j < 2; ++j) {
    double want = 0;
    for (int q = 0; q < n[j]; ++q) want += q + 1 + j;
    CHECK(small[j] == want, "overlapping comm %d small allreduce: %g, want %g", j, small[j], want);
    for (int i = 0; i < kBig; ++i) {
      double w = 0;
      for (int q = 0; q < n[j]; ++q) w += In(q, i, j);
      CHECK(big[j][i] == w, "overlapping comm %d large allreduce [%d]: %g, want %g", j, i,
            big[j][i], w);
    }
    for (int i = 0; i < 3; ++i)
      CHECK(bc[j][i] == 10 * j + i, "overlapping comm %d bcast [%d]: %g", j, i, bc[j][i]);
    if (me[j] == 0)
      for (int i = 0; i < 3; ++i) {
        double w = 0;
        for (int q = 0; q < n[j]; ++q) w += q * (i + 1);
        CHECK(red[j][i] == w, "overlapping comm %d reduce [%d]: %g, want %g", j, i, red[j][i], w);
      }
    free(big[j]);
  }
}

/* One nonblocking call of each kind: allreduce of 8 B and 320 KB, bcast
 * from the last rank, reduce to rank 0 and a barrier. */
static void FirstCalls(MPI_Comm comm, const char* what) {
  enum { kBig = 40000 };
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  double small = me + 1, bc[3], red[3];
  double* big = malloc(kBig * sizeof(double));
  for (int i = 0; i < kBig; ++i) big[i] = In(me, i, 0);
  for (int i = 0; i < 3; ++i) bc[i] = me == n - 1 ? 5 + i : -1, red[i] = me * (i + 2);
  MPI_Request r[5];
  CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, &small, 1, MPI_DOUBLE, MPI_SUM, comm, &r[0]));
  CHECK_OK(MPI_Iallreduce(MPI_IN_PLACE, big, kBig, MPI_DOUBLE, MPI_SUM, comm, &r[1]));
  CHECK_OK(MPI_Ibcast(bc, 3, MPI_DOUBLE, n - 1, comm, &r[2]));
  CHECK_OK(MPI_Ireduce(me == 0 ? MPI_IN_PLACE : red, red, 3, MPI_DOUBLE, MPI_SUM, 0, comm, &r[3]));
  CHECK_OK(MPI_Ibarrier(comm, &r[4]));
  CHECK_OK(MPI_Waitall(5, r, MPI_STATUSES_IGNORE));
  CHECK(small == n * (n + 1) / 2.0, "%s first small iallreduce: %g", what, small);
  for (int i = 0; i < kBig; ++i) {
    double w = 0;
    for (int q = 0; q < n; ++q) w += In(q, i, 0);
    CHECK(big[i] == w, "%s first large iallreduce [%d]: %g, want %g", what, i, big[i], w);
  }
  for (int i = 0; i < 3; ++i) CHECK(bc[i] == 5 + i, "%s first ibcast [%d]: %g", what, i, bc[i]);
  if (me == 0)
    for (int i = 0; i < 3; ++i) {
      double w = 0;
      for (int q = 0; q < n; ++q) w += q * (i + 2);
      CHECK(red[i] == w, "%s first ireduce [%d]: %g, want %g", what, i, red[i], w);
    }
  free(big);
}

/* The line each ctest row waits for (on rank 0), then MPI_Finalize. */
static int Finish(const char* mode) {
  if (rank == 0) {
    fprintf(stderr, "hier node async: ok with %d ranks%s\n", p, mode);
    fflush(stderr);
  }
  MPI_Finalize();
  return 0;
}

static int FirstOnly(void) {
  FirstCalls(MPI_COMM_WORLD, "world");
  MPI_Comm dup, reversed, shorter = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  FirstCalls(dup, "dup");
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &reversed));
  FirstCalls(reversed, "reversed");
  if (p >= 4) {
    MPI_Group world, fewer;
    const int last = p - 1;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_excl(world, 1, &last, &fewer);
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, fewer, &shorter));
    if (shorter != MPI_COMM_NULL) FirstCalls(shorter, "without the last rank");
    MPI_Group_free(&fewer);
    MPI_Group_free(&world);
  }
  /* A cartesian ring of world, and world merged back from an
   * intercommunicator between its halves (high half second). */
  MPI_Comm ring, half, inter, merged;
  const int dims = p, periods = 1;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring));
  FirstCalls(ring, "cart");
  const int high = rank >= p / 2;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, high, rank, &half));
  CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, high ? 0 : p / 2, 7, &inter));
  CHECK_OK(MPI_Intercomm_merge(inter, high, &merged));
  FirstCalls(merged, "merged");
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Comm_free(&ring);
  /* MPI_Comm_idup leaves the group to the first blocking collective: the
   * first calls take the single schedule (no line), those after a barrier
   * the area. */
  MPI_Comm idup;
  MPI_Request r;
  CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &idup, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  FirstCalls(idup, "idup");
  CHECK_OK(MPI_Barrier(idup));
  FirstCalls(idup, "idup after a barrier");
  MPI_Comm_free(&idup);
  if (shorter != MPI_COMM_NULL) MPI_Comm_free(&shorter);
  MPI_Comm_free(&reversed);
  MPI_Comm_free(&dup);
  return Finish(" (first calls nonblocking)");
}

static int CapOnly(void) {
  enum { kKept = 70 };
  MPI_Comm trio, kept[kKept], late, again;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == p - 1 ? MPI_UNDEFINED : 0, rank, &trio));
  if (trio != MPI_COMM_NULL) {
    for (int i = 0; i < kKept; ++i) CHECK_OK(MPI_Comm_dup(trio, &kept[i]));
    FirstCalls(kept[kKept - 1], "last kept dup");
  }
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &late));
  FirstCalls(late, "dup past the limit");
  if (trio != MPI_COMM_NULL) {
    for (int i = 0; i < kKept; ++i) MPI_Comm_free(&kept[i]);
    MPI_Comm_free(&trio);
  }
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &again));
  FirstCalls(again, "dup after the frees");
  MPI_Comm_free(&again);
  MPI_Comm_free(&late);
  return Finish(" (past the eager limit)");
}

static void All(MPI_Comm comm, const char* what) {
  CHECK_OK(MPI_Barrier(comm)); /* makes the node group */
  for (int persistent = 0; persistent < 2; ++persistent) {
    Allreduces(comm, what, persistent);
    Reduces(comm, what, persistent);
    Bcasts(comm, what, persistent);
    Barriers(comm, what, persistent);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_rank = rank;
  if (argc > 1 && strcmp(argv[1], "first") == 0) return FirstOnly();
  if (argc > 1 && strcmp(argv[1], "cap") == 0) return CapOnly();
  const int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
  if (quick) NCOUNTS = 2;
  g_word = MapJobWord("nicq-test-hiera");
  All(MPI_COMM_WORLD, "world");
  MPI_Comm reversed, holed;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &reversed));
  All(reversed, "reversed");
  if (p >= 4 && !quick) {
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 1 ? MPI_UNDEFINED : 0, rank, &holed));
    if (holed != MPI_COMM_NULL) {
      All(holed, "without rank 1");
      MPI_Comm_free(&holed);
    }
  }
  for (int k = 0; k < 3; ++k) Overlapping(MPI_COMM_WORLD, reversed);
  MPI_Comm_free(&reversed);
  /* Each kind once more on world in both forms (the ctest reads the plan
   * dump's lines), then the verdict. */
  double one = 1, sum = 0;
  MPI_Request r;
  CHECK_OK(MPI_Iallreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(sum == p, "last iallreduce: %g", sum);
  CHECK_OK(
      MPI_Allreduce_init(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  CHECK_OK(MPI_Start(&r));
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Request_free(&r));
  CHECK(sum == p, "last persistent allreduce: %g", sum);
  munmap((void*)g_word, 4096);
  return Finish("");
}
