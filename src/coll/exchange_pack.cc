#include "coll/exchange_pack.h"

#include <cstring>
#include <string>

namespace nicq::coll {
namespace {

// One block to pack (user -> packed) or unpack (packed -> user).
struct PackTask {
  const dtype::Type* type;
  std::int64_t count;
  char* user;
  char* packed;
};
// A host step's argument: `n` tasks right after the header, in scratch.
struct PackList {
  std::size_t n;
  PackTask* tasks;
};

PackList* NewList(offload::Schedule* s, std::size_t n) {
  auto* l = static_cast<PackList*>(s->AllocScratch(sizeof(PackList)));
  l->n = n;
  l->tasks = static_cast<PackTask*>(s->AllocScratch(n * sizeof(PackTask)));
  return l;
}

void RunPacks(void* arg) {
  const PackList* l = static_cast<const PackList*>(arg);
  for (std::size_t k = 0; k < l->n; ++k) {
    const PackTask& t = l->tasks[k];
    dtype::Pack(*t.type, t.user, t.count, t.packed);
  }
}

void RunUnpacks(void* arg) {
  const PackList* l = static_cast<const PackList*>(arg);
  for (std::size_t k = 0; k < l->n; ++k) {
    const PackTask& t = l->tasks[k];
    dtype::Unpack(*t.type, t.packed, t.count * t.type->size, t.count, t.user);
  }
}

}  // namespace

bool NeedsPacking(const TypedBlock& b) {
  std::int64_t run = 0;
  if (b.type == nullptr) return false;
  // A run that starts below the buffer's address is packed too: a put
  // lands only at or past the start of its receiver's exposed buffer.
  return !OneRun(b, &run) || b.displ + run < 0;
}

bool OneRun(const TypedBlock& b, std::int64_t* run) {
  *run = 0;
  const dtype::Type* t = b.type;
  if (t == nullptr || t->size * b.count == 0) return true;
  if (t->blocks.size() != 1 || (b.count > 1 && t->size != t->extent)) return false;
  *run = t->blocks[0].offset;
  return true;
}

std::string LayoutNote(const TypedBlock& b) {
  std::int64_t run = 0;
  if (NeedsPacking(b)) return "noncontiguous type, packed";
  (void)OneRun(b, &run);
  if (b.type->IsContiguous()) return "contiguous type";
  return "derived type, one run at +" + std::to_string(run);
}

bool ReceiveOffsets(const std::vector<TypedBlock>& in, std::vector<std::int64_t>* at) {
  at->assign(in.size(), 0);
  bool scratch = false;
  for (const TypedBlock& b : in) scratch |= NeedsPacking(b);
  std::int64_t packed = 0, run = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (scratch) {
      (*at)[i] = packed;
      packed += in[i].Bytes();
    } else {
      (void)OneRun(in[i], &run);
      (*at)[i] = in[i].displ + run;
    }
  }
  return scratch;
}

offload::HostStepSpec PreparePack(const ExchangePlanArgs& a, offload::Schedule* s,
                                  std::vector<const void*>* src, std::vector<bool>* packed_from) {
  const std::size_t n = a.edges.destinations.size();
  src->assign(a.edges.send_blocks.begin(), a.edges.send_blocks.end());
  packed_from->assign(n, false);
  // Distinct blocks to pack: allgather sends one block to every rank.
  std::vector<std::size_t> first(n, n);
  std::size_t distinct = 0;
  for (std::size_t j = 0; j < a.send_layout.size() && j < n; ++j) {
    if (a.edges.destinations[j] < 0 || a.edges.send_bytes[j] == 0 ||
        !NeedsPacking(a.send_layout[j]))
      continue;
    const TypedBlock& b = a.send_layout[j];
    first[j] = j;
    for (std::size_t k = 0; k < j; ++k) {
      const TypedBlock& o = a.send_layout[k];
      if (first[k] == k && o.base == b.base && o.type == b.type && o.count == b.count &&
          o.displ == b.displ) {
        first[j] = k;
        break;
      }
    }
    distinct += first[j] == j;
  }
  if (distinct == 0) return {};
  PackList* l = NewList(s, distinct);
  std::string edges;
  std::size_t k = 0;
  for (std::size_t j = 0; j < n; ++j) {
    if (first[j] == n) continue;
    edges += (edges.empty() ? "" : ",") + std::to_string(j);
    (*packed_from)[j] = true;
    if (first[j] != j) {
      (*src)[j] = (*src)[first[j]];
      continue;
    }
    const TypedBlock& b = a.send_layout[j];
    char* packed = static_cast<char*>(s->AllocScratch(std::size_t(b.Bytes())));
    l->tasks[k++] = PackTask{b.type, b.count, const_cast<char*>(b.base) + b.displ, packed};
    (*src)[j] = packed;
  }
  return {&RunPacks, l,
          "pack: noncontiguous type (send blocks " + edges + ", " + std::to_string(distinct) +
              " packed into plan scratch)"};
}

offload::HostStepSpec PrepareUnpack(const ExchangePlanArgs& a, const char* landing,
                                    offload::Schedule* s) {
  std::size_t live = 0;
  for (std::size_t i = 0; i < a.edges.sources.size(); ++i)
    live += a.edges.sources[i] >= 0 && a.edges.recv_bytes[i] > 0;
  PackList* l = NewList(s, live);
  std::size_t k = 0;
  for (std::size_t i = 0; i < a.edges.sources.size(); ++i) {
    if (a.edges.sources[i] < 0 || a.edges.recv_bytes[i] == 0) continue;
    const TypedBlock& b = a.recv_layout[i];
    l->tasks[k++] = PackTask{b.type, b.count, const_cast<char*>(b.base) + b.displ,
                             const_cast<char*>(landing) + a.recv_offset[i]};
  }
  return {&RunUnpacks, l,
          "unpack: noncontiguous type (" + std::to_string(live) +
              " blocks arrived in plan scratch, scattered into the receive buffer)"};
}

}  // namespace nicq::coll
