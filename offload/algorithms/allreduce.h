// Persistent allreduce plan builders (one rank's Schedule each). The
// collectives layer picks one by score; nicq_sim runs them at scale.
//
//  recursive_doubling: log2(P) rounds of tagged send/recv with a partner and
//    a host reduce per round; non-powers of two fold the extra ranks in
//    first and hand them the result last. Any size, any op/type.
//  nic_tree: a k-ary tree of remote atomics up and puts down; no host step
//    at all after the initial copy, so it progresses while every CPU
//    computes. Needs NIC atomics for the op/type (Capabilities::SupportsAtomic)
//    and remote counters. Ready tokens (a remote counter add from the parent
//    each epoch) keep a child from combining into a parent's buffer before
//    the parent has reset it for the epoch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "offload/schedule.h"

namespace nicq::offload {

struct AllreduceArgs {
  int rank = 0;
  int size = 1;
  const void* sendbuf = nullptr;  // == recvbuf: in place
  void* recvbuf = nullptr;
  std::size_t count = 0;  // elements
  AtomicType type = AtomicType::kDouble;
  AtomicOp op = AtomicOp::kSum;
  std::uint64_t tag_base = 0;  // tags used: tag_base .. tag_base + 63
  int radix = 4;               // nic_tree fan-in
  // Rank -> PeerId (world rank); nullptr: identity.
  const PeerId* peers = nullptr;
  // nic_tree: MPI_Reduce. The result stays at rank 0 (callers number the
  // ranks from the root), no result goes down, and the other ranks combine
  // in scratch the plan owns (their recvbuf is not significant).
  bool reduce = false;
  // nic_tree: the contribution reaches the fold buffer by a put to this
  // rank's own exposed buffer (a NIC step) instead of a host copy; a
  // sendbuf equal to the fold buffer (in place) then moves nothing.
  bool copy_by_put = false;
};

Status BuildAllreduceRecursiveDoubling(const AllreduceArgs& args, Schedule* out);
Status BuildAllreduceNicTree(const AllreduceArgs& args, Schedule* out);

}  // namespace nicq::offload
