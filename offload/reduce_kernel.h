// Element-wise reduction used by host steps (local reduce of vectors too
// large or of types the NIC cannot combine): dst[i] = dst[i] op src[i].
#pragma once

#include <cstddef>

#include "providers/backend.h"

namespace nicq::offload {

// Bitwise ops on float types leave dst unchanged (Schedule::Validate and
// algorithm selection keep them out).
void ReduceInto(AtomicOp op, AtomicType type, void* dst, const void* src, std::size_t bytes);

}  // namespace nicq::offload
