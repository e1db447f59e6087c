/* Persistent requests restarted many times: each rank exchanges with both
 * ring neighbours through MPI_Send_init / MPI_Recv_init (contiguous and a
 * strided vector type), MPI_Startall, MPI_Waitall; the data changes every
 * iteration and is checked every iteration. Then every persistent send mode
 * (Bsend_init, Ssend_init, Rsend_init) for a few rounds, and
 * MPI_Request_free of inactive requests. */
#include "mp_check.h"

#define N 1000 /* ints per message */

static int value(int from, int iter, int i) {
  return from * 1000003 + iter * 7919 + i;
}

int main(int argc, char** argv) {
  int rank, size;
  mp_init(&argc, &argv, &rank, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  /* sockets is the slow functional path (its own progress thread on 2
   * shared cores): fewer restarts there keep the test group short. */
  const char* prov = getenv("NICQ_PROVIDER");
  const int slow = prov && strcmp(prov, "sockets") == 0;
  const int ITERS = slow ? 40 : 300, MODE_ITERS = slow ? 5 : 20;

  /* A vector type: N ints spread with stride 2 in the receive buffer. */
  MPI_Datatype strided;
  CHECK_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &strided));
  CHECK_OK(MPI_Type_commit(&strided));
  int* sendbuf = malloc(sizeof(int) * N);
  int* recv_contig = malloc(sizeof(int) * N);
  int* recv_strided = malloc(sizeof(int) * 2 * N);
  MPI_Request reqs[4];
  CHECK_OK(MPI_Recv_init(recv_contig, N, MPI_INT, left, 1, MPI_COMM_WORLD, &reqs[0]));
  CHECK_OK(MPI_Recv_init(recv_strided, 1, strided, right, 2, MPI_COMM_WORLD, &reqs[1]));
  CHECK_OK(MPI_Send_init(sendbuf, N, MPI_INT, right, 1, MPI_COMM_WORLD, &reqs[2]));
  CHECK_OK(MPI_Send_init(sendbuf, N, MPI_INT, left, 2, MPI_COMM_WORLD, &reqs[3]));
  CHECK_OK(MPI_Type_free(&strided)); /* the requests keep it */

  for (int iter = 0; iter < ITERS; ++iter) {
    for (int i = 0; i < N; ++i) sendbuf[i] = value(rank, iter, i);
    for (int i = 0; i < 2 * N; ++i) recv_strided[i] = -1;
    CHECK_OK(MPI_Startall(4, reqs));
    MPI_Status st[4];
    CHECK_OK(MPI_Waitall(4, reqs, st));
    for (int k = 0; k < 4; ++k) CHECK(reqs[k] != MPI_REQUEST_NULL, "persistent handle %d lost", k);
    CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 1, "status %d/%d", st[0].MPI_SOURCE,
          st[0].MPI_TAG);
    for (int i = 0; i < N; ++i) {
      CHECK(recv_contig[i] == value(left, iter, i), "iter %d: contiguous [%d] = %d", iter, i,
            recv_contig[i]);
      CHECK(recv_strided[2 * i] == value(right, iter, i), "iter %d: strided [%d] = %d", iter, i,
            recv_strided[2 * i]);
      CHECK(recv_strided[2 * i + 1] == -1, "iter %d: gap %d written", iter, i);
    }
  }
  for (int k = 0; k < 4; ++k) {
    CHECK_OK(MPI_Request_free(&reqs[k]));
    CHECK(reqs[k] == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
  }

  /* The other persistent send modes, to the right neighbour. */
  int bsize = 4 * (int)sizeof(int) * N + MPI_BSEND_OVERHEAD;
  void* battach = malloc((size_t)bsize);
  CHECK_OK(MPI_Buffer_attach(battach, bsize));
  MPI_Request s[3], r[3];
  CHECK_OK(MPI_Bsend_init(sendbuf, N, MPI_INT, right, 10, MPI_COMM_WORLD, &s[0]));
  CHECK_OK(MPI_Ssend_init(sendbuf, N, MPI_INT, right, 11, MPI_COMM_WORLD, &s[1]));
  CHECK_OK(MPI_Rsend_init(sendbuf, N, MPI_INT, right, 12, MPI_COMM_WORLD, &s[2]));
  int* rb = malloc(sizeof(int) * 3 * N);
  for (int m = 0; m < 3; ++m)
    CHECK_OK(MPI_Recv_init(rb + m * N, N, MPI_INT, left, 10 + m, MPI_COMM_WORLD, &r[m]));
  for (int iter = 0; iter < MODE_ITERS; ++iter) {
    for (int i = 0; i < N; ++i) sendbuf[i] = value(rank, iter + 5000, i);
    CHECK_OK(MPI_Startall(3, r));
    mp_barrier(MPI_COMM_WORLD); /* every receive is posted: ready mode is legal */
    CHECK_OK(MPI_Startall(3, s));
    CHECK_OK(MPI_Waitall(3, s, MPI_STATUSES_IGNORE));
    CHECK_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    for (int m = 0; m < 3; ++m)
      for (int i = 0; i < N; ++i)
        CHECK(rb[m * N + i] == value(left, iter + 5000, i), "mode %d iter %d [%d] = %d", m, iter, i,
              rb[m * N + i]);
    mp_barrier(MPI_COMM_WORLD); /* nobody rewrites sendbuf while a peer still reads */
  }
  for (int m = 0; m < 3; ++m) {
    CHECK_OK(MPI_Request_free(&s[m]));
    CHECK_OK(MPI_Request_free(&r[m]));
  }
  void* back;
  int back_size;
  CHECK_OK(MPI_Buffer_detach(&back, &back_size));
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("persistent OK (%d ranks)\n", size);
  free(battach);
  free(rb);
  free(sendbuf);
  free(recv_contig);
  free(recv_strided);
  MPI_Finalize();
  return 0;
}
