// Fallback selection: the first backend in preference order that accepts a
// plan takes it; refusals are recorded so the choice can be explained.
#include "providers/common/backend_selector.h"

#include "core/log.h"

namespace nicq::offload {

BackendSelector::BackendSelector(std::vector<OffloadBackend*> chain) {
  for (OffloadBackend* b : chain) Append(b);
}

void BackendSelector::Append(OffloadBackend* backend) {
  chain_.push_back(backend);
  usage_.push_back(BackendUsage{backend->Name()});
}

Status BackendSelector::Choose(std::string_view plan_name, std::span<const TriggeredOp> ops,
                               std::size_t slots, std::size_t* index) {
  SelectionRecord rec{std::string(plan_name), "", ""};
  for (std::size_t i = 0; i < chain_.size(); ++i) {
    OffloadBackend* b = chain_[i];
    Status s = b->CheckOps(ops);
    if (s.ok() && b->FreeSlots() < slots) {
      s = Error(Code::kAgain, std::string(b->Name()) + ": needs " + std::to_string(slots) +
                                  " trigger slots, " + std::to_string(b->FreeSlots()) + " free");
    }
    if (!s.ok()) {
      ++usage_[i].refusals;
      rec.refused += (rec.refused.empty() ? "" : "; ") + s.message();
      continue;
    }
    ++usage_[i].plans;
    usage_[i].ops += ops.size();
    rec.backend = b->Name();
    *index = i;
    if (!rec.refused.empty()) {
      NICQ_LOG(kInfo, kOffload, "plan %s placed on %s after refusals: %s", rec.plan.c_str(),
               rec.backend.c_str(), rec.refused.c_str());
    } else {
      NICQ_LOG(kDebug, kOffload, "plan %s placed on %s", rec.plan.c_str(), rec.backend.c_str());
    }
    decisions_.push_back(std::move(rec));
    return Status::Ok();
  }
  NICQ_LOG(kWarn, kOffload, "plan %s: no backend accepts it: %s", rec.plan.c_str(),
           rec.refused.c_str());
  Status err = Error(Code::kUnsupportedOperation, "BackendSelector::Choose(" + rec.plan +
                                                      "): no backend accepts: " + rec.refused);
  decisions_.push_back(std::move(rec));
  return err;
}

Status BackendSelector::PostWithFallback(std::span<const TriggeredOp> ops, std::size_t* index) {
  std::string refused;
  for (std::size_t i = 0; i < chain_.size(); ++i) {
    Status s = chain_[i]->Post(ops);
    if (s.ok()) {
      usage_[i].ops += ops.size();
      *index = i;
      if (!refused.empty()) {
        NICQ_LOG(kInfo, kOffload, "batch of %zu ops posted on %s after: %s", ops.size(),
                 chain_[i]->Name(), refused.c_str());
      }
      return Status::Ok();
    }
    if (s.code() != Code::kAgain && s.code() != Code::kUnsupportedOperation) return s;
    ++usage_[i].refusals;
    refused += (refused.empty() ? "" : "; ") + s.message();
  }
  return Error(Code::kAgain,
               "BackendSelector::PostWithFallback: every backend refused: " + refused);
}

std::string BackendSelector::Describe() const {
  std::string out;
  for (const BackendUsage& u : usage_) {
    out += u.backend + " plans=" + std::to_string(u.plans) + " ops=" + std::to_string(u.ops) +
           " refusals=" + std::to_string(u.refusals) + "\n";
  }
  return out;
}

}  // namespace nicq::offload
