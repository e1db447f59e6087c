// Helpers shared by the schedule builders of build*.cc (internal).
#pragma once

#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/coll.h"

namespace nicq::coll {

struct Unpacks {
  struct U {
    const dtype::Type* t;
    const char* from;
    std::int64_t count;
    void* to;
    bool typed = false;  // `from` is in the type's layout (CopyTyped), not packed
  };
  std::vector<U> list;  // only noncontiguous types use it
};

// A contiguous view of `count` items at buf: buf itself, or a scratch copy
// packed in the schedule's first phase.
inline char* In(Schedule& s, const void* buf, std::int64_t count, const dtype::Type* t) {
  if (t->IsContiguous() || count == 0) return const_cast<char*>(static_cast<const char*>(buf));
  char* p = s.Scratch(std::size_t(count * t->size));
  s.Pack(t, buf, count, p);
  return p;
}
// An output view, unpacked into buf at the end (pack_first: the buffer also
// holds input, e.g. in place).
inline char* Out(Schedule& s, Unpacks& u, void* buf, std::int64_t count, const dtype::Type* t,
                 bool pack_first) {
  if (t->IsContiguous() || count == 0) return static_cast<char*>(buf);
  char* p = s.Scratch(std::size_t(count * t->size));
  if (pack_first) s.Pack(t, buf, count, p);
  u.list.push_back({t, p, count, buf});
  return p;
}

// Per-rank block tables reused across calls (no allocation once warm).
std::vector<Block>& SendBlocks(int p);
std::vector<Block>& RecvBlocks(int p);

// gatherv, scatterv, allgather(v), alltoall(v,w).
void BuildBlockCollective(const Args& a, Schedule& s, const std::string& algo, Unpacks& u);

}  // namespace nicq::coll
