/* The collectives on intercommunicators, each result checked element by
 * element against values computed here (see mp_intercomm.c). */
#include "mp_intercomm.h"

/* The rooted collectives, root = the last rank of group `rg`. */
void check_rooted(const Ctx* c, int mode, int rg) {
  mp_intercomm_rank();
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
void check_all(const Ctx* c, int mode) {
  mp_intercomm_rank();
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

void check_noncommutative(const Ctx* c, int mode) {
  mp_intercomm_rank();
  MPI_Op op;
  CHECK_OK(MPI_Op_create(first_wins, 0, &op));
  int in[2] = {val(world_rank, 0), val(world_rank, 1)}, out[2] = {-7, -7};
  COLL(mode, MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, in, out, 2, MPI_INT, op, c->inter);
  for (int i = 0; i < 2; ++i)
    CHECK(out[i] == val(c->rw[0], i), "first-wins allreduce mode %d [%d] = %d, expected %d", mode,
          i, out[i], val(c->rw[0], i));
  MPI_Op_free(&op);
}

/* Noncontiguous and derived datatypes go through the pack/unpack steps. */
void check_derived(const Ctx* c, int mode) {
  mp_intercomm_rank();
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
