#include "coll/offload_neighbor.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "coll/algorithms.h"
#include "coll/exchange_plan.h"
#include "coll/offload_agree.h"
#include "dtype/datatype.h"
#include "offload/trigger_plan.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

// The forms whose receive displacements differ per block (the receivers'
// offsets are exchanged).
bool VariableBlocks(Kind k) {
  return k == Kind::kNeighborAllgatherv || k == Kind::kNeighborAlltoallv ||
         k == Kind::kNeighborAlltoallw;
}

// Alltoallw: edge j's (or i's) type and count; the other forms have one type.
const dtype::Type* SendType(const Args& a, int j) {
  return a.kind == Kind::kNeighborAlltoallw ? a.stypes[j] : a.stype;
}
const dtype::Type* RecvType(const Args& a, int i) {
  return a.kind == Kind::kNeighborAlltoallw ? a.rtypes[i] : a.rtype;
}
std::int64_t SendCount(const Args& a, int j) {
  const bool per_edge = a.kind == Kind::kNeighborAlltoallv || a.kind == Kind::kNeighborAlltoallw;
  return per_edge ? a.scounts[j] : a.scount;
}
std::int64_t RecvCount(const Args& a, int i) {
  return VariableBlocks(a.kind) ? a.rcounts[i] : a.rcount;
}

// Out-edge j's block in sendbuf.
TypedBlock SendBlock(const Args& a, int j) {
  std::int64_t displ = 0;  // allgather(v): one block for every destination
  switch (a.kind) {
    case Kind::kNeighborAlltoall:
      displ = j * a.scount * a.stype->extent;
      break;
    case Kind::kNeighborAlltoallv:
      displ = std::int64_t(a.sdispls[j]) * a.stype->extent;
      break;
    case Kind::kNeighborAlltoallw:
      displ = a.sbyte_displs[j];
      break;
    default:
      break;
  }
  return TypedBlock{static_cast<const char*>(a.sendbuf), SendType(a, j), SendCount(a, j), displ};
}
// In-edge i's block in recvbuf.
TypedBlock RecvBlock(const Args& a, int i) {
  const std::int64_t displ = a.kind == Kind::kNeighborAlltoallw ? a.rbyte_displs[i]
                             : VariableBlocks(a.kind) ? std::int64_t(a.rdispls[i]) * a.rtype->extent
                                                      : i * a.rcount * a.rtype->extent;
  return TypedBlock{static_cast<const char*>(a.recvbuf), RecvType(a, i), RecvCount(a, i), displ};
}
std::vector<TypedBlock> RecvBlocks(const Args& a) {
  std::vector<TypedBlock> in;
  for (int i = 0; i < a.indegree; ++i) in.push_back(RecvBlock(a, i));
  return in;
}

// Why a backend whose ops software fires leaves the plan to the host
// schedule unless asked: every hop of the plan is run by some process,
// one more trip (token, then put) than the host schedule's eager exchange.
std::string SoftwareFiringReason(const offload::OffloadBackend* be) {
  // Without the agent every hop waits for a host call, and nothing moves
  // while the host computes (Run 12 of performance.md).
  if (be->HostDriven())
    return "the emulated backend runs without its agent thread (NICQ_PROGRESS_THREAD=0)";
  // More ranks than cores: every hop waits until the agent thread of the
  // rank it reaches gets a core (4 ranks on 2 cores: ~6 ms per exchange,
  // against ~6 us for the host schedule's eager exchange).
  if (rt::AgentFiresOps() && rt::Oversubscribed())
    return "the emulated backend's agent threads share oversubscribed cores (more ranks than "
           "cores on this node)";
  // A core per thread: each hop is a poll by another process's agent, and
  // the host progress thread moves the host schedule while the application
  // computes (4 ranks, 8 B: 24-30 us per step against 2.2 us, 64 KiB: 87-217
  // against 42 us; performance.md Run 44).
  if (rt::AgentFiresOps())
    return "the emulated backend's agent hops cost more than the host schedule's exchange";
  // The shm backend: every put into a peer's buffer is a system call.
  return "the backend's ops are fired by software (the plan is taken when asked for: "
         "nicq_algorithm=offload)";
}

// Why this rank cannot take the plan ("" when it can), from its own arguments.
std::string LocalReason(const Args& a, offload::OffloadBackend* be) {
  if (!IsNeighborKind(a.kind)) return "only neighborhood collectives are offloaded here";
  if (!a.algo.empty() && a.algo != "auto" && a.algo != "offload")
    return "nicq_algorithm=" + a.algo + " asks for the host schedule";
  if (be == nullptr) return "no offload context";
  if (!be->Caps().remote_counters) return "the backend has no remote counters (ready tokens)";
  // The plan is the default only where a NIC fires its ops; elsewhere a
  // request asks for it (nicq_algorithm=offload), as for the dense kinds.
  if (!rt::NicFiresOps() && a.algo != "offload") return SoftwareFiringReason(be);
  const std::size_t max_msg = be->Caps().max_msg_bytes;
  for (int j = 0; j < a.outdegree; ++j) {
    const TypedBlock b = SendBlock(a, j);
    if (max_msg != 0 && std::size_t(b.Bytes()) > max_msg)
      return "a block of " + std::to_string(b.Bytes()) + " bytes is larger than one put (" +
             std::to_string(max_msg) + ")";
  }
  return "";
}

// The index of the in-edge of destination j's receive list that out-edge j
// pairs with, or -1 when the peer lists no matching in-edge (an
// inconsistent graph: the host path reports what it finds).
int LandingOf(const Args& a, int j, const std::int64_t* all_sources, int max_in) {
  // Cartesian: what goes to the -1 neighbour arrives in its +1 slot.
  if (a.cartesian_pairs) return j ^ 1;
  // Graphs: the k-th edge to P pairs with the k-th edge from us in P's sources.
  const int peer = a.destinations[j];
  int k = 0;
  for (int i = 0; i < j; ++i) k += a.destinations[i] == peer;
  const std::int64_t* theirs = &all_sources[std::size_t(peer) * 2 * max_in];
  for (int i = 0; i < max_in; ++i) {
    if (theirs[i] != a.comm->rank) continue;
    if (k-- == 0) return i;
  }
  return -1;
}

// Builds, lowers and binds this rank's plan; an error means the host runs
// it. `peers` holds, per rank, its in-edges' sources then their receive
// offsets (2 * max_in words); empty where pairing and offsets are computed
// locally (Cartesian, equal blocks).
Status BuildPlan(const Args& a, offload::OffloadBackend* be, const std::vector<std::int64_t>& peers,
                 int max_in, std::unique_ptr<offload::TriggerPlan>* plan) {
  ExchangePlanArgs n;
  n.edges.self = a.comm->world_ranks[a.comm->rank];
  auto world = [&](int r) { return r < 0 ? offload::PeerId(-1) : a.comm->world_ranks[r]; };
  n.recv_layout = RecvBlocks(a);
  std::vector<std::int64_t> at;
  n.unpack = ReceiveOffsets(n.recv_layout, &at);
  n.edges.recvbuf = n.unpack ? nullptr : a.recvbuf;
  for (int i = 0; i < a.indegree; ++i) {
    const std::int64_t bytes = n.recv_layout[i].Bytes();
    n.edges.sources.push_back(world(a.sources[i]));
    n.edges.recv_bytes.push_back(std::size_t(bytes));
    n.recv_offset.push_back(std::uint64_t(at[i]));
    if (a.sources[i] >= 0 && bytes > 0)
      n.edges.recv_len = std::max<std::size_t>(n.edges.recv_len, at[i] + bytes);
  }
  for (int j = 0; j < a.outdegree; ++j) {
    const int peer = a.destinations[j];
    const TypedBlock b = SendBlock(a, j);
    std::int64_t run = 0;
    (void)OneRun(b, &run);
    n.edges.destinations.push_back(world(peer));
    n.edges.send_blocks.push_back(b.base + b.displ + run);
    n.edges.send_bytes.push_back(std::size_t(b.Bytes()));
    n.send_layout.push_back(b);
    std::uint64_t land = 0;
    if (peer >= 0) {
      const int slot = LandingOf(a, j, peers.data(), max_in);
      if (slot < 0)
        return Error(Code::kTopology,
                     "rank " + std::to_string(peer) + " does not list this rank as a source");
      // Equal contiguous blocks: the receiver's slot times the block (= our block).
      land = peers.empty() ? std::uint64_t(slot) * b.Bytes()
                           : std::uint64_t(peers[std::size_t(peer) * 2 * max_in + max_in + slot]);
    }
    n.edges.remote_offset.push_back(land);
    if (a.kind == Kind::kNeighborAlltoallw) n.edges.send_notes.push_back(LayoutNote(b));
  }
  const char* form = a.kind == Kind::kNeighborAllgather    ? "allgather"
                     : a.kind == Kind::kNeighborAllgatherv ? "allgatherv"
                     : a.kind == Kind::kNeighborAlltoall   ? "alltoall"
                     : a.kind == Kind::kNeighborAlltoallv  ? "alltoallv"
                                                           : "alltoallw";
  offload::Schedule s(std::string("neighbor ") + form + " (coll, puts gated by ready tokens)");
  NICQ_RETURN_IF_ERROR(BuildExchangePlan(n, &s));
  return LowerAndBindExchange(s, be, plan);
}

}  // namespace

Status CreateOffloadedNeighbor(const Args& a, std::unique_ptr<OffloadedPlan>* out) {
  out->reset();
  if (a.comm->inter || !IsNeighborKind(a.kind)) return Status::Ok();
  offload::OffloadBackend* be = rt::Backend();
  std::string why = LocalReason(a, be);
  // 1. Every rank must agree to offload (a put meets no posted receive),
  // and learn every rank's in-edges for the graph pairing.
  // A receive type that is not contiguous lands its blocks elsewhere than
  // slot * block bytes (a gap, or plan scratch): its offsets must travel.
  const bool own_offsets = !a.rtype || !a.rtype->IsContiguous();
  const std::uint64_t head[3] = {why.empty() ? 1u : 0u, std::uint64_t(a.indegree),
                                 own_offsets ? 1u : 0u};
  std::vector<std::uint64_t> heads(3 * a.comm->size);
  NICQ_RETURN_IF_ERROR(Exchange(a.comm, head, sizeof head, heads.data()));
  int max_in = 1;
  bool any_offsets = false;
  for (int r = 0; r < a.comm->size; ++r) {
    if (!heads[3 * r]) {
      LogHostSchedule(a, why.empty() ? "rank " + std::to_string(r) + " cannot take it" : why);
      return Status::Ok();
    }
    max_in = std::max<int>(max_in, int(heads[3 * r + 1]));
    any_offsets |= heads[3 * r + 2] != 0;
  }
  // Graphs pair edges by the peers' source lists; unequal blocks land at
  // the peers' receive displacements: both come from every rank.
  std::vector<std::int64_t> mine(2 * max_in, -2), peers;
  if (!a.cartesian_pairs || VariableBlocks(a.kind) || any_offsets) {
    std::vector<std::int64_t> at;
    (void)ReceiveOffsets(RecvBlocks(a), &at);
    for (int i = 0; i < a.indegree; ++i) {
      mine[i] = a.sources[i];
      mine[max_in + i] = at[i];
    }
    peers.resize(std::size_t(2 * max_in) * a.comm->size);
    NICQ_RETURN_IF_ERROR(
        Exchange(a.comm, mine.data(), 2 * max_in * sizeof(std::int64_t), peers.data()));
  }
  // 2. Build and bind; agree on it and on the export size.
  std::unique_ptr<offload::TriggerPlan> plan;
  const Status built = BuildPlan(a, be, peers, max_in, &plan);
  // 3. Exchange the exports (counter ids, buffer address/key) and resolve.
  return AdoptExchangePlan(a, built, std::move(plan), out);
}

}  // namespace nicq::coll
