#include "coll/offload_neighbor.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "coll/algorithms.h"
#include "coll/exchange_plan.h"
#include "coll/offload_agree.h"
#include "dtype/datatype.h"
#include "offload/trigger_plan.h"
#include "queue/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

// The forms whose receive displacements differ per block (the receivers'
// offsets are exchanged).
bool VariableBlocks(Kind k) {
  return k == Kind::kNeighborAllgatherv || k == Kind::kNeighborAlltoallv ||
         k == Kind::kNeighborAlltoallw;
}

// Whether `count` items of `t` are one contiguous run of bytes, and where
// it starts relative to the items' buffer position: a contiguous type, or
// a derived one whose items are one block each that abut (a resized or
// struct type with one field, a contiguous type of such). Alltoallw blocks
// that are such a run go on the plan; any other layout needs packing,
// which the plan has no host step for.
bool OneRun(const dtype::Type* t, std::int64_t count, std::int64_t* offset) {
  *offset = 0;
  if (t->size * count == 0) return true;
  if (t->blocks.size() != 1 || (count > 1 && t->size != t->extent)) return false;
  *offset = t->blocks[0].offset;
  return true;
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

// Out-edge j: where its bytes start in sendbuf (the run's first byte),
// and how many.
std::int64_t SendOffset(const Args& a, int j) {
  std::int64_t run = 0;
  switch (a.kind) {
    case Kind::kNeighborAlltoall:
      return j * a.scount * a.stype->extent;
    case Kind::kNeighborAlltoallv:
      return std::int64_t(a.sdispls[j]) * a.stype->extent;
    case Kind::kNeighborAlltoallw:
      (void)OneRun(a.stypes[j], a.scounts[j], &run);
      return a.sbyte_displs[j] + run;
    default:  // allgather(v): one block for every destination
      return 0;
  }
}
std::int64_t SendBytes(const Args& a, int j) {
  return SendCount(a, j) * SendType(a, j)->size;
}
// In-edge i: where its bytes land in recvbuf, and how many.
std::int64_t RecvOffset(const Args& a, int i) {
  if (a.kind == Kind::kNeighborAlltoallw) {
    std::int64_t run = 0;
    (void)OneRun(a.rtypes[i], a.rcounts[i], &run);
    return a.rbyte_displs[i] + run;
  }
  return VariableBlocks(a.kind) ? std::int64_t(a.rdispls[i]) * a.rtype->extent
                                : i * a.rcount * a.rtype->extent;
}
std::int64_t RecvBytes(const Args& a, int i) {
  return RecvCount(a, i) * RecvType(a, i)->size;
}

// How the dump names the layout of an alltoallw edge's block.
std::string LayoutNote(const dtype::Type* t, std::int64_t count) {
  std::int64_t run = 0;
  (void)OneRun(t, count, &run);
  if (t->IsContiguous()) return "contiguous type";
  return "derived type, one run at +" + std::to_string(run);
}

// Why this rank cannot take the plan ("" when it can), from its own arguments.
std::string LocalReason(const Args& a, offload::OffloadBackend* be) {
  if (!IsNeighborKind(a.kind)) return "only neighborhood collectives are offloaded here";
  if (!a.algo.empty() && a.algo != "auto" && a.algo != "offload")
    return "nicq_algorithm=" + a.algo + " asks for the host schedule";
  if (be == nullptr) return "no offload context";
  if (!be->Caps().remote_counters) return "the backend has no remote counters (ready tokens)";
  // Without the emulator's agent every hop of the plan waits for a host
  // call, one more trip (token, then put) than the host schedule's eager
  // exchange and no progress while the host computes (Run 12 of
  // performance.md): the plan is taken only when asked for.
  if (be->HostDriven() && a.algo != "offload")
    return "the emulated backend runs without its agent thread (NICQ_PROGRESS_THREAD=0)";
  // More ranks than cores: every hop of the plan waits until the agent
  // thread of the rank it reaches gets a core (4 ranks on 2 cores: ~6 ms
  // per exchange, against ~6 us for the host schedule's eager exchange).
  if (std::strcmp(queue::BackendName(), "emulated") == 0 && rt::Oversubscribed() &&
      a.algo != "offload")
    return "the emulated backend's agent threads share oversubscribed cores (more ranks than "
           "cores on this node)";
  if (a.kind == Kind::kNeighborAlltoallw) {
    std::int64_t run = 0;
    for (int j = 0; j < a.outdegree; ++j)
      if (!OneRun(a.stypes[j], a.scounts[j], &run))
        return "alltoallw send block " + std::to_string(j) +
               ": its datatype is not one contiguous run (the plan cannot pack)";
    for (int i = 0; i < a.indegree; ++i)
      if (!OneRun(a.rtypes[i], a.rcounts[i], &run))
        return "alltoallw receive block " + std::to_string(i) +
               ": its datatype is not one contiguous run (the plan cannot unpack)";
  } else {
    for (const dtype::Type* t : {a.stype, a.rtype}) {
      if (!t->IsContiguous() || t->lb != 0) return "noncontiguous datatype";
    }
  }
  const std::size_t max_msg = be->Caps().max_msg_bytes;
  for (int j = 0; j < a.outdegree; ++j) {
    if (SendOffset(a, j) < 0) return "a negative send displacement";
    if (max_msg != 0 && std::size_t(SendBytes(a, j)) > max_msg)
      return "a block of " + std::to_string(SendBytes(a, j)) + " bytes is larger than one put (" +
             std::to_string(max_msg) + ")";
  }
  for (int i = 0; i < a.indegree; ++i)
    if (RecvOffset(a, i) < 0) return "a negative receive displacement";
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
  n.self = a.comm->world_ranks[a.comm->rank];
  n.recvbuf = a.recvbuf;
  auto world = [&](int r) { return r < 0 ? offload::PeerId(-1) : a.comm->world_ranks[r]; };
  for (int i = 0; i < a.indegree; ++i) {
    n.sources.push_back(world(a.sources[i]));
    n.recv_bytes.push_back(std::size_t(RecvBytes(a, i)));
    if (a.sources[i] >= 0 && RecvBytes(a, i) > 0)
      n.recv_len = std::max<std::size_t>(n.recv_len, RecvOffset(a, i) + RecvBytes(a, i));
  }
  for (int j = 0; j < a.outdegree; ++j) {
    const int peer = a.destinations[j];
    n.destinations.push_back(world(peer));
    n.send_blocks.push_back(static_cast<const char*>(a.sendbuf) + SendOffset(a, j));
    n.send_bytes.push_back(std::size_t(SendBytes(a, j)));
    std::uint64_t at = 0;
    if (peer >= 0) {
      const int slot = LandingOf(a, j, peers.data(), max_in);
      if (slot < 0)
        return Error(Code::kTopology,
                     "rank " + std::to_string(peer) + " does not list this rank as a source");
      // Equal blocks: the receiver's slot times the block (= our block).
      at = peers.empty() ? std::uint64_t(slot) * SendBytes(a, j)
                         : std::uint64_t(peers[std::size_t(peer) * 2 * max_in + max_in + slot]);
    }
    n.remote_offset.push_back(at);
    if (a.kind == Kind::kNeighborAlltoallw)
      n.send_notes.push_back(LayoutNote(a.stypes[j], a.scounts[j]));
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

Status CreateOffloadedNeighbor(const Args& a, std::unique_ptr<OffloadedAllreduce>* out) {
  out->reset();
  if (a.comm->inter || !IsNeighborKind(a.kind)) return Status::Ok();
  offload::OffloadBackend* be = queue::Backend();
  std::string why = LocalReason(a, be);
  // 1. Every rank must agree to offload (a put meets no posted receive),
  // and learn every rank's in-edges for the graph pairing.
  const std::uint64_t head[2] = {why.empty() ? 1u : 0u, std::uint64_t(a.indegree)};
  std::vector<std::uint64_t> heads(2 * a.comm->size);
  NICQ_RETURN_IF_ERROR(Exchange(a.comm, head, sizeof head, heads.data()));
  int max_in = 1;
  for (int r = 0; r < a.comm->size; ++r) {
    if (!heads[2 * r]) {
      LogHostSchedule(a, why.empty() ? "rank " + std::to_string(r) + " cannot take it" : why);
      return Status::Ok();
    }
    max_in = std::max<int>(max_in, int(heads[2 * r + 1]));
  }
  // Graphs pair edges by the peers' source lists; unequal blocks land at
  // the peers' receive displacements: both come from every rank.
  std::vector<std::int64_t> mine(2 * max_in, -2), peers;
  if (!a.cartesian_pairs || VariableBlocks(a.kind)) {
    for (int i = 0; i < a.indegree; ++i) {
      mine[i] = a.sources[i];
      mine[max_in + i] = RecvOffset(a, i);
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
