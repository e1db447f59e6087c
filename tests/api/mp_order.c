/* The MPI text's Example 3.13 (non-overtaking: the first send matches the
 * first receive even with MPI_ANY_TAG) and Example 3.14 (progress: a
 * synchronous send completes once the matching nonblocking receive is
 * posted, before the receiver waits; must not deadlock), between ranks 0 and
 * 1, repeated with small (eager) and large (rendezvous) messages. Other
 * ranks run the same pattern in pairs (2,3), ... when they have a partner. */
#include "mp_check.h"

static void example_3_13(int me, int partner, int n, int iter) {
  float* a = malloc(sizeof(float) * (size_t)n);
  float* b = malloc(sizeof(float) * (size_t)n);
  MPI_Request r1, r2;
  MPI_Status st;
  if (me == 0) {
    for (int i = 0; i < n; ++i) {
      a[i] = (float)(iter * 1000 + i);
      b[i] = (float)(-iter * 1000 - i - 1);
    }
    CHECK_OK(MPI_Isend(a, n, MPI_FLOAT, partner, 0, MPI_COMM_WORLD, &r1));
    CHECK_OK(MPI_Isend(b, n, MPI_FLOAT, partner, 0, MPI_COMM_WORLD, &r2));
  } else {
    CHECK_OK(MPI_Irecv(a, n, MPI_FLOAT, partner, MPI_ANY_TAG, MPI_COMM_WORLD, &r1));
    CHECK_OK(MPI_Irecv(b, n, MPI_FLOAT, partner, 0, MPI_COMM_WORLD, &r2));
  }
  CHECK_OK(MPI_Wait(&r1, &st));
  CHECK_OK(MPI_Wait(&r2, &st));
  if (me == 1) {
    for (int i = 0; i < n; ++i) {
      CHECK(a[i] == (float)(iter * 1000 + i), "3.13: first receive got %f at %d", a[i], i);
      CHECK(b[i] == (float)(-iter * 1000 - i - 1), "3.13: second receive got %f at %d", b[i], i);
    }
  }
  free(a);
  free(b);
}

static void example_3_14(int me, int partner, int n, int iter) {
  float* a = malloc(sizeof(float) * (size_t)n);
  float* b = malloc(sizeof(float) * (size_t)n);
  if (me == 0) {
    for (int i = 0; i < n; ++i) {
      a[i] = (float)(iter + i);
      b[i] = (float)(iter - i);
    }
    CHECK_OK(MPI_Ssend(a, n, MPI_FLOAT, partner, 0, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(b, n, MPI_FLOAT, partner, 1, MPI_COMM_WORLD));
  } else {
    MPI_Request r;
    MPI_Status st;
    CHECK_OK(MPI_Irecv(a, n, MPI_FLOAT, partner, 0, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Recv(b, n, MPI_FLOAT, partner, 1, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_TAG == 1 && st.MPI_SOURCE == partner, "3.14: status %d/%d", st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_TAG == 0, "3.14: wait status tag %d", st.MPI_TAG);
    for (int i = 0; i < n; ++i) {
      CHECK(a[i] == (float)(iter + i), "3.14: a[%d] = %f", i, a[i]);
      CHECK(b[i] == (float)(iter - i), "3.14: b[%d] = %f", i, b[i]);
    }
  }
  free(a);
  free(b);
}

int main(int argc, char** argv) {
  int rank, size;
  mp_init(&argc, &argv, &rank, &size);
  int pair_base = rank - rank % 2;
  int partner = rank % 2 ? pair_base : pair_base + 1;
  int me = rank % 2;
  if (partner < size) {
    /* 1 float (eager) and 64 Ki floats (256 KiB: rendezvous). */
    const int sizes[] = {1, 1 << 16};
    for (int s = 0; s < 2; ++s)
      for (int iter = 0; iter < (s ? 5 : 50); ++iter) {
        example_3_13(me, partner, sizes[s], iter);
        example_3_14(me, partner, sizes[s], iter);
      }
  }
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("order OK (%d ranks)\n", size);
  MPI_Finalize();
  return 0;
}
