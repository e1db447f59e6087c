/* MPI-IO errors: each class the file calls raise, with a message naming the
 * call, the same verdict on every rank for the collective ones, and the
 * file's state (handle, position, size, data) unchanged after the error.
 * Last, files left open at MPI_Finalize: closed by it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "mp_file_util.h"

static int rank, size;
static void same_on_all(int rc, int cls, const char* name);

/* A failure of the shared pointer's window on one member alone, late in
 * MPI_File_open: this definition takes the place of the library's
 * PMPI_Win_allocate, the name the library calls it by, through the dynamic
 * linker (a program's MPI_Win_allocate, as a profiling tool defines it,
 * sees only the program's calls). Armed, it joins the creation, as a member
 * whose own last step fails would, and then reports MPI_ERR_NO_MEM,
 * keeping its window out of reach. */
static int fail_win_allocate;
static MPI_Win leaked_win[4];
static int leaked;
int PMPI_Win_allocate(MPI_Aint bytes, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                      MPI_Win* win) {
  typedef int (*fn_t)(MPI_Aint, int, MPI_Info, MPI_Comm, void*, MPI_Win*);
  static fn_t real;
  if (!real) real = (fn_t)dlsym(RTLD_NEXT, "PMPI_Win_allocate");
  int rc = real(bytes, disp_unit, info, comm, baseptr, win);
  if (rc != MPI_SUCCESS || !fail_win_allocate) return rc;
  if (leaked < 4) leaked_win[leaked++] = *win;
  return MPI_ERR_NO_MEM;
}

/* A member that may not open the file: while fail_open_path is set, open()
 * of that path fails with EACCES in this process (the library's open(2)
 * resolves to this definition). */
static const char* fail_open_path;
int open(const char* path, int flags, ...) {
  typedef int (*fn_t)(const char*, int, ...);
  static fn_t real;
  if (!real) real = (fn_t)dlsym(RTLD_NEXT, "open");
  if (fail_open_path && strcmp(path, fail_open_path) == 0) {
    errno = EACCES;
    return -1;
  }
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = va_arg(ap, mode_t);
    va_end(ap);
  }
  return real(path, flags, mode);
}

static int open_fds(void) {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  CHECK(d != NULL, "cannot list /proc/self/fd");
  for (struct dirent* e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1; /* the directory's own descriptor */
}

/* How many of this process's descriptors are open on `path`. */
static int fds_on(const char* path) {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  CHECK(d != NULL, "cannot list /proc/self/fd");
  for (struct dirent* e; (e = readdir(d)) != NULL;) {
    char link[300], target[300];
    snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(link, target, sizeof target - 1);
    if (len <= 0) continue;
    target[len] = '\0';
    n += strcmp(target, path) == 0;
  }
  closedir(d);
  return n;
}

/* Failures on one member after rank 0 has opened (and maybe created) the
 * file: every member returns the same class, none keeps a descriptor or a
 * handle, and a file this open created is gone again (one that existed
 * stays). Needs a second rank. */
static void late_open_failures(const char* name) {
  if (size < 2) return;
  const int last = size - 1;
  MPI_File fh = MPI_FILE_NULL;
  CHECK(!mp_file_exists(name), "the test file exists before the late failures");
  /* The last rank may not open the file (EACCES): rank 0 created it, the
   * last rank fails with MPI_ERR_ACCESS, and rank 0 removes the file again. */
  int before = open_fds();
  fail_open_path = rank == last ? name : NULL;
  int rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  fail_open_path = NULL;
  same_on_all(rc, MPI_ERR_ACCESS, "MPI_File_open");
  CHECK(fh == MPI_FILE_NULL, "a failed open wrote the handle");
  CHECK(open_fds() == before, "a failed open left %d descriptors open", open_fds() - before);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(!mp_file_exists(name), "the file rank 0 created is left after the open failed");
  MPI_Barrier(MPI_COMM_WORLD); /* every rank looked before rank 0 makes it again */
  /* The same on a file that existed: it stays, with its data. */
  if (rank == 0) {
    int fd = open(name, O_CREAT | O_WRONLY, 0666);
    CHECK(fd >= 0 && write(fd, "keep", 4) == 4 && close(fd) == 0, "cannot make %s", name);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  fail_open_path = rank == last ? name : NULL;
  rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  fail_open_path = NULL;
  same_on_all(rc, MPI_ERR_ACCESS, "MPI_File_open");
  struct stat sb;
  CHECK(stat(name, &sb) == 0 && sb.st_size == 4, "a file this open did not create was removed");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(unlink(name) == 0, "cannot remove %s", name);
  MPI_Barrier(MPI_COMM_WORLD);
  /* The shared pointer's window fails on the last rank alone: every rank
   * returns MPI_ERR_NO_MEM, no rank keeps a descriptor on the file or a
   * handle, and the created file is gone. */
  fail_win_allocate = rank == last;
  rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  fail_win_allocate = 0;
  same_on_all(rc, MPI_ERR_NO_MEM, "MPI_File_open");
  CHECK(fh == MPI_FILE_NULL, "a failed open wrote the handle");
  CHECK(fds_on(name) == 0, "a failed open left a descriptor on the file");
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(!mp_file_exists(name), "the file rank 0 created is left after the window failed");
  MPI_Barrier(MPI_COMM_WORLD);
  /* Everything still works: an open, a shared write, a close. */
  MPI_Status st;
  int one = 1;
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name,
                         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                         &fh));
  CHECK_OK(MPI_File_write_shared(fh, &one, 1, MPI_INT, &st));
  MPI_Offset shared = -1;
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_File_get_position_shared(fh, &shared));
  CHECK(shared == size * 4, "shared pointer at %lld after %d writes", (long long)shared, size);
  CHECK_OK(MPI_File_close(&fh));
  CHECK(!mp_file_exists(name), "delete-on-close left the file");
}

/* Files the program leaves open: MPI_Finalize closes them. A file of the
 * world (written, kept), one with MPI_MODE_DELETE_ON_CLOSE and one of
 * MPI_COMM_SELF per rank. After MPI_Finalize no descriptor of this process
 * is on any of them, the delete-on-close file is gone and the others hold
 * their data. */
static void left_open_at_finalize(const char* kept, const char* doc) {
  char mine[300];
  snprintf(mine, sizeof mine, "%s-self-%d", kept, rank);
  MPI_File a, b, c;
  MPI_Status st;
  int v = 100 + rank;
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, kept, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &a));
  CHECK_OK(MPI_File_write_at(a, rank * 4, &v, 1, MPI_INT, &st));
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, doc,
                         MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                         &b));
  CHECK_OK(
      MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &c));
  CHECK_OK(MPI_File_write(c, &v, 1, MPI_INT, &st));
  CHECK(fds_on(kept) == 1 && fds_on(doc) == 1 && fds_on(mine) == 1, "the files are not open");
  MPI_Finalize();
  CHECK(fds_on(kept) == 0 && fds_on(doc) == 0 && fds_on(mine) == 0,
        "MPI_Finalize left descriptors open: %d %d %d", fds_on(kept), fds_on(doc), fds_on(mine));
  CHECK(!mp_file_exists(doc), "MPI_Finalize left the delete-on-close file");
  int got = -1, fd = open(mine, O_RDONLY);
  CHECK(fd >= 0 && read(fd, &got, 4) == 4 && got == v, "%s holds %d, not %d", mine, got, v);
  close(fd);
  unlink(mine);
  if (rank == 0) { /* every rank wrote before MPI_Finalize's closes */
    fd = open(kept, O_RDONLY);
    for (int r = 0; r < size; ++r) {
      CHECK(fd >= 0 && pread(fd, &got, 4, r * 4) == 4 && got == 100 + r, "%s: rank %d's int is %d",
            kept, r, got);
    }
    close(fd);
    unlink(kept);
  }
}

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
  /* external32 on narrower elements of two kinds (a long and an int):
   * no single ratio maps the view onto the file. */
  MPI_Datatype mixed;
  CHECK_OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                                  (MPI_Datatype[]){MPI_LONG, MPI_INT}, &mixed));
  CHECK_OK(MPI_Type_commit(&mixed));
  mp_expect_class(MPI_File_set_view(fh, 0, mixed, mixed, "external32", MPI_INFO_NULL),
                  MPI_ERR_UNSUPPORTED_DATAREP, "MPI_File_set_view");
  CHECK_OK(MPI_Type_free(&mixed));
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
  late_open_failures(name);
  left_open_at_finalize(name, missing);
  printf("FILE-ERRORS-OK: rank %d\n", rank);
  return 0;
}
