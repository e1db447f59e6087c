#include "offload/algorithms/select.h"

#include "core/config.h"

namespace nicq::offload {

namespace {
constexpr std::size_t kTreeMaxBytes = 4096;
}

std::string PickAllreduce(const Capabilities& caps, int size, std::size_t bytes, AtomicType type,
                          AtomicOp op) {
  const std::string forced = config::GetString("NICQ_ALLREDUCE_ALGO");
  if (!forced.empty() && forced != "auto") return forced;
  const bool nic_can = caps.remote_counters && caps.SupportsAtomic(op, type) &&
                       caps.AtomicFits(type, bytes);
  if (nic_can && bytes <= kTreeMaxBytes && size > 1) return "nic_tree";
  return "recursive_doubling";
}

Status BuildAllreduce(const std::string& algo, const AllreduceArgs& args, Schedule* out) {
  if (algo == "recursive_doubling") return BuildAllreduceRecursiveDoubling(args, out);
  if (algo == "nic_tree") return BuildAllreduceNicTree(args, out);
  return Error(Code::kArg, "BuildAllreduce: no offload plan builder for '" + algo +
                               "' (recursive_doubling, nic_tree)");
}

}  // namespace nicq::offload
