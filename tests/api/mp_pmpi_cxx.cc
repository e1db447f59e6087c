// mpi.h from C++: the PMPI_ prototypes (include/nicq/mpi_pmpi.h) must
// compile and link there too, as a C++ profiling tool's would.
#include <mpi.h>

extern "C" int pmpi_cxx_rank(MPI_Comm comm) {
  int rank = -1;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return -2;
  return rank;
}
