// Groups: ordered lists of world ranks, and the MPI group calls.
#include <algorithm>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "dtype/slot_table.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

namespace {

struct Group {
  std::vector<int> world_ranks;
  int session = -1;  // the session it derives from (MPI_Group_from_session_pset), -1: none
};
constexpr int kFirstUserGroup = 2;  // 1 = MPI_GROUP_EMPTY

dtype::SlotTable<Group, 8, 64>& Groups() {
  static auto* table = new dtype::SlotTable<Group, 8, 64>(kFirstUserGroup);
  return *table;
}
const std::vector<int>& EmptyRanks() {
  static auto* empty = new std::vector<int>();
  return *empty;
}

std::string Str(long long v) {
  return std::to_string(v);
}

// The group ranks selected by MPI_Group_range_incl/excl's triplets, checked
// against the group size; false (error recorded) on a bad triplet.
bool RangeRanks(Call& c, int n, int ranges[][3], int size, std::vector<int>* out) {
  std::vector<bool> seen(size);
  for (int i = 0; i < n; ++i) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    std::string which =
        "ranges[" + Str(i) + "] = {" + Str(first) + ", " + Str(last) + ", " + Str(stride) + "}";
    if (!c.Check(stride != 0, Code::kArg, which + ": stride is 0") ||
        !c.Check(first >= 0 && first < size && last >= 0 && last < size, Code::kRank,
                 which + ": not in the group (size " + Str(size) + ")") ||
        !c.Check(stride > 0 ? first <= last : first >= last, Code::kArg,
                 which + ": the stride never reaches the last rank"))
      return false;
    for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (!c.Check(!seen[r], Code::kRank, which + ": rank " + Str(r) + " appears twice"))
        return false;
      seen[r] = true;
      out->push_back(static_cast<int>(r));
    }
  }
  return true;
}

// The group of `g` minus the group ranks in `drop` (in g's order).
std::vector<int> Without(const std::vector<int>& g, const std::vector<int>& drop) {
  std::vector<bool> dropped(g.size());
  for (int r : drop) dropped[r] = true;
  std::vector<int> out;
  for (std::size_t r = 0; r < g.size(); ++r)
    if (!dropped[r]) out.push_back(g[r]);
  return out;
}

bool Contains(const std::vector<int>& g, int world) {
  return std::find(g.begin(), g.end(), world) != g.end();
}

}  // namespace

namespace nicq::api {

const std::vector<int>* LookupGroup(int h) {
  if (KindOf(h) != NICQ_KIND_GROUP) return nullptr;
  if (h == MPI_GROUP_EMPTY) return &EmptyRanks();
  if (IndexOf(h) < kFirstUserGroup) return nullptr;
  Group* g = Groups().Get(IndexOf(h));
  return g ? &g->world_ranks : nullptr;
}

bool GroupArg(Call& c, int h, const std::vector<int>** out, const char* what) {
  if (h == MPI_GROUP_NULL)
    return c.Check(false, Code::kGroup, std::string(what) + " is MPI_GROUP_NULL");
  *out = LookupGroup(h);
  // The message only on failure: MPI_Win_post/start run this every epoch.
  if (*out) return true;
  return c.Check(false, Code::kGroup, std::string("invalid ") + what + " handle " + Str(h));
}

int NewGroup(Call& c, std::vector<int> ranks, int* out, int session) {
  if (ranks.empty()) {
    *out = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
  }
  int index = Groups().Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "group table is full");
  Groups().Get(index)->world_ranks = std::move(ranks);
  Groups().Get(index)->session = session;
  *out = NICQ_HANDLE(NICQ_KIND_GROUP, index);
  return MPI_SUCCESS;
}

int GroupSession(int h) {
  if (KindOf(h) != NICQ_KIND_GROUP || IndexOf(h) < kFirstUserGroup) return -1;
  Group* g = Groups().Get(IndexOf(h));
  return g ? g->session : -1;
}

int CompareRankLists(const std::vector<int>& a, const std::vector<int>& b) {
  if (a == b) return MPI_IDENT;
  std::vector<int> sa = a, sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
}

}  // namespace nicq::api

using api::GroupArg;
using api::NewGroup;
using Ranks = const std::vector<int>;

extern "C" {

int MPI_Group_size(MPI_Group group, int* size) {
  Call c("MPI_Group_size");
  Ranks* g;
  if (!GroupArg(c, group, &g) || !c.NotNull(size, "size")) return c.Fail();
  *size = static_cast<int>(g->size());
  return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int* rank) {
  Call c("MPI_Group_rank");
  Ranks* g;
  if (!c.Init() || !GroupArg(c, group, &g) || !c.NotNull(rank, "rank")) return c.Fail();
  auto it = std::find(g->begin(), g->end(), rt::WorldRank());
  *rank = it == g->end() ? MPI_UNDEFINED : static_cast<int>(it - g->begin());
  return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group* group) {
  Call c("MPI_Group_free");
  Ranks* g;
  if (!c.NotNull(group, "group") || !GroupArg(c, *group, &g)) return c.Fail();
  if (*group != MPI_GROUP_EMPTY) {
    Groups().Get(api::IndexOf(*group))->world_ranks.clear();
    Groups().Free(api::IndexOf(*group));
  }
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  Call c("MPI_Group_incl");
  Ranks* g;
  if (!GroupArg(c, group, &g) || !c.CountArg(n, "n") || !c.NotNull(newgroup, "newgroup") ||
      !c.NotNull(n ? ranks : &n, "ranks"))
    return c.Fail();
  int size = static_cast<int>(g->size());
  std::vector<bool> seen(size);
  std::vector<int> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) {
    int r = ranks[i];
    if (!c.Check(r >= 0 && r < size, Code::kRank,
                 "ranks[" + Str(i) + "] = " + Str(r) + " is not in the group (size " + Str(size) +
                     ")") ||
        !c.Check(!seen[r], Code::kRank, "rank " + Str(r) + " appears twice in ranks"))
      return c.Fail();
    seen[r] = true;
    out.push_back((*g)[r]);
  }
  return NewGroup(c, std::move(out), newgroup, api::GroupSession(group));
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  Call c("MPI_Group_excl");
  Ranks* g;
  if (!GroupArg(c, group, &g) || !c.CountArg(n, "n") || !c.NotNull(newgroup, "newgroup") ||
      !c.NotNull(n ? ranks : &n, "ranks"))
    return c.Fail();
  int size = static_cast<int>(g->size());
  std::vector<bool> seen(size);
  std::vector<int> drop;
  for (int i = 0; i < n; ++i) {
    int r = ranks[i];
    if (!c.Check(r >= 0 && r < size, Code::kRank,
                 "ranks[" + Str(i) + "] = " + Str(r) + " is not in the group (size " + Str(size) +
                     ")") ||
        !c.Check(!seen[r], Code::kRank, "rank " + Str(r) + " appears twice in ranks"))
      return c.Fail();
    seen[r] = true;
    drop.push_back(r);
  }
  return NewGroup(c, Without(*g, drop), newgroup, api::GroupSession(group));
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  Call c("MPI_Group_range_incl");
  Ranks* g;
  std::vector<int> picked;
  if (!GroupArg(c, group, &g) || !c.CountArg(n, "n") || !c.NotNull(newgroup, "newgroup") ||
      !c.NotNull(n ? static_cast<const void*>(ranges) : &n, "ranges") ||
      !RangeRanks(c, n, ranges, static_cast<int>(g->size()), &picked))
    return c.Fail();
  std::vector<int> out;
  for (int r : picked) out.push_back((*g)[r]);
  return NewGroup(c, std::move(out), newgroup, api::GroupSession(group));
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  Call c("MPI_Group_range_excl");
  Ranks* g;
  std::vector<int> picked;
  if (!GroupArg(c, group, &g) || !c.CountArg(n, "n") || !c.NotNull(newgroup, "newgroup") ||
      !c.NotNull(n ? static_cast<const void*>(ranges) : &n, "ranges") ||
      !RangeRanks(c, n, ranges, static_cast<int>(g->size()), &picked))
    return c.Fail();
  return NewGroup(c, Without(*g, picked), newgroup, api::GroupSession(group));
}

int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  Call c("MPI_Group_union");
  Ranks *g1, *g2;
  if (!GroupArg(c, group1, &g1, "group1") || !GroupArg(c, group2, &g2, "group2") ||
      !c.NotNull(newgroup, "newgroup"))
    return c.Fail();
  std::vector<int> out = *g1;  // group1's order, then group2's extra members in its order
  for (int w : *g2)
    if (!Contains(*g1, w)) out.push_back(w);
  return NewGroup(c, std::move(out), newgroup);
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  Call c("MPI_Group_intersection");
  Ranks *g1, *g2;
  if (!GroupArg(c, group1, &g1, "group1") || !GroupArg(c, group2, &g2, "group2") ||
      !c.NotNull(newgroup, "newgroup"))
    return c.Fail();
  std::vector<int> out;
  for (int w : *g1)
    if (Contains(*g2, w)) out.push_back(w);
  return NewGroup(c, std::move(out), newgroup);
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  Call c("MPI_Group_difference");
  Ranks *g1, *g2;
  if (!GroupArg(c, group1, &g1, "group1") || !GroupArg(c, group2, &g2, "group2") ||
      !c.NotNull(newgroup, "newgroup"))
    return c.Fail();
  std::vector<int> out;
  for (int w : *g1)
    if (!Contains(*g2, w)) out.push_back(w);
  return NewGroup(c, std::move(out), newgroup);
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]) {
  Call c("MPI_Group_translate_ranks");
  Ranks *g1, *g2;
  if (!GroupArg(c, group1, &g1, "group1") || !GroupArg(c, group2, &g2, "group2") ||
      !c.CountArg(n, "n") || !c.NotNull(n ? ranks1 : &n, "ranks1") ||
      !c.NotNull(n ? ranks2 : &n, "ranks2"))
    return c.Fail();
  int size1 = static_cast<int>(g1->size());
  for (int i = 0; i < n; ++i)
    if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= size1))
      return c.Fail(Code::kRank, "ranks1[" + Str(i) + "] = " + Str(ranks1[i]) +
                                     " is not in group1 (size " + Str(size1) + ")");
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    auto it = std::find(g2->begin(), g2->end(), (*g1)[ranks1[i]]);
    ranks2[i] = it == g2->end() ? MPI_UNDEFINED : static_cast<int>(it - g2->begin());
  }
  return MPI_SUCCESS;
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  Call c("MPI_Group_compare");
  Ranks *g1, *g2;
  if (!GroupArg(c, group1, &g1, "group1") || !GroupArg(c, group2, &g2, "group2") ||
      !c.NotNull(result, "result"))
    return c.Fail();
  *result = api::CompareRankLists(*g1, *g2);
  return MPI_SUCCESS;
}

}  // extern "C"
