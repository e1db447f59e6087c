// What the same-node collectives (node_coll.cc, node_persistent.cc) share:
// the reduction they apply, folded in rank order so that every rank that
// reduces the same inputs computes the same bits, and how a communicator's
// area is found and when a call may use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "coll/coll.h"
#include "coll/node_area.h"
#include "core/status.h"
#include "dtype/reduce.h"

namespace nicq::coll {

// The reduction of `count` items of the op and type, resolved once per call.
struct NodeReducer {
  int op = 0, type = 0;
  dtype::PreparedReduce fast;
  Status Apply(const void* in, void* inout, std::int64_t count) const {
    if (count <= 0) return Status::Ok();
    if (fast.valid()) {
      fast.Apply(in, inout, count);
      return Status::Ok();
    }
    return dtype::Reduce(op, type, in, inout, count);
  }
  // out = in op in2 in one pass where the kernel allows (out is in2 itself
  // or overlaps neither); `bytes` is an operand's size, for the copy of in2
  // the two-operand fallback needs.
  Status Apply(const void* in, const void* in2, void* out, std::int64_t count,
               std::size_t bytes) const {
    if (count <= 0) return Status::Ok();
    if (fast.valid()) {
      fast.Apply(in, in2, out, count);
      return Status::Ok();
    }
    if (out != in2) std::memcpy(out, in2, bytes);
    return dtype::Reduce(op, type, in, out, count);
  }
};

// dst = src[0] op src[1] op ... op src[n-1] (MPI's order), folded from the
// right since the kernels compute inout = in op inout.
// (node_coll.cc)
Status FoldInRankOrder(const NodeReducer& red, const std::uint8_t* const* src, int n, void* dst,
                       std::int64_t count, std::size_t bytes);

// NICQ_NODE_COLL is not "off".
bool NodeCollEnabled();
// Whether a call with these arguments may run on the area (every rank
// decides alike; see node_coll.cc).
bool NodeCollFits(const Args& a);
// Sets the runtime's communicator destroy hook that frees what the
// collectives layer keeps per communicator (its area, its node group).
void EnsureCollDestroyHook();
// The communicator's area, made on first use (collective then); null when
// it has none.
Status NodeAreaOf(Comm* comm, NodeArea** out);
// The communicator's area if an earlier collective made it, else null
// (never makes it).
NodeArea* NodeAreaIfMade(Comm* comm);

}  // namespace nicq::coll
