// The node a process runs on, as every locality decision sees it: the
// shared-memory transport's peers, same-node collectives, the one-node RMA
// path and shared windows, MPI_Get_processor_name and
// MPI_COMM_TYPE_SHARED.
//
// It is the host name, or, with NICQ_NODE_RANKS=k, a virtual node of k
// consecutive world ranks on this host ("host:vnode1"). Virtual nodes let
// one machine run a job that spans nodes, as tests and CI need: ranks on
// different virtual nodes reach each other through libfabric only, exactly
// as ranks on different hosts would.
#pragma once

#include <string>

namespace nicq {

std::string NodeName(int world_rank);

}  // namespace nicq
