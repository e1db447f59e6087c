// Distributed graph topologies (MPI 4.1 8.5.4): MPI_Dist_graph_create(_adjacent)
// and MPI_Dist_graph_neighbors(_count). The new communicator has the ranks
// of comm_old in order (reorder is ignored: nicq does not remap ranks; the
// info argument is accepted and not read), with this rank's in- and
// out-edges cached as its Topology.
//
// Both creators exchange the edges before the communicator exists, so that
// every rank reaches the same verdict: MPI_Dist_graph_create must anyway
// tell each edge's ends about it, and MPI_Dist_graph_create_adjacent checks
// that every out-edge is some rank's in-edge (a graph whose two sides
// disagree would hang the first neighborhood collective instead).
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "api/topo_internal.h"
#include "runtime/runtime.h"

// mpi.h's MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY: only their addresses matter.
extern "C" {
int nicq_mpi_unweighted[1] = {0};
int nicq_mpi_weights_empty[1] = {0};
}

using namespace nicq;
using api::Call;
using api::Topology;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

bool IsUnweighted(const int* w) {
  return w == MPI_UNWEIGHTED;
}

// `n` ranks of comm (size p) at `ranks`, named `what` in messages.
bool RankList(Call& c, const int* ranks, int n, int p, const char* what) {
  if (!c.NotNull(n ? ranks : &n, what)) return false;
  for (int i = 0; i < n; ++i)
    if (!c.Check(ranks[i] >= 0 && ranks[i] < p, Code::kRank,
                 std::string(what) + "[" + Str(i) + "] = " + Str(ranks[i]) +
                     " is not a rank of comm_old (size " + Str(p) + ")"))
      return false;
  return true;
}

// `n` weights: MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY (only when n is 0), or an
// array of non-negative values.
bool WeightList(Call& c, const int* w, int n, const char* what) {
  if (IsUnweighted(w) || n == 0) return true;
  if (!c.Check(w != MPI_WEIGHTS_EMPTY, Code::kArg,
               std::string(what) + " is MPI_WEIGHTS_EMPTY but there are " + Str(n) + " edges") ||
      !c.NotNull(w, what))
    return false;
  for (int i = 0; i < n; ++i)
    if (!c.Check(w[i] >= 0, Code::kArg,
                 std::string(what) + "[" + Str(i) + "] = " + Str(w[i]) + " is negative"))
      return false;
  return true;
}

// Every rank learns whether any rank failed (`bad`) and whether the ranks
// disagree on MPI_UNWEIGHTED; returns false with the error recorded on c.
bool Agree(Call& c, MPI_Comm comm, bool bad, bool weighted, const std::string& why) {
  int mine[3] = {bad ? 1 : 0, weighted ? 1 : 0, weighted ? 0 : 1}, all[3] = {0, 0, 0};
  if (PMPI_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return c.Check(false, Code::kIntern, "the exchange that checks the graph failed");
  if (bad) return c.Check(false, Code::kTopology, why);
  if (all[0]) return c.Check(false, Code::kTopology, "another rank found the graph inconsistent");
  return c.Check(!(all[1] && all[2]), Code::kArg,
                 "some ranks passed MPI_UNWEIGHTED and others weights: all or none must");
}

// The dist-graph communicator: ranks in comm_old's order, t cached on it.
int Create(Call& c, Comm* cm, Topology t, MPI_Comm* out) {
  Comm* child = nullptr;
  Status st = rt::CommSplit(cm, 0, cm->rank, &child);
  if (!st.ok()) return c.Fail(st);
  MPI_Comm h;
  if (int rc = api::AdoptComm(c, cm->errhandler, child, &h); rc != MPI_SUCCESS) return rc;
  if (int rc = api::AttachTopology(c, h, std::move(t)); rc != MPI_SUCCESS) return rc;
  *out = h;
  return MPI_SUCCESS;
}

bool Begin(Call& c, MPI_Comm comm_old, MPI_Comm* out, Comm** cm) {
  return c.Init() && c.CommArg(comm_old, cm) && c.NotNull(out, "comm_dist_graph") &&
         c.Check(!(*cm)->inter, Code::kComm, "comm_old must be an intracommunicator");
}

}  // namespace

extern "C" {

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  (void)info;
  (void)reorder;
  Call c("MPI_Dist_graph_create_adjacent");
  Comm* cm;
  if (!Begin(c, comm_old, comm_dist_graph, &cm) ||
      !c.Check(indegree >= 0, Code::kArg, "indegree " + Str(indegree) + " is negative") ||
      !c.Check(outdegree >= 0, Code::kArg, "outdegree " + Str(outdegree) + " is negative") ||
      !RankList(c, sources, indegree, cm->size, "sources") ||
      !RankList(c, destinations, outdegree, cm->size, "destinations") ||
      !WeightList(c, sourceweights, indegree, "sourceweights") ||
      !WeightList(c, destweights, outdegree, "destweights") ||
      !c.Check(IsUnweighted(sourceweights) == IsUnweighted(destweights), Code::kArg,
               "MPI_UNWEIGHTED must be given for both sourceweights and destweights or neither"))
    return c.Fail();
  const int p = cm->size;
  // Edges from this rank to each rank, against each rank's count of edges
  // from this one.
  std::vector<int> out_to(p, 0), in_from(p, 0), their_in(p, 0);
  for (int i = 0; i < outdegree; ++i) ++out_to[destinations[i]];
  for (int i = 0; i < indegree; ++i) ++in_from[sources[i]];
  if (int rc = PMPI_Alltoall(in_from.data(), 1, MPI_INT, their_in.data(), 1, MPI_INT, comm_old);
      rc != MPI_SUCCESS)
    return rc;
  std::string why;
  for (int r = 0; r < p && why.empty(); ++r)
    if (out_to[r] != their_in[r])
      why = "this rank lists rank " + Str(r) + " as a destination " + Str(out_to[r]) +
            " time(s), but rank " + Str(r) + " lists this rank as a source " + Str(their_in[r]) +
            " time(s)";
  const bool weighted = !IsUnweighted(sourceweights);
  if (!Agree(c, comm_old, !why.empty(), weighted, why)) return c.Fail();
  Topology t;
  t.kind = MPI_DIST_GRAPH;
  t.weighted = weighted;
  t.sources.assign(sources, sources + indegree);
  t.destinations.assign(destinations, destinations + outdegree);
  if (weighted && indegree) t.source_weights.assign(sourceweights, sourceweights + indegree);
  if (weighted && outdegree) t.destination_weights.assign(destweights, destweights + outdegree);
  return Create(c, cm, std::move(t), comm_dist_graph);
}

// Each rank names edges sources[i] -> destinations[...] anywhere in the
// graph; every edge is sent to both its ends, tagged with who named it and
// where, and each end lists its edges in that (origin rank, position)
// order, so the k-th edge a -> b is the k-th at both a and b.
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* comm_dist_graph) {
  (void)info;
  (void)reorder;
  Call c("MPI_Dist_graph_create");
  Comm* cm;
  if (!Begin(c, comm_old, comm_dist_graph, &cm) ||
      !c.Check(n >= 0, Code::kArg, "n " + Str(n) + " is negative") ||
      !RankList(c, sources, n, cm->size, "sources") || !c.NotNull(n ? degrees : &n, "degrees"))
    return c.Fail();
  long long edges = 0;
  for (int i = 0; i < n; ++i) {
    if (!c.Check(degrees[i] >= 0, Code::kArg,
                 "degrees[" + Str(i) + "] = " + Str(degrees[i]) + " is negative"))
      return c.Fail();
    edges += degrees[i];
  }
  if (!c.Check(edges <= 0x7fffffff, Code::kArg, "more than INT_MAX edges") ||
      !RankList(c, destinations, static_cast<int>(edges), cm->size, "destinations") ||
      !WeightList(c, weights, static_cast<int>(edges), "weights"))
    return c.Fail();
  const bool weighted = !IsUnweighted(weights);
  const int p = cm->size;
  // Records of 5 ints: {1 = out-edge / 0 = in-edge, peer, weight, origin, position}.
  constexpr int kRec = 5;
  std::vector<std::vector<int>> to(p);
  for (int i = 0, e = 0; i < n; ++i) {
    for (int k = 0; k < degrees[i]; ++k, ++e) {
      const int s = sources[i], d = destinations[e], w = weighted && edges ? weights[e] : 1;
      to[s].insert(to[s].end(), {1, d, w, cm->rank, e});
      to[d].insert(to[d].end(), {0, s, w, cm->rank, e});
    }
  }
  std::vector<int> scounts(p), sdispls(p), rcounts(p), rdispls(p);
  std::vector<int> sendbuf;
  for (int r = 0; r < p; ++r) {
    sdispls[r] = static_cast<int>(sendbuf.size());
    scounts[r] = static_cast<int>(to[r].size());
    sendbuf.insert(sendbuf.end(), to[r].begin(), to[r].end());
  }
  if (int rc = PMPI_Alltoall(scounts.data(), 1, MPI_INT, rcounts.data(), 1, MPI_INT, comm_old);
      rc != MPI_SUCCESS)
    return rc;
  int total = 0;
  for (int r = 0; r < p; ++r) {
    rdispls[r] = total;
    total += rcounts[r];
  }
  std::vector<int> recvbuf(static_cast<std::size_t>(total));
  if (int rc = PMPI_Alltoallv(sendbuf.data(), scounts.data(), sdispls.data(), MPI_INT,
                              recvbuf.data(), rcounts.data(), rdispls.data(), MPI_INT, comm_old);
      rc != MPI_SUCCESS)
    return rc;
  if (!Agree(c, comm_old, false, weighted, "")) return c.Fail();
  // (origin, position, peer, weight) per direction, in (origin, position) order.
  std::vector<std::tuple<int, int, int, int>> in, out;
  for (int at = 0; at + kRec <= total; at += kRec) {
    const int* x = &recvbuf[static_cast<std::size_t>(at)];
    (x[0] ? out : in).emplace_back(x[3], x[4], x[1], x[2]);
  }
  std::sort(in.begin(), in.end());
  std::sort(out.begin(), out.end());
  Topology t;
  t.kind = MPI_DIST_GRAPH;
  t.weighted = weighted;
  for (const auto& [origin, pos, peer, w] : in) {
    t.sources.push_back(peer);
    if (weighted) t.source_weights.push_back(w);
  }
  for (const auto& [origin, pos, peer, w] : out) {
    t.destinations.push_back(peer);
    if (weighted) t.destination_weights.push_back(w);
  }
  return Create(c, cm, std::move(t), comm_dist_graph);
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  Call c("MPI_Dist_graph_neighbors_count");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(indegree, "indegree") ||
      !c.NotNull(outdegree, "outdegree") || !c.NotNull(weighted, "weighted"))
    return c.Fail();
  const Topology* t = api::TopologyOf(comm);
  if (!c.Check(t && t->kind == MPI_DIST_GRAPH, Code::kTopology,
               "communicator " + Str(comm) + " has no distributed graph topology"))
    return c.Fail();
  *indegree = static_cast<int>(t->sources.size());
  *outdegree = static_cast<int>(t->destinations.size());
  *weighted = t->weighted ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[]) {
  Call c("MPI_Dist_graph_neighbors");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return c.Fail();
  const Topology* t = api::TopologyOf(comm);
  if (!c.Check(t && t->kind == MPI_DIST_GRAPH, Code::kTopology,
               "communicator " + Str(comm) + " has no distributed graph topology") ||
      !c.Check(maxindegree >= 0 && maxoutdegree >= 0, Code::kArg,
               "maxindegree and maxoutdegree must be >= 0") ||
      !c.NotNull(maxindegree ? sources : &maxindegree, "sources") ||
      !c.NotNull(maxoutdegree ? destinations : &maxoutdegree, "destinations"))
    return c.Fail();
  const bool sw = t->weighted && sourceweights && !IsUnweighted(sourceweights) &&
                  sourceweights != MPI_WEIGHTS_EMPTY;
  const bool dw =
      t->weighted && destweights && !IsUnweighted(destweights) && destweights != MPI_WEIGHTS_EMPTY;
  const int nin = std::min(maxindegree, static_cast<int>(t->sources.size()));
  const int nout = std::min(maxoutdegree, static_cast<int>(t->destinations.size()));
  for (int i = 0; i < nin; ++i) {
    sources[i] = t->sources[i];
    if (sw) sourceweights[i] = t->source_weights[i];
  }
  for (int i = 0; i < nout; ++i) {
    destinations[i] = t->destinations[i];
    if (dw) destweights[i] = t->destination_weights[i];
  }
  return MPI_SUCCESS;
}

}  // extern "C"
