// Cartesian topologies, MPI_Dims_create, MPI_Topo_test and
// MPI_Comm_split_type (the hardware topology: ranks of one node). A
// Cartesian communicator is a split of its parent (ranks keep their order:
// nicq does not reorder) with its Topology (topo_internal.h) cached on it.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api/topo_internal.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;
using api::Topology;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

int CopyTopology(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = new Topology(*static_cast<Topology*>(in));
  *flag = 1;
  return MPI_SUCCESS;
}
int DeleteTopology(MPI_Comm, int, void* value, void*) {
  delete static_cast<Topology*>(value);
  return MPI_SUCCESS;
}

// The hidden keyval the topology is cached under (created on first use; it
// lives until the process ends, as the communicators it describes may).
int TopologyKeyval() {
  static int keyval = [] {
    int k = MPI_KEYVAL_INVALID;
    if (PMPI_Comm_create_keyval(CopyTopology, DeleteTopology, &k, nullptr) != MPI_SUCCESS)
      return static_cast<int>(MPI_KEYVAL_INVALID);
    return k;
  }();
  return keyval;
}

using CartGrid = Topology;

// The grid of a communicator, or nullptr when it has no Cartesian topology.
const CartGrid* GridOf(MPI_Comm comm) {
  const Topology* t = api::TopologyOf(comm);
  return t && t->kind == MPI_CART ? t : nullptr;
}

bool CartArg(Call& c, MPI_Comm comm, const CartGrid** grid) {
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return false;
  *grid = GridOf(comm);
  return c.Check(*grid != nullptr, Code::kTopology,
                 "communicator " + Str(comm) + " has no Cartesian topology");
}

// Row-major: the last dimension varies fastest (MPI's rank order).
std::vector<int> CoordsOf(const CartGrid& g, int rank) {
  std::vector<int> coords(g.dims.size());
  for (int d = static_cast<int>(g.dims.size()) - 1; d >= 0; --d) {
    coords[d] = rank % g.dims[d];
    rank /= g.dims[d];
  }
  return coords;
}

// The rank at coords, or -1 when a nonperiodic coordinate is outside the grid.
int RankAt(const CartGrid& g, std::vector<int> coords) {
  int rank = 0;
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    int x = coords[d];
    if (x < 0 || x >= g.dims[d]) {
      if (!g.periods[d]) return -1;
      x = ((x % g.dims[d]) + g.dims[d]) % g.dims[d];
    }
    rank = rank * g.dims[d] + x;
  }
  return rank;
}

// The neighborhood collectives' neighbors of `rank` (MPI 4.1 8.6): per
// dimension the -1 then the +1 neighbor at displacement 1, MPI_PROC_NULL
// beyond a nonperiodic border.
void SetCartNeighbors(CartGrid& g, int rank) {
  g.sources.clear();
  const std::vector<int> at = CoordsOf(g, rank);
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    for (int step : {-1, +1}) {
      std::vector<int> peer = at;
      peer[d] += step;
      const int r = RankAt(g, peer);
      g.sources.push_back(r < 0 ? MPI_PROC_NULL : r);
    }
  }
  g.destinations = g.sources;
}

// The most balanced non-increasing factorization of n into k factors each
// <= max_factor (smallest spread between largest and smallest factor).
void Balance(int n, int k, int max_factor, std::vector<int>& cur, std::vector<int>& best) {
  if (k == 0) {
    if (n != 1) return;
    if (best.empty() || cur.front() - cur.back() < best.front() - best.back()) best = cur;
    return;
  }
  for (int d = std::min(n, max_factor); d >= 1; --d) {
    if (n % d) continue;
    long long power = 1;  // d^k must reach n, else smaller factors cannot
    for (int i = 0; i < k && power < n; ++i) power *= d;
    if (power < n) break;
    cur.push_back(d);
    Balance(n / d, k - 1, d, cur, best);
    cur.pop_back();
  }
}

}  // namespace

namespace nicq::api {

const Topology* TopologyOf(MPI_Comm comm) {
  void* value = nullptr;
  int flag = 0;
  if (TopologyKeyval() == MPI_KEYVAL_INVALID ||
      PMPI_Comm_get_attr(comm, TopologyKeyval(), &value, &flag) != MPI_SUCCESS || !flag)
    return nullptr;
  return static_cast<const Topology*>(value);
}

// On failure the new communicator is freed: the caller returns the error.
int AttachTopology(Call& c, MPI_Comm comm, Topology t) {
  if (TopologyKeyval() == MPI_KEYVAL_INVALID) {
    PMPI_Comm_free(&comm);
    return c.Fail(Code::kNoMem, "no keyval for the topology");
  }
  if (int rc = PMPI_Comm_set_attr(comm, TopologyKeyval(), new Topology(std::move(t)));
      rc != MPI_SUCCESS) {
    PMPI_Comm_free(&comm);
    return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace nicq::api

extern "C" {

int MPI_Dims_create(int nnodes, int ndims, int dims[]) {
  Call c("MPI_Dims_create");
  if (!c.Check(nnodes > 0, Code::kArg, "nnodes " + Str(nnodes) + " must be > 0") ||
      !c.Check(ndims >= 0, Code::kDims, "negative ndims " + Str(ndims)) ||
      !c.NotNull(ndims ? dims : &ndims, "dims"))
    return c.Fail();
  long long fixed = 1;
  int free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (!c.Check(dims[i] >= 0, Code::kDims, "dims[" + Str(i) + "] = " + Str(dims[i]) + " < 0"))
      return c.Fail();
    if (dims[i] == 0)
      ++free_dims;
    else
      fixed *= dims[i];
  }
  if (!c.Check(nnodes % fixed == 0 && (free_dims > 0 || fixed == nnodes), Code::kDims,
               "the set dims (product " + Str(fixed) + ") do not divide nnodes " + Str(nnodes)))
    return c.Fail();
  if (free_dims == 0) return MPI_SUCCESS;
  std::vector<int> cur, best;
  Balance(static_cast<int>(nnodes / fixed), free_dims, static_cast<int>(nnodes / fixed), cur, best);
  for (int i = 0, j = 0; i < ndims; ++i)
    if (dims[i] == 0) dims[i] = best[j++];
  return MPI_SUCCESS;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                    int reorder, MPI_Comm* comm_cart) {
  Call c("MPI_Cart_create");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm_old, &cm) || !c.NotNull(comm_cart, "comm_cart") ||
      !c.Check(!cm->inter, Code::kComm, "comm_old must be an intracommunicator") ||
      !c.Check(ndims >= 0, Code::kDims, "negative ndims " + Str(ndims)) ||
      !c.NotNull(ndims ? dims : &ndims, "dims") || !c.NotNull(ndims ? periods : &ndims, "periods"))
    return c.Fail();
  CartGrid grid;
  grid.kind = MPI_CART;
  long long cells = 1;
  for (int i = 0; i < ndims; ++i) {
    if (!c.Check(dims[i] > 0, Code::kDims, "dims[" + Str(i) + "] = " + Str(dims[i]) + " <= 0"))
      return c.Fail();
    cells *= dims[i];
    grid.dims.push_back(dims[i]);
    grid.periods.push_back(periods[i] ? 1 : 0);
  }
  if (!c.Check(cells <= cm->size, Code::kTopology,
               "the grid has " + Str(cells) + " cells, the communicator only " + Str(cm->size) +
                   " ranks"))
    return c.Fail();
  Comm* child = nullptr;
  Status st = rt::CommSplit(cm, cm->rank < cells ? 0 : -1, cm->rank, &child);
  if (!st.ok()) return c.Fail(st);
  MPI_Comm h;
  if (int rc = api::AdoptComm(c, cm->errhandler, child, &h); rc != MPI_SUCCESS) return rc;
  if (h != MPI_COMM_NULL) {
    SetCartNeighbors(grid, cm->rank);
    if (int rc = api::AttachTopology(c, h, std::move(grid)); rc != MPI_SUCCESS) return rc;
  }
  *comm_cart = h;
  return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int* status) {
  Call c("MPI_Topo_test");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(status, "status")) return c.Fail();
  const Topology* t = api::TopologyOf(comm);
  *status = t ? t->kind : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  Call c("MPI_Cartdim_get");
  const CartGrid* g;
  if (!CartArg(c, comm, &g) || !c.NotNull(ndims, "ndims")) return c.Fail();
  *ndims = static_cast<int>(g->dims.size());
  return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  Call c("MPI_Cart_get");
  const CartGrid* g;
  if (!CartArg(c, comm, &g)) return c.Fail();
  int n = static_cast<int>(g->dims.size());
  if (!c.Check(maxdims >= n, Code::kArg,
               "maxdims " + Str(maxdims) + " is less than the grid's " + Str(n) + " dimensions") ||
      !c.NotNull(n ? dims : &n, "dims") || !c.NotNull(n ? periods : &n, "periods") ||
      !c.NotNull(n ? coords : &n, "coords"))
    return c.Fail();
  std::vector<int> mine = CoordsOf(*g, api::LookupComm(comm)->rank);
  for (int d = 0; d < n; ++d) {
    dims[d] = g->dims[d];
    periods[d] = g->periods[d];
    coords[d] = mine[d];
  }
  return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  Call c("MPI_Cart_rank");
  const CartGrid* g;
  int n = 0;
  if (!CartArg(c, comm, &g) || !c.NotNull(rank, "rank") ||
      !c.NotNull((n = static_cast<int>(g->dims.size())) ? coords : &n, "coords"))
    return c.Fail();
  std::vector<int> at(coords, coords + n);
  int r = RankAt(*g, at);
  for (int d = 0; d < n && r < 0; ++d)
    if (at[d] < 0 || at[d] >= g->dims[d])
      return c.Fail(Code::kArg, "coords[" + Str(d) + "] = " + Str(at[d]) +
                                    " is outside the nonperiodic dimension of size " +
                                    Str(g->dims[d]));
  *rank = r;
  return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  Call c("MPI_Cart_coords");
  const CartGrid* g;
  if (!CartArg(c, comm, &g)) return c.Fail();
  int n = static_cast<int>(g->dims.size());
  int size = api::LookupComm(comm)->size;
  if (!c.Check(rank >= 0 && rank < size, Code::kRank,
               "rank " + Str(rank) + " is not in the communicator (size " + Str(size) + ")") ||
      !c.Check(maxdims >= n, Code::kArg,
               "maxdims " + Str(maxdims) + " is less than the grid's " + Str(n) + " dimensions") ||
      !c.NotNull(n ? coords : &n, "coords"))
    return c.Fail();
  std::vector<int> at = CoordsOf(*g, rank);
  std::copy(at.begin(), at.end(), coords);
  return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  Call c("MPI_Cart_shift");
  const CartGrid* g;
  if (!CartArg(c, comm, &g) || !c.NotNull(rank_source, "rank_source") ||
      !c.NotNull(rank_dest, "rank_dest"))
    return c.Fail();
  int n = static_cast<int>(g->dims.size());
  if (!c.Check(direction >= 0 && direction < n, Code::kDims,
               "direction " + Str(direction) + " is not a dimension (0.." + Str(n - 1) + ")"))
    return c.Fail();
  std::vector<int> at = CoordsOf(*g, api::LookupComm(comm)->rank);
  std::vector<int> src = at, dst = at;
  src[direction] -= disp;
  dst[direction] += disp;
  int s = RankAt(*g, src), d = RankAt(*g, dst);
  *rank_source = s < 0 ? MPI_PROC_NULL : s;
  *rank_dest = d < 0 ? MPI_PROC_NULL : d;
  return MPI_SUCCESS;
}

// The ranks sharing the coordinates of the dropped dimensions form one sub-grid.
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  Call c("MPI_Cart_sub");
  const CartGrid* g;
  int n = 0;
  if (!CartArg(c, comm, &g) || !c.NotNull(newcomm, "newcomm") ||
      !c.NotNull((n = static_cast<int>(g->dims.size())) ? remain_dims : &n, "remain_dims"))
    return c.Fail();
  Comm* cm = api::LookupComm(comm);
  std::vector<int> at = CoordsOf(*g, cm->rank);
  CartGrid sub;
  sub.kind = MPI_CART;
  int color = 0;
  for (int d = 0; d < n; ++d) {
    if (remain_dims[d]) {
      sub.dims.push_back(g->dims[d]);
      sub.periods.push_back(g->periods[d]);
    } else {
      color = color * g->dims[d] + at[d];
    }
  }
  Comm* child = nullptr;
  Status st = rt::CommSplit(cm, color, cm->rank, &child);
  if (!st.ok()) return c.Fail(st);
  MPI_Comm h;
  if (int rc = api::AdoptComm(c, cm->errhandler, child, &h); rc != MPI_SUCCESS) return rc;
  SetCartNeighbors(sub, api::LookupComm(h)->rank);
  if (int rc = api::AttachTopology(c, h, std::move(sub)); rc != MPI_SUCCESS) return rc;
  *newcomm = h;
  return MPI_SUCCESS;
}

// MPI_COMM_TYPE_SHARED groups the ranks of one node (same host name); the
// hardware-guided types find no finer level and give MPI_COMM_NULL, as MPI
// allows. Every rank takes part in the exchange, MPI_UNDEFINED included.
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  Call c("MPI_Comm_split_type");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(newcomm, "newcomm") ||
      !c.Check(!cm->inter, Code::kComm, "comm must be an intracommunicator") ||
      !c.Check(split_type == MPI_UNDEFINED || (split_type >= MPI_COMM_TYPE_SHARED &&
                                               split_type <= MPI_COMM_TYPE_RESOURCE_GUIDED),
               Code::kArg, "invalid split_type " + Str(split_type)))
    return c.Fail();
  constexpr int kLen = MPI_MAX_PROCESSOR_NAME;
  char mine[kLen] = {};
  int len = 0;
  if (int rc = PMPI_Get_processor_name(mine, &len); rc != MPI_SUCCESS) return rc;
  std::vector<char> names(static_cast<std::size_t>(cm->size) * kLen);
  if (int rc = PMPI_Allgather(mine, kLen, MPI_CHAR, names.data(), kLen, MPI_CHAR, comm);
      rc != MPI_SUCCESS)
    return rc;
  // MPI_COMM_TYPE_HW_GUIDED names its resource in the info; the one every
  // MPI knows, "mpi_shared_memory", is the shared-memory split.
  bool shared = split_type == MPI_COMM_TYPE_SHARED;
  if (split_type == MPI_COMM_TYPE_HW_GUIDED && info != MPI_INFO_NULL) {
    char kind[64] = "";
    int flag = 0;
    if (PMPI_Info_get(info, "mpi_hw_resource_type", sizeof kind - 1, kind, &flag) == MPI_SUCCESS &&
        flag)
      shared = std::strcmp(kind, "mpi_shared_memory") == 0;
  }
  int color = -1;
  for (int r = 0; shared && r < cm->size && color < 0; ++r)
    if (std::strncmp(&names[static_cast<std::size_t>(r) * kLen], mine, kLen) == 0) color = r;
  Comm* child = nullptr;
  Status st = rt::CommSplit(cm, color, key, &child);
  if (!st.ok()) return c.Fail(st);
  return api::AdoptComm(c, cm->errhandler, child, newcomm);
}

}  // extern "C"
