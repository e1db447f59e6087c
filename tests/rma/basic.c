/* Windows and fence-synchronized put/get: MPI_Win_create and
 * MPI_Win_allocate, their attributes, group, name and info; contiguous and
 * derived datatypes on origin and target; MPI_PROC_NULL targets; the
 * request-based forms. Every rank checks the bytes that landed. */
#include <stdint.h>

#include "mp_check.h"

enum { N = 64 };

static int rank, size;

static int value(int owner, int i) {
  return owner * 1000 + i;
}

static void check_attributes(MPI_Win win, void* base, MPI_Aint bytes, int disp_unit, int flavor) {
  void* got_base = NULL;
  MPI_Aint* got_size = NULL;
  int *got_unit = NULL, *got_flavor = NULL, *got_model = NULL, flag = 0;
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &got_base, &flag));
  CHECK(flag && got_base == base, "MPI_WIN_BASE %p, expected %p", got_base, base);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &got_size, &flag));
  CHECK(flag && *got_size == bytes, "MPI_WIN_SIZE %ld", (long)*got_size);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &got_unit, &flag));
  CHECK(flag && *got_unit == disp_unit, "MPI_WIN_DISP_UNIT %d", *got_unit);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &got_flavor, &flag));
  CHECK(flag && *got_flavor == flavor, "MPI_WIN_CREATE_FLAVOR %d", *got_flavor);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &got_model, &flag));
  CHECK(flag && *got_model == MPI_WIN_UNIFIED, "MPI_WIN_MODEL %d", *got_model);
}

static int deleted;
static int count_delete(MPI_Win w, int k, void* v, void* extra) {
  (void)w, (void)k, (void)extra;
  deleted += *(int*)v;
  return MPI_SUCCESS;
}

/* Contiguous put to the right neighbour, get from the left one. */
static void put_get_ring(MPI_Win win, int* local) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int src[N], got[N];
  for (int i = 0; i < N; ++i) src[i] = value(rank, i);
  CHECK_OK(MPI_Win_fence(0, win));
  /* The first half goes to the neighbour's second half. */
  CHECK_OK(MPI_Put(src, N / 2, MPI_INT, right, N / 2, N / 2, MPI_INT, win));
  CHECK_OK(MPI_Put(src, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < N / 2; ++i)
    CHECK(local[N / 2 + i] == value(left, i), "put: local[%d] = %d, expected %d", N / 2 + i,
          local[N / 2 + i], value(left, i));
  for (int i = 0; i < N / 2; ++i) local[i] = value(rank, 500 + i);
  CHECK_OK(MPI_Win_fence(0, win));
  memset(got, 0, sizeof got);
  CHECK_OK(MPI_Get(got, N / 2, MPI_INT, left, 0, N / 2, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < N / 2; ++i)
    CHECK(got[i] == value(left, 500 + i), "get: got[%d] = %d, expected %d", i, got[i],
          value(left, 500 + i));
}

/* A strided origin into a contiguous target, and a contiguous origin into
 * an indexed target; then a get through a vector type on both sides. */
static void derived_types(MPI_Win win, int* local) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Datatype every_other, indexed;
  CHECK_OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
  CHECK_OK(MPI_Type_commit(&every_other));
  int lens[3] = {1, 2, 3}, disps[3] = {0, 5, 10};
  CHECK_OK(MPI_Type_indexed(3, lens, disps, MPI_INT, &indexed));
  CHECK_OK(MPI_Type_commit(&indexed));
  int src[N];
  for (int i = 0; i < N; ++i) src[i] = value(rank, i);
  for (int i = 0; i < N; ++i) local[i] = -1;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(src, 1, every_other, right, 0, N / 2, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < N / 2; ++i)
    CHECK(local[i] == value(left, 2 * i), "vector origin: local[%d] = %d", i, local[i]);
  for (int i = N / 2; i < N; ++i) CHECK(local[i] == -1, "vector origin wrote local[%d]", i);
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < N; ++i) local[i] = -1;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(src, 6, MPI_INT, right, 1, 1, indexed, win));
  CHECK_OK(MPI_Win_fence(0, win));
  const int where[6] = {1, 6, 7, 11, 12, 13};
  for (int j = 0, k = 0; j < N; ++j) {
    if (k < 6 && j == where[k]) {
      CHECK(local[j] == value(left, k), "indexed target: local[%d] = %d", j, local[j]);
      ++k;
    } else {
      CHECK(local[j] == -1, "indexed target wrote local[%d] = %d", j, local[j]);
    }
  }
  for (int i = 0; i < N; ++i) local[i] = value(rank, i);
  int got[N];
  for (int i = 0; i < N; ++i) got[i] = -7;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Get(got, 1, every_other, left, 1, 1, every_other, win));
  CHECK_OK(MPI_Win_fence(0, win));
  /* Target items at 1, 3, 5, ... land at origin 0, 2, 4, ...; odd ones stay. */
  for (int i = 0; i < N; ++i) {
    const int expect = i % 2 == 0 ? value(left, 1 + i) : -7;
    CHECK(got[i] == expect, "vector get: got[%d] = %d, expected %d", i, got[i], expect);
  }
  CHECK_OK(MPI_Type_free(&every_other));
  CHECK_OK(MPI_Type_free(&indexed));
}

static void request_based(MPI_Win win, int* local) {
  const int right = (rank + 1) % size;
  int src[4] = {rank, rank + 1, rank + 2, rank + 3}, got[4] = {0, 0, 0, 0};
  MPI_Request reqs[2];
  for (int i = 0; i < N; ++i) local[i] = value(rank, i);
  CHECK_OK(MPI_Win_lock_all(0, win));
  CHECK_OK(MPI_Rget(got, 4, MPI_INT, right, 8, 4, MPI_INT, win, &reqs[0]));
  CHECK_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
  for (int i = 0; i < 4; ++i) CHECK(got[i] == value(right, 8 + i), "Rget: got[%d] = %d", i, got[i]);
  CHECK(reqs[0] == MPI_REQUEST_NULL, "MPI_Wait left the Rget request");
  CHECK_OK(MPI_Win_unlock_all(win));
  mp_barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Win_lock_all(0, win));
  CHECK_OK(MPI_Rput(src, 4, MPI_INT, right, 40, 4, MPI_INT, win, &reqs[1]));
  CHECK_OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Win_unlock_all(win));
  mp_barrier(MPI_COMM_WORLD);
  const int left = (rank + size - 1) % size;
  for (int i = 0; i < 4; ++i)
    CHECK(local[40 + i] == left + i, "Rput: local[%d] = %d", 40 + i, local[40 + i]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;

  /* MPI_Win_create over user memory. */
  int local[N];
  for (int i = 0; i < N; ++i) local[i] = -1;
  MPI_Win win;
  CHECK_OK(MPI_Win_create(local, sizeof local, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  check_attributes(win, local, sizeof local, sizeof(int), MPI_WIN_FLAVOR_CREATE);
  put_get_ring(win, local);
  derived_types(win, local);
  request_based(win, local);

  /* Group, name, info, a user attribute deleted at free. */
  MPI_Group g, wg;
  int cmp = 0;
  CHECK_OK(MPI_Win_get_group(win, &g));
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  CHECK_OK(MPI_Group_compare(g, wg, &cmp));
  CHECK(cmp == MPI_IDENT, "window group compares %d", cmp);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK_OK(MPI_Win_set_name(win, "ring"));
  CHECK_OK(MPI_Win_get_name(win, name, &len));
  CHECK(len == 4 && strcmp(name, "ring") == 0, "name '%s'", name);
  MPI_Info info, used;
  MPI_Info_create(&info);
  MPI_Info_set(info, "no_locks", "false");
  CHECK_OK(MPI_Win_set_info(win, info));
  CHECK_OK(MPI_Win_get_info(win, &used));
  char v[16];
  int flag = 0;
  MPI_Info_get(used, "no_locks", 15, v, &flag);
  CHECK(flag && strcmp(v, "false") == 0, "info no_locks");
  MPI_Info_free(&info);
  MPI_Info_free(&used);
  int key = MPI_KEYVAL_INVALID, one = 1;
  CHECK_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, &key, NULL));
  CHECK_OK(MPI_Win_set_attr(win, key, &one));
  int* got_attr = NULL;
  CHECK_OK(MPI_Win_get_attr(win, key, &got_attr, &flag));
  CHECK(flag && got_attr == &one, "user attribute");
  CHECK_OK(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL, "MPI_Win_free left the handle");
  CHECK(deleted == 1, "delete callback ran %d times", deleted);
  CHECK_OK(MPI_Win_free_keyval(&key));

  /* MPI_Win_allocate: nicq's memory, same checks. */
  int* mem = NULL;
  CHECK_OK(
      MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  CHECK(mem != NULL, "MPI_Win_allocate gave no memory");
  check_attributes(win, mem, N * sizeof(int), sizeof(int), MPI_WIN_FLAVOR_ALLOCATE);
  put_get_ring(win, mem);
  derived_types(win, mem);
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  CHECK_OK(MPI_Win_free(&win));

  /* The large-count forms. */
  CHECK_OK(MPI_Win_allocate_c(N * sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &mem, &win));
  CHECK_OK(MPI_Win_fence(0, win));
  int src[2] = {rank, -rank};
  CHECK_OK(MPI_Put_c(src, (MPI_Count)2, MPI_INT, (rank + 1) % size, 3, (MPI_Count)2, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  const int left = (rank + size - 1) % size;
  CHECK(mem[3] == left && mem[4] == -left, "Put_c: %d %d", mem[3], mem[4]);
  CHECK_OK(MPI_Win_free(&win));

  if (rank == 0) printf("rma_basic: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
