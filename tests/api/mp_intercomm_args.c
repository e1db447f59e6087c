/* Argument errors of the collectives on an intercommunicator, under
 * MPI_ERRORS_RETURN, in all three forms: the blocking call, the
 * nonblocking call and the persistent _init must refuse the same
 * arguments with the same class, hand back no request and write nothing.
 * Every case is an error on every rank (each checks only the arguments its
 * own role reads: a rank passing root = 0 is a non-root of the other
 * group, a rank passing MPI_ROOT is the root), so no rank is left in a
 * collective that the others refused. */
#include <string.h>

#include "mp_intercomm.h"

enum { kN = 4 };

static int in[kN], out[kN * kMaxRanks];
static int counts[kMaxRanks], displs[kMaxRanks], neg[kMaxRanks];

/* out[] as it was before the call: nothing may have been written. */
static void check_untouched(const char* what) {
  for (int i = 0; i < kN * kMaxRanks; ++i)
    CHECK(out[i] == -1, "%s wrote out[%d] = %d", what, i, out[i]);
}

#define EXPECT_CLASS(want, what, call)                                              \
  do {                                                                              \
    int cls_ = -1;                                                                  \
    MPI_Error_class((call), &cls_);                                                 \
    CHECK(cls_ == (want), "%s (%s): class %d, want %d", what, #call, cls_, (want)); \
  } while (0)

/* The same arguments in the three forms. */
#define ALL_FORMS(want, what, B, NB, INIT, ...)                                 \
  do {                                                                          \
    MPI_Request rq_ = MPI_REQUEST_NULL;                                         \
    EXPECT_CLASS(want, what, B(__VA_ARGS__));                                   \
    EXPECT_CLASS(want, what, NB(__VA_ARGS__, &rq_));                            \
    CHECK(rq_ == MPI_REQUEST_NULL, "%s: %s handed out a request", what, #NB);   \
    EXPECT_CLASS(want, what, INIT(__VA_ARGS__, MPI_INFO_NULL, &rq_));           \
    CHECK(rq_ == MPI_REQUEST_NULL, "%s: %s handed out a request", what, #INIT); \
    check_untouched(what);                                                      \
  } while (0)

static void check_rooted_args(const Ctx* c) {
  const int bad_root = c->q; /* one past the remote group */
  ALL_FORMS(MPI_ERR_ROOT, "bcast root past the remote group", MPI_Bcast, MPI_Ibcast, MPI_Bcast_init,
            out, kN, MPI_INT, bad_root, c->inter);
  ALL_FORMS(MPI_ERR_ROOT, "bcast root -7", MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, out, kN, MPI_INT,
            -7, c->inter);
  ALL_FORMS(MPI_ERR_ROOT, "reduce root past the remote group", MPI_Reduce, MPI_Ireduce,
            MPI_Reduce_init, in, out, kN, MPI_INT, MPI_SUM, bad_root, c->inter);
  ALL_FORMS(MPI_ERR_ROOT, "gather root past the remote group", MPI_Gather, MPI_Igather,
            MPI_Gather_init, in, kN, MPI_INT, out, kN, MPI_INT, bad_root, c->inter);
  ALL_FORMS(MPI_ERR_ROOT, "scatter root past the remote group", MPI_Scatter, MPI_Iscatter,
            MPI_Scatter_init, in, kN, MPI_INT, out, kN, MPI_INT, bad_root, c->inter);
  /* A non-root of the other group (root 0) checks what it sends or receives. */
  ALL_FORMS(MPI_ERR_COUNT, "bcast count -1", MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, out, -1,
            MPI_INT, 0, c->inter);
  ALL_FORMS(MPI_ERR_TYPE, "bcast MPI_DATATYPE_NULL", MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, out, kN,
            MPI_DATATYPE_NULL, 0, c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "bcast MPI_IN_PLACE", MPI_Bcast, MPI_Ibcast, MPI_Bcast_init,
            MPI_IN_PLACE, kN, MPI_INT, 0, c->inter);
  ALL_FORMS(MPI_ERR_OP, "reduce MPI_OP_NULL", MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, in, out, kN,
            MPI_INT, MPI_OP_NULL, 0, c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "reduce MPI_IN_PLACE send", MPI_Reduce, MPI_Ireduce, MPI_Reduce_init,
            MPI_IN_PLACE, out, kN, MPI_INT, MPI_SUM, 0, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "gather sendcount -1", MPI_Gather, MPI_Igather, MPI_Gather_init, in, -1,
            MPI_INT, out, kN, MPI_INT, 0, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "scatter recvcount -1", MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, in,
            kN, MPI_INT, out, -1, MPI_INT, 0, c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "scatter MPI_IN_PLACE receive", MPI_Scatter, MPI_Iscatter,
            MPI_Scatter_init, in, kN, MPI_INT, MPI_IN_PLACE, kN, MPI_INT, 0, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "gatherv sendcount -1", MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, in,
            -1, MPI_INT, out, counts, displs, MPI_INT, 0, c->inter);
  /* MPI_ROOT on every rank: each checks the root's side. */
  ALL_FORMS(MPI_ERR_COUNT, "reduce at MPI_ROOT count -1", MPI_Reduce, MPI_Ireduce, MPI_Reduce_init,
            in, out, -1, MPI_INT, MPI_SUM, MPI_ROOT, c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "reduce at MPI_ROOT in place", MPI_Reduce, MPI_Ireduce, MPI_Reduce_init,
            in, MPI_IN_PLACE, kN, MPI_INT, MPI_SUM, MPI_ROOT, c->inter);
  ALL_FORMS(MPI_ERR_TYPE, "gather at MPI_ROOT MPI_DATATYPE_NULL", MPI_Gather, MPI_Igather,
            MPI_Gather_init, in, kN, MPI_INT, out, kN, MPI_DATATYPE_NULL, MPI_ROOT, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "gatherv at MPI_ROOT negative recvcounts", MPI_Gatherv, MPI_Igatherv,
            MPI_Gatherv_init, in, kN, MPI_INT, out, neg, displs, MPI_INT, MPI_ROOT, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "scatterv at MPI_ROOT negative sendcounts", MPI_Scatterv, MPI_Iscatterv,
            MPI_Scatterv_init, in, neg, displs, MPI_INT, out, kN, MPI_INT, MPI_ROOT, c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "scatterv at MPI_ROOT in place", MPI_Scatterv, MPI_Iscatterv,
            MPI_Scatterv_init, MPI_IN_PLACE, counts, displs, MPI_INT, out, kN, MPI_INT, MPI_ROOT,
            c->inter);
}

static void check_unrooted_args(const Ctx* c) {
  ALL_FORMS(MPI_ERR_COUNT, "allreduce count -1", MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init,
            in, out, -1, MPI_INT, MPI_SUM, c->inter);
  ALL_FORMS(MPI_ERR_OP, "allreduce MPI_OP_NULL", MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init,
            in, out, kN, MPI_INT, MPI_OP_NULL, c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "allreduce MPI_IN_PLACE", MPI_Allreduce, MPI_Iallreduce,
            MPI_Allreduce_init, MPI_IN_PLACE, out, kN, MPI_INT, MPI_SUM, c->inter);
  ALL_FORMS(MPI_ERR_TYPE, "allgather MPI_DATATYPE_NULL", MPI_Allgather, MPI_Iallgather,
            MPI_Allgather_init, in, kN, MPI_DATATYPE_NULL, out, kN, MPI_INT, c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "allgather MPI_IN_PLACE", MPI_Allgather, MPI_Iallgather,
            MPI_Allgather_init, MPI_IN_PLACE, kN, MPI_INT, out, kN, MPI_INT, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "alltoall recvcount -1", MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init,
            in, 1, MPI_INT, out, -1, MPI_INT, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "allgatherv negative recvcounts", MPI_Allgatherv, MPI_Iallgatherv,
            MPI_Allgatherv_init, in, 1, MPI_INT, out, neg, displs, MPI_INT, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "alltoallv negative sendcounts", MPI_Alltoallv, MPI_Ialltoallv,
            MPI_Alltoallv_init, in, neg, displs, MPI_INT, out, counts, displs, MPI_INT, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "reduce_scatter_block count -1", MPI_Reduce_scatter_block,
            MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, in, out, -1, MPI_INT, MPI_SUM,
            c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "reduce_scatter_block MPI_IN_PLACE", MPI_Reduce_scatter_block,
            MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, MPI_IN_PLACE, out, 1, MPI_INT,
            MPI_SUM, c->inter);
  ALL_FORMS(MPI_ERR_OP, "reduce_scatter MPI_OP_NULL", MPI_Reduce_scatter, MPI_Ireduce_scatter,
            MPI_Reduce_scatter_init, in, out, counts, MPI_INT, MPI_OP_NULL, c->inter);
  ALL_FORMS(MPI_ERR_COMM, "scan", MPI_Scan, MPI_Iscan, MPI_Scan_init, in, out, kN, MPI_INT, MPI_SUM,
            c->inter);
  ALL_FORMS(MPI_ERR_COMM, "exscan", MPI_Exscan, MPI_Iexscan, MPI_Exscan_init, in, out, kN, MPI_INT,
            MPI_SUM, c->inter);
}

/* The large-count forms run the int forms' checks. */
static void check_large_count_args(const Ctx* c) {
  ALL_FORMS(MPI_ERR_ROOT, "bcast_c root past the remote group", MPI_Bcast_c, MPI_Ibcast_c,
            MPI_Bcast_init_c, out, kN, MPI_INT, c->q, c->inter);
  ALL_FORMS(MPI_ERR_BUFFER, "allreduce_c MPI_IN_PLACE", MPI_Allreduce_c, MPI_Iallreduce_c,
            MPI_Allreduce_init_c, MPI_IN_PLACE, out, kN, MPI_INT, MPI_SUM, c->inter);
  ALL_FORMS(MPI_ERR_COUNT, "gather_c sendcount -1", MPI_Gather_c, MPI_Igather_c,
            MPI_Gather_init_c, in, -1, MPI_INT, out, kN, MPI_INT, 0, c->inter);
}

void check_collective_args(const Ctx* c) {
  for (int i = 0; i < kN; ++i) in[i] = val(world_rank, i);
  for (int i = 0; i < kMaxRanks; ++i) {
    counts[i] = 1;
    displs[i] = i;
    neg[i] = i == kMaxRanks / 2 || i == 0 ? -1 : 1;
  }
  memset(out, 0xff, sizeof out); /* every int -1 */
  MPI_Errhandler was;
  CHECK_OK(MPI_Comm_get_errhandler(c->inter, &was));
  CHECK_OK(MPI_Comm_set_errhandler(c->inter, MPI_ERRORS_RETURN));
  check_rooted_args(c);
  check_unrooted_args(c);
  check_large_count_args(c);
  CHECK_OK(MPI_Comm_set_errhandler(c->inter, was));
  CHECK_OK(MPI_Errhandler_free(&was));
  /* Nobody is left inside a collective: the next one runs. */
  CHECK_OK(MPI_Barrier(c->inter));
}
