// Helpers shared by the schedule builders of build*.cc (internal).
#pragma once

#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/coll.h"
#include "dtype/reduce.h"

namespace nicq::coll {

struct Unpacks {
  struct U {
    const dtype::Type* t;
    const char* from;
    std::int64_t count;
    void* to;
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

struct RedType {
  int handle = 0;
  std::size_t esize = 1;     // bytes of one reduce element
  std::size_t per_item = 1;  // reduce elements in one item of the user type
};

// Packed data of a derived type built from one predefined type reduces as
// that type (the packed units sit back to back).
inline RedType ResolveRedType(const dtype::Type* t) {
  RedType r;
  if (t->predefined || t->unit == 0) {
    r.handle = t->handle;
    r.esize = t->extent ? std::size_t(t->extent) : 1;  // pair types: struct layout
    return r;
  }
  r.handle = (dtype::kKindDatatype << 24) | t->unit;
  r.esize = std::size_t(dtype::BasicSize(t->unit));
  r.per_item = std::size_t(t->size) / r.esize;
  return r;
}

// Reductions run on the user's layout for predefined types (the kernels
// expect pair types such as MPI_DOUBLE_INT at their C struct extent), and
// on packed data for derived ones.
inline char* RedIn(Schedule& s, const void* buf, std::int64_t count, const dtype::Type* t) {
  return t->predefined ? const_cast<char*>(static_cast<const char*>(buf)) : In(s, buf, count, t);
}
inline char* RedOut(Schedule& s, Unpacks& u, void* buf, std::int64_t count, const dtype::Type* t) {
  return t->predefined ? static_cast<char*>(buf) : Out(s, u, buf, count, t, false);
}
inline std::int64_t RedItemBytes(const dtype::Type* t) {
  return t->predefined ? t->extent : t->size;
}

// Per-rank block tables reused across calls (no allocation once warm).
std::vector<Block>& SendBlocks(int p);
std::vector<Block>& RecvBlocks(int p);

// gatherv, scatterv, allgather(v), alltoall(v,w).
void BuildBlockCollective(const Args& a, Schedule& s, const std::string& algo, Unpacks& u);

}  // namespace nicq::coll
