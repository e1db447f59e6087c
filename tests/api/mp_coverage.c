/* The rest of the MPI 4.1 C API that nicq declares: unsupported calls (user data
 * representations of file I/O, dynamic processes) return
 * MPI_ERR_UNSUPPORTED_OPERATION naming the call and leave their outputs
 * alone; MPI_Cart_map, MPI_Pcontrol, MPI_Status_set_elements_c,
 * MPI_Reduce_local_c, the MPI-4.1 status field accessors and the Fortran
 * conversions work. */
#include <limits.h>

#include "mp_check.h"

static void expect_class(int rc, int want, const char* call) {
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING];
  CHECK(rc != MPI_SUCCESS, "%s succeeded", call);
  MPI_Error_class(rc, &cls);
  CHECK(cls == want, "%s: error class %d, want %d", call, cls, want);
  MPI_Error_string(rc, msg, &len);
  CHECK(strstr(msg, call) != NULL, "message '%s' does not name %s", msg, call);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  /* File I/O is implemented but for user data representations; a null
   * file is MPI_ERR_FILE. */
  MPI_File fh = MPI_FILE_NULL;
  int buf[4] = {1, 2, 3, 4};
  MPI_Status st;
  expect_class(MPI_File_read_shared(fh, buf, 4, MPI_INT, &st), MPI_ERR_FILE,
               "MPI_File_read_shared");
  expect_class(
      MPI_Register_datarep("nicq-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, NULL, NULL),
      MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Register_datarep");
  expect_class(MPI_File_read_at_all_c(fh, 0, buf, (MPI_Count)4, MPI_INT, &st), MPI_ERR_FILE,
               "MPI_File_read_at_all_c");
  CHECK(buf[0] == 1 && buf[3] == 4, "MPI_File_read_at_all_c wrote the buffer");
  /* One-sided calls are implemented: a null window is MPI_ERR_WIN. */
  expect_class(MPI_Put_c(buf, (MPI_Count)1, MPI_INT, 0, 0, (MPI_Count)1, MPI_INT, MPI_WIN_NULL),
               MPI_ERR_WIN, "MPI_Put_c");
  expect_class(MPI_Win_lock_all(0, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Win_lock_all");

  /* MPI_Cart_map: nicq keeps ranks; those beyond the grid get MPI_UNDEFINED. */
  int dims[1] = {1}, periods[1] = {0}, newrank = -9;
  CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &newrank));
  CHECK(newrank == (rank == 0 ? 0 : MPI_UNDEFINED), "Cart_map 1 cell: rank %d got %d", rank,
        newrank);
  dims[0] = size;
  CHECK_OK(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &newrank));
  CHECK(newrank == rank, "Cart_map %d cells: rank %d got %d", size, rank, newrank);
  dims[0] = size + 1;
  newrank = -9;
  expect_class(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &newrank), MPI_ERR_DIMS,
               "MPI_Cart_map");
  dims[0] = 0;
  expect_class(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &newrank), MPI_ERR_DIMS,
               "MPI_Cart_map");
  CHECK(newrank == -9, "a refused MPI_Cart_map wrote newrank");

  CHECK_OK(MPI_Pcontrol(1));
  CHECK_OK(MPI_Pcontrol(0));

  st.MPI_SOURCE = 3;
  st.MPI_TAG = 7;
  CHECK_OK(MPI_Status_set_elements_c(&st, MPI_INT, (MPI_Count)5));
  MPI_Count elements = -1;
  int count = -1;
  CHECK_OK(MPI_Get_elements_c(&st, MPI_INT, &elements));
  CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(elements == 5 && count == 5, "set_elements_c 5: elements %lld count %d",
        (long long)elements, count);
  CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 7, "set_elements_c changed source/tag");

  /* MPI-4.1 status accessors and the Fortran status round trip. */
  int field = -1;
  CHECK_OK(MPI_Status_set_source(&st, 11));
  CHECK_OK(MPI_Status_set_tag(&st, 12));
  CHECK_OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
  CHECK_OK(MPI_Status_get_source(&st, &field));
  CHECK(field == 11 && st.MPI_SOURCE == 11, "source %d", field);
  CHECK_OK(MPI_Status_get_tag(&st, &field));
  CHECK(field == 12 && st.MPI_TAG == 12, "tag %d", field);
  CHECK_OK(MPI_Status_get_error(&st, &field));
  CHECK(field == MPI_ERR_TAG && st.MPI_ERROR == MPI_ERR_TAG, "error %d", field);
  expect_class(MPI_Status_get_tag(MPI_STATUS_IGNORE, &field), MPI_ERR_ARG, "MPI_Status_get_tag");
  MPI_Fint fst[MPI_F_STATUS_SIZE];
  MPI_Status back;
  memset(&back, 0, sizeof back);
  CHECK_OK(MPI_Status_c2f(&st, fst));
  CHECK(fst[MPI_F_SOURCE] == 11 && fst[MPI_F_TAG] == 12 && fst[MPI_F_ERROR] == MPI_ERR_TAG,
        "Fortran status %d %d %d", fst[MPI_F_SOURCE], fst[MPI_F_TAG], fst[MPI_F_ERROR]);
  CHECK_OK(MPI_Status_f2c(fst, &back));
  CHECK_OK(MPI_Get_elements_c(&back, MPI_INT, &elements));
  CHECK(
      back.MPI_SOURCE == 11 && back.MPI_TAG == 12 && back.MPI_ERROR == MPI_ERR_TAG && elements == 5,
      "status round trip: %d %d %d %lld", back.MPI_SOURCE, back.MPI_TAG, back.MPI_ERROR,
      (long long)elements);
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "comm c2f/f2c");
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE, "type c2f/f2c");
  CHECK(MPI_File_c2f(MPI_FILE_NULL) == (MPI_Fint)MPI_FILE_NULL, "file c2f");

  int in[2] = {1, 2}, inout[2] = {3, 4};
  CHECK_OK(MPI_Reduce_local_c(in, inout, (MPI_Count)2, MPI_INT, MPI_SUM));
  CHECK(inout[0] == 4 && inout[1] == 6, "reduce_local_c gave %d %d", inout[0], inout[1]);
  expect_class(MPI_Reduce_local_c(in, inout, (MPI_Count)INT_MAX + 1, MPI_INT, MPI_SUM),
               MPI_ERR_COUNT, "MPI_Reduce_local_c");
  CHECK(inout[0] == 4 && inout[1] == 6, "a refused MPI_Reduce_local_c wrote inoutbuf");

  MPI_Finalize();
  if (rank == 0) printf("mp_coverage: ok on %d ranks\n", size);
  return 0;
}
