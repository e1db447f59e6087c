/* MPI_Comm_idup is nonblocking: between the call and its wait a process
 * runs blocking collectives and point-to-point on the parent, and other
 * ranks may wait for the idup at a different point of that sequence (a
 * rank that waits first must not need the others to reach their wait).
 * Several idups outstanding on one parent all complete, into distinct
 * communicators whose traffic stays apart; an idup overlapping a blocking
 * MPI_Comm_dup of another communicator agrees on a context id that no
 * communicator of any member uses. Checked: sizes, ranks, congruence,
 * message contents, reduction results, copied attributes and hints. */
#include <sched.h>

#include "mp_check.h"

static int world_rank, world_size;

/* The new communicator is a working copy of `parent`. */
static void check_copy(MPI_Comm parent, MPI_Comm dup, int seq) {
  int prank, psize, rank = -1, size = -1, cmp = -1;
  MPI_Comm_rank(parent, &prank);
  MPI_Comm_size(parent, &psize);
  CHECK(dup != MPI_COMM_NULL, "idup %d gave MPI_COMM_NULL", seq);
  CHECK_OK(MPI_Comm_rank(dup, &rank));
  CHECK_OK(MPI_Comm_size(dup, &size));
  CHECK(rank == prank && size == psize, "idup %d: rank %d size %d, parent %d %d", seq, rank, size,
        prank, psize);
  CHECK_OK(MPI_Comm_compare(parent, dup, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "idup %d: compare(parent, dup) = %d", seq, cmp);
  /* A ring message carrying (sender, seq). */
  int out[2] = {rank, seq}, in[2] = {-1, -1};
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  CHECK_OK(
      MPI_Sendrecv(out, 2, MPI_INT, right, 5, in, 2, MPI_INT, left, 5, dup, MPI_STATUS_IGNORE));
  CHECK(in[0] == left && in[1] == seq, "idup %d: ring got {%d, %d}, want {%d, %d}", seq, in[0],
        in[1], left, seq);
  int sum = 0;
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
  CHECK(sum == size * (size - 1) / 2, "idup %d: allreduce %d", seq, sum);
}

/* idup, then a blocking allreduce and barrier on the parent, then wait. */
static void check_collectives_before_wait(MPI_Comm parent) {
  int rank, size;
  MPI_Comm_rank(parent, &rank);
  MPI_Comm_size(parent, &size);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request rq;
  CHECK_OK(MPI_Comm_idup(parent, &dup, &rq));
  int v = rank + 1, sum = 0;
  CHECK_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, parent));
  CHECK(sum == size * (size + 1) / 2, "allreduce on the parent during idup: %d", sum);
  CHECK_OK(MPI_Barrier(parent));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK(rq == MPI_REQUEST_NULL, "idup request not released");
  check_copy(parent, dup, 1);
  CHECK_OK(MPI_Comm_free(&dup));
}

/* Even ranks wait for the idup before a blocking bcast on the parent, odd
 * ranks after it: the idup must finish without the odd ranks' wait. */
static void check_wait_anywhere(MPI_Comm parent) {
  int rank;
  MPI_Comm_rank(parent, &rank);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request rq;
  CHECK_OK(MPI_Comm_idup(parent, &dup, &rq));
  int token = rank == 0 ? 4242 : 0;
  if (rank % 2 == 0) CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Bcast(&token, 1, MPI_INT, 0, parent));
  CHECK(token == 4242, "bcast on the parent during idup: %d", token);
  if (rank % 2 == 1) {
    /* Test, not wait: the progress engine has been driving it all along. */
    int flag = 0;
    for (int spins = 0; !flag; ++spins) {
      CHECK_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
      if (spins > 64) sched_yield();
    }
  }
  check_copy(parent, dup, 2);
  CHECK_OK(MPI_Comm_free(&dup));
}

/* Three outstanding on one parent, with hints and an attribute, waited in
 * reverse order: three distinct communicators. */
static void check_several_outstanding(MPI_Comm parent) {
  int key = MPI_KEYVAL_INVALID, value = 77, rank;
  MPI_Comm_rank(parent, &rank);
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL));
  CHECK_OK(MPI_Comm_set_attr(parent, key, &value));
  MPI_Info hint;
  CHECK_OK(MPI_Info_create(&hint));
  CHECK_OK(MPI_Info_set(hint, "nicq_test_hint", "idup"));
  MPI_Comm d[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  MPI_Request rq[3];
  CHECK_OK(MPI_Comm_idup(parent, &d[0], &rq[0]));
  CHECK_OK(MPI_Comm_idup_with_info(parent, hint, &d[1], &rq[1]));
  CHECK_OK(MPI_Comm_idup(parent, &d[2], &rq[2]));
  CHECK_OK(MPI_Info_free(&hint));
  CHECK_OK(MPI_Barrier(parent));
  for (int i = 2; i >= 0; --i) CHECK_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
  CHECK(d[0] != d[1] && d[1] != d[2] && d[0] != d[2], "handles %d %d %d", d[0], d[1], d[2]);
  for (int i = 0; i < 3; ++i) {
    check_copy(parent, d[i], 10 + i);
    int* got = NULL;
    int flag = 0;
    CHECK_OK(MPI_Comm_get_attr(d[i], key, &got, &flag));
    CHECK(flag && got == &value, "idup %d: attribute not copied (flag %d)", i, flag);
  }
  MPI_Info used;
  char v[32] = "";
  int flag = 0, len = sizeof v;
  CHECK_OK(MPI_Comm_get_info(d[1], &used));
  CHECK_OK(MPI_Info_get_string(used, "nicq_test_hint", &len, v, &flag));
  CHECK(flag && !strcmp(v, "idup"), "idup_with_info hint: flag %d value '%s'", flag, v);
  CHECK_OK(MPI_Info_free(&used));
  /* Traffic stays apart: the same tag on all three, received crosswise. */
  int size;
  MPI_Comm_size(parent, &size);
  if (size > 1) {
    const int peer = rank ^ 1;
    if (peer < size) {
      int out[3], in[3] = {-1, -1, -1};
      MPI_Request r[6];
      for (int i = 0; i < 3; ++i) {
        out[i] = 1000 * (i + 1) + rank;
        CHECK_OK(MPI_Irecv(&in[2 - i], 1, MPI_INT, peer, 9, d[2 - i], &r[i]));
      }
      for (int i = 0; i < 3; ++i)
        CHECK_OK(MPI_Isend(&out[i], 1, MPI_INT, peer, 9, d[i], &r[3 + i]));
      CHECK_OK(MPI_Waitall(6, r, MPI_STATUSES_IGNORE));
      for (int i = 0; i < 3; ++i)
        CHECK(in[i] == 1000 * (i + 1) + peer, "message on idup %d: %d", i, in[i]);
    }
  }
  for (int i = 0; i < 3; ++i) CHECK_OK(MPI_Comm_free(&d[i]));
  CHECK_OK(MPI_Comm_delete_attr(parent, key));
  CHECK_OK(MPI_Comm_free_keyval(&key));
}

/* An idup of `parent` outstanding while every rank makes a blocking dup of
 * MPI_COMM_WORLD: the two agreements overlap on every member. */
static void check_overlapping_creations(MPI_Comm parent) {
  MPI_Comm d = MPI_COMM_NULL, w = MPI_COMM_NULL;
  MPI_Request rq;
  CHECK_OK(MPI_Comm_idup(parent, &d, &rq));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &w));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  check_copy(parent, d, 20);
  check_copy(MPI_COMM_WORLD, w, 21);
  /* If both had taken one context id, this world-wide message would be
   * seen by the receive posted on the idup's communicator first. */
  int prank, wrank = world_rank;
  MPI_Comm_rank(parent, &prank);
  if (world_size > 1) {
    const int to = (wrank + 1) % world_size, from = (wrank + world_size - 1) % world_size;
    int got_w = -1, out_w = 500 + wrank;
    MPI_Request r[2];
    CHECK_OK(MPI_Irecv(&got_w, 1, MPI_INT, from, 3, w, &r[0]));
    CHECK_OK(MPI_Isend(&out_w, 1, MPI_INT, to, 3, w, &r[1]));
    CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(got_w == 500 + from, "message on the dup of world: %d", got_w);
  }
  CHECK_OK(MPI_Comm_free(&w));
  CHECK_OK(MPI_Comm_free(&d));
}

/* An idup of an intercommunicator, then blocking collectives on it before
 * the wait (the first group waits before the allreduce, the second after):
 * a congruent intercommunicator whose traffic is its own. */
static void check_intercomm_idup(MPI_Comm inter, int color, int half) {
  MPI_Comm di = MPI_COMM_NULL;
  MPI_Request rq;
  CHECK_OK(MPI_Comm_idup(inter, &di, &rq));
  CHECK_OK(MPI_Barrier(inter));
  if (color == 0) CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  int one = 1, remote_count = 0, rsize = -1;
  CHECK_OK(MPI_Allreduce(&one, &remote_count, 1, MPI_INT, MPI_SUM, inter));
  CHECK_OK(MPI_Comm_remote_size(inter, &rsize));
  CHECK(remote_count == rsize, "allreduce over the intercommunicator: %d, remote size %d",
        remote_count, rsize);
  if (color == 1) CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  int flag = 0, cmp = -1, drsize = -1;
  CHECK_OK(MPI_Comm_test_inter(di, &flag));
  CHECK_OK(MPI_Comm_compare(inter, di, &cmp));
  CHECK_OK(MPI_Comm_remote_size(di, &drsize));
  CHECK(flag && cmp == MPI_CONGRUENT && drsize == rsize,
        "intercomm idup: inter %d compare %d size %d", flag, cmp, drsize);
  /* Remote rank 0 hears from every rank of the other group, the same tag on
   * both communicators, received duplicate first. */
  int lrank;
  MPI_Comm_rank(inter, &lrank);
  int a = 900 + world_rank, b = 950 + world_rank;
  MPI_Request r[2];
  CHECK_OK(MPI_Isend(&a, 1, MPI_INT, 0, 6, inter, &r[0]));
  CHECK_OK(MPI_Isend(&b, 1, MPI_INT, 0, 6, di, &r[1]));
  if (lrank == 0) {
    for (int i = 0; i < rsize; ++i) {
      const int from_world = (color == 0 ? half : 0) + i;
      int got_b = -1, got_a = -1;
      CHECK_OK(MPI_Recv(&got_b, 1, MPI_INT, i, 6, di, MPI_STATUS_IGNORE));
      CHECK_OK(MPI_Recv(&got_a, 1, MPI_INT, i, 6, inter, MPI_STATUS_IGNORE));
      CHECK(got_a == 900 + from_world && got_b == 950 + from_world,
            "from remote rank %d: inter %d, idup %d", i, got_a, got_b);
    }
  }
  CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Comm_free(&di));
}

/* An idup of the world outstanding while the halves make an
 * intercommunicator (a blocking creation through the leaders): both agree
 * on context ids no member uses twice. */
static void check_idup_beside_intercomm(void) {
  if (world_size < 2) return;
  const int half = world_size / 2, color = world_rank < half ? 0 : 1;
  MPI_Comm local, inter, d = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &local));
  MPI_Request rq;
  CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq));
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? half : 0, 12, &inter));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  check_copy(MPI_COMM_WORLD, d, 30);
  /* Leader to leader on the intercommunicator, the same tag on the idup's
   * communicator the other way: each receive gets its own message. */
  int lrank;
  MPI_Comm_rank(local, &lrank);
  if (lrank == 0) {
    const int other = color == 0 ? half : 0;
    int a = 700 + world_rank, b = 800 + world_rank, ga = -1, gb = -1;
    MPI_Request r[4];
    CHECK_OK(MPI_Irecv(&gb, 1, MPI_INT, other, 4, d, &r[0]));
    CHECK_OK(MPI_Irecv(&ga, 1, MPI_INT, 0, 4, inter, &r[1]));
    CHECK_OK(MPI_Isend(&a, 1, MPI_INT, 0, 4, inter, &r[2]));
    CHECK_OK(MPI_Isend(&b, 1, MPI_INT, other, 4, d, &r[3]));
    CHECK_OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
    CHECK(ga == 700 + other && gb == 800 + other, "intercomm got %d, idup got %d", ga, gb);
  }
  check_intercomm_idup(inter, color, half);
  CHECK_OK(MPI_Comm_free(&inter));
  CHECK_OK(MPI_Comm_free(&d));
  CHECK_OK(MPI_Comm_free(&local));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  mp_rank = world_rank;
  /* The parents: the world and a split in reverse order (ranks that are
   * not world ranks, a context id of its own). */
  MPI_Comm reversed;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed));
  MPI_Comm parents[2] = {MPI_COMM_WORLD, reversed};
  for (int i = 0; i < 2; ++i) {
    check_collectives_before_wait(parents[i]);
    check_wait_anywhere(parents[i]);
    check_several_outstanding(parents[i]);
    check_overlapping_creations(parents[i]);
  }
  CHECK_OK(MPI_Comm_free(&reversed));
  check_idup_beside_intercomm();
  MPI_Finalize();
  if (world_rank == 0) printf("comm_idup: %d ranks ok\n", world_size);
  return 0;
}
