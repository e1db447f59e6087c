/* MPI-IO errors: each class the file calls raise, with a message naming the
 * call, the same verdict on every rank for the collective ones, and the
 * file's state (handle, position, size, data) unchanged after the error. */
#include <sys/stat.h>

#include "mp_file_util.h"

static int rank, size;

static void same_on_all(int rc, int cls, const char* name) {
  int got = -1, lo = 0, hi = 0;
  mp_expect_class(rc, cls, name);
  MPI_Error_class(rc, &got);
  CHECK_OK(MPI_Allreduce(&got, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  CHECK_OK(MPI_Allreduce(&got, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  CHECK(lo == cls && hi == cls, "%s: ranks disagree: classes %d..%d", name, lo, hi);
}

static void open_errors(const char* name, const char* missing) {
  MPI_File fh = MPI_FILE_NULL;
  /* Access modes: checked before anything touches the file system. */
  int bad[] = {MPI_MODE_RDONLY | MPI_MODE_CREATE,   MPI_MODE_RDONLY | MPI_MODE_EXCL,
               MPI_MODE_RDWR | MPI_MODE_WRONLY,     MPI_MODE_CREATE,
               MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_MODE_RDWR | 4096};
  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    same_on_all(MPI_File_open(MPI_COMM_WORLD, missing, bad[i], MPI_INFO_NULL, &fh), MPI_ERR_AMODE,
                "MPI_File_open");
    CHECK(fh == MPI_FILE_NULL, "amode %d: open wrote the handle", bad[i]);
  }
  CHECK(!mp_file_exists(missing), "a refused amode created the file");
  same_on_all(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
              MPI_ERR_NO_SUCH_FILE, "MPI_File_open");
  CHECK(fh == MPI_FILE_NULL, "failed open wrote the handle");
  /* CREATE|EXCL: one rank creates, every rank succeeds; the second time
   * every rank fails with MPI_ERR_FILE_EXISTS. */
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh));
  CHECK_OK(MPI_File_close(&fh));
  same_on_all(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh),
              MPI_ERR_FILE_EXISTS, "MPI_File_open");
  CHECK(fh == MPI_FILE_NULL, "EXCL open wrote the handle");
  same_on_all(MPI_File_open(MPI_COMM_WORLD, "/proc/nicq-no-such-dir/file",
                            MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
              MPI_ERR_NO_SUCH_FILE, "MPI_File_open");
  /* A directory is not a file. */
  same_on_all(MPI_File_open(MPI_COMM_WORLD, "/", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
              MPI_ERR_BAD_FILE, "MPI_File_open");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    mp_expect_class(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE,
                    "MPI_File_delete");
}

static void access_errors(const char* name) {
  MPI_File fh = MPI_FILE_NULL;
  MPI_Status st;
  int data[4] = {1, 2, 3, 4}, in[4] = {0, 0, 0, 0};
  MPI_Offset sz = -1, pos = -1;
  /* Put four ints in, then open read-only. */
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  if (rank == 0) CHECK_OK(MPI_File_write_at(fh, 0, data, 4, MPI_INT, &st));
  CHECK_OK(MPI_File_close(&fh));
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  int other[4] = {9, 9, 9, 9};
  mp_expect_class(MPI_File_write_at(fh, 0, other, 4, MPI_INT, &st), MPI_ERR_READ_ONLY,
                  "MPI_File_write_at");
  mp_expect_class(MPI_File_iwrite(fh, other, 4, MPI_INT, &(MPI_Request){MPI_REQUEST_NULL}),
                  MPI_ERR_READ_ONLY, "MPI_File_iwrite");
  same_on_all(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY, "MPI_File_set_size");
  CHECK_OK(MPI_File_get_size(fh, &sz));
  CHECK(sz == 16, "size after refused calls %lld", (long long)sz);
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 0, "position after refused iwrite %lld", (long long)pos);
  CHECK_OK(MPI_File_read_at(fh, 0, in, 4, MPI_INT, &st));
  CHECK(in[0] == 1 && in[3] == 4, "data changed: %d %d", in[0], in[3]);

  /* Arguments: offsets, whence, positions, views, counts. */
  mp_expect_class(MPI_File_read_at(fh, -1, in, 1, MPI_INT, &st), MPI_ERR_ARG, "MPI_File_read_at");
  mp_expect_class(MPI_File_read(fh, in, -1, MPI_INT, &st), MPI_ERR_COUNT, "MPI_File_read");
  mp_expect_class(MPI_File_read(fh, in, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE, "MPI_File_read");
  CHECK_OK(MPI_File_seek(fh, 2, MPI_SEEK_SET));
  mp_expect_class(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG, "MPI_File_seek");
  mp_expect_class(MPI_File_seek(fh, -3, MPI_SEEK_CUR), MPI_ERR_ARG, "MPI_File_seek");
  mp_expect_class(MPI_File_seek(fh, -17, MPI_SEEK_END), MPI_ERR_ARG, "MPI_File_seek");
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 2, "position after refused seeks %lld", (long long)pos);
  mp_expect_class(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL),
                  MPI_ERR_UNSUPPORTED_DATAREP, "MPI_File_set_view");
  mp_expect_class(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "nicq-rep", MPI_INFO_NULL),
                  MPI_ERR_UNSUPPORTED_DATAREP, "MPI_File_set_view");
  mp_expect_class(MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG,
                  "MPI_File_set_view");
  mp_expect_class(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_INT, "native", MPI_INFO_NULL),
                  MPI_ERR_TYPE, "MPI_File_set_view");
  MPI_Datatype uncommitted;
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
  mp_expect_class(MPI_File_set_view(fh, 0, MPI_INT, uncommitted, "native", MPI_INFO_NULL),
                  MPI_ERR_TYPE, "MPI_File_set_view");
  CHECK_OK(MPI_Type_free(&uncommitted));
  MPI_Offset disp = -1;
  MPI_Datatype et, ft;
  char rep[MPI_MAX_DATAREP_STRING];
  CHECK_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
  CHECK(disp == 0 && et == MPI_BYTE && ft == MPI_BYTE && strcmp(rep, "native") == 0,
        "view changed by refused set_view: %lld %s", (long long)disp, rep);
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 2, "refused set_view moved the position to %lld", (long long)pos);
  /* A count that is not whole etypes. */
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  mp_expect_class(MPI_File_read_at(fh, 0, in, 3, MPI_SHORT, &st), MPI_ERR_TYPE, "MPI_File_read_at");
  long wide[2];
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
  mp_expect_class(MPI_File_read_at(fh, 0, wide, 2, MPI_LONG, &st), MPI_ERR_UNSUPPORTED_DATAREP,
                  "MPI_File_read_at");
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  /* Split collectives: _end without _begin, two _begins. */
  mp_expect_class(MPI_File_read_all_end(fh, in, &st), MPI_ERR_OTHER, "MPI_File_read_all_end");
  CHECK_OK(MPI_File_read_all_begin(fh, in, 1, MPI_INT));
  mp_expect_class(MPI_File_read_at_all_begin(fh, 0, in, 1, MPI_INT), MPI_ERR_OTHER,
                  "MPI_File_read_at_all_begin");
  CHECK_OK(MPI_File_read_all_end(fh, in, &st));
  CHECK_OK(MPI_File_close(&fh));

  /* MPI_ERR_ACCESS: reading a write-only file. */
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  mp_expect_class(MPI_File_read_at(fh, 0, in, 1, MPI_INT, &st), MPI_ERR_ACCESS, "MPI_File_read_at");
  CHECK_OK(MPI_File_close(&fh));
  /* MPI_MODE_SEQUENTIAL: only the shared pointer may be used. */
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL,
                         &fh));
  mp_expect_class(MPI_File_read_at(fh, 0, in, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION,
                  "MPI_File_read_at");
  mp_expect_class(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION,
                  "MPI_File_seek");
  CHECK_OK(MPI_File_close(&fh));

  /* Bad handles: MPI_FILE_NULL and a closed file. */
  mp_expect_class(MPI_File_get_size(MPI_FILE_NULL, &sz), MPI_ERR_FILE, "MPI_File_get_size");
  MPI_File closed = fh;
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  closed = fh;
  CHECK_OK(MPI_File_close(&fh));
  mp_expect_class(MPI_File_read(closed, in, 1, MPI_INT, &st), MPI_ERR_FILE, "MPI_File_read");
  mp_expect_class(MPI_File_close(&closed), MPI_ERR_FILE, "MPI_File_close");
  /* A communicator error handler is not a file's. */
  mp_expect_class(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRHANDLER_NULL), MPI_ERR_ARG,
                  "MPI_File_set_errhandler");
}

/* Collective calls whose arguments one member alone gets wrong: every member
 * returns the error (none is left waiting in the call's collective step),
 * and the file stays usable by all. */
static void one_member_errors(const char* name) {
  MPI_File fh = MPI_FILE_NULL;
  MPI_Status st;
  const int last = size - 1;
  int data[4] = {5, 6, 7, 8};
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  /* A filetype whose displacements decrease, on the last rank only. */
  MPI_Datatype backwards;
  CHECK_OK(MPI_Type_indexed(2, (int[]){1, 1}, (int[]){2, 0}, MPI_INT, &backwards));
  CHECK_OK(MPI_Type_commit(&backwards));
  same_on_all(MPI_File_set_view(fh, 0, MPI_INT, rank == last ? backwards : MPI_INT, "native",
                                MPI_INFO_NULL),
              MPI_ERR_TYPE, "MPI_File_set_view");
  CHECK_OK(MPI_Type_free(&backwards));
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  /* An ordered write of a part of an etype, on the last rank only. */
  same_on_all(MPI_File_write_ordered(fh, data, rank == last ? 3 : 4,
                                     rank == last ? MPI_BYTE : MPI_INT, &st),
              MPI_ERR_TYPE, "MPI_File_write_ordered");
  same_on_all(MPI_File_seek_shared(fh, 0, rank == last ? 77 : MPI_SEEK_SET), MPI_ERR_ARG,
              "MPI_File_seek_shared");
  /* Nothing moved: the shared pointer is still 0 and an ordered write works. */
  MPI_Offset shared = -1;
  CHECK_OK(MPI_File_get_position_shared(fh, &shared));
  CHECK(shared == 0, "a refused call moved the shared pointer to %lld", (long long)shared);
  CHECK_OK(MPI_File_write_ordered(fh, data, 1, MPI_INT, &st));
  CHECK_OK(MPI_File_close(&fh));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  char name[256], missing[256];
  mp_file_name("ferr", 0, name, sizeof name);
  mp_file_name("ferr", 1, missing, sizeof missing);
  open_errors(name, missing);
  access_errors(name);
  one_member_errors(name);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK_OK(MPI_File_delete(name, MPI_INFO_NULL));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(!mp_file_exists(name), "the test file is left");
  MPI_Finalize();
  return 0;
}
