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

// How a reduction sees the data. Predefined types reduce in the user's
// layout (the kernels expect pair types such as MPI_DOUBLE_INT at their C
// struct extent). Derived types built from one predefined type are packed
// and reduce as that type (the packed units sit back to back). A user op on
// a derived type must be called with that type and a count of its items, on
// data in the type's own layout: those reduce on an image of the items (one
// extent each, starting at the lower bound) and only the type's data is
// copied in and out of it. Derived types of pair types (MINLOC/MAXLOC) do
// the same, since their kernels walk the padded C structs.
struct RedType {
  int handle = 0;
  std::size_t esize = 1;     // bytes of one reduce element
  std::size_t per_item = 1;  // reduce elements in one item of the user type
  bool image = false;        // user op on a derived type: extent-strided image
  std::int64_t lb = 0;       // image: the type's lower bound
};

Status ResolveRedType(const dtype::Type* t, const dtype::Op* op, RedType* out);
// A view of `count` items at buf that the reduction reads.
char* RedIn(Schedule& s, const RedType& red, const void* buf, std::int64_t count,
            const dtype::Type* t);
// A view of `count` items that the reduction writes, copied into buf at the
// end by AddUnpacks (pack_first: the buffer also holds input, i.e. in place).
char* RedOut(Schedule& s, const RedType& red, Unpacks& u, void* buf, std::int64_t count,
             const dtype::Type* t, bool pack_first);
// Bytes of one item as the reduction lays it out.
std::int64_t RedItemBytes(const RedType& red, const dtype::Type* t);
// The final steps that move every output view into its user buffer.
void AddUnpacks(Schedule& s, const Unpacks& u);

// Per-rank block tables reused across calls (no allocation once warm).
std::vector<Block>& SendBlocks(int p);
std::vector<Block>& RecvBlocks(int p);

// gatherv, scatterv, allgather(v), alltoall(v,w).
void BuildBlockCollective(const Args& a, Schedule& s, const std::string& algo, Unpacks& u);
// neighbor allgather(v), alltoall(v,w) (build_neighbor.cc).
void BuildNeighborCollective(const Args& a, Schedule& s, Unpacks& u);
// The send slot a neighborhood collective posts j-th (the posting order
// that pairs slots as MPI says; see build_neighbor.cc).
int NeighborSendSlot(const Args& a, int j);

}  // namespace nicq::coll
