/* Shared-memory windows (MPI_Win_allocate_shared + MPI_Win_shared_query):
 * each rank writes its part through its own pointer and reads its
 * neighbour's through the queried one after MPI_Win_sync and a barrier;
 * parts are contiguous by default; puts through the window land in the
 * same memory. Dynamic windows: regions attached, their addresses
 * exchanged, puts and gets by address, detach. */
#include <stdint.h>
#include <stdlib.h>

#include "mp_check.h"

static int rank, size;

static void shared_window(void) {
  MPI_Comm node;
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int nrank, nsize;
  MPI_Comm_rank(node, &nrank);
  MPI_Comm_size(node, &nsize);
  /* Rank r holds r + 2 ints, so parts differ in size. */
  const int mine = nrank + 2;
  int* base = NULL;
  MPI_Win win;
  CHECK_OK(
      MPI_Win_allocate_shared(mine * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base, &win));
  int* flavor = NULL;
  int flag = 0;
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor %d", *flavor);
  CHECK_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  for (int i = 0; i < mine; ++i) base[i] = nrank * 100 + i;
  CHECK_OK(MPI_Win_sync(win));
  CHECK_OK(MPI_Barrier(node));
  CHECK_OK(MPI_Win_sync(win));
  const int right = (nrank + 1) % nsize;
  MPI_Aint rsize = 0;
  int runit = 0;
  int* rbase = NULL;
  CHECK_OK(MPI_Win_shared_query(win, right, &rsize, &runit, &rbase));
  CHECK(rsize == (MPI_Aint)((right + 2) * sizeof(int)) && runit == (int)sizeof(int),
        "shared_query of %d: size %ld unit %d", right, (long)rsize, runit);
  for (int i = 0; i < right + 2; ++i)
    CHECK(rbase[i] == right * 100 + i, "neighbour's part [%d] = %d", i, rbase[i]);
  /* Contiguous: rank r+1's part follows rank r's. */
  if (right == nrank + 1) CHECK(rbase == base + mine, "parts are not contiguous");
  MPI_Aint s0 = 0;
  int u0 = 0;
  int* b0 = NULL;
  CHECK_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &s0, &u0, &b0));
  int before = 0; /* ints held by the ranks before this one */
  for (int r = 0; r < nrank; ++r) before += r + 2;
  CHECK(s0 == 2 * (MPI_Aint)sizeof(int) && b0 == base - before,
        "MPI_PROC_NULL query: size %ld, base %p (this part %p)", (long)s0, (void*)b0, (void*)base);
  CHECK_OK(MPI_Win_unlock_all(win));
  CHECK_OK(MPI_Barrier(node));
  /* A put through the window is seen through the pointer. */
  CHECK_OK(MPI_Win_fence(0, win));
  int v = -nrank - 1;
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  const int left = (nrank + nsize - 1) % nsize;
  CHECK(base[1] == -left - 1, "put into a shared window: %d", base[1]);
  CHECK_OK(MPI_Win_free(&win));

  /* Noncontiguous parts still give working pointers. */
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  CHECK_OK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), info, node, &base, &win));
  MPI_Info_free(&info);
  CHECK_OK(MPI_Win_fence(0, win));
  *base = 7 * nrank;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Win_shared_query(win, right, &rsize, &runit, &rbase));
  CHECK(*rbase == 7 * right, "noncontig neighbour: %d", *rbase);
  CHECK_OK(MPI_Win_free(&win));
  MPI_Comm_free(&node);
}

static void dynamic_window(void) {
  MPI_Win win;
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  int* flavor = NULL;
  int flag = 0;
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "flavor %d", *flavor);
  int* region = malloc(16 * sizeof(int));
  for (int i = 0; i < 16; ++i) region[i] = rank * 10 + i;
  CHECK_OK(MPI_Win_attach(win, region, 16 * sizeof(int)));
  MPI_Aint mine = 0;
  CHECK_OK(MPI_Get_address(region, &mine));
  MPI_Aint* addrs = malloc(sizeof(MPI_Aint) * (size_t)size);
  CHECK_OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int got[4] = {0, 0, 0, 0}, v[2] = {-rank, -rank - 100};
  CHECK_OK(MPI_Win_lock_all(0, win));
  CHECK_OK(MPI_Get(got, 4, MPI_INT, right, MPI_Aint_add(addrs[right], 4 * sizeof(int)), 4, MPI_INT,
                   win));
  CHECK_OK(MPI_Win_flush(right, win));
  for (int i = 0; i < 4; ++i)
    CHECK(got[i] == right * 10 + 4 + i, "dynamic get [%d] = %d", i, got[i]);
  CHECK_OK(
      MPI_Put(v, 2, MPI_INT, right, MPI_Aint_add(addrs[right], 12 * sizeof(int)), 2, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock_all(win));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(region[12] == -left && region[13] == -left - 100, "dynamic put: %d %d", region[12],
        region[13]);
  CHECK_OK(MPI_Win_detach(win, region));
  CHECK_OK(MPI_Win_free(&win));
  free(addrs);
  free(region);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  shared_window();
  dynamic_window();
  if (rank == 0) printf("rma_shared_dynamic: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
