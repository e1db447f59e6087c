// Element-wise combining for the shm backend's atomics, and the per-thread
// staging buffers an executor reads the target and the operand into.
#pragma once

#include <cstddef>

#include "providers/backend.h"

namespace nicq::shmtrig {

inline constexpr std::size_t kStageBytes = 16384;  // a multiple of every element size

struct AtomicStage {
  alignas(16) unsigned char target[kStageBytes];
  alignas(16) unsigned char operand[kStageBytes];
};
// This thread's buffers (allocated on its first atomic, then reused).
AtomicStage& ThreadStage();

// target[i] = target[i] op operand[i] for `count` elements of `type`;
// false for a pair the table (AllowAtomics) does not list.
bool Combine(offload::AtomicOp op, offload::AtomicType type, void* target, const void* operand,
             std::size_t count);

// Arithmetic, min/max and replace on every type; logical and bitwise ops on
// the integer types only (as MPI defines them).
void AllowAtomics(offload::Capabilities& caps);

}  // namespace nicq::shmtrig
