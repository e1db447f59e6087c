// MPI_Cart_map (the placement a Cartesian grid would get: nicq does not
// reorder, so a process keeps its rank when the grid covers it),
// MPI_Pcontrol (profiling control, which nicq accepts and ignores as the
// standard allows) and MPI_Status_set_elements_c.
#include <string>

#include "api/api_internal.h"

using namespace nicq;
using nicq::api::Call;

extern "C" {

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  Call c("MPI_Cart_map");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(newrank, "newrank") ||
      !c.Check(!cm->inter, Code::kComm, "comm must be an intracommunicator") ||
      !c.Check(ndims >= 0, Code::kDims, "negative ndims " + std::to_string(ndims)) ||
      !c.NotNull(ndims ? dims : &ndims, "dims") || !c.NotNull(ndims ? periods : &ndims, "periods"))
    return c.Fail();
  long long cells = 1;
  for (int i = 0; i < ndims; ++i) {
    if (!c.Check(dims[i] > 0, Code::kDims,
                 "dims[" + std::to_string(i) + "] = " + std::to_string(dims[i]) + " <= 0"))
      return c.Fail();
    cells *= dims[i];
    if (!c.Check(cells <= cm->size, Code::kDims,
                 "the grid has more cells than the communicator's " + std::to_string(cm->size) +
                     " processes"))
      return c.Fail();
  }
  *newrank = cm->rank < cells ? cm->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int MPI_Pcontrol(const int level, ...) {
  (void)level;
  return MPI_SUCCESS;
}

int MPI_Status_set_elements_c(MPI_Status* status, MPI_Datatype datatype, MPI_Count count) {
  return PMPI_Status_set_elements_x(status, datatype, count);
}

}  // extern "C"
