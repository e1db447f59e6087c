/* A count above INT_MAX moves that many items: rank 0 sends INT_MAX + 17
 * bytes with MPI_Send_c, rank 1 receives them with MPI_Recv_c and checks
 * MPI_Get_count_c and bytes spread over the whole message, the last ones
 * included. Needs about 2 x 2 GiB of memory. */
#include <limits.h>
#include <stdint.h>

#include "mp_check.h"

static unsigned char byte_at(size_t i) {
  return (unsigned char)((i >> 20) * 7u + i * 13u + 1u);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const MPI_Count n = (MPI_Count)INT_MAX + 17;
  if (rank <= 1) {
    unsigned char* buf = malloc((size_t)n);
    CHECK(buf != NULL, "cannot allocate %lld bytes", (long long)n);
    if (rank == 0) {
      for (size_t i = 0; i < (size_t)n; ++i) buf[i] = byte_at(i);
      CHECK_OK(MPI_Send_c(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
    } else {
      memset(buf, 0, (size_t)n);
      MPI_Status st;
      CHECK_OK(MPI_Recv_c(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
      MPI_Count got = -1;
      CHECK_OK(MPI_Get_count_c(&st, MPI_BYTE, &got));
      CHECK(got == n, "received %lld bytes of %lld", (long long)got, (long long)n);
      int small = 0;
      CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &small));
      CHECK(small == MPI_UNDEFINED, "MPI_Get_count gave %d for a count above INT_MAX", small);
      for (size_t i = 0; i < (size_t)n; i += 4093)
        CHECK(buf[i] == byte_at(i), "byte %zu is %u, expected %u", i, buf[i], byte_at(i));
      for (size_t i = (size_t)n - 64; i < (size_t)n; ++i)
        CHECK(buf[i] == byte_at(i), "byte %zu (of the last 64) is %u", i, buf[i]);
    }
    free(buf);
  }
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("mp_large_count: %lld bytes OK\n", (long long)n);
  MPI_Finalize();
  return 0;
}
