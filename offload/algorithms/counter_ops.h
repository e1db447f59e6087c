// Small op constructors the builders in offload/algorithms share.
#pragma once

#include <cstdint>

#include "providers/backend.h"

namespace nicq::offload {

// When `trigger` reaches `threshold`, add one to this process's `target`.
inline TriggeredOp LocalCounterAdd(CounterId trigger, std::uint64_t threshold, CounterId target) {
  TriggeredOp op;
  op.kind = OpKind::kCounterAdd;
  op.trigger = trigger;
  op.threshold = threshold;
  op.target_counter = target;
  op.value = 1;
  return op;
}

}  // namespace nicq::offload
