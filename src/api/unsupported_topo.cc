// Large-count neighborhood collectives, graph topologies, large-count user
// operations and the Fortran 90 parameterized types: declared so that
// programs written for a full MPI compile and link, not implemented. Each
// returns MPI_ERR_UNSUPPORTED_OPERATION with a message naming the call.
// docs/mpi-api.md lists them.
#include <string>

#include "api/api_internal.h"

using namespace nicq;

namespace {

int Unsupported(const char* call, MPI_Comm comm, const char* feature) {
  api::Call c(call);
  if (comm != MPI_COMM_NULL && api::LookupComm(comm)) c.set_comm_handle(comm);
  return c.Fail(Code::kUnsupportedOperation,
                std::string("not supported: nicq does not implement ") + feature);
}

}  // namespace

extern "C" {

int MPI_Neighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return Unsupported("MPI_Neighbor_allgather_c", comm, "neighborhood collectives");
}

int MPI_Ineighbor_allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  return Unsupported("MPI_Ineighbor_allgather_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_allgather_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return Unsupported("MPI_Neighbor_allgather_init_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                              MPI_Datatype recvtype, MPI_Comm comm) {
  return Unsupported("MPI_Neighbor_allgatherv_c", comm, "neighborhood collectives");
}

int MPI_Ineighbor_allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return Unsupported("MPI_Ineighbor_allgatherv_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_allgatherv_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  return Unsupported("MPI_Neighbor_allgatherv_init_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm) {
  return Unsupported("MPI_Neighbor_alltoall_c", comm, "neighborhood collectives");
}

int MPI_Ineighbor_alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request* request) {
  return Unsupported("MPI_Ineighbor_alltoall_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_alltoall_init_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return Unsupported("MPI_Neighbor_alltoall_init_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return Unsupported("MPI_Neighbor_alltoallv_c", comm, "neighborhood collectives");
}

int MPI_Ineighbor_alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return Unsupported("MPI_Ineighbor_alltoallv_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_alltoallv_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  return Unsupported("MPI_Neighbor_alltoallv_init_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                             void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return Unsupported("MPI_Neighbor_alltoallw_c", comm, "neighborhood collectives");
}

int MPI_Ineighbor_alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                              void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  return Unsupported("MPI_Ineighbor_alltoallw_c", comm, "neighborhood collectives");
}

int MPI_Neighbor_alltoallw_init_c(const void* sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                  void* recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return Unsupported("MPI_Neighbor_alltoallw_init_c", comm, "neighborhood collectives");
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[],
                     int reorder, MPI_Comm* comm_graph) {
  return Unsupported("MPI_Graph_create", comm_old, "graph topologies");
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int indx[], int edges[]) {
  return Unsupported("MPI_Graph_get", comm, "graph topologies");
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int indx[], const int edges[], int* newrank) {
  return Unsupported("MPI_Graph_map", comm, "graph topologies");
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  return Unsupported("MPI_Graph_neighbors", comm, "neighborhood collectives");
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  return Unsupported("MPI_Graph_neighbors_count", comm, "neighborhood collectives");
}

int MPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  return Unsupported("MPI_Graphdims_get", comm, "graph topologies");
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  return Unsupported("MPI_Type_create_f90_real", MPI_COMM_NULL,
                     "Fortran 90 parameterized datatypes");
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  return Unsupported("MPI_Type_create_f90_complex", MPI_COMM_NULL,
                     "Fortran 90 parameterized datatypes");
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  return Unsupported("MPI_Type_create_f90_integer", MPI_COMM_NULL,
                     "Fortran 90 parameterized datatypes");
}

}  // extern "C"
