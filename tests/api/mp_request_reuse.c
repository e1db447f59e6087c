/* A request slot freed by one kind of request and reused by another keeps
 * nothing of the first: the request table hands back the slot just freed
 * (a LIFO free list), so each step below reuses the previous one's slot.
 *  1. MPI_Ibarrier, waited; then MPI_Irecv from MPI_PROC_NULL in the same
 *     slot: MPI_Request_free must free it (a stale "nonblocking collective"
 *     kind refused it);
 *  2. a persistent MPI_Allreduce_init, freed; then MPI_Send_init and
 *     MPI_Recv_init in the reused slots: they must run as point-to-point
 *     (MPI_Start/MPI_Wait with data), not as the collective they replace;
 *  3. the same persistent requests match (MPI_Matchall) and run through a
 *     queue, data checked. */
#include "mp_check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  /* 1 */
  MPI_Request r;
  CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
  const MPI_Request barrier_handle = r;
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  int x = 0;
  CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
  CHECK(r == barrier_handle, "the table did not reuse the slot (handle %d, was %d)", (int)r,
        (int)barrier_handle);
  CHECK_OK(MPI_Request_free(&r));
  CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");

  /* 2 */
  double in = rank + 1, out = 0;
  CHECK_OK(
      MPI_Allreduce_init(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
  CHECK_OK(MPI_Request_free(&r));
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  double sbuf[4], rbuf[4];
  MPI_Request p[2];
  CHECK_OK(MPI_Send_init(sbuf, 4, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &p[0]));
  CHECK_OK(MPI_Recv_init(rbuf, 4, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &p[1]));
  for (int it = 0; it < 3; ++it) {
    for (int i = 0; i < 4; ++i) {
      sbuf[i] = rank * 100 + it * 10 + i;
      rbuf[i] = -1;
    }
    CHECK_OK(MPI_Startall(2, p));
    CHECK_OK(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; ++i)
      CHECK(rbuf[i] == left * 100 + it * 10 + i, "iteration %d rbuf[%d] = %g", it, i, rbuf[i]);
  }

  /* 3 */
  CHECK_OK(MPI_Matchall(2, p));
  MPI_Queue q;
  CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  for (int i = 0; i < 4; ++i) {
    sbuf[i] = rank * 1000 + i;
    rbuf[i] = -1;
  }
  CHECK_OK(MPI_Enqueue_startall(&q, 2, p));
  CHECK_OK(MPI_Enqueue_waitall(&q, 2, p, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Queue_fence(&q));
  for (int i = 0; i < 4; ++i) CHECK(rbuf[i] == left * 1000 + i, "queued rbuf[%d] = %g", i, rbuf[i]);
  CHECK_OK(MPI_Queue_free(&q));
  CHECK_OK(MPI_Request_free(&p[0]));
  CHECK_OK(MPI_Request_free(&p[1]));
  MPI_Finalize();
  return 0;
}
