/* Erroneous one-sided use under MPI_ERRORS_RETURN on the window: each call
 * returns the MPI error class the standard names, with a message naming
 * the call, and changes nothing (the window keeps working afterwards).
 * Also: a window's user error handler receives the window and the code. */
#include "mp_check.h"

static int rank, size;

static int handler_calls;
static MPI_Win handler_win;
static void on_error(MPI_Win* win, int* code, ...) {
  int cls = -1;
  MPI_Error_class(*code, &cls);
  CHECK(*win == handler_win, "handler got window %d", *win);
  CHECK(cls == MPI_ERR_RMA_SYNC || cls == MPI_ERR_OTHER, "handler got class %d", cls);
  ++handler_calls;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int mem[8] = {0, 0, 0, 0, 0, 0, 0, 0}, v = 5, got = 0;
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
  CHECK_OK(MPI_Win_get_errhandler(win, &eh));
  CHECK(eh == MPI_ERRORS_ARE_FATAL, "a window's default handler is %d", eh);
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  const int peer = (rank + 1) % size;

  /* No epoch. */
  mp_expect_class(MPI_Put(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Put");
  mp_expect_class(MPI_Get(&got, 1, MPI_INT, peer, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "MPI_Get");
  mp_expect_class(MPI_Accumulate(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, MPI_SUM, win),
                  MPI_ERR_RMA_SYNC, "MPI_Accumulate");
  mp_expect_class(MPI_Win_unlock(peer, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock");
  mp_expect_class(MPI_Win_unlock_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all");
  mp_expect_class(MPI_Win_flush(peer, win), MPI_ERR_RMA_SYNC, "MPI_Win_flush");
  mp_expect_class(MPI_Win_flush_all(win), MPI_ERR_RMA_SYNC, "MPI_Win_flush_all");
  mp_expect_class(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "MPI_Win_complete");
  mp_expect_class(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "MPI_Win_wait");

  /* Arguments. */
  mp_expect_class(MPI_Win_lock(7, peer, 0, win), MPI_ERR_LOCKTYPE, "MPI_Win_lock");
  mp_expect_class(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win), MPI_ERR_RANK, "MPI_Win_lock");
  mp_expect_class(MPI_Win_fence(1, win), MPI_ERR_ASSERT, "MPI_Win_fence");
  int* shared = NULL;
  MPI_Aint ssize = 0;
  int sunit = 0;
  mp_expect_class(MPI_Win_shared_query(win, 0, &ssize, &sunit, &shared), MPI_ERR_RMA_FLAVOR,
                  "MPI_Win_shared_query");
  mp_expect_class(MPI_Win_attach(win, mem, sizeof mem), MPI_ERR_RMA_FLAVOR, "MPI_Win_attach");
  mp_expect_class(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Put");

  /* Inside an epoch. */
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
  mp_expect_class(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock");
  mp_expect_class(MPI_Put(&v, 1, MPI_INT, size + 3, 0, 1, MPI_INT, win), MPI_ERR_RANK, "MPI_Put");
  mp_expect_class(MPI_Put(&v, 1, MPI_INT, peer, 8, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "MPI_Put");
  mp_expect_class(MPI_Get(&got, 2, MPI_INT, peer, 7, 2, MPI_INT, win), MPI_ERR_RMA_RANGE,
                  "MPI_Get");
  mp_expect_class(MPI_Put(&v, 1, MPI_INT, peer, -1, 1, MPI_INT, win), MPI_ERR_DISP, "MPI_Put");
  MPI_Op user_op;
  CHECK_OK(MPI_Op_create((MPI_User_function*)on_error, 1, &user_op));
  mp_expect_class(MPI_Accumulate(&v, 1, MPI_INT, peer, 0, 1, MPI_INT, user_op, win), MPI_ERR_OP,
                  "MPI_Accumulate");
  MPI_Op_free(&user_op);
  mp_expect_class(MPI_Win_free(&win), MPI_ERR_RMA_SYNC, "MPI_Win_free");
  /* The refused calls left the epoch usable. */
  CHECK_OK(MPI_Put(&v, 1, MPI_INT, peer, 7, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(peer, win));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(mem[7] == 5, "the put after the refused calls: %d", mem[7]);

  /* PSCW misuse. */
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  CHECK_OK(MPI_Win_post(world, 0, win));
  mp_expect_class(MPI_Win_post(world, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_post");
  CHECK_OK(MPI_Win_start(world, 0, win));
  mp_expect_class(MPI_Win_start(world, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_start");
  CHECK_OK(MPI_Win_complete(win));
  CHECK_OK(MPI_Win_wait(win));
  MPI_Group_free(&world);

  /* A user handler gets the window's errors. */
  MPI_Errhandler mine;
  CHECK_OK(MPI_Win_create_errhandler(on_error, &mine));
  CHECK_OK(MPI_Win_set_errhandler(win, mine));
  handler_win = win;
  int rc = MPI_Win_unlock(peer, win);
  CHECK(rc != MPI_SUCCESS && handler_calls == 1, "user handler calls: %d", handler_calls);
  CHECK_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
  CHECK(handler_calls == 2, "MPI_Win_call_errhandler: %d calls", handler_calls);
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  MPI_Errhandler_free(&mine);
  CHECK_OK(MPI_Win_free(&win));

  /* A dynamic window reports an unattached address at the target, back at
   * the origin's next synchronization. */
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_Win_attach(win, mem, sizeof mem));
  MPI_Aint where = 0;
  CHECK_OK(MPI_Get_address(mem, &where));
  MPI_Aint peer_where = 0;
  CHECK_OK(MPI_Sendrecv(&where, 1, MPI_AINT, (rank + size - 1) % size, 0, &peer_where, 1, MPI_AINT,
                        peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win));
  CHECK_OK(
      MPI_Put(&v, 1, MPI_INT, peer, MPI_Aint_add(peer_where, 64 * sizeof(int)), 1, MPI_INT, win));
  mp_expect_class(MPI_Win_flush(peer, win), MPI_ERR_RMA_RANGE, "MPI_Win_flush");
  CHECK_OK(
      MPI_Put(&v, 1, MPI_INT, peer, MPI_Aint_add(peer_where, 2 * sizeof(int)), 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(peer, win));
  mp_expect_class(MPI_Win_detach(win, mem + 1), MPI_ERR_RMA_ATTACH, "MPI_Win_detach");
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(mem[2] == 5, "dynamic put after the error: %d", mem[2]);
  CHECK_OK(MPI_Win_detach(win, mem));
  CHECK_OK(MPI_Win_free(&win));

  if (rank == 0) printf("rma_errors: %d ranks OK\n", size);
  MPI_Finalize();
  return 0;
}
