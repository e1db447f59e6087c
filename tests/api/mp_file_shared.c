/* MPI-IO's shared file pointer: independent shared writes land in disjoint
 * whole blocks, ordered writes and reads go in rank order, split and
 * nonblocking forms carry their counts, seek_shared moves the pointer for
 * every rank (and refuses a negative position on every rank), set_view
 * resets it, MPI_MODE_APPEND starts it at the end, and a sequential file
 * reads through it. */
#include "mp_file_util.h"

enum { kN = 16 };

static int rank, size;

static int value(int r, int i) {
  return r * 1000 + i + 1;
}

static int count_of(MPI_Status* st) {
  int n = -1;
  CHECK_OK(MPI_Get_count(st, MPI_INT, &n));
  return n;
}

/* The shared pointer as every rank sees it between two barriers (another
 * rank's next shared access or seek may move it right after). */
static MPI_Offset shared_position(MPI_File fh) {
  MPI_Offset pos = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_File_get_position_shared(fh, &pos));
  MPI_Barrier(MPI_COMM_WORLD);
  return pos;
}

static void read_file(MPI_File fh, int* all, int n) {
  MPI_Status st;
  CHECK_OK(MPI_File_read_at(fh, 0, all, n, MPI_INT, &st));
  CHECK(count_of(&st) == n, "whole-file read %d of %d", count_of(&st), n);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  CHECK(size <= 16, "at most 16 ranks");
  char name[256];
  int out[kN], in[kN], all[kN * 17];
  MPI_Status st;
  MPI_Request rq;
  mp_file_name("fshared", 0, name, sizeof name);
  MPI_File fh;
  CHECK_OK(
      MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  MPI_Offset pos = shared_position(fh);
  CHECK(pos == 0, "initial shared position %lld", (long long)pos);

  /* Independent shared writes: each rank's block whole, every rank once. */
  for (int i = 0; i < kN; ++i) out[i] = value(rank, i);
  CHECK_OK(MPI_File_write_shared(fh, out, kN, MPI_INT, &st));
  CHECK(count_of(&st) == kN, "write_shared count %d", count_of(&st));
  CHECK_OK(MPI_File_sync(fh));
  pos = shared_position(fh);
  CHECK(pos == (MPI_Offset)size * kN, "shared position after writes %lld", (long long)pos);
  read_file(fh, all, size * kN);
  int seen[17] = {0};
  for (int b = 0; b < size; ++b) {
    int owner = (all[b * kN] - 1) / 1000;
    CHECK(owner >= 0 && owner < size && !seen[owner], "block %d owner %d", b, owner);
    seen[owner] = 1;
    for (int i = 0; i < kN; ++i)
      CHECK(all[b * kN + i] == value(owner, i), "block %d int %d: %d", b, i, all[b * kN + i]);
  }
  CHECK_OK(MPI_File_sync(fh));

  /* Ordered reads: rank r gets block r. */
  CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  CHECK_OK(MPI_File_read_ordered(fh, in, kN, MPI_INT, &st));
  CHECK(count_of(&st) == kN, "read_ordered count %d", count_of(&st));
  for (int i = 0; i < kN; ++i)
    CHECK(in[i] == all[rank * kN + i], "read_ordered int %d: %d, want %d", i, in[i],
          all[rank * kN + i]);
  CHECK(shared_position(fh) == (MPI_Offset)size * kN, "position after read_ordered");

  /* Ordered writes, then the split form of both. */
  CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  for (int i = 0; i < kN; ++i) out[i] = value(rank + 20, i);
  CHECK_OK(MPI_File_write_ordered(fh, out, kN, MPI_INT, &st));
  CHECK_OK(MPI_File_sync(fh));
  read_file(fh, all, size * kN);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < kN; ++i)
      CHECK(all[r * kN + i] == value(r + 20, i), "write_ordered: int %d of rank %d: %d", i, r,
            all[r * kN + i]);
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  for (int i = 0; i < kN; ++i) out[i] = value(rank + 40, i);
  CHECK_OK(MPI_File_write_ordered_begin(fh, out, kN, MPI_INT));
  CHECK_OK(MPI_File_write_ordered_end(fh, out, &st));
  CHECK(count_of(&st) == kN, "write_ordered_end count %d", count_of(&st));
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
  CHECK_OK(MPI_File_read_ordered_begin(fh, in, kN, MPI_INT));
  CHECK_OK(MPI_File_read_ordered_end(fh, in, &st));
  for (int i = 0; i < kN; ++i) CHECK(in[i] == value(rank + 40, i), "split ordered %d", i);

  /* Nonblocking shared writes at the end; seeks relative to the pointer. */
  CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
  CHECK(shared_position(fh) == (MPI_Offset)size * kN, "SEEK_END position");
  int one = value(rank, 99);
  CHECK_OK(MPI_File_iwrite_shared(fh, &one, 1, MPI_INT, &rq));
  CHECK_OK(MPI_Wait(&rq, &st));
  CHECK(count_of(&st) == 1, "iwrite_shared count %d", count_of(&st));
  CHECK_OK(MPI_File_sync(fh));
  MPI_Offset fsize = -1;
  CHECK_OK(MPI_File_get_size(fh, &fsize));
  CHECK(fsize == (MPI_Offset)(size * kN + size) * (MPI_Offset)sizeof(int), "size %lld",
        (long long)fsize);
  CHECK_OK(MPI_File_seek_shared(fh, -size, MPI_SEEK_CUR));
  pos = shared_position(fh);
  CHECK(pos == (MPI_Offset)size * kN, "SEEK_CUR position %lld", (long long)pos);
  int got = 0;
  CHECK_OK(MPI_File_iread_shared(fh, &got, 1, MPI_INT, &rq));
  CHECK_OK(MPI_Wait(&rq, &st));
  CHECK(count_of(&st) == 1 && got % 1000 == 100, "iread_shared got %d", got);
  CHECK_OK(MPI_File_sync(fh));
  mp_expect_class(MPI_File_seek_shared(fh, -1000000, MPI_SEEK_CUR), MPI_ERR_ARG,
                  "MPI_File_seek_shared");
  CHECK(shared_position(fh) == (MPI_Offset)size * kN + size, "refused seek moved the pointer");
  CHECK_OK(MPI_File_set_view(fh, 4, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  CHECK(shared_position(fh) == 0, "set_view did not reset the shared pointer");
  CHECK_OK(MPI_File_close(&fh));

  /* APPEND starts the shared pointer at the end; SEQUENTIAL reads through it. */
  CHECK_OK(
      MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
  pos = shared_position(fh);
  CHECK(pos == fsize, "APPEND shared position %lld", (long long)pos);
  CHECK_OK(MPI_File_close(&fh));
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                         &fh));
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_read_ordered(fh, in, kN, MPI_INT, &st));
  for (int i = 0; i < kN; ++i) CHECK(in[i] == value(rank + 40, i), "sequential read %d", i);
  CHECK_OK(MPI_File_close(&fh));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK_OK(MPI_File_delete(name, MPI_INFO_NULL));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(!mp_file_exists(name), "the test file is left");
  MPI_Finalize();
  return 0;
}
