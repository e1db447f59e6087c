#include "coll/offload_host_fold_parts.h"

#include <algorithm>
#include <new>

namespace nicq::coll::host_fold {

void FoldOp::Combine(const char* in, char* inout, std::int64_t count) const {
  if (prepared.valid()) {
    prepared.Apply(in, inout, count);
  } else {
    // The op and type were checked at init and the op is held by the plan.
    (void)dtype::Reduce(op, type, in, inout, count);
  }
}

FoldOp MakeFoldOp(const Args& a) {
  FoldOp f;
  f.op = a.op;
  f.type = a.rtype->handle;
  f.t = a.rtype;
  f.prepared = dtype::PreparedReduce::For(a.op, a.rtype->handle);
  return f;
}

void RunPack(void* arg) {
  const Packing& k = *static_cast<const Packing*>(arg);
  dtype::Pack(*k.t, k.user, k.count, k.packed);
}

void RunUnpack(void* arg) {
  const Packing& k = *static_cast<const Packing*>(arg);
  dtype::Unpack(*k.t, k.packed, k.count * k.t->size, k.count, k.user);
}

offload::HostStepSpec PreparePack(offload::Schedule* s, const dtype::Type* t, std::int64_t count,
                                  const void* user, char** packed) {
  auto* k = new (s->AllocScratch(sizeof(Packing))) Packing();
  k->t = t;
  k->count = count;
  k->user = static_cast<char*>(const_cast<void*>(user));
  k->packed = static_cast<char*>(s->AllocScratch(std::size_t(count * t->size)));
  *packed = k->packed;
  return {&RunPack, k, "pack: noncontiguous type (contribution into plan scratch)"};
}

offload::HostStepSpec PrepareUnpack(offload::Schedule* s, const dtype::Type* t, std::int64_t count,
                                    void* user, char* packed) {
  auto* k = new (s->AllocScratch(sizeof(Packing))) Packing();
  k->t = t;
  k->count = count;
  k->user = static_cast<char*>(user);
  k->packed = packed;
  return {&RunUnpack, k, "unpack: noncontiguous type (result from plan scratch into recvbuf)"};
}

// The image covers every item's whole extent from its lower bound, not only
// its data: a user op may read or write an item as a C struct, padding
// included (MPI_DOUBLE_INT: 12 bytes of data in 16), as it may in the
// user's own buffers.
bool ImageSpan(const dtype::Type& t, std::int64_t count, std::size_t* span, std::int64_t* first) {
  if (t.blocks.empty() || t.extent <= 0) return false;
  std::int64_t lo = t.lb, hi = t.lb + t.extent;
  for (const dtype::Block& b : t.blocks) {
    lo = std::min(lo, b.offset);
    hi = std::max(hi, b.offset + b.length);
  }
  hi += (count - 1) * t.extent;
  *span = std::size_t(hi - lo);
  *first = lo;
  return true;
}

char* AllocImage(offload::Schedule* s, const dtype::Type& t, std::int64_t count) {
  std::size_t span = 0;
  std::int64_t first = 0;
  (void)ImageSpan(t, count, &span, &first);
  // The op sees the items' origin; their data starts `first` bytes past it.
  return static_cast<char*>(s->AllocScratch(span)) - first;
}

std::int64_t ContributionItems(const Args& a) {
  switch (a.kind) {
    case Kind::kReduceScatterBlock:
      return a.rcount * a.comm->size;
    case Kind::kReduceScatter: {
      std::int64_t n = 0;
      for (int j = 0; j < a.comm->size; ++j) n += a.rcounts[j];
      return n;
    }
    default:
      return a.rcount;
  }
}

}  // namespace nicq::coll::host_fold
