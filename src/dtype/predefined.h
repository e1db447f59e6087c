// The predefined datatypes looked up inline: every point-to-point call
// names one, and dtype::Lookup out of line (with its registry's guarded
// static) was ~28 instructions of an 8-byte send's argument checks.
#pragma once

#include <atomic>

#include "dtype/datatype.h"

namespace nicq::dtype {

// The registry's table of predefined types (index 0 unused); null until
// the registry is made (the first Lookup or constructor call).
extern std::atomic<Type*> g_predefined_types;

// The predefined type behind `handle`, or nullptr when it is not a
// predefined handle or the registry is not made yet (then dtype::Lookup
// answers).
inline Type* LookupPredefined(int handle) {
  const unsigned index =
      static_cast<unsigned>(handle) - static_cast<unsigned>((kKindDatatype << 24) | 1);
  if (index >= static_cast<unsigned>(kPredefinedCount - 1)) return nullptr;
  Type* table = g_predefined_types.load(std::memory_order_acquire);
  return table ? &table[index + 1] : nullptr;
}

}  // namespace nicq::dtype
