#include "offload/match.h"

namespace nicq::offload {

Status MatchPlan(TriggerPlan& plan, const WordsAllgather& allgather) {
  const std::string ctx = "MatchPlan(" + plan.name() + ")";
  if (plan.backend() == nullptr) return Error(Code::kMatch, ctx + ": plan is not bound");
  std::vector<std::vector<std::uint64_t>> all;
  NICQ_RETURN_IF_ERROR(allgather(plan.Exports().Serialize(), &all).WithContext(ctx));
  std::vector<PlanExports> peers(all.size());
  std::vector<bool> present(all.size(), false);
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (all[p].empty()) continue;
    NICQ_RETURN_IF_ERROR(PlanExports::Deserialize(all[p].data(), all[p].size(), &peers[p])
                             .WithContext(ctx + ": from peer " + std::to_string(p)));
    present[p] = true;
  }
  return plan.Resolve([&](PeerId p) -> const PlanExports* {
    return p >= 0 && static_cast<std::size_t>(p) < peers.size() && present[p] ? &peers[p] : nullptr;
  });
}

}  // namespace nicq::offload
