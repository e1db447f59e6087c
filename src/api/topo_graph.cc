// Graph topologies (MPI 4.1 8.5.3, 8.5.5): MPI_Graph_create and its
// queries. Like a Cartesian communicator, a graph communicator is a split of
// its parent keeping the first nnodes ranks in order (reorder is ignored:
// nicq does not remap ranks), with the whole graph cached as its Topology.
// A rank's neighbors, for MPI_Graph_neighbors and the neighborhood
// collectives alike, are its adjacency list in the order given, multi-edges
// and self-loops included.
#include <string>
#include <utility>

#include "api/topo_internal.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;
using api::Topology;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

bool GraphArg(Call& c, MPI_Comm comm, const Topology** out) {
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return false;
  const Topology* t = api::TopologyOf(comm);
  *out = t;
  return c.Check(t && t->kind == MPI_GRAPH, Code::kTopology,
                 "communicator " + Str(comm) + " has no graph topology");
}

// Entries [first, last) of edges that are node `rank`'s neighbors.
std::pair<int, int> EdgeRange(const Topology& t, int rank) {
  return {rank == 0 ? 0 : t.index[rank - 1], t.index[rank]};
}

bool NodeArg(Call& c, const Topology& t, int rank) {
  const int n = static_cast<int>(t.index.size());
  return c.Check(rank >= 0 && rank < n, Code::kRank,
                 "rank " + Str(rank) + " is not a node of the graph (0.." + Str(n - 1) + ")");
}

// MPI_Graph_create's graph description: index nondecreasing from 0, edges
// naming nodes. Fills t.index and t.edges.
bool GraphDescription(Call& c, int nnodes, const int index[], const int edges[], Topology* t) {
  if (!c.NotNull(nnodes ? index : &nnodes, "index")) return false;
  int prev = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (!c.Check(index[i] >= prev, Code::kArg,
                 "index[" + Str(i) + "] = " + Str(index[i]) +
                     (i ? " is less than index[" + Str(i - 1) + "]" : std::string(" is negative"))))
      return false;
    prev = index[i];
  }
  const int nedges = nnodes ? index[nnodes - 1] : 0;
  if (!c.NotNull(nedges ? edges : &nedges, "edges")) return false;
  for (int e = 0; e < nedges; ++e)
    if (!c.Check(edges[e] >= 0 && edges[e] < nnodes, Code::kRank,
                 "edges[" + Str(e) + "] = " + Str(edges[e]) + " is not a node (0.." +
                     Str(nnodes - 1) + ")"))
      return false;
  t->index.assign(index, index + nnodes);
  t->edges.assign(edges, edges + nedges);
  return true;
}

}  // namespace

extern "C" {

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm* comm_graph) {
  (void)reorder;  // nicq keeps ranks where they are
  Call c("MPI_Graph_create");
  Comm* cm;
  Topology t;
  t.kind = MPI_GRAPH;
  if (!c.Init() || !c.CommArg(comm_old, &cm) || !c.NotNull(comm_graph, "comm_graph") ||
      !c.Check(!cm->inter, Code::kComm, "comm_old must be an intracommunicator") ||
      !c.Check(nnodes >= 0, Code::kArg, "nnodes " + Str(nnodes) + " is negative") ||
      !c.Check(
          nnodes <= cm->size, Code::kArg,
          "nnodes " + Str(nnodes) + " exceeds the communicator's " + Str(cm->size) + " ranks") ||
      !GraphDescription(c, nnodes, index, edges, &t))
    return c.Fail();
  Comm* child = nullptr;
  Status st = rt::CommSplit(cm, cm->rank < nnodes ? 0 : -1, cm->rank, &child);
  if (!st.ok()) return c.Fail(st);
  MPI_Comm h;
  if (int rc = api::AdoptComm(c, cm->errhandler, child, &h); rc != MPI_SUCCESS) return rc;
  if (h != MPI_COMM_NULL) {
    const auto [first, last] = EdgeRange(t, cm->rank);
    t.sources.assign(t.edges.begin() + first, t.edges.begin() + last);
    t.destinations = t.sources;
    if (int rc = api::AttachTopology(c, h, std::move(t)); rc != MPI_SUCCESS) return rc;
  }
  *comm_graph = h;
  return MPI_SUCCESS;
}

int MPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  Call c("MPI_Graphdims_get");
  const Topology* t;
  if (!GraphArg(c, comm, &t) || !c.NotNull(nnodes, "nnodes") || !c.NotNull(nedges, "nedges"))
    return c.Fail();
  *nnodes = static_cast<int>(t->index.size());
  *nedges = static_cast<int>(t->edges.size());
  return MPI_SUCCESS;
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  Call c("MPI_Graph_get");
  const Topology* t;
  if (!GraphArg(c, comm, &t) ||
      !c.Check(maxindex >= 0 && maxedges >= 0, Code::kArg, "maxindex and maxedges must be >= 0") ||
      !c.NotNull(maxindex ? index : &maxindex, "index") ||
      !c.NotNull(maxedges ? edges : &maxedges, "edges"))
    return c.Fail();
  for (int i = 0; i < maxindex && i < static_cast<int>(t->index.size()); ++i)
    index[i] = t->index[i];
  for (int e = 0; e < maxedges && e < static_cast<int>(t->edges.size()); ++e)
    edges[e] = t->edges[e];
  return MPI_SUCCESS;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  Call c("MPI_Graph_neighbors_count");
  const Topology* t;
  if (!GraphArg(c, comm, &t) || !NodeArg(c, *t, rank) || !c.NotNull(nneighbors, "nneighbors"))
    return c.Fail();
  const auto [first, last] = EdgeRange(*t, rank);
  *nneighbors = last - first;
  return MPI_SUCCESS;
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  Call c("MPI_Graph_neighbors");
  const Topology* t;
  if (!GraphArg(c, comm, &t) || !NodeArg(c, *t, rank) ||
      !c.Check(maxneighbors >= 0, Code::kArg,
               "maxneighbors " + Str(maxneighbors) + " is negative") ||
      !c.NotNull(maxneighbors ? neighbors : &maxneighbors, "neighbors"))
    return c.Fail();
  const auto [first, last] = EdgeRange(*t, rank);
  for (int e = first; e < last && e - first < maxneighbors; ++e) neighbors[e - first] = t->edges[e];
  return MPI_SUCCESS;
}

// The rank MPI_Graph_create would give this process: its own when it is one
// of the first nnodes, MPI_UNDEFINED otherwise (as MPI_Cart_map does).
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  Call c("MPI_Graph_map");
  Comm* cm;
  Topology t;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(newrank, "newrank") ||
      !c.Check(nnodes > 0, Code::kArg, "nnodes " + Str(nnodes) + " must be > 0") ||
      !c.Check(
          nnodes <= cm->size, Code::kArg,
          "nnodes " + Str(nnodes) + " exceeds the communicator's " + Str(cm->size) + " ranks") ||
      !GraphDescription(c, nnodes, index, edges, &t))
    return c.Fail();
  *newrank = cm->rank < nnodes ? cm->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

}  // extern "C"
