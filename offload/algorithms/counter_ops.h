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

// When `trigger` reaches `threshold`, call fn(arg) on the host (the
// backend's agent or progress), then add one to `completion`.
inline TriggeredOp GatedHostCall(CounterId trigger, std::uint64_t threshold, void (*fn)(void*),
                                 void* arg, CounterId completion) {
  TriggeredOp op;
  op.kind = OpKind::kHost;
  op.trigger = trigger;
  op.threshold = threshold;
  op.host_fn = fn;
  op.host_arg = arg;
  op.completion = completion;
  op.completion_inc = 1;
  return op;
}

}  // namespace nicq::offload
