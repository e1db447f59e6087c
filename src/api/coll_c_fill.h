// Argument checks of each collective (src/api/coll_fill.cc), shared by its
// three forms (src/api/coll_entry.cc). Each returns false with the error
// recorded in the Call.
#pragma once

#include "api/coll_c_api.h"

namespace nicq::coll::capi {

bool FillBarrier(api::Call& c, Args* a);
bool FillBcast(api::Call& c, Args* a, void* buffer, int count, MPI_Datatype datatype, int root);
bool FillReduce(api::Call& c, Args* a, const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root);
// allreduce, scan, exscan (exscan: no in place? MPI allows it).
bool FillAllreduce(api::Call& c, Args* a, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op);
bool FillGather(api::Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
bool FillGatherv(api::Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                 int root);
bool FillScatter(api::Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root);
bool FillScatterv(api::Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                  const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, int root);
// allgather, alltoall.
bool FillAllgather(api::Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype);
bool FillAllgatherv(api::Call& c, Args* a, const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype);
bool FillAlltoallv(api::Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype);
bool FillAlltoallw(api::Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                   const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[]);
bool FillReduceScatterBlock(api::Call& c, Args* a, const void* sendbuf, void* recvbuf,
                            int recvcount, MPI_Datatype datatype, MPI_Op op);
bool FillReduceScatter(api::Call& c, Args* a, const void* sendbuf, void* recvbuf,
                       const int recvcounts[], MPI_Datatype datatype, MPI_Op op);

// Neighborhood collectives (src/api/coll_neighbor.cc): the communicator's
// topology gives the neighbor lists (MPI_ERR_TOPOLOGY without one); send
// arrays have an entry per destination, receive arrays per source.
// NeighborDegrees reads the degrees alone (the large-count forms size
// their array conversions with them).
bool NeighborDegrees(api::Call& c, int* indegree, int* outdegree);
bool FillNeighborAllgather(api::Call& c, Args* a, const void* sendbuf, int sendcount,
                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype);  // and neighbor alltoall
bool FillNeighborAllgatherv(api::Call& c, Args* a, const void* sendbuf, int sendcount,
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int displs[], MPI_Datatype recvtype);
bool FillNeighborAlltoallv(api::Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                           const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int rdispls[], MPI_Datatype recvtype);
bool FillNeighborAlltoallw(api::Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                           const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                           const int recvcounts[], const MPI_Aint rdispls[],
                           const MPI_Datatype recvtypes[]);

// The rooted collectives on an intercommunicator (coll_fill_inter.cc):
// root is MPI_ROOT, MPI_PROC_NULL, or a rank of the remote group, and
// each checks only what its role reads.
bool FillBcastInter(api::Call& c, Args* a, void* buffer, int count, MPI_Datatype datatype,
                    int root);
bool FillReduceInter(api::Call& c, Args* a, const void* sendbuf, void* recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, int root);
bool FillGatherInter(api::Call& c, Args* a, const void* sendbuf, int sendcount,
                     MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                     int root);
bool FillGathervInter(api::Call& c, Args* a, const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                      const int displs[], MPI_Datatype recvtype, int root);
bool FillScatterInter(api::Call& c, Args* a, const void* sendbuf, int sendcount,
                      MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                      int root);
bool FillScattervInter(api::Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root);

}  // namespace nicq::coll::capi
