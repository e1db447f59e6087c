#include "offload/tool/sim_driver.h"

namespace nicq::offload {

bool ParseSimType(const std::string& s, AtomicType* t) {
  if (s == "int64")
    *t = AtomicType::kInt64;
  else if (s == "double")
    *t = AtomicType::kDouble;
  else
    return false;
  return true;
}

Status AllreduceSim::Setup(const SimRunConfig& cfg) {
  cfg_ = cfg;
  if (cfg.type != AtomicType::kInt64 && cfg.type != AtomicType::kDouble) {
    return Error(Code::kType, "AllreduceSim: type must be int64 or double");
  }
  if (cfg.ranks < 1) return Error(Code::kArg, "AllreduceSim: ranks must be >= 1");
  const std::size_t p = static_cast<std::size_t>(cfg.ranks), n = cfg.count;
  world_ = sim::SimWorld::Make(cfg.params, p, cfg.faults);
  if (cfg.type == AtomicType::kInt64) {
    send_i_.assign(p * n, 0);
    recv_i_.assign(p * n, 0);
  } else {
    send_d_.assign(p * n, 0);
    recv_d_.assign(p * n, 0);
  }
  backends_.reserve(p);
  plans_.resize(p);
  for (std::size_t r = 0; r < p; ++r) {
    backends_.push_back(std::make_unique<sim::SimBackend>(world_, static_cast<std::uint32_t>(r)));
    AllreduceArgs a;
    a.rank = static_cast<int>(r);
    a.size = cfg.ranks;
    a.count = n;
    a.type = cfg.type;
    a.op = cfg.op;
    a.radix = cfg.radix;
    if (cfg.type == AtomicType::kInt64) {
      a.sendbuf = &send_i_[r * n];
      a.recvbuf = &recv_i_[r * n];
    } else {
      a.sendbuf = &send_d_[r * n];
      a.recvbuf = &recv_d_[r * n];
    }
    Schedule s("allreduce_" + cfg.algo);
    if (cfg.algo == "recursive_doubling") {
      NICQ_RETURN_IF_ERROR(BuildAllreduceRecursiveDoubling(a, &s));
    } else if (cfg.algo == "nic_tree") {
      NICQ_RETURN_IF_ERROR(BuildAllreduceNicTree(a, &s));
    } else {
      return Error(Code::kArg, "AllreduceSim: unknown algorithm '" + cfg.algo +
                                   "' (recursive_doubling, nic_tree)");
    }
    NICQ_RETURN_IF_ERROR(Lower(s, &plans_[r]));
    NICQ_RETURN_IF_ERROR(plans_[r]->Bind(backends_[r].get(), cfg.depth));
    max_ops_ = std::max(max_ops_, plans_[r]->num_ops());
  }
  // The match exchange, in memory.
  std::vector<PlanExports> exports(p);
  for (std::size_t r = 0; r < p; ++r) exports[r] = plans_[r]->Exports();
  for (std::size_t r = 0; r < p; ++r) {
    NICQ_RETURN_IF_ERROR(plans_[r]->Resolve([&](PeerId peer) -> const PlanExports* {
      return peer >= 0 && static_cast<std::size_t>(peer) < p ? &exports[peer] : nullptr;
    }));
  }
  return Status::Ok();
}

// Rank r, element i, epoch e contributes (r + 1) + 7e + i, so the sum is
// P(P+1)/2 + P(7e + i): exact in int64 and in double at these sizes.
void AllreduceSim::FillInputs(std::uint64_t epoch) {
  const std::size_t p = backends_.size(), n = cfg_.count;
  for (std::size_t r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t v = static_cast<std::int64_t>(r + 1 + 7 * epoch + i);
      if (cfg_.type == AtomicType::kInt64) {
        send_i_[r * n + i] = v;
        recv_i_[r * n + i] = -1;
      } else {
        send_d_[r * n + i] = static_cast<double>(v);
        recv_d_[r * n + i] = -1;
      }
    }
  }
}

bool AllreduceSim::Check(std::uint64_t epoch, std::string* mismatch) const {
  const std::size_t p = backends_.size(), n = cfg_.count;
  for (std::size_t r = 0; r < p; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t P = static_cast<std::int64_t>(p);
      const std::int64_t want = P * (P + 1) / 2 + P * static_cast<std::int64_t>(7 * epoch + i);
      const double got = cfg_.type == AtomicType::kInt64 ? static_cast<double>(recv_i_[r * n + i])
                                                         : recv_d_[r * n + i];
      if (got != static_cast<double>(want)) {
        *mismatch = "rank " + std::to_string(r) + " element " + std::to_string(i) + ": got " +
                    std::to_string(got) + ", want " + std::to_string(want);
        return false;
      }
    }
  }
  return true;
}

Status AllreduceSim::RunEpoch(std::uint64_t epoch, EpochResult* out) {
  if (cfg_.check) FillInputs(epoch);
  fwsim::World& w = world_->fw();
  w.RunUntilIdle();  // leftovers of the previous epoch (acks), so timing starts clean
  const fwsim::Time t0 = w.Now();
  for (auto& plan : plans_) NICQ_RETURN_IF_ERROR(plan->Start());
  w.RunUntilIdle();
  out->elapsed = w.Now() - t0;
  for (std::size_t r = 0; r < plans_.size(); ++r) {
    const TriggerPlan& pl = *plans_[r];
    if (backends_[r]->ReadErrors(pl.done_counter()) != 0 || !pl.Test()) {
      std::uint64_t errs = 0;
      for (const auto& c : pl.counters()) errs += backends_[r]->ReadErrors(c.id);
      return Error(Code::kPending,
                   "AllreduceSim epoch " + std::to_string(epoch) + ": rank " + std::to_string(r) +
                       " did not complete (done counter " +
                       std::to_string(backends_[r]->ReadCounter(pl.done_counter())) + " of " +
                       std::to_string(pl.done_target()) + ", " + std::to_string(errs) +
                       " failed ops) " + w.faults().Describe());
    }
  }
  out->data_ok = !cfg_.check || Check(epoch, &out->mismatch);
  return Status::Ok();
}

}  // namespace nicq::offload
