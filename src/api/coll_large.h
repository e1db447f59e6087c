// Shared by the large-count (MPI_Count) collective entry points
// (coll_large.cc, coll_large_v.cc): they check that every count and
// displacement fits in an int and then run the int form's checks and engine.
#pragma once

#include <climits>
#include <string>
#include <vector>

#include "api/coll_c_fill.h"

namespace nicq::coll::capi {

// A count that exceeds INT_MAX is MPI_ERR_COUNT naming the argument; a
// negative one is passed on for the int form's own check to refuse.
inline bool CountToInt(api::Call& c, MPI_Count v, const char* what, int* out) {
  if (v > INT_MAX)
    return c.Check(false, Code::kCount,
                   std::string(what) + " = " + std::to_string(v) +
                       " exceeds INT_MAX, the largest count nicq's collectives move");
  *out = v < INT_MIN ? -1 : static_cast<int>(v);
  return true;
}

// Converted copies of the MPI_Count / MPI_Aint arrays. The int forms read
// the arrays only during the call (a nonblocking schedule is built at
// initiation and a persistent one copies them), so per-thread scratch that
// grows once is enough. slot: 0..3, distinct for the arrays of one call
// that share an element type (each T has its own scratch).
template <typename T>
bool ArrayToInt(api::Call& c, const T* v, int n, const char* what, int slot, const int** out) {
  thread_local std::vector<int> scratch[4];
  *out = nullptr;
  if (v == nullptr) return true;  // the int form refuses it where it is read
  std::vector<int>& s = scratch[slot];
  if (s.size() < static_cast<std::size_t>(n)) s.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (v[i] > INT_MAX || v[i] < INT_MIN)
      return c.Check(false, Code::kCount,
                     std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) +
                         " does not fit in an int, the range nicq's collectives take");
    s[static_cast<std::size_t>(i)] = static_cast<int>(v[i]);
  }
  *out = s.data();
  return true;
}

// Entries of a per-process array: the remote group's size on an
// intercommunicator, the communicator's size otherwise.
inline int PeerCount(const Args& a) {
  return a.comm->inter ? static_cast<int>(a.comm->remote_world_ranks.size()) : a.comm->size;
}

}  // namespace nicq::coll::capi
