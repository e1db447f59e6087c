// Blocking barrier, bcast, reduce and allreduce of an intracommunicator
// whose ranks all share this node, through the communicator's NodeArea
// (node_area.h) instead of point-to-point messages.
//
// Small messages (up to kSmallBytes): every rank copies its data into its
// slot and arrives; a reduction then folds every slot in rank order, so
// each rank that reduces computes the same bits (and non-commutative user
// ops keep MPI's order). Large messages go straight between the ranks'
// buffers where process_vm_readv works (ReduceDirect, BcastDirect: a fixed
// number of steps whatever the size), else through the staging area in
// chunks: everyone stages a chunk and arrives; each rank folds its share of
// the chunk (in rank order) into the result buffer and arrives again; then
// every rank copies the whole chunk out. Either way one rank computes each
// element, so every rank gets the same bits.
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/hier_node.h"
#include "coll/node_area.h"
#include "coll/node_reduce.h"
#include "coll/node_steps.h"
#include "core/config.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

// Marks a communicator whose area could not be made: never tried again.
NodeArea* const kNoArea = reinterpret_cast<NodeArea*>(std::uintptr_t{1});

void DestroyHook(Comm* comm) {
  FreeNodeGroup(comm);
  auto* a = static_cast<NodeArea*>(comm->node_area.p);
  if (a != nullptr && a != kNoArea) delete a;
  comm->node_area.p = nullptr;
}

Status Barrier(NodeArea& area) {
  const std::uint64_t g = area.Next();
  area.Arrive(g);
  return area.WaitAll(g);
}

Status BcastSmall(NodeArea& area, const Args& a, std::size_t bytes) {
  const std::uint64_t g = area.Next();
  const int i = int(g & 1), root = a.root;
  const dtype::Type& t = *a.stype;
  const bool flat = t.IsContiguous();
  if (area.rank() == root) {
    NICQ_RETURN_IF_ERROR(Reusable(area, area.last_small[i]));
    area.last_small[i] = g;
    // A receiver expecting less reports the truncation. (Not in Publish's
    // fields: the root returns at once and its next call rewrites those
    // while a receiver may not have read them yet.)
    area.set_small_bytes(i, std::uint32_t(bytes));
    if (flat && bytes > 0)
      std::memcpy(area.slot(i, root, bytes), a.recvbuf, bytes);
    else
      dtype::Pack(t, a.recvbuf, a.scount, area.slot(i, root, bytes));
    area.Arrive(g);
    return Status::Ok();
  }
  area.Arrive(g);
  NICQ_RETURN_IF_ERROR(area.WaitRank(root, g));
  NICQ_RETURN_IF_ERROR(CheckFits(area.small_bytes_of(i, root), bytes, root));
  if (flat && bytes > 0)
    std::memcpy(a.recvbuf, area.slot(i, root, bytes), bytes);
  else if (!flat)
    dtype::Unpack(t, area.slot(i, root, bytes), std::int64_t(bytes), a.scount, a.recvbuf);
  return Status::Ok();
}

// Small reduce / allreduce: slots in, fold in rank order. `out` null: this
// rank only contributes (a reduce's non-root).
Status ReduceSmall(NodeArea& area, const NodeReducer& red, const void* in, void* out,
                   std::int64_t count, std::size_t bytes) {
  const std::uint64_t g = area.Next();
  const int i = int(g & 1), n = area.ranks(), me = area.rank();
  NICQ_RETURN_IF_ERROR(Reusable(area, area.last_small[i]));
  area.last_small[i] = g;
  if (bytes > 0) std::memcpy(area.slot(i, me, bytes), in, bytes);
  area.Arrive(g);
  if (out == nullptr) return Status::Ok();
  NICQ_RETURN_IF_ERROR(area.WaitAll(g));
  if (bytes == 0) return Status::Ok();
  const std::uint8_t* src[NodeArea::kMaxRanks];
  for (int r = 0; r < n; ++r) src[r] = area.slot(i, r, bytes);
  return FoldInRankOrder(red, src, n, out, count, bytes);
}

// The reduction prepared for the area's last call when op and type repeat
// (the look-ups cost more than an 8-byte allreduce's fold). A predefined
// type's handle always names that type; a derived one's may name another
// after a free, and a user op is looked up at each fold anyway.
dtype::PreparedReduce PreparedFor(NodeArea& area, int op, const dtype::Type& t) {
  if (!t.predefined) return dtype::PreparedReduce::For(op, t.handle);
  if (area.red_op != op || area.red_type != t.handle) {
    area.red_fast = dtype::PreparedReduce::For(op, t.handle);
    area.red_op = op;
    area.red_type = t.handle;
  }
  return area.red_fast;
}

Status RunReduction(NodeArea& area, const Args& a) {
  const dtype::Type& t = *a.rtype;
  const std::int64_t count = a.rcount;
  const std::size_t item = std::size_t(t.size), bytes = std::size_t(count) * item;
  const bool contributes_only = a.kind == Kind::kReduce && area.rank() != a.root;
  const void* in = a.sendbuf == kInPlace ? a.recvbuf : a.sendbuf;
  void* out = contributes_only ? nullptr : a.recvbuf;
  NodeReducer red{a.op, t.handle, PreparedFor(area, a.op, t)};
  if (bytes <= NodeArea::kSmallBytes) return ReduceSmall(area, red, in, out, count, bytes);
  if (area.cross_memory())
    return ReduceDirect(area, red, static_cast<const std::uint8_t*>(in),
                        static_cast<std::uint8_t*>(out), count, item,
                        a.kind == Kind::kReduce ? a.root : -1);
  return ReduceLarge(area, red, static_cast<const std::uint8_t*>(in),
                     static_cast<std::uint8_t*>(out), count, item);
}

}  // namespace

Status FoldInRankOrder(const NodeReducer& red, const std::uint8_t* const* src, int n, void* dst,
                       std::int64_t count, std::size_t bytes) {
  // The first step reads the two rightmost inputs and writes dst in one
  // pass (no copy of src[n - 1] first), unless dst is src[n - 2] itself.
  int r = n - 2;
  if (n >= 2 && dst != src[n - 2]) {
    NICQ_RETURN_IF_ERROR(red.Apply(src[n - 2], src[n - 1], dst, count, bytes));
    --r;
  } else if (dst != src[n - 1]) {
    std::memcpy(dst, src[n - 1], bytes);
  }
  for (; r >= 0; --r) NICQ_RETURN_IF_ERROR(red.Apply(src[r], dst, count));
  return Status::Ok();
}

bool NodeCollEnabled() {
  static const bool on = config::GetString("NICQ_NODE_COLL") != "off";
  return on;
}

// Whether this call can take the area; every rank decides the same from
// arguments MPI requires to match (kind, count and type of reductions, the
// byte count of bcast) and from the communicator.
bool NodeCollFits(const Args& a) {
  const Comm* c = a.comm;
  if (c->inter || c->size < 2 || c->size > NodeArea::kMaxRanks) return false;
  switch (a.kind) {
    case Kind::kBarrier:
    case Kind::kBcast:
      return true;
    case Kind::kReduce:
    case Kind::kAllreduce: {
      if (a.kind == Kind::kAllreduce) {
        // A forced algorithm (tests of each one) keeps its schedule.
        static const bool forced = [] {
          const std::string algo = config::GetString("NICQ_ALLREDUCE_ALGO");
          return !algo.empty() && algo != "auto";
        }();
        if (forced) return false;
      }
      const dtype::Type* t = a.rtype;
      if (t == nullptr || !t->IsContiguous() || t->size <= 0 || a.rcount < 0) return false;
      // Chunks hold whole items.
      return std::size_t(t->size) * std::size_t(c->size) <= NodeArea::kChunkBytes;
    }
    default:
      return false;
  }
}

void EnsureCollDestroyHook() {
  static const bool hooked = (rt::SetCommDestroyHook(&DestroyHook), true);
  (void)hooked;
}

Status NodeAreaOf(Comm* comm, NodeArea** out) {
  *out = nullptr;
  void*& slot = comm->node_area.p;
  if (slot == kNoArea) return Status::Ok();
  if (slot == nullptr) {
    // Only when every member is reached through nicq's shm transport (a
    // property every rank sees alike).
    for (int w : comm->world_ranks)
      if (!rt::SameNodeShm(w)) {
        slot = kNoArea;
        return Status::Ok();
      }
    EnsureCollDestroyHook();
    std::unique_ptr<NodeArea> made;
    NICQ_RETURN_IF_ERROR(NodeArea::Create(comm, ShadowOf(comm), NextTag(comm, 2), &made)
                             .WithContext("setting up the same-node collective area"));
    slot = made ? static_cast<void*>(made.release()) : kNoArea;
  }
  // An area some rank could not map leaves the marker, never an area.
  *out = NodeAreaIfMade(comm);
  return Status::Ok();
}

NodeArea* NodeAreaIfMade(Comm* comm) {
  void* slot = comm->node_area.p;
  return slot == kNoArea ? nullptr : static_cast<NodeArea*>(slot);
}

bool TryNodeCollective(const Args& a, Status* st) {
  if (!NodeCollEnabled() || !NodeCollFits(a)) return false;
  NodeArea* area = nullptr;
  *st = NodeAreaOf(a.comm, &area);
  if (!st->ok()) return true;
  if (area == nullptr) return false;
  switch (a.kind) {
    case Kind::kBarrier:
      *st = Barrier(*area);
      break;
    case Kind::kBcast: {
      const std::size_t bytes = std::size_t(a.scount) * std::size_t(a.stype->size);
      if (bytes <= NodeArea::kSmallBytes)
        *st = BcastSmall(*area, a, bytes);
      else if (area->cross_memory())
        *st = BcastDirect(*area, a, bytes);
      else
        *st = BcastLarge(*area, a, bytes);
      break;
    }
    default:
      *st = RunReduction(*area, a);
      break;
  }
  return true;
}

}  // namespace nicq::coll
