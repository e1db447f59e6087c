// What the same-node collectives' small-message steps (node_coll.cc) and
// large-message steps (node_large.cc) share.
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll/coll.h"
#include "coll/node_area.h"
#include "coll/node_reduce.h"
#include "core/status.h"

namespace nicq::coll {

// Before writing a region last written for generation `last`: every other
// rank has moved past it (this one has, by being here).
inline Status Reusable(NodeArea& area, std::uint64_t last) {
  return last == 0 ? Status::Ok() : area.WaitPeers(last + 1);
}

// An erroneous bcast whose root sends more than this rank receives (the
// sizes on the two sides must agree, or both be small or both large, for
// the steps to pair up at all). Inline: every small bcast's receivers ask.
[[gnu::cold]] Status BcastTooLong(std::uint64_t root_bytes, std::size_t bytes, int root);
inline Status CheckFits(std::uint64_t root_bytes, std::size_t bytes, int root) {
  if (root_bytes <= bytes) [[likely]]
    return Status::Ok();
  return BcastTooLong(root_bytes, bytes, root);
}

// Large bcast: the root streams chunks through its two staging buffers, at
// most one chunk ahead of the slowest reader.
Status BcastLarge(NodeArea& area, const Args& a, std::size_t bytes);
// Large bcast straight from the root's buffer (process_vm_readv): the root
// publishes where its data is (packed into scratch when its layout is not
// contiguous) and waits until every other rank has copied it.
Status BcastDirect(NodeArea& area, const Args& a, std::size_t bytes);
// Large reduce / allreduce, chunk by chunk (node_large.cc).
Status ReduceLarge(NodeArea& area, const NodeReducer& red, const std::uint8_t* in,
                   std::uint8_t* out, std::int64_t count, std::size_t item);
// Large reduce / allreduce straight between the ranks' buffers (node_large.cc); root < 0:
// an allreduce.
Status ReduceDirect(NodeArea& area, const NodeReducer& red, const std::uint8_t* in,
                    std::uint8_t* out, std::int64_t count, std::size_t item, int root);

}  // namespace nicq::coll
