// Which allreduce plan to build: a score by backend capabilities and size,
// overridable with NICQ_ALLREDUCE_ALGO (recursive_doubling | nic_tree; other
// names the collectives layer owns are passed through to it).
#pragma once

#include <string>

#include "offload/algorithms/allreduce.h"

namespace nicq::offload {

// nic_tree when the NIC combines this op/type itself, carries remote
// counters and the vector is small (atomics are per element: large vectors
// belong to bandwidth-optimal algorithms); recursive_doubling otherwise.
std::string PickAllreduce(const Capabilities& caps, int size, std::size_t bytes, AtomicType type,
                          AtomicOp op);
// Builds the named plan ("recursive_doubling" or "nic_tree").
Status BuildAllreduce(const std::string& algo, const AllreduceArgs& args, Schedule* out);

}  // namespace nicq::offload
