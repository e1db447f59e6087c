// Capability-based backend selection with fallback.
//
// A BackendSelector holds the backends of this process in order of
// preference (e.g. native, emulated). For each plan it picks the first one
// that accepts every op (OffloadBackend::CheckOps) and has the trigger slots
// the plan needs; a backend that refuses (kUnsupportedOperation: op kind,
// atomic type or size; kAgain: not enough free slots) is skipped and the
// next one takes the plan, with no special cases in the caller. Every
// decision is logged (NICQ_LOG=info:offload) and kept, so nicq_info and tests
// can ask where plans went and why.
//
// Selection is per plan, not per op: a plan's counters live on the backend
// that runs it, so all of its ops must go to the same one. PostWithFallback
// (per batch) is for batches whose ops carry no counters of their own or
// whose backends share counters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "providers/backend.h"

namespace nicq::offload {

struct SelectionRecord {
  std::string plan;     // name the caller gave
  std::string backend;  // chosen backend ("" when none accepted)
  std::string refused;  // "native: <why>; ..." for each backend skipped
};

struct BackendUsage {
  std::string backend;
  std::uint64_t plans = 0;     // plans placed on it
  std::uint64_t ops = 0;       // ops in those plans
  std::uint64_t refusals = 0;  // times it refused a plan or batch
};

class BackendSelector {
 public:
  BackendSelector() = default;
  explicit BackendSelector(std::vector<OffloadBackend*> chain);

  void Append(OffloadBackend* backend);
  std::size_t size() const { return chain_.size(); }
  OffloadBackend* at(std::size_t i) const { return chain_[i]; }

  // Picks the backend for a plan of `ops` needing `slots` trigger slots.
  // *index is the position in the chain. kUnsupportedOperation (message
  // lists every refusal) when no backend accepts.
  Status Choose(std::string_view plan_name, std::span<const TriggeredOp> ops, std::size_t slots,
                std::size_t* index);

  // Posts `ops` on the first backend that accepts them; *index is where.
  Status PostWithFallback(std::span<const TriggeredOp> ops, std::size_t* index);

  const std::vector<SelectionRecord>& Decisions() const { return decisions_; }
  const std::vector<BackendUsage>& Usage() const { return usage_; }
  // One line per backend, for nicq_info: "native plans=3 ops=120 refusals=1".
  std::string Describe() const;

 private:
  std::vector<OffloadBackend*> chain_;
  std::vector<BackendUsage> usage_;
  std::vector<SelectionRecord> decisions_;
};

}  // namespace nicq::offload
