// The exchange plan: what the persistent neighbourhood collectives
// (offload_neighbor.h, edges from the topology) and the dense ones
// (offload_dense.h: allgather(v), alltoall(v), gather(v), scatter(v),
// bcast, barrier, edges from the kind and the root) have in common. Here
// the edges' blocks are MPI's (a datatype, a count, a displacement): where
// they lie, whether a host step packs or unpacks them. The plan itself,
// puts gated by ready tokens into each receiver's exposed buffer, is built
// by offload/algorithms/edge_exchange.h from bytes and addresses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "coll/offload_allreduce.h"
#include "core/status.h"
#include "dtype/datatype.h"
#include "offload/algorithms/edge_exchange.h"
#include "offload/schedule.h"
#include "offload/trigger_plan.h"
#include "runtime/comm.h"

namespace nicq::coll {

// One edge's block in a user buffer: `count` items of `type` whose first
// item starts `displ` bytes past `base`.
struct TypedBlock {
  const char* base = nullptr;
  const dtype::Type* type = nullptr;
  std::int64_t count = 0;
  std::int64_t displ = 0;
  std::int64_t Bytes() const { return type ? count * type->size : 0; }
};

// Whether the block's data is one contiguous run of bytes (a contiguous
// type, or a derived one whose items are one block each that abut: a
// resized type, a struct with one field, a contiguous type of such); *run:
// bytes from the block's position to the run's first byte. Any other
// layout is packed (or unpacked) by a host step of the plan.
bool OneRun(const TypedBlock& b, std::int64_t* run);
// Whether the plan packs (or unpacks) the block: it is not one run, or its
// run starts below the buffer's address.
bool NeedsPacking(const TypedBlock& b);
// How the plan dump names a block's layout.
std::string LayoutNote(const TypedBlock& b);

// Where each in-edge's block lands in the exposed receive buffer, in bytes
// from its start, into *at; returns true when that buffer is plan scratch
// (some block NeedsPacking): then blocks lie back to back in in-edge
// order, every edge keeping its place, null edges too, so equal blocks land
// at slot * block bytes. Otherwise each block lands where MPI puts it in
// the user's buffer.
bool ReceiveOffsets(const std::vector<TypedBlock>& in, std::vector<std::int64_t>* at);

// One rank's part of an exchange: the edges in world ranks, bytes and
// addresses (`edges`, whose pack and unpack steps BuildExchangePlan fills),
// and MPI's block layouts, which decide those steps.
struct ExchangePlanArgs {
  offload::EdgeExchangeArgs edges;
  // Per out-edge, optional: the block in the user's buffer. One that
  // NeedsPacking is packed at the start into plan scratch (the same block for
  // several edges, once) and its put goes from there; edges.send_blocks[j]
  // is then ignored.
  std::vector<TypedBlock> send_layout;
  // Set with edges.recvbuf null: the in-edges land in plan scratch of
  // edges.recv_len bytes at recv_offset[i] and the unpack step scatters
  // every live one into recv_layout[i] (ReceiveOffsets returned true).
  bool unpack = false;
  std::vector<std::uint64_t> recv_offset;  // per in-edge, with unpack
  std::vector<TypedBlock> recv_layout;     // per in-edge, with unpack
};
// Prepares the pack and unpack steps the layouts need and builds the
// exchange (offload::BuildEdgeExchange) into `s`.
Status BuildExchangePlan(const ExchangePlanArgs& a, offload::Schedule* s);

// Lowers `s` and binds the plan to `be`; an error (the host runs the
// collective) when two epochs in flight would not fit the backend's
// trigger slots (the queue arms the next epoch before the previous one is
// done) or the backend refuses an op.
Status LowerAndBindExchange(offload::Schedule& s, offload::OffloadBackend* be,
                            std::unique_ptr<offload::TriggerPlan>* plan);

// The NICQ_LOG=info:coll line of a persistent collective `a` that runs on
// the host schedule instead of a plan, and why.
void LogHostSchedule(const Args& a, const std::string& why);

// Collective over a.comm, after this rank built `plan` (`built`: how that
// went; a failure leaves `plan` null): exchanges the plans' exports and
// resolves them; on every rank alike either *out runs the plan (dumped
// when NICQ_PLAN_DUMP asks) or *out stays null, and a rank that failed to
// build or had a plan to give up says why (LogHostSchedule).
Status AdoptExchangePlan(const Args& a, const Status& built,
                         std::unique_ptr<offload::TriggerPlan> plan,
                         std::unique_ptr<OffloadedPlan>* out);

}  // namespace nicq::coll
