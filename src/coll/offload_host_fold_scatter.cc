// Host-fold plans of reduce_scatter(_block), scan and exscan
// (offload_host_fold.h, docs/collectives.md "Offloaded reductions with a
// host fold"). Rank 0 gathers every contribution as the allreduce fold
// does; its fold step computes what each rank receives, then puts it:
//   reduce_scatter(_block)  the whole reduction x_0 op (... op x_{p-1}),
//       block i to rank i (varying counts for reduce_scatter);
//   scan    the prefixes (... (x_0 op x_1) op ...) op x_i, in the slots
//       themselves, prefix i to rank i;
//   exscan  the same prefixes, prefix i - 1 to rank i; rank 0's recvbuf is
//       never written (MPI leaves it undefined).
// Rank 0's own result is written by the fold step itself.
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "coll/offload_host_fold_parts.h"

namespace nicq::coll::host_fold {
namespace {

enum class Result { kBlocks, kPrefixes, kExclusivePrefixes };

// The fold step's argument at rank 0, in plan scratch.
struct ScatterFold {
  FoldOp fold;
  Result result = Result::kBlocks;
  std::int64_t items = 0;       // one contribution
  std::size_t bytes = 0;        // one slot: items' data, packed
  int ranks = 0;                // slots; rank 0's is slot 0
  const char* input = nullptr;  // rank 0's contribution
  char* slots = nullptr;        // ranks * bytes
  char* whole = nullptr;        // kBlocks: the whole reduction, packed
  char* recvbuf = nullptr;      // rank 0's
  std::int64_t own_items = 0;   // what rank 0's recvbuf receives (0: nothing)
  // A noncontiguous type: two images of `items` items (AllocImage), one a
  // slot is unpacked into and one the op combines into.
  char* image = nullptr;
  char* acc = nullptr;
  char* Slot(int j) const { return slots + std::size_t(j) * bytes; }
};

// kBlocks: whole = x_0 op (x_1 op (... op x_{p-1})), block 0 to recvbuf.
void FoldWhole(const ScatterFold& f) {
  const dtype::Type& t = *f.fold.t;
  const auto n = static_cast<std::int64_t>(f.bytes);
  if (f.image == nullptr) {
    std::memcpy(f.whole, f.Slot(f.ranks - 1), f.bytes);
    for (int j = f.ranks - 2; j > 0; --j) f.fold.Combine(f.Slot(j), f.whole, f.items);
    f.fold.Combine(f.input, f.whole, f.items);
    std::memcpy(f.recvbuf, f.whole, std::size_t(f.own_items * t.size));
    return;
  }
  dtype::Pack(t, f.input, f.items, f.Slot(0));
  dtype::Unpack(t, f.Slot(f.ranks - 1), n, f.items, f.acc);
  for (int j = f.ranks - 2; j >= 0; --j) {
    dtype::Unpack(t, f.Slot(j), n, f.items, f.image);
    f.fold.Combine(f.image, f.acc, f.items);
  }
  dtype::Pack(t, f.acc, f.items, f.whole);
  dtype::CopyTyped(t, f.acc, f.own_items, f.recvbuf);  // the type's data only
}

// kPrefixes, kExclusivePrefixes: slot i = (slot i - 1) op x_i in place,
// MPI's order for a non-commutative op; exscan needs none past slot p - 2.
void FoldPrefixes(const ScatterFold& f) {
  const dtype::Type& t = *f.fold.t;
  const auto n = static_cast<std::int64_t>(f.bytes);
  const int last = f.result == Result::kPrefixes ? f.ranks - 1 : f.ranks - 2;
  if (f.image == nullptr) {
    std::memcpy(f.Slot(0), f.input, f.bytes);
    for (int i = 1; i <= last; ++i) f.fold.Combine(f.Slot(i - 1), f.Slot(i), f.items);
  } else {
    dtype::Pack(t, f.input, f.items, f.Slot(0));
    char* prefix = f.acc;  // the prefix through i - 1, unpacked
    char* next = f.image;
    dtype::Unpack(t, f.Slot(0), n, f.items, prefix);
    for (int i = 1; i <= last; ++i) {
      dtype::Unpack(t, f.Slot(i), n, f.items, next);
      f.fold.Combine(prefix, next, f.items);
      dtype::Pack(t, next, f.items, f.Slot(i));
      std::swap(prefix, next);
    }
  }
  // scan: rank 0's result is its own input (already there in place).
  if (f.own_items > 0 && f.input != f.recvbuf) dtype::CopyTyped(t, f.input, f.items, f.recvbuf);
}

void RunScatterFold(void* arg) {
  const ScatterFold& f = *static_cast<const ScatterFold*>(arg);
  if (f.result == Result::kBlocks)
    FoldWhole(f);
  else
    FoldPrefixes(f);
}

// Items rank j receives.
std::int64_t ResultItems(const Args& a, int j) {
  switch (a.kind) {
    case Kind::kReduceScatter:
      return a.rcounts[j];
    case Kind::kExscan:
      return j == 0 ? 0 : a.rcount;
    default:
      return a.rcount;
  }
}

const char* FoldText(Result r) {
  switch (r) {
    case Result::kBlocks:
      return " contributions in rank order, block i to rank i";
    case Result::kPrefixes:
      return " contributions into rank-order prefixes, prefix i to rank i";
    default:
      return " contributions into rank-order prefixes, prefix i - 1 to rank i";
  }
}

}  // namespace

Status BuildScatterFold(const Args& a, const std::string& why, std::size_t bytes,
                        offload::Schedule* s) {
  const int p = a.comm->size, me = a.comm->rank;
  const dtype::Type* t = a.rtype;
  const bool packed = !t->IsContiguous();
  const void* input = a.sendbuf == kInPlace ? a.recvbuf : a.sendbuf;
  offload::GatherFoldArgs g;
  g.rank = me;
  g.size = p;
  g.root = 0;
  g.peers = a.comm->world_ranks.data();
  g.bytes = bytes;
  if (me != 0) {
    g.contribution = input;
    if (packed) {
      char* into = nullptr;
      g.pack = PreparePack(s, t, ContributionItems(a), input, &into);
      g.contribution = into;
    }
    // The result lands in recvbuf, or packed in scratch the unpack step reads.
    const std::int64_t items = ResultItems(a, me);
    g.landing_bytes = std::size_t(items * t->size);
    if (items > 0) {
      g.landing = packed ? s->AllocScratch(g.landing_bytes) : a.recvbuf;
      if (packed) g.unpack = PrepareUnpack(s, t, items, a.recvbuf, static_cast<char*>(g.landing));
    }
    return offload::BuildGatherFold(g, s);
  }
  char* slots = static_cast<char*>(s->AllocScratch(std::size_t(p) * bytes));
  auto* f = new (s->AllocScratch(sizeof(ScatterFold))) ScatterFold();
  f->fold = MakeFoldOp(a);
  f->result = a.kind == Kind::kScan     ? Result::kPrefixes
              : a.kind == Kind::kExscan ? Result::kExclusivePrefixes
                                        : Result::kBlocks;
  f->items = ContributionItems(a);
  f->bytes = bytes;
  f->ranks = p;
  f->input = static_cast<const char*>(input);
  f->slots = slots;
  if (f->result == Result::kBlocks) f->whole = static_cast<char*>(s->AllocScratch(bytes));
  f->recvbuf = static_cast<char*>(a.recvbuf);
  f->own_items = ResultItems(a, 0);
  if (packed) {
    f->image = AllocImage(s, *t, f->items);  // the caller's Refusal checked the span
    f->acc = AllocImage(s, *t, f->items);
  }
  g.slots = slots;
  g.fold = {&RunScatterFold, f,
            "fold: " + why + " (" + std::to_string(p) + FoldText(f->result) +
                (packed ? ", noncontiguous type packed" : "") + ")"};
  // What rank j > 0 receives: its block of the whole, or its prefix.
  g.result_from.assign(std::size_t(p), nullptr);
  g.result_bytes.assign(std::size_t(p), 0);
  std::size_t at = std::size_t(f->own_items * t->size);  // kBlocks: block j's offset in whole
  for (int j = 1; j < p; ++j) {
    const std::size_t len = std::size_t(ResultItems(a, j) * t->size);
    g.result_from[j] = f->result == Result::kBlocks     ? f->whole + at
                       : f->result == Result::kPrefixes ? f->Slot(j)
                                                        : f->Slot(j - 1);
    g.result_bytes[j] = len;
    at += len;
  }
  return offload::BuildGatherFold(g, s);
}

}  // namespace nicq::coll::host_fold
