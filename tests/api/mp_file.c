/* MPI-IO on a shared POSIX file: each rank writes its block through a view
 * (contiguous and vector filetypes, derived memory types) in the blocking,
 * collective, nonblocking and split collective forms, and every rank reads
 * the whole file back and checks each value; seek and positions, sizes,
 * short reads at the end of the file, the file's attributes and its error
 * handler. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include "mp_file_util.h"

enum { kN = 24, kB = 3 };

static int rank, size;

static int value(int r, int i) {
  return r * 1000 + i + 1;
}

static int count_of(MPI_Status* st, MPI_Datatype t) {
  int n = -1;
  CHECK_OK(MPI_Get_count(st, t, &n));
  return n;
}

/* The 4 bytes at `raw` hold `v` big-endian (external32's form). */
static void check_be32(const unsigned char* raw, unsigned v, const char* what, int i) {
  CHECK(raw[0] == (v >> 24) && raw[1] == ((v >> 16) & 0xff) && raw[2] == ((v >> 8) & 0xff) &&
            raw[3] == (v & 0xff),
        "external32 %s %d: bytes %02x %02x %02x %02x of %08x", what, i, raw[0], raw[1], raw[2],
        raw[3], v);
}

/* The whole file as ints, read by every rank through the default byte view. */
static void read_all_ints(MPI_File fh, int* out, int n) {
  MPI_Status st;
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_read_at_all(fh, 0, out, n, MPI_INT, &st));
  CHECK(count_of(&st, MPI_INT) == n, "whole-file read got %d ints of %d", count_of(&st, MPI_INT),
        n);
}

/* Rank r owns ints [r*kN, (r+1)*kN): a contiguous view at its displacement. */
static void contiguous_blocks(MPI_File fh) {
  int mine[kN], all[kN * 64];
  MPI_Status st;
  for (int i = 0; i < kN; ++i) mine[i] = value(rank, i);
  CHECK_OK(MPI_File_set_view(fh, (MPI_Offset)rank * kN * (MPI_Offset)sizeof(int), MPI_INT, MPI_INT,
                             "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_write_all(fh, mine, kN, MPI_INT, &st));
  CHECK(count_of(&st, MPI_INT) == kN, "write_all count %d", count_of(&st, MPI_INT));
  MPI_Offset pos = -1;
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == kN, "position after write_all %lld", (long long)pos);
  CHECK_OK(MPI_File_sync(fh));
  MPI_Offset fsize = -1;
  CHECK_OK(MPI_File_get_size(fh, &fsize));
  CHECK(fsize == (MPI_Offset)size * kN * (MPI_Offset)sizeof(int), "size %lld", (long long)fsize);
  read_all_ints(fh, all, size * kN);
  for (int r = 0; r < size; ++r)
    for (int i = 0; i < kN; ++i)
      CHECK(all[r * kN + i] == value(r, i), "contiguous: int %d is %d, want %d", r * kN + i,
            all[r * kN + i], value(r, i));
  CHECK_OK(MPI_File_sync(fh));
}

/* Round robin: rank r owns blocks of kB ints at r, r+size, r+2*size, ...
 * through a vector filetype (one tile) and a resized one (tiled), written
 * from a strided memory type. */
static void vector_blocks(MPI_File fh, int tiled, int seq) {
  const int nblocks = kN / kB;
  int src[2 * kN], back[kN], all[kN * 64];
  MPI_Datatype ft, vec, mem;
  MPI_Status st;
  if (tiled) {
    MPI_Datatype contig;
    CHECK_OK(MPI_Type_contiguous(kB, MPI_INT, &contig));
    CHECK_OK(MPI_Type_create_resized(contig, 0, (MPI_Aint)(kB * size * sizeof(int)), &ft));
    CHECK_OK(MPI_Type_free(&contig));
  } else {
    CHECK_OK(MPI_Type_vector(nblocks, kB, kB * size, MPI_INT, &vec));
    ft = vec;
  }
  CHECK_OK(MPI_Type_commit(&ft));
  CHECK_OK(MPI_Type_vector(kN, 1, 2, MPI_INT, &mem));
  CHECK_OK(MPI_Type_commit(&mem));
  for (int i = 0; i < 2 * kN; ++i) src[i] = i % 2 ? -1 : value(rank, i / 2 + seq);
  CHECK_OK(MPI_File_set_view(fh, (MPI_Offset)(rank * kB * sizeof(int)), MPI_INT, ft, "native",
                             MPI_INFO_NULL));
  MPI_Offset byte = -1;
  CHECK_OK(MPI_File_get_byte_offset(fh, kB + 1, &byte));
  CHECK(byte == (MPI_Offset)((rank * kB + kB * size + 1) * sizeof(int)), "byte offset %lld",
        (long long)byte);
  /* get_view gives a new, committed handle for a derived filetype. */
  MPI_Offset vdisp = -1;
  MPI_Datatype vet, vft;
  char rep[MPI_MAX_DATAREP_STRING];
  int vsize = 0;
  CHECK_OK(MPI_File_get_view(fh, &vdisp, &vet, &vft, rep));
  CHECK_OK(MPI_Type_size(vft, &vsize));
  CHECK(vdisp == (MPI_Offset)(rank * kB * sizeof(int)) && vet == MPI_INT && vft != ft &&
            vsize == (tiled ? kB : kN) * (int)sizeof(int),
        "get_view: disp %lld, filetype size %d", (long long)vdisp, vsize);
  CHECK_OK(MPI_File_set_view(fh, vdisp, vet, vft, rep, MPI_INFO_NULL));
  CHECK_OK(MPI_Type_free(&vft));
  if (tiled) {
    CHECK_OK(MPI_File_write_all(fh, src, 1, mem, &st));
  } else {
    CHECK_OK(MPI_File_write_at(fh, 0, src, 1, mem, &st));
  }
  CHECK(count_of(&st, mem) == 1, "vector write count %d", count_of(&st, mem));
  CHECK_OK(MPI_File_sync(fh));
  memset(back, 0, sizeof back);
  CHECK_OK(MPI_File_read_at_all(fh, 0, back, kN, MPI_INT, &st));
  for (int i = 0; i < kN; ++i)
    CHECK(back[i] == value(rank, i + seq), "view read-back %d: %d", i, back[i]);
  CHECK_OK(MPI_File_sync(fh));
  read_all_ints(fh, all, size * kN);
  for (int blk = 0; blk < nblocks * size; ++blk)
    for (int k = 0; k < kB; ++k) {
      int owner = blk % size, nth = blk / size;
      int want = value(owner, nth * kB + k + seq);
      CHECK(all[blk * kB + k] == want, "%s vector: file int %d is %d, want %d",
            tiled ? "tiled" : "one-tile", blk * kB + k, all[blk * kB + k], want);
    }
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_Type_free(&ft));
  CHECK_OK(MPI_Type_free(&mem));
}

/* iwrite_at / iread_at / iwrite / iread_all: completed requests with counts. */
static void nonblocking_and_split(MPI_File fh) {
  int out[kN], in[kN];
  MPI_Request rq;
  MPI_Status st;
  int flag = 0;
  for (int i = 0; i < kN; ++i) out[i] = value(rank + 7, i);
  CHECK_OK(MPI_File_set_view(fh, (MPI_Offset)rank * kN * (MPI_Offset)sizeof(int), MPI_INT, MPI_INT,
                             "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_iwrite_at(fh, 0, out, kN / 2, MPI_INT, &rq));
  CHECK_OK(MPI_Wait(&rq, &st));
  CHECK(rq == MPI_REQUEST_NULL && count_of(&st, MPI_INT) == kN / 2, "iwrite_at count %d",
        count_of(&st, MPI_INT));
  CHECK_OK(MPI_File_seek(fh, kN / 2, MPI_SEEK_SET));
  CHECK_OK(MPI_File_iwrite_all(fh, out + kN / 2, kN / 2, MPI_INT, &rq));
  CHECK_OK(MPI_Test(&rq, &flag, &st));
  CHECK(flag && count_of(&st, MPI_INT) == kN / 2, "iwrite_all flag %d", flag);
  CHECK_OK(MPI_File_sync(fh));
  memset(in, 0, sizeof in);
  CHECK_OK(MPI_File_iread_at(fh, 0, in, kN, MPI_INT, &rq));
  CHECK_OK(MPI_Wait(&rq, &st));
  CHECK(count_of(&st, MPI_INT) == kN, "iread_at count %d", count_of(&st, MPI_INT));
  for (int i = 0; i < kN; ++i) CHECK(in[i] == out[i], "iread_at %d: %d", i, in[i]);
  memset(in, 0, sizeof in);
  CHECK_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  CHECK_OK(MPI_File_iread_all(fh, in, kN, MPI_INT, &rq));
  CHECK_OK(MPI_Wait(&rq, &st));
  for (int i = 0; i < kN; ++i) CHECK(in[i] == out[i], "iread_all %d: %d", i, in[i]);

  /* Split collective: the count arrives with _end. */
  for (int i = 0; i < kN; ++i) out[i] = value(rank + 11, i);
  CHECK_OK(MPI_File_write_at_all_begin(fh, 0, out, kN, MPI_INT));
  CHECK_OK(MPI_File_write_at_all_end(fh, out, &st));
  CHECK(count_of(&st, MPI_INT) == kN, "write_at_all_end count %d", count_of(&st, MPI_INT));
  CHECK_OK(MPI_File_sync(fh));
  memset(in, 0, sizeof in);
  CHECK_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
  CHECK_OK(MPI_File_read_all_begin(fh, in, kN, MPI_INT));
  CHECK_OK(MPI_File_read_all_end(fh, in, &st));
  CHECK(count_of(&st, MPI_INT) == kN, "read_all_end count %d", count_of(&st, MPI_INT));
  for (int i = 0; i < kN; ++i) CHECK(in[i] == out[i], "read_all_begin %d: %d", i, in[i]);
  CHECK_OK(MPI_File_sync(fh));
}

/* Sizes, seeks and the short read at the end of the file. */
static void sizes_and_positions(MPI_File fh) {
  MPI_Offset sz = -1, pos = -1;
  MPI_Status st;
  int in[8];
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_set_size(fh, 64));
  CHECK_OK(MPI_File_get_size(fh, &sz));
  CHECK(sz == 64, "size after set_size(64) %lld", (long long)sz);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank saw it before the next resize */
  CHECK_OK(MPI_File_preallocate(fh, 128));
  CHECK_OK(MPI_File_get_size(fh, &sz));
  CHECK(sz == 128, "size after preallocate(128) %lld", (long long)sz);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank saw it before the next resize */
  CHECK_OK(MPI_File_preallocate(fh, 8));
  CHECK_OK(MPI_File_get_size(fh, &sz));
  CHECK(sz == 128, "preallocate(8) shrank the file to %lld", (long long)sz);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank saw it before the next resize */
  CHECK_OK(MPI_File_set_size(fh, 16));
  CHECK_OK(MPI_File_get_size(fh, &sz));
  CHECK(sz == 16, "size after set_size(16) %lld", (long long)sz);
  if (rank == 0) {
    int four[4] = {41, 42, 43, 44};
    CHECK_OK(MPI_File_write_at(fh, 0, four, 4, MPI_INT, &st));
  }
  CHECK_OK(MPI_File_sync(fh));
  /* 16 bytes = 4 ints: a read of 8 from int 2 gets 2. */
  for (int i = 0; i < 8; ++i) in[i] = -5;
  CHECK_OK(MPI_File_read_at(fh, 2, in, 8, MPI_INT, &st));
  CHECK(count_of(&st, MPI_INT) == 2, "short read count %d", count_of(&st, MPI_INT));
  CHECK(in[0] == 43 && in[1] == 44 && in[2] == -5, "short read data %d %d %d", in[0], in[1], in[2]);
  CHECK_OK(MPI_File_read_at(fh, 9, in, 8, MPI_INT, &st));
  CHECK(count_of(&st, MPI_INT) == 0, "read past the end count %d", count_of(&st, MPI_INT));
  /* Individual pointer: seek, read, relative and end seeks. */
  CHECK_OK(MPI_File_seek(fh, 1, MPI_SEEK_SET));
  CHECK_OK(MPI_File_read(fh, in, 2, MPI_INT, &st));
  CHECK(in[0] == 42 && in[1] == 43, "read at 1: %d %d", in[0], in[1]);
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 3, "position after read %lld", (long long)pos);
  CHECK_OK(MPI_File_seek(fh, -2, MPI_SEEK_CUR));
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 1, "position after SEEK_CUR -2 %lld", (long long)pos);
  CHECK_OK(MPI_File_seek(fh, -1, MPI_SEEK_END));
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 3, "position after SEEK_END -1 %lld", (long long)pos);
  CHECK_OK(MPI_File_read(fh, in, 4, MPI_INT, &st));
  CHECK(count_of(&st, MPI_INT) == 1 && in[0] == 44, "read at the end: %d ints, %d",
        count_of(&st, MPI_INT), in[0]);
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 4, "position after the short read %lld", (long long)pos);
  CHECK_OK(MPI_File_sync(fh));
}

static int handler_calls, handler_class;
static void on_file_error(MPI_File* fh, int* code, ...) {
  (void)fh;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

static void attributes(MPI_File fh, const char* name) {
  int amode = 0, flag = -1, res = -1;
  MPI_Group g, wg;
  MPI_Info info;
  char val[64], rep[MPI_MAX_DATAREP_STRING];
  MPI_Offset disp = -1;
  MPI_Datatype et, ft;
  CHECK_OK(MPI_File_get_amode(fh, &amode));
  CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %d", amode);
  CHECK_OK(MPI_File_get_group(fh, &g));
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  CHECK_OK(MPI_Group_compare(g, wg, &res));
  CHECK(res == MPI_IDENT, "file group compares %d", res);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  CHECK_OK(MPI_Info_create(&info));
  CHECK_OK(MPI_Info_set(info, "access_style", "read_mostly"));
  CHECK_OK(MPI_File_set_info(fh, info));
  MPI_Info_free(&info);
  CHECK_OK(MPI_File_get_info(fh, &info));
  CHECK_OK(MPI_Info_get(info, "access_style", sizeof val - 1, val, &flag));
  CHECK(flag && strcmp(val, "read_mostly") == 0, "info access_style '%s' flag %d", val, flag);
  MPI_Info_free(&info);
  CHECK_OK(MPI_File_get_atomicity(fh, &flag));
  CHECK(flag == 0, "initial atomicity %d", flag);
  CHECK_OK(MPI_File_set_atomicity(fh, 1));
  CHECK_OK(MPI_File_get_atomicity(fh, &flag));
  CHECK(flag == 1, "atomicity after set %d", flag);
  CHECK_OK(MPI_File_set_view(fh, 8, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL));
  int seven = 7 + rank, back = 0;
  MPI_Status st;
  CHECK_OK(MPI_File_write_at(fh, rank, &seven, 1, MPI_INT, &st));
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_File_read_at(fh, (rank + 1) % size, &back, 1, MPI_INT, &st));
  CHECK(back == 7 + (rank + 1) % size, "atomic read-back %d", back);
  CHECK_OK(MPI_File_set_atomicity(fh, 0));
  CHECK_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
  CHECK(disp == 8 && et == MPI_INT && ft == MPI_INT && strcmp(rep, "internal") == 0, "view %lld %s",
        (long long)disp, rep);
  MPI_Aint ext = 0;
  CHECK_OK(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext));
  CHECK(ext == sizeof(double), "type extent %ld", (long)ext);

  /* Error handlers: a new file starts with MPI_FILE_NULL's (MPI_ERRORS_RETURN). */
  MPI_Errhandler eh, got;
  CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
  CHECK(got == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler %d", got);
  CHECK_OK(MPI_File_get_errhandler(fh, &got));
  CHECK(got == MPI_ERRORS_RETURN, "file's handler %d", got);
  CHECK_OK(MPI_File_create_errhandler(on_file_error, &eh));
  CHECK_OK(MPI_File_set_errhandler(fh, eh));
  CHECK_OK(MPI_File_get_errhandler(fh, &got));
  CHECK(got == eh, "handler after set %d", got);
  int rc = MPI_File_read_at(fh, -1, &back, 1, MPI_INT, &st);
  CHECK(rc != MPI_SUCCESS && handler_calls == 1 && handler_class == MPI_ERR_ARG,
        "user handler: rc %d calls %d class %d", rc, handler_calls, handler_class);
  CHECK_OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
  CHECK(handler_calls == 2 && handler_class == MPI_ERR_IO, "call_errhandler: calls %d class %d",
        handler_calls, handler_class);
  CHECK_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_Errhandler_free(&eh));
  (void)name;
}

/* "external32": big-endian in the file, the values back through the view. */
static void external32_view(MPI_File fh) {
  int out[4], in[4];
  unsigned char raw[16];
  MPI_Status st;
  MPI_Aint ext = 0;
  for (int i = 0; i < 4; ++i) out[i] = 0x01020304 + (rank << 8) + (i << 16);
  CHECK_OK(
      MPI_File_set_view(fh, (MPI_Offset)rank * 16, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
  CHECK_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
  CHECK(ext == 4, "external32 extent of MPI_LONG %ld", (long)ext);
  CHECK_OK(MPI_File_write_at(fh, 0, out, 4, MPI_INT, &st));
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_read_at(fh, (MPI_Offset)rank * 16, raw, 16, MPI_BYTE, &st));
  for (int i = 0; i < 4; ++i) check_be32(raw + 4 * i, (unsigned)out[i], "int", i);
  CHECK_OK(
      MPI_File_set_view(fh, (MPI_Offset)rank * 16, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
  memset(in, 0, sizeof in);
  CHECK_OK(MPI_File_read_at(fh, 0, in, 4, MPI_INT, &st));
  for (int i = 0; i < 4; ++i) CHECK(in[i] == out[i], "external32 read-back %d: %08x", i, in[i]);
  CHECK_OK(MPI_File_sync(fh));
}

/* "external32" on elements narrower there than here (MPI_LONG 8 -> 4
 * bytes, MPI_WCHAR 4 -> 2): the file holds the narrow big-endian form,
 * values come back sign-extended, positions and offsets count the narrow
 * elements, and a value the narrow form cannot hold is MPI_ERR_CONVERSION
 * with nothing written and the pointer unmoved. */
static void external32_narrow(MPI_File fh) {
  const MPI_Offset disp = (MPI_Offset)rank * 16;
  long out[4] = {-2, 70000 + rank, -2147483647L - 1, 2147483647L}, in[4], big = 1L << 40;
  unsigned char raw[16];
  MPI_Status st;
  int count = -1;
  CHECK(sizeof(long) == 8, "this test expects an 8-byte long");
  CHECK_OK(MPI_File_set_view(fh, disp, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
  CHECK_OK(MPI_File_write_at(fh, 0, out, 4, MPI_LONG, &st));
  CHECK_OK(MPI_Get_count(&st, MPI_LONG, &count));
  CHECK(count == 4, "external32 longs written: count %d", count);
  MPI_Offset byte = -1;
  CHECK_OK(MPI_File_get_byte_offset(fh, 2, &byte));
  CHECK(byte == disp + 8, "external32 long 2 at byte %lld", (long long)byte);
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_read_at(fh, disp, raw, 16, MPI_BYTE, &st));
  for (int i = 0; i < 4; ++i) check_be32(raw + 4 * i, (unsigned)out[i], "long", i);
  CHECK_OK(MPI_File_set_view(fh, disp, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
  memset(in, 0, sizeof in);
  CHECK_OK(MPI_File_read_at(fh, 0, in, 4, MPI_LONG, &st));
  CHECK_OK(MPI_Get_count(&st, MPI_LONG, &count));
  CHECK(count == 4, "external32 longs read: count %d", count);
  for (int i = 0; i < 4; ++i) CHECK(in[i] == out[i], "external32 long %d back as %ld", i, in[i]);
  MPI_Offset pos = -1;
  CHECK_OK(MPI_File_seek(fh, 1, MPI_SEEK_SET));
  mp_expect_class(MPI_File_write(fh, &big, 1, MPI_LONG, &st), MPI_ERR_CONVERSION, "MPI_File_write");
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK(pos == 1, "a refused conversion moved the pointer to %lld", (long long)pos);
  CHECK_OK(MPI_File_read_at(fh, 1, in, 1, MPI_LONG, &st));
  CHECK(in[0] == out[1], "a refused conversion wrote %ld over %ld", in[0], out[1]);
  /* MPI_WCHAR: 2 bytes there. */
  wchar_t w[2] = {L'A', (wchar_t)0x263A}, wb[2] = {0, 0}, wide = (wchar_t)0x1F600;
  CHECK_OK(MPI_File_set_view(fh, disp, MPI_WCHAR, MPI_WCHAR, "external32", MPI_INFO_NULL));
  CHECK_OK(MPI_File_write_at(fh, 0, w, 2, MPI_WCHAR, &st));
  mp_expect_class(MPI_File_write_at(fh, 1, &wide, 1, MPI_WCHAR, &st), MPI_ERR_CONVERSION,
                  "MPI_File_write_at");
  CHECK_OK(MPI_File_sync(fh));
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_read_at(fh, disp, raw, 4, MPI_BYTE, &st));
  CHECK(raw[0] == 0 && raw[1] == 0x41 && raw[2] == 0x26 && raw[3] == 0x3A,
        "external32 wchars: bytes %02x %02x %02x %02x", raw[0], raw[1], raw[2], raw[3]);
  CHECK_OK(MPI_File_set_view(fh, disp, MPI_WCHAR, MPI_WCHAR, "external32", MPI_INFO_NULL));
  CHECK_OK(MPI_File_read_at(fh, 0, wb, 2, MPI_WCHAR, &st));
  CHECK(wb[0] == w[0] && wb[1] == w[1], "external32 wchars back as %x %x", (unsigned)wb[0],
        (unsigned)wb[1]);
  CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  CHECK_OK(MPI_File_sync(fh));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  CHECK(size <= 64, "at most 64 ranks");
  char name[256];
  mp_file_name("file", 0, name, sizeof name);
  MPI_File fh = MPI_FILE_NULL;
  CHECK_OK(
      MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  CHECK(fh != MPI_FILE_NULL, "open gave MPI_FILE_NULL");
  contiguous_blocks(fh);
  vector_blocks(fh, 0, 0);
  vector_blocks(fh, 1, 5);
  nonblocking_and_split(fh);
  sizes_and_positions(fh);
  attributes(fh, name);
  external32_view(fh);
  external32_narrow(fh);
  CHECK_OK(MPI_File_close(&fh));
  CHECK(fh == MPI_FILE_NULL, "close left the handle");
  CHECK(mp_file_exists(name), "the file is gone after close");

  /* MPI_MODE_APPEND: the individual pointer starts at the end. */
  CHECK_OK(
      MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
  MPI_Offset pos = -1, end = -2;
  CHECK_OK(MPI_File_get_position(fh, &pos));
  CHECK_OK(MPI_File_get_size(fh, &end));
  CHECK(pos == end && end > 0, "append position %lld, size %lld", (long long)pos, (long long)end);
  CHECK_OK(MPI_File_close(&fh));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK_OK(MPI_File_delete(name, MPI_INFO_NULL));
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(!mp_file_exists(name), "MPI_File_delete left the file");

  /* MPI_MODE_DELETE_ON_CLOSE: gone once every rank closed. */
  mp_file_name("file", 1, name, sizeof name);
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name,
                         MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
  CHECK(mp_file_exists(name), "created file missing");
  CHECK_OK(MPI_File_close(&fh));
  CHECK(!mp_file_exists(name), "DELETE_ON_CLOSE left the file");

  /* MPI_MODE_CREATE through a dangling symbolic link creates its target. */
  char target[256], link_name[300];
  mp_file_name("file", 2, target, sizeof target);
  snprintf(link_name, sizeof link_name, "%s.link", target);
  if (rank == 0) {
    unlink(target);
    unlink(link_name);
    CHECK(symlink(target, link_name) == 0, "symlink: %s", strerror(errno));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_File_open(MPI_COMM_WORLD, link_name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh));
  const int mine = value(rank, 7);
  CHECK_OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * (MPI_Offset)sizeof(int), &mine, 1, MPI_INT,
                                 MPI_STATUS_IGNORE));
  CHECK_OK(MPI_File_close(&fh));
  CHECK(mp_file_exists(target), "the link's target was not created");
  MPI_Barrier(MPI_COMM_WORLD); /* every rank checked before rank 0 removes it */
  if (rank == 0) {
    FILE* in = fopen(target, "rb");
    CHECK(in != NULL, "cannot read the target: %s", strerror(errno));
    for (int r = 0; r < size; ++r) {
      int got = -1;
      CHECK(fread(&got, sizeof got, 1, in) == 1 && got == value(r, 7), "target int %d is %d", r,
            got);
    }
    fclose(in);
    unlink(link_name);
    unlink(target);
  }
  MPI_Finalize();
  return 0;
}
