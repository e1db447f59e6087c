// The process topology cached on a communicator (MPI 4.1 chapter 8):
// Cartesian grids (topo.cc), graphs and distributed graphs
// (topo_graph.cc, topo_dist_graph.cc), and the neighbor lists the
// neighborhood collectives (coll_neighbor.cc) read. A topology is a hidden
// attribute of its communicator, so MPI_Comm_dup copies it and
// MPI_Comm_free releases it through the ordinary attribute callbacks.
#pragma once

#include <vector>

#include "api/api_internal.h"

namespace nicq::api {

struct Topology {
  int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH
  // MPI_CART: extent and periodicity (0 or 1) per dimension.
  std::vector<int> dims, periods;
  // MPI_GRAPH: the whole graph as MPI_Graph_create took it.
  std::vector<int> index, edges;
  // MPI_DIST_GRAPH: weights of this rank's edges, in the order of
  // sources/destinations; empty when created with MPI_UNWEIGHTED.
  bool weighted = false;
  std::vector<int> source_weights, destination_weights;
  // This rank's neighbors in the order the neighborhood collectives use
  // (MPI_PROC_NULL entries at nonperiodic Cartesian borders).
  std::vector<int> sources, destinations;
};

// The topology of comm, or nullptr when it has none.
const Topology* TopologyOf(MPI_Comm comm);
// Caches `t` on comm; MPI_SUCCESS or the raised error code.
int AttachTopology(Call& c, MPI_Comm comm, Topology t);

}  // namespace nicq::api
