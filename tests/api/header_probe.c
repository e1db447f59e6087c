/* Compiled (not run) as C99, C11 and C++11 with -pedantic -Werror: mpi.h and
 * the headers it includes must stay portable for every MPI program. */
#include <mpi.h>

static int probe_copy(MPI_Comm c, int k, void* e, void* in, void* out, int* flag) {
  (void)c, (void)k, (void)e, (void)in, (void)out;
  *flag = 0;
  return MPI_SUCCESS;
}

int main(void) {
  MPI_Win win = MPI_WIN_NULL;
  MPI_Session session = MPI_SESSION_NULL;
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Comm_copy_attr_function* copy = probe_copy;
  MPI_Comm_delete_attr_function* del = MPI_COMM_NULL_DELETE_FN;
  MPI_Win_copy_attr_function* wcopy = MPI_WIN_DUP_FN;
  int ranges[1][3] = {{0, 0, 1}};
  int keys[] = {MPI_TAG_UB,
                MPI_HOST,
                MPI_IO,
                MPI_WTIME_IS_GLOBAL,
                MPI_APPNUM,
                MPI_UNIVERSE_SIZE,
                MPI_COMBINER_STRUCT,
                MPI_CART,
                MPI_ERR_UNSUPPORTED_OPERATION,
                MPI_MAX_OBJECT_NAME,
                MPI_MAX_PSET_NAME_LEN};
  (void)win, (void)session, (void)message, (void)copy, (void)del, (void)wcopy, (void)ranges;
  (void)keys;
  return 0;
}
