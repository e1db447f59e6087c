/* PSCW on MPI_Win_create memory with data checks. On the one-node direct
 * path a put in a PSCW epoch to another process's created window is staged
 * in shared memory and applied by the target's MPI_Win_wait / MPI_Win_test
 * (docs/rma.md, "Staged puts"); these rounds cover what that must keep:
 *  - ring: small contiguous puts, a strided target datatype, more small puts
 *    than one staging area holds (the origin writes the area out mid-epoch),
 *    a put larger than an area, and a get of a location no one puts, each
 *    round with new values, ended by wait or by a test loop;
 *  - many to one: every other rank puts its own slot of rank 0 in one
 *    epoch (several areas applied by one wait);
 *  - MPI_MODE_NOCHECK on post and start, ordered by a barrier;
 *  - a put after MPI_Win_complete is MPI_ERR_RMA_SYNC and changes nothing.
 * Every round checks the target's memory right after its wait or test. */
#include "mp_check.h"

enum {
  ROUNDS = 12,
  SMALL = 4,    /* ints of the contiguous put */
  STRIDED = 16, /* ints put at every other position */
  MANY = 400,   /* one-int puts per epoch: ~9 KiB of staged runs */
  BIG = 3000,   /* ints of one put: larger than one staging area */
  SLOTS = 8,    /* many-to-one: ints per origin */
  /* window layout (ints) */
  AT_SMALL = 0,
  AT_STRIDED = AT_SMALL + SMALL,
  AT_MANY = AT_STRIDED + 2 * STRIDED,
  AT_BIG = AT_MANY + MANY,
  AT_FIXED = AT_BIG + BIG,
  AT_SLOTS = AT_FIXED + 1,
  WIN_INTS = AT_SLOTS + SLOTS * 64
};

static int rank, size;

static int value(int origin, int round, int i) {
  return origin * 1000003 + round * 10007 + i;
}

static void ring(MPI_Win win, int* mem, MPI_Datatype strided) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Group world, to_right, from_left;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &right, &to_right);
  MPI_Group_incl(world, 1, &left, &from_left);
  static int src[BIG];
  for (int round = 0; round < ROUNDS; ++round) {
    CHECK_OK(MPI_Win_post(from_left, 0, win));
    CHECK_OK(MPI_Win_start(to_right, 0, win));
    for (int i = 0; i < BIG; ++i) src[i] = value(rank, round, i);
    /* Largest first, so the smaller ones are still staged at the complete. */
    CHECK_OK(MPI_Put(src, BIG, MPI_INT, right, AT_BIG, BIG, MPI_INT, win));
    for (int i = 0; i < MANY; ++i)
      CHECK_OK(MPI_Put(&src[i], 1, MPI_INT, right, AT_MANY + i, 1, MPI_INT, win));
    CHECK_OK(MPI_Put(src, SMALL, MPI_INT, right, AT_SMALL, SMALL, MPI_INT, win));
    CHECK_OK(MPI_Put(src, STRIDED, MPI_INT, right, AT_STRIDED, 1, strided, win));
    int fixed = -1;
    CHECK_OK(MPI_Get(&fixed, 1, MPI_INT, right, AT_FIXED, 1, MPI_INT, win));
    CHECK_OK(MPI_Win_complete(win));
    CHECK(fixed == right * 7, "get: %d, expected %d", fixed, right * 7);
    if (round % 2 == 0) {
      CHECK_OK(MPI_Win_wait(win));
    } else {
      int flag = 0;
      while (!flag) CHECK_OK(MPI_Win_test(win, &flag));
    }
    for (int i = 0; i < SMALL; ++i)
      CHECK(mem[AT_SMALL + i] == value(left, round, i), "round %d small[%d] = %d", round, i,
            mem[AT_SMALL + i]);
    for (int i = 0; i < STRIDED; ++i) {
      CHECK(mem[AT_STRIDED + 2 * i] == value(left, round, i), "round %d strided[%d] = %d", round, i,
            mem[AT_STRIDED + 2 * i]);
      CHECK(mem[AT_STRIDED + 2 * i + 1] == -1, "round %d: the gap after strided[%d] is %d", round,
            i, mem[AT_STRIDED + 2 * i + 1]);
    }
    for (int i = 0; i < MANY; ++i)
      CHECK(mem[AT_MANY + i] == value(left, round, i), "round %d many[%d] = %d", round, i,
            mem[AT_MANY + i]);
    for (int i = 0; i < BIG; ++i)
      CHECK(mem[AT_BIG + i] == value(left, round, i), "round %d big[%d] = %d", round, i,
            mem[AT_BIG + i]);
  }
  MPI_Group_free(&world);
  MPI_Group_free(&to_right);
  MPI_Group_free(&from_left);
}

static void many_to_one(MPI_Win win, int* mem) {
  MPI_Group world, others, zero;
  const int root = 0;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_excl(world, 1, &root, &others);
  MPI_Group_incl(world, 1, &root, &zero);
  for (int round = 0; round < ROUNDS; ++round) {
    if (rank == 0) {
      CHECK_OK(MPI_Win_post(others, 0, win));
      CHECK_OK(MPI_Win_wait(win));
      for (int o = 1; o < size; ++o)
        for (int i = 0; i < SLOTS; ++i)
          CHECK(mem[AT_SLOTS + o * SLOTS + i] == value(o, round, i),
                "round %d: slot %d of origin %d is %d", round, i, o, mem[AT_SLOTS + o * SLOTS + i]);
    } else {
      int src[SLOTS];
      for (int i = 0; i < SLOTS; ++i) src[i] = value(rank, round, i);
      CHECK_OK(MPI_Win_start(zero, 0, win));
      CHECK_OK(MPI_Put(src, SLOTS, MPI_INT, 0, AT_SLOTS + rank * SLOTS, SLOTS, MPI_INT, win));
      CHECK_OK(MPI_Win_complete(win));
    }
  }
  MPI_Group_free(&world);
  MPI_Group_free(&others);
  MPI_Group_free(&zero);
}

/* Post and start with MPI_MODE_NOCHECK: the barrier orders every post
 * before every start, as the assertion promises. */
static void nocheck(MPI_Win win, int* mem) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Group world, to_right, from_left;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &right, &to_right);
  MPI_Group_incl(world, 1, &left, &from_left);
  for (int round = 0; round < ROUNDS; ++round) {
    int src[SMALL];
    for (int i = 0; i < SMALL; ++i) src[i] = value(rank, round + 100, i);
    CHECK_OK(MPI_Win_post(from_left, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE, win));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_OK(MPI_Win_start(to_right, MPI_MODE_NOCHECK, win));
    CHECK_OK(MPI_Put(src, SMALL, MPI_INT, right, AT_SMALL, SMALL, MPI_INT, win));
    CHECK_OK(MPI_Win_complete(win));
    CHECK_OK(MPI_Win_wait(win));
    for (int i = 0; i < SMALL; ++i)
      CHECK(mem[AT_SMALL + i] == value(left, round + 100, i), "nocheck round %d: small[%d] = %d",
            round, i, mem[AT_SMALL + i]);
    /* Every rank checked before anyone posts again. */
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  MPI_Group_free(&world);
  MPI_Group_free(&to_right);
  MPI_Group_free(&from_left);
}

static void put_outside_epoch(MPI_Win win, int* mem) {
  const int right = (rank + 1) % size;
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  const int before = mem[AT_SMALL];
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  int v = 42;
  int rc = MPI_Put(&v, 1, MPI_INT, right, AT_SMALL, 1, MPI_INT, win);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_SYNC, "put outside an epoch: class %d, expected MPI_ERR_RMA_SYNC", cls);
  CHECK(MPI_Win_complete(win) != MPI_SUCCESS, "MPI_Win_complete without a start succeeded");
  CHECK(MPI_Win_wait(win) != MPI_SUCCESS, "MPI_Win_wait without a post succeeded");
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(mem[AT_SMALL] == before, "a refused put changed the target: %d, was %d", mem[AT_SMALL],
        before);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  CHECK(size <= 64, "at most 64 ranks (slots)");
  int* mem = malloc(sizeof(int) * WIN_INTS);
  for (int i = 0; i < WIN_INTS; ++i) mem[i] = -1;
  mem[AT_FIXED] = rank * 7;
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mem, sizeof(int) * WIN_INTS, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                          &win));
  MPI_Datatype strided;
  CHECK_OK(MPI_Type_vector(STRIDED, 1, 2, MPI_INT, &strided));
  CHECK_OK(MPI_Type_commit(&strided));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (size > 1) {
    ring(win, mem, strided);
    many_to_one(win, mem);
    nocheck(win, mem);
  }
  put_outside_epoch(win, mem);
  CHECK_OK(MPI_Type_free(&strided));
  CHECK_OK(MPI_Win_free(&win));
  free(mem);
  if (rank == 0) printf("rma_pscw: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
