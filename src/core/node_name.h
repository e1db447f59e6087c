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

#include <cstdint>
#include <string>

namespace nicq {

std::string NodeName(int world_rank);

// Which processes this one can see by pid: the kernel (its boot id) and the
// pid namespace, hashed; equal for two processes exactly when a pid of one
// names the same process for the other, whatever NodeName says (virtual
// nodes share a kernel; containers on one node may not share a pid
// namespace). 0 when it cannot be told.
std::uint64_t PidSpaceId();

}  // namespace nicq
