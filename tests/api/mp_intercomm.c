/* Intercommunicators: creation, queries, dup/split/create/compare, merge
 * (rank order follows the high flag), point-to-point with wildcards and
 * statuses, and every collective defined on them in blocking, nonblocking
 * and persistent forms, each result checked element by element against
 * values computed here. Three ways to cut the world in two: halves
 * (unequal for odd sizes), rank 0 against the rest, and even against odd
 * world ranks (groups whose world ranks interleave). */
#include "mp_check.h"

enum { kMaxRanks = 64 };

static int world_rank, world_size;
static const char* phase = ""; /* what runs now, for failure messages */

/* A two-group cut of the world: group_of(w) is 0 or 1. */
typedef struct {
  const char* name;
  int kind; /* 0 halves, 1 rank 0 vs rest, 2 even vs odd */
} Cut;

static int group_of(const Cut* cut, int w) {
  switch (cut->kind) {
    case 0:
      return w < world_size / 2 ? 0 : 1;
    case 1:
      return w == 0 ? 0 : 1;
    default:
      return w % 2;
  }
}

/* The world ranks of group g in world order (its local rank order). */
static int members(const Cut* cut, int g, int* out) {
  int n = 0;
  for (int w = 0; w < world_size; ++w)
    if (group_of(cut, w) == g) out[n++] = w;
  return n;
}

/* Per-test context. */
typedef struct {
  MPI_Comm inter;
  int color, r, p, q;               /* my group, local rank, local size, remote size */
  int lw[kMaxRanks], rw[kMaxRanks]; /* world ranks of the local and remote groups */
} Ctx;

static int val(int w, int i) {
  return w * 100 + i + 1;
}

/* Runs a collective in form `mode` (0 blocking, 1 nonblocking, 2
 * persistent: init, two starts, free). */
#define COLL(mode, B, NB, INIT, ...)                                   \
  do {                                                                 \
    MPI_Request rq_;                                                   \
    if ((mode) == 0) {                                                 \
      CHECK_OK(B(__VA_ARGS__));                                        \
    } else if ((mode) == 1) {                                          \
      CHECK_OK(NB(__VA_ARGS__, &rq_));                                 \
      CHECK_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                     \
      CHECK(rq_ == MPI_REQUEST_NULL, "%s: request not released", #NB); \
    } else {                                                           \
      CHECK_OK(INIT(__VA_ARGS__, MPI_INFO_NULL, &rq_));                \
      for (int s_ = 0; s_ < 2; ++s_) {                                 \
        CHECK_OK(MPI_Start(&rq_));                                     \
        CHECK_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                   \
      }                                                                \
      CHECK_OK(MPI_Request_free(&rq_));                                \
    }                                                                  \
  } while (0)

static void check_groups(const Ctx* c) {
  int flag = 0, n = 0, rank = -1;
  CHECK_OK(MPI_Comm_test_inter(c->inter, &flag));
  CHECK(flag == 1, "test_inter gave %d", flag);
  CHECK_OK(MPI_Comm_size(c->inter, &n));
  CHECK(n == c->p, "size %d, expected the local group's %d", n, c->p);
  CHECK_OK(MPI_Comm_rank(c->inter, &rank));
  CHECK(rank == c->r, "rank %d, expected %d", rank, c->r);
  CHECK_OK(MPI_Comm_remote_size(c->inter, &n));
  CHECK(n == c->q, "remote size %d, expected %d", n, c->q);
  MPI_Group wg, rg, lg;
  int idx[kMaxRanks], out[kMaxRanks];
  for (int i = 0; i < kMaxRanks; ++i) idx[i] = i;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  CHECK_OK(MPI_Comm_remote_group(c->inter, &rg));
  CHECK_OK(MPI_Group_translate_ranks(rg, c->q, idx, wg, out));
  for (int i = 0; i < c->q; ++i)
    CHECK(out[i] == c->rw[i], "remote rank %d is world %d, expected %d", i, out[i], c->rw[i]);
  CHECK_OK(MPI_Comm_group(c->inter, &lg));
  CHECK_OK(MPI_Group_translate_ranks(lg, c->p, idx, wg, out));
  for (int i = 0; i < c->p; ++i)
    CHECK(out[i] == c->lw[i], "local rank %d is world %d, expected %d", i, out[i], c->lw[i]);
  MPI_Group_free(&wg);
  MPI_Group_free(&rg);
  MPI_Group_free(&lg);
  CHECK_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
  CHECK(flag == 0, "MPI_COMM_WORLD reported as an intercommunicator");
}

/* Everyone sends one message to every remote rank; receives name
 * MPI_ANY_SOURCE / MPI_ANY_TAG and the statuses must name remote ranks. */
static void check_p2p(const Ctx* c) {
  int msg[3], got[kMaxRanks] = {0};
  MPI_Request reqs[kMaxRanks];
  int out[kMaxRanks][3];
  for (int j = 0; j < c->q; ++j) {
    out[j][0] = c->r;
    out[j][1] = world_rank;
    out[j][2] = j;
    CHECK_OK(MPI_Isend(out[j], 3, MPI_INT, j, 100 + c->r, c->inter, &reqs[j]));
  }
  for (int k = 0; k < c->q; ++k) {
    MPI_Status st;
    int flag = 0;
    CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->inter, &st));
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < c->q, "probe source %d", st.MPI_SOURCE);
    CHECK_OK(MPI_Iprobe(st.MPI_SOURCE, st.MPI_TAG, c->inter, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "iprobe of a probed message found nothing");
    CHECK_OK(MPI_Recv(msg, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c->inter, &st));
    const int src = st.MPI_SOURCE;
    int count = -1;
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 3, "%s: count %d from remote %d tag %d", phase, count, st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK(src >= 0 && src < c->q, "status source %d outside the remote group", src);
    CHECK(st.MPI_TAG == 100 + src, "tag %d from remote %d", st.MPI_TAG, src);
    CHECK(msg[0] == src && msg[1] == c->rw[src] && msg[2] == c->r,
          "message (%d,%d,%d) from remote %d (world %d)", msg[0], msg[1], msg[2], src, c->rw[src]);
    CHECK(got[src] == 0, "two messages from remote %d", src);
    got[src] = 1;
  }
  CHECK_OK(MPI_Waitall(c->q, reqs, MPI_STATUSES_IGNORE));
  /* No remote process leaves the barrier before all have received, so the
   * wildcard receives above cannot take the message below. */
  CHECK_OK(MPI_Barrier(c->inter));
  /* A named source, and MPI_PROC_NULL. */
  if (c->r < c->q) {
    int x = world_rank, y = -1;
    MPI_Status st;
    CHECK_OK(MPI_Sendrecv(&x, 1, MPI_INT, c->r, 7, &y, 1, MPI_INT, c->r, 7, c->inter, &st));
    CHECK(y == c->rw[c->r] && st.MPI_SOURCE == c->r && st.MPI_TAG == 7,
          "sendrecv with remote %d: got %d from %d", c->r, y, st.MPI_SOURCE);
  }
  int y = 5;
  MPI_Status st;
  CHECK_OK(MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, c->inter, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && y == 5, "MPI_PROC_NULL receive");
}

/* The rooted collectives, root = the last rank of group `rg`. */
static void check_rooted(const Ctx* c, int mode, int rg) {
  enum { N = 3 };
  const int root_local = rg == c->color ? (c->p - 1) : (c->q - 1);
  const int am_root = rg == c->color && c->r == c->p - 1;
  const int root = rg == c->color ? (am_root ? MPI_ROOT : MPI_PROC_NULL) : root_local;
  const int root_world = rg == c->color ? c->lw[root_local] : c->rw[root_local];
  const int q = c->q;
  int buf[N], big[kMaxRanks * (kMaxRanks + 1)], counts[kMaxRanks], displs[kMaxRanks];

  /* bcast */
  for (int i = 0; i < N; ++i) buf[i] = am_root ? val(world_rank, i) : -7;
  COLL(mode, MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, buf, N, MPI_INT, root, c->inter);
  for (int i = 0; i < N; ++i) {
    const int want = am_root ? val(world_rank, i) : root == MPI_PROC_NULL ? -7 : val(root_world, i);
    CHECK(buf[i] == want, "bcast mode %d [%d] = %d, expected %d", mode, i, buf[i], want);
  }

  /* reduce: the root gets the sum over the other group */
  int in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = val(world_rank, i), out[i] = -7;
  COLL(mode, MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, in, out, N, MPI_INT, MPI_SUM, root,
       c->inter);
  for (int i = 0; i < N; ++i) {
    int want = -7;
    if (am_root) {
      want = 0;
      for (int j = 0; j < q; ++j) want += val(c->rw[j], i);
    }
    CHECK(out[i] == want, "reduce mode %d [%d] = %d, expected %d", mode, i, out[i], want);
  }

  /* gather: block j from remote rank j */
  for (int i = 0; i < q * N; ++i) big[i] = -7;
  COLL(mode, MPI_Gather, MPI_Igather, MPI_Gather_init, in, N, MPI_INT, big, N, MPI_INT, root,
       c->inter);
  if (am_root)
    for (int j = 0; j < q; ++j)
      for (int i = 0; i < N; ++i)
        CHECK(big[j * N + i] == val(c->rw[j], i), "gather mode %d block %d [%d] = %d", mode, j, i,
              big[j * N + i]);

  /* gatherv: remote rank j sends j+1 items, placed with a gap of one */
  int vin[kMaxRanks + 1];
  for (int i = 0; i <= c->r; ++i) vin[i] = val(world_rank, i);
  int total = 0;
  for (int j = 0; j < q; ++j) counts[j] = j + 1, displs[j] = total, total += j + 2;
  for (int i = 0; i < total; ++i) big[i] = -7;
  COLL(mode, MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, vin, c->r + 1, MPI_INT, big, counts,
       displs, MPI_INT, root, c->inter);
  if (am_root)
    for (int j = 0; j < q; ++j) {
      for (int i = 0; i <= j; ++i)
        CHECK(big[displs[j] + i] == val(c->rw[j], i), "gatherv mode %d block %d [%d] = %d", mode, j,
              i, big[displs[j] + i]);
      CHECK(big[displs[j] + j + 1] == -7, "gatherv wrote into the gap after block %d", j);
    }

  /* scatter: block j (values of world 1000+j) to remote rank j */
  if (am_root)
    for (int j = 0; j < q; ++j)
      for (int i = 0; i < N; ++i) big[j * N + i] = val(1000 + j, i);
  for (int i = 0; i < N; ++i) out[i] = -7;
  COLL(mode, MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, big, N, MPI_INT, out, N, MPI_INT, root,
       c->inter);
  for (int i = 0; i < N; ++i) {
    const int want = root >= 0 ? val(1000 + c->r, i) : -7;
    CHECK(out[i] == want, "scatter mode %d [%d] = %d, expected %d", mode, i, out[i], want);
  }

  /* scatterv: j+1 items to remote rank j */
  if (am_root)
    for (int j = 0; j < q; ++j)
      for (int i = 0; i <= j; ++i) big[displs[j] + i] = val(2000 + j, i);
  for (int i = 0; i <= c->r; ++i) vin[i] = -7;
  COLL(mode, MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, big, counts, displs, MPI_INT, vin,
       c->r + 1, MPI_INT, root, c->inter);
  for (int i = 0; i <= c->r; ++i) {
    const int want = root >= 0 ? val(2000 + c->r, i) : -7;
    CHECK(vin[i] == want, "scatterv mode %d [%d] = %d, expected %d", mode, i, vin[i], want);
  }
}

/* Collectives without a root: every result comes from the other group. */
static void check_all(const Ctx* c, int mode) {
  enum { N = 3 };
  const int p = c->p, q = c->q, r = c->r;
  int in[kMaxRanks * N * 2], out[kMaxRanks * N * 2];
  int sc[kMaxRanks], sd[kMaxRanks], rc[kMaxRanks], rd[kMaxRanks];

  COLL(mode, MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init, c->inter);

  /* allreduce */
  for (int i = 0; i < N; ++i) in[i] = val(world_rank, i), out[i] = -7;
  COLL(mode, MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, in, out, N, MPI_INT, MPI_SUM,
       c->inter);
  for (int i = 0; i < N; ++i) {
    int want = 0;
    for (int j = 0; j < q; ++j) want += val(c->rw[j], i);
    CHECK(out[i] == want, "allreduce mode %d [%d] = %d, expected %d", mode, i, out[i], want);
  }

  /* allgather */
  for (int i = 0; i < q * N; ++i) out[i] = -7;
  COLL(mode, MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, in, N, MPI_INT, out, N, MPI_INT,
       c->inter);
  for (int j = 0; j < q; ++j)
    for (int i = 0; i < N; ++i)
      CHECK(out[j * N + i] == val(c->rw[j], i), "allgather mode %d block %d [%d] = %d", mode, j, i,
            out[j * N + i]);

  /* allgatherv: remote rank j contributes j+1 items */
  for (int i = 0; i <= r; ++i) in[i] = val(world_rank, i);
  int total = 0;
  for (int j = 0; j < q; ++j) rc[j] = j + 1, rd[j] = total, total += j + 2;
  for (int i = 0; i < total; ++i) out[i] = -7;
  COLL(mode, MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, in, r + 1, MPI_INT, out, rc, rd,
       MPI_INT, c->inter);
  for (int j = 0; j < q; ++j) {
    for (int i = 0; i <= j; ++i)
      CHECK(out[rd[j] + i] == val(c->rw[j], i), "allgatherv mode %d block %d [%d] = %d", mode, j, i,
            out[rd[j] + i]);
    CHECK(out[rd[j] + j + 1] == -7, "allgatherv wrote into the gap after block %d", j);
  }

  /* alltoall: item i of the block for remote j encodes (sender world, j, i) */
  for (int j = 0; j < q; ++j)
    for (int i = 0; i < N; ++i) in[j * N + i] = world_rank * 1000 + j * 10 + i;
  for (int i = 0; i < q * N; ++i) out[i] = -7;
  COLL(mode, MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, in, N, MPI_INT, out, N, MPI_INT,
       c->inter);
  for (int j = 0; j < q; ++j)
    for (int i = 0; i < N; ++i)
      CHECK(out[j * N + i] == c->rw[j] * 1000 + r * 10 + i, "alltoall mode %d block %d [%d] = %d",
            mode, j, i, out[j * N + i]);

  /* alltoallv / alltoallw: local a -> remote b carries (a+b)%3+1 items */
  int stot = 0, rtot = 0;
  for (int j = 0; j < q; ++j) {
    sc[j] = (r + j) % 3 + 1, sd[j] = stot, stot += sc[j] + 1;
    rc[j] = (j + r) % 3 + 1, rd[j] = rtot, rtot += rc[j] + 1;
    for (int i = 0; i < sc[j]; ++i) in[sd[j] + i] = world_rank * 1000 + j * 10 + i;
  }
  for (int w = 0; w < 2; ++w) {
    for (int i = 0; i < rtot; ++i) out[i] = -7;
    if (w == 0) {
      COLL(mode, MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, in, sc, sd, MPI_INT, out, rc,
           rd, MPI_INT, c->inter);
    } else {
      int sdb[kMaxRanks], rdb[kMaxRanks];
      MPI_Datatype types[kMaxRanks];
      for (int j = 0; j < q; ++j)
        sdb[j] = sd[j] * (int)sizeof(int), rdb[j] = rd[j] * (int)sizeof(int), types[j] = MPI_INT;
      COLL(mode, MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init, in, sc, sdb, types, out, rc,
           rdb, types, c->inter);
    }
    for (int j = 0; j < q; ++j) {
      for (int i = 0; i < rc[j]; ++i)
        CHECK(out[rd[j] + i] == c->rw[j] * 1000 + r * 10 + i,
              "alltoall%s mode %d block %d [%d] = %d", w ? "w" : "v", mode, j, i, out[rd[j] + i]);
      CHECK(out[rd[j] + rc[j]] == -7, "alltoall%s wrote past block %d", w ? "w" : "v", j);
    }
  }

  /* reduce_scatter_block: both groups reduce p*q items; q per local rank */
  const int T = p * q;
  for (int i = 0; i < T; ++i) in[i] = val(world_rank, i);
  for (int i = 0; i < q; ++i) out[i] = -7;
  COLL(mode, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, in,
       out, q, MPI_INT, MPI_SUM, c->inter);
  for (int i = 0; i < q; ++i) {
    int want = 0;
    for (int j = 0; j < q; ++j) want += val(c->rw[j], r * q + i);
    CHECK(out[i] == want, "reduce_scatter_block mode %d [%d] = %d, expected %d", mode, i, out[i],
          want);
  }

  /* reduce_scatter: uneven counts over the local group, same total */
  for (int i = 0; i < p; ++i) rc[i] = q;
  if (p > 1) rc[0] += 1, rc[p - 1] -= 1;
  int off = 0;
  for (int i = 0; i < r; ++i) off += rc[i];
  for (int i = 0; i <= rc[r]; ++i) out[i] = -7;
  COLL(mode, MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, in, out, rc, MPI_INT,
       MPI_SUM, c->inter);
  for (int i = 0; i < rc[r]; ++i) {
    int want = 0;
    for (int j = 0; j < q; ++j) want += val(c->rw[j], off + i);
    CHECK(out[i] == want, "reduce_scatter mode %d [%d] = %d, expected %d", mode, i, out[i], want);
  }
  CHECK(out[rc[r]] == -7, "reduce_scatter wrote past its %d items", rc[r]);
}

/* A non-commutative op: x op y = x, so a reduction in rank order gives
 * rank 0's value, and any other order another rank's. */
static void first_wins(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] = ((int*)in)[i];
}

static void check_noncommutative(const Ctx* c, int mode) {
  MPI_Op op;
  CHECK_OK(MPI_Op_create(first_wins, 0, &op));
  int in[2] = {val(world_rank, 0), val(world_rank, 1)}, out[2] = {-7, -7};
  COLL(mode, MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, in, out, 2, MPI_INT, op,
       c->inter);
  for (int i = 0; i < 2; ++i)
    CHECK(out[i] == val(c->rw[0], i), "first-wins allreduce mode %d [%d] = %d, expected %d", mode,
          i, out[i], val(c->rw[0], i));
  MPI_Op_free(&op);
}

/* Noncontiguous and derived datatypes go through the pack/unpack steps. */
static void check_derived(const Ctx* c, int mode) {
  MPI_Datatype vec, pair;
  CHECK_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec)); /* items 0, 2, 4 of 5 */
  CHECK_OK(MPI_Type_commit(&vec));
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  CHECK_OK(MPI_Type_commit(&pair));
  const int q = c->q;
  int buf[5], out[kMaxRanks * 6];
  /* bcast from group 0's rank 0 */
  const int am_root = c->color == 0 && c->r == 0;
  const int root = c->color == 0 ? (am_root ? MPI_ROOT : MPI_PROC_NULL) : 0;
  const int root_world = c->color == 0 ? c->lw[0] : c->rw[0];
  for (int i = 0; i < 5; ++i) buf[i] = am_root ? val(world_rank, i) : -7;
  COLL(mode, MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, buf, 1, vec, root, c->inter);
  for (int i = 0; i < 5; ++i) {
    const int moved = root >= 0 && i % 2 == 0;
    const int want = am_root ? val(world_rank, i) : moved ? val(root_world, i) : -7;
    CHECK(buf[i] == want, "vector bcast mode %d [%d] = %d, expected %d", mode, i, buf[i], want);
  }
  /* allgather: three ints sent from a vector, received as contiguous */
  for (int i = 0; i < 5; ++i) buf[i] = val(world_rank, i);
  for (int i = 0; i < 3 * q; ++i) out[i] = -7;
  COLL(mode, MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, buf, 1, vec, out, 3, MPI_INT,
       c->inter);
  for (int j = 0; j < q; ++j)
    for (int i = 0; i < 3; ++i)
      CHECK(out[3 * j + i] == val(c->rw[j], 2 * i), "vector allgather mode %d block %d [%d] = %d",
            mode, j, i, out[3 * j + i]);
  /* allreduce on a derived type: two pairs */
  int in4[4], out4[4];
  for (int i = 0; i < 4; ++i) in4[i] = val(world_rank, i), out4[i] = -7;
  COLL(mode, MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, in4, out4, 2, pair, MPI_MAX,
       c->inter);
  for (int i = 0; i < 4; ++i) {
    int want = val(c->rw[0], i);
    for (int j = 1; j < q; ++j) want = val(c->rw[j], i) > want ? val(c->rw[j], i) : want;
    CHECK(out4[i] == want, "pair allreduce mode %d [%d] = %d, expected %d", mode, i, out4[i], want);
  }
  MPI_Type_free(&vec);
  MPI_Type_free(&pair);
}

/* Errors the standard names, under MPI_ERRORS_RETURN; nothing changes. */
static void check_errors(const Ctx* c) {
  int x[2] = {1, 2}, y[2] = {0, 0}, cls = 0;
  MPI_Comm_set_errhandler(c->inter, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Error_class(MPI_Scan(x, y, 2, MPI_INT, MPI_SUM, c->inter), &cls);
  CHECK(cls == MPI_ERR_COMM, "MPI_Scan on an intercommunicator: class %d", cls);
  MPI_Request rq = MPI_REQUEST_NULL;
  MPI_Error_class(MPI_Iexscan(x, y, 2, MPI_INT, MPI_SUM, c->inter, &rq), &cls);
  CHECK(cls == MPI_ERR_COMM && rq == MPI_REQUEST_NULL, "MPI_Iexscan: class %d", cls);
  MPI_Error_class(MPI_Allreduce(MPI_IN_PLACE, y, 2, MPI_INT, MPI_SUM, c->inter), &cls);
  CHECK(cls == MPI_ERR_BUFFER, "in-place allreduce: class %d", cls);
  MPI_Error_class(MPI_Bcast(x, 2, MPI_INT, c->q, c->inter), &cls);
  CHECK(cls == MPI_ERR_ROOT, "bcast root %d (remote size %d): class %d", c->q, c->q, cls);
  MPI_Error_class(MPI_Send(x, 1, MPI_INT, c->q, 0, c->inter), &cls);
  CHECK(cls == MPI_ERR_RANK, "send to remote rank %d: class %d", c->q, cls);
  int n = -1;
  MPI_Error_class(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), &cls);
  CHECK(cls == MPI_ERR_COMM && n == -1, "remote_size of MPI_COMM_WORLD: class %d", cls);
  MPI_Comm m = MPI_COMM_NULL;
  MPI_Error_class(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &m), &cls);
  CHECK(cls == MPI_ERR_COMM && m == MPI_COMM_NULL, "merge of MPI_COMM_WORLD: class %d", cls);
  /* Matching (queued execution) refuses intercommunicators. */
  CHECK_OK(MPI_Allreduce_init(x, y, 2, MPI_INT, MPI_SUM, c->inter, MPI_INFO_NULL, &rq));
  MPI_Error_class(MPI_Match(&rq), &cls);
  CHECK(cls == MPI_ERR_COMM && rq != MPI_REQUEST_NULL, "MPI_Match on an intercomm: class %d", cls);
  MPI_Queue queue;
  CHECK_OK(MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = MPI_Enqueue_start(&queue, &rq);
  CHECK(rc != MPI_SUCCESS, "an unmatched intercomm request was enqueued");
  CHECK_OK(MPI_Queue_free(&queue));
  CHECK_OK(MPI_Request_free(&rq));
  MPI_Request p2p;
  CHECK_OK(MPI_Send_init(x, 1, MPI_INT, 0, 3, c->inter, &p2p));
  MPI_Error_class(MPI_Match(&p2p), &cls);
  CHECK(cls == MPI_ERR_COMM, "MPI_Match of a p2p request on an intercomm: class %d", cls);
  CHECK_OK(MPI_Request_free(&p2p));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  y[0] = y[1] = 0;
}

/* Merge: the group that passes high = 0 comes first. */
static void check_merge(const Ctx* c, int high, int other_high) {
  MPI_Comm m;
  CHECK_OK(MPI_Intercomm_merge(c->inter, high, &m));
  int flag = 1, n = 0, rank = -1;
  CHECK_OK(MPI_Comm_test_inter(m, &flag));
  CHECK(!flag, "a merged communicator is an intracommunicator");
  CHECK_OK(MPI_Comm_size(m, &n));
  CHECK(n == c->p + c->q, "merged size %d", n);
  int order[2 * kMaxRanks];
  CHECK_OK(MPI_Allgather(&world_rank, 1, MPI_INT, order, 1, MPI_INT, m));
  CHECK_OK(MPI_Comm_rank(m, &rank));
  CHECK(order[rank] == world_rank, "merged rank %d holds world %d", rank, order[rank]);
  int local_first;
  if (high != other_high) {
    local_first = !high;
  } else {
    /* Any order, but consistent: one group, then the other. */
    local_first = order[0] == c->lw[0];
  }
  for (int i = 0; i < n; ++i) {
    const int want = local_first ? (i < c->p ? c->lw[i] : c->rw[i - c->p])
                                 : (i < c->q ? c->rw[i] : c->lw[i - c->q]);
    CHECK(order[i] == want, "merge (high %d vs %d): rank %d is world %d, expected %d", high,
          other_high, i, order[i], want);
  }
  int sum = 0, want = 0;
  CHECK_OK(MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, m));
  for (int w = 0; w < n; ++w) want += order[w];
  CHECK(sum == want, "allreduce over the merged communicator: %d", sum);
  CHECK_OK(MPI_Comm_free(&m));
}

/* Split by local-rank parity with reversed keys; MPI_COMM_NULL when the
 * other side has no rank of that parity. */
static void check_split(const Ctx* c) {
  MPI_Comm s;
  const int color = c->r % 2;
  CHECK_OK(MPI_Comm_split(c->inter, color, -c->r, &s));
  Ctx d = *c;
  d.inter = s;
  d.p = d.q = 0;
  for (int i = c->p - 1; i >= 0; --i)
    if (i % 2 == color) d.lw[d.p++] = c->lw[i];
  for (int i = c->q - 1; i >= 0; --i)
    if (i % 2 == color) d.rw[d.q++] = c->rw[i];
  if (d.q == 0) {
    CHECK(s == MPI_COMM_NULL, "split: no remote rank of parity %d, yet a communicator", color);
    return;
  }
  CHECK(s != MPI_COMM_NULL, "split gave MPI_COMM_NULL");
  d.r = 0;
  while (d.lw[d.r] != world_rank) ++d.r;
  check_groups(&d);
  phase = "split";
  check_p2p(&d);
  check_all(&d, 0);
  CHECK_OK(MPI_Comm_free(&s));
}

/* MPI_Intercomm_create_from_groups: the same groups without a parent. */
static void check_from_groups(const Ctx* c) {
  MPI_Group wg, lg, rg;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  CHECK_OK(MPI_Group_incl(wg, c->p, c->lw, &lg));
  CHECK_OK(MPI_Group_incl(wg, c->q, c->rw, &rg));
  Ctx d = *c;
  CHECK_OK(MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "nicq-intercomm-test", MPI_INFO_NULL,
                                            MPI_ERRORS_ARE_FATAL, &d.inter));
  phase = "from_groups";
  check_groups(&d);
  check_p2p(&d);
  check_all(&d, 1);
  /* An intercommunicator is no parent for MPI_Comm_create_group. */
  MPI_Comm bad = MPI_COMM_NULL;
  int cls = 0;
  MPI_Comm_set_errhandler(d.inter, MPI_ERRORS_RETURN);
  MPI_Error_class(MPI_Comm_create_group(d.inter, lg, 5, &bad), &cls);
  CHECK(cls == MPI_ERR_COMM && bad == MPI_COMM_NULL, "create_group on an intercomm: class %d",
        cls);
  CHECK_OK(MPI_Comm_free(&d.inter));
  MPI_Group_free(&lg);
  MPI_Group_free(&rg);
  MPI_Group_free(&wg);
}

static void run_cut(const Cut* cut) {
  Ctx c;
  c.color = group_of(cut, world_rank);
  c.p = members(cut, c.color, c.lw);
  c.q = members(cut, 1 - c.color, c.rw);
  c.r = 0;
  while (c.lw[c.r] != world_rank) ++c.r;
  MPI_Comm local;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, c.color, world_rank, &local));
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, c.rw[0], 77, &c.inter));
  check_groups(&c);
  phase = cut->name;
  check_p2p(&c);
  for (int mode = 0; mode < 3; ++mode) {
    check_all(&c, mode);
    check_rooted(&c, mode, 0);
    check_rooted(&c, mode, 1);
    check_derived(&c, mode);
    check_noncommutative(&c, mode);
  }
  /* dup: congruent, and a working intercommunicator of its own */
  Ctx d = c;
  CHECK_OK(MPI_Comm_dup(c.inter, &d.inter));
  int res = -1;
  CHECK_OK(MPI_Comm_compare(c.inter, d.inter, &res));
  CHECK(res == MPI_CONGRUENT, "compare(inter, dup) = %d", res);
  CHECK_OK(MPI_Comm_compare(c.inter, MPI_COMM_WORLD, &res));
  CHECK(res == MPI_UNEQUAL, "compare(inter, world) = %d", res);
  check_groups(&d);
  phase = "dup";
  check_p2p(&d);
  check_all(&d, 1);
  check_errors(&d);
  CHECK_OK(MPI_Comm_free(&d.inter));
  check_merge(&c, c.color, 1 - c.color);
  check_merge(&c, 1 - c.color, c.color);
  check_merge(&c, 0, 0);
  check_split(&c);
  check_from_groups(&c);
  /* MPI_Comm_create: each group keeps all but its last rank (if it has two) */
  MPI_Group lg, sub;
  CHECK_OK(MPI_Comm_group(c.inter, &lg));
  int drop[1] = {c.p - 1};
  CHECK_OK(MPI_Group_excl(lg, c.p > 1 ? 1 : 0, drop, &sub));
  MPI_Comm cc;
  CHECK_OK(MPI_Comm_create(c.inter, sub, &cc));
  if (c.p > 1 && c.r == c.p - 1) {
    CHECK(cc == MPI_COMM_NULL, "MPI_Comm_create: a rank outside the group got a communicator");
  } else {
    int n = -1;
    CHECK(cc != MPI_COMM_NULL, "MPI_Comm_create gave MPI_COMM_NULL to a member");
    CHECK_OK(MPI_Comm_remote_size(cc, &n));
    CHECK(n == (c.q > 1 ? c.q - 1 : 1), "created remote size %d", n);
    CHECK_OK(MPI_Comm_free(&cc));
  }
  MPI_Group_free(&sub);
  MPI_Group_free(&lg);
  CHECK_OK(MPI_Comm_free(&c.inter));
  CHECK_OK(MPI_Comm_free(&local));
}

int main(int argc, char** argv) {
  mp_init(&argc, &argv, &world_rank, &world_size);
  CHECK(world_size >= 2 && world_size <= kMaxRanks, "needs 2..%d ranks", kMaxRanks);
  const Cut cuts[] = {{"halves", 0}, {"rank 0 vs rest", 1}, {"even vs odd", 2}};
  for (int i = 0; i < 3; ++i) run_cut(&cuts[i]);
  CHECK_OK(MPI_Finalize());
  if (world_rank == 0) printf("intercomm: %d ranks ok\n", world_size);
  return 0;
}
