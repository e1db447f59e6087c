// What the derived-type constructors (type_constructors.cc) take from the
// type registry (datatype.cc): a fresh slot, and the runs of a type built
// block by block.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "dtype/datatype.h"

namespace nicq::dtype {

// A new derived type slot, in the state of a fresh type with one
// reference; fills *handle. Returns nullptr when the table is full.
Type* NewType(int* handle);
// The error for an invalid old type given to `call`.
Status BadOld(const char* call, int old);

// Appends a run, merging it into the previous one when adjacent and alike.
inline void AddBlock(std::vector<Block>& blocks, std::int64_t offset, std::int64_t length,
                     int basic) {
  if (length == 0) return;
  if (!blocks.empty()) {
    Block& last = blocks.back();
    if (last.basic == basic && last.offset + last.length == offset) {
      last.length += length;
      return;
    }
  }
  blocks.push_back(Block{offset, length, basic});
}

}  // namespace nicq::dtype
