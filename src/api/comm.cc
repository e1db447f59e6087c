// Communicators, groups, names and the predefined attributes.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "dtype/slot_table.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

namespace {

// A group is an ordered list of world ranks.
struct Group {
  std::vector<int> world_ranks;
};
constexpr int kFirstUserGroup = 2;  // 1 = MPI_GROUP_EMPTY

dtype::SlotTable<Group, 8, 64>& Groups() {
  static auto* table = new dtype::SlotTable<Group, 8, 64>(kFirstUserGroup);
  return *table;
}
Group& EmptyGroup() {
  static Group* g = new Group();
  return *g;
}

Group* LookupGroup(MPI_Group h) {
  if (api::KindOf(h) != NICQ_KIND_GROUP) return nullptr;
  if (h == MPI_GROUP_EMPTY) return &EmptyGroup();
  if (api::IndexOf(h) < kFirstUserGroup) return nullptr;
  return Groups().Get(api::IndexOf(h));
}

bool GroupArg(Call& c, MPI_Group h, Group** g, const char* what = "group") {
  if (h == MPI_GROUP_NULL)
    return c.Check(false, Code::kGroup, std::string(what) + " is MPI_GROUP_NULL");
  *g = LookupGroup(h);
  return c.Check(*g != nullptr, Code::kGroup,
                 std::string("invalid ") + what + " handle " + std::to_string(h));
}

int NewGroup(Call& c, std::vector<int> ranks, MPI_Group* out) {
  if (ranks.empty()) {
    *out = MPI_GROUP_EMPTY;
    return MPI_SUCCESS;
  }
  int index = Groups().Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "group table is full");
  Groups().Get(index)->world_ranks = std::move(ranks);
  *out = NICQ_HANDLE(NICQ_KIND_GROUP, index);
  return MPI_SUCCESS;
}

int Compare(const std::vector<int>& a, const std::vector<int>& b) {
  if (a == b) return MPI_IDENT;
  std::vector<int> sa = a, sb = b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  return sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
}

// Registers a communicator rt:: created; the child inherits the parent's handler.
int AdoptComm(Call& c, Comm* parent, Comm* child, MPI_Comm* out) {
  if (!child) {
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  child->errhandler = parent->errhandler;
  int h = api::RegisterComm(child);
  if (h == MPI_COMM_NULL) {
    rt::CommFree(child).IgnoreError();
    return c.Fail(Code::kNoMem, "communicator table is full");
  }
  *out = h;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  Call c("MPI_Comm_rank");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(rank, "rank")) return c.Fail();
  *rank = cm->rank;
  return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  Call c("MPI_Comm_size");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(size, "size")) return c.Fail();
  *size = cm->size;
  return MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  Call c("MPI_Comm_dup");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(newcomm, "newcomm")) return c.Fail();
  Comm* child = nullptr;
  Status st = rt::CommDup(cm, &child);
  if (!st.ok()) return c.Fail(st);
  return AdoptComm(c, cm, child, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  Call c("MPI_Comm_split");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(newcomm, "newcomm") ||
      !c.Check(color >= 0 || color == MPI_UNDEFINED, Code::kArg,
               "invalid color " + std::to_string(color) + " (must be >= 0 or MPI_UNDEFINED)"))
    return c.Fail();
  Comm* child = nullptr;
  Status st = rt::CommSplit(cm, color == MPI_UNDEFINED ? -1 : color, key, &child);
  if (!st.ok()) return c.Fail(st);
  return AdoptComm(c, cm, child, newcomm);
}

int MPI_Comm_free(MPI_Comm* comm) {
  Call c("MPI_Comm_free");
  Comm* cm;
  if (!c.Init() || !c.NotNull(comm, "comm") || !c.CommArg(*comm, &cm)) return c.Fail();
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return c.Fail(Code::kComm, std::string("cannot free ") +
                                   (*comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF"));
  Status st = rt::CommFree(cm);
  if (!st.ok()) return c.Fail(st);
  api::UnregisterComm(*comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  Call c("MPI_Comm_compare");
  Comm *a, *b;
  if (!c.Init() || !c.CommArg(comm1, &a) || !c.CommArg(comm2, &b) || !c.NotNull(result, "result"))
    return c.Fail();
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  int g = Compare(a->world_ranks, b->world_ranks);
  *result = g == MPI_IDENT ? MPI_CONGRUENT : g;
  return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  Call c("MPI_Comm_test_inter");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(flag, "flag")) return c.Fail();
  *flag = 0;  // only intracommunicators exist
  return MPI_SUCCESS;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  Call c("MPI_Comm_group");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(group, "group")) return c.Fail();
  return NewGroup(c, cm->world_ranks, group);
}

int MPI_Comm_set_name(MPI_Comm comm, const char* name) {
  Call c("MPI_Comm_set_name");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(name, "name")) return c.Fail();
  cm->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char* name, int* resultlen) {
  Call c("MPI_Comm_get_name");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(name, "name") ||
      !c.NotNull(resultlen, "resultlen"))
    return c.Fail();
  std::string n = cm->name;
  if (n.empty() && comm == MPI_COMM_WORLD) n = "MPI_COMM_WORLD";
  if (n.empty() && comm == MPI_COMM_SELF) n = "MPI_COMM_SELF";
  std::memcpy(name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  Call c("MPI_Comm_get_attr");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(attribute_val, "attribute_val") ||
      !c.NotNull(flag, "flag"))
    return c.Fail();
  // Predefined attribute values live for the whole job; MPI hands out pointers.
  static int tag_ub, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0;
  int* value = nullptr;
  switch (keyval) {
    case MPI_TAG_UB:
      tag_ub = rt::TagUpperBound();
      value = &tag_ub;
      break;
    case MPI_HOST:
      value = &host;
      break;
    case MPI_IO:
      value = &io;
      break;
    case MPI_WTIME_IS_GLOBAL:
      value = &wtime_global;
      break;
    default:
      return c.Fail(Code(MPI_ERR_KEYVAL),
                    "invalid or unsupported keyval " + std::to_string(keyval));
  }
  *static_cast<int**>(attribute_val) = value;
  *flag = 1;
  return MPI_SUCCESS;
}

int MPI_Group_size(MPI_Group group, int* size) {
  Call c("MPI_Group_size");
  Group* g;
  if (!GroupArg(c, group, &g) || !c.NotNull(size, "size")) return c.Fail();
  *size = static_cast<int>(g->world_ranks.size());
  return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int* rank) {
  Call c("MPI_Group_rank");
  Group* g;
  if (!c.Init() || !GroupArg(c, group, &g) || !c.NotNull(rank, "rank")) return c.Fail();
  auto it = std::find(g->world_ranks.begin(), g->world_ranks.end(), rt::WorldRank());
  *rank =
      it == g->world_ranks.end() ? MPI_UNDEFINED : static_cast<int>(it - g->world_ranks.begin());
  return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group* group) {
  Call c("MPI_Group_free");
  Group* g;
  if (!c.NotNull(group, "group") || !GroupArg(c, *group, &g)) return c.Fail();
  if (*group != MPI_GROUP_EMPTY) {
    g->world_ranks.clear();
    Groups().Free(api::IndexOf(*group));
  }
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  Call c("MPI_Group_incl");
  Group* g;
  if (!GroupArg(c, group, &g) || !c.CountArg(n, "n") || !c.NotNull(newgroup, "newgroup") ||
      !c.NotNull(n ? ranks : &n, "ranks"))
    return c.Fail();
  int size = static_cast<int>(g->world_ranks.size());
  std::vector<bool> seen(size);
  std::vector<int> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) {
    int r = ranks[i];
    if (!c.Check(r >= 0 && r < size, Code::kRank,
                 "ranks[" + std::to_string(i) + "] = " + std::to_string(r) +
                     " is not in the group (size " + std::to_string(size) + ")") ||
        !c.Check(!seen[r], Code::kRank, "rank " + std::to_string(r) + " appears twice in ranks"))
      return c.Fail();
    seen[r] = true;
    out.push_back(g->world_ranks[r]);
  }
  return NewGroup(c, std::move(out), newgroup);
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]) {
  Call c("MPI_Group_translate_ranks");
  Group *g1, *g2;
  if (!GroupArg(c, group1, &g1, "group1") || !GroupArg(c, group2, &g2, "group2") ||
      !c.CountArg(n, "n") || !c.NotNull(n ? ranks1 : &n, "ranks1") ||
      !c.NotNull(n ? ranks2 : &n, "ranks2"))
    return c.Fail();
  int size1 = static_cast<int>(g1->world_ranks.size());
  for (int i = 0; i < n; ++i)
    if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= size1))
      return c.Fail(Code::kRank, "ranks1[" + std::to_string(i) +
                                     "] = " + std::to_string(ranks1[i]) +
                                     " is not in group1 (size " + std::to_string(size1) + ")");
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    auto it = std::find(g2->world_ranks.begin(), g2->world_ranks.end(), g1->world_ranks[ranks1[i]]);
    ranks2[i] = it == g2->world_ranks.end() ? MPI_UNDEFINED
                                            : static_cast<int>(it - g2->world_ranks.begin());
  }
  return MPI_SUCCESS;
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  Call c("MPI_Group_compare");
  Group *g1, *g2;
  if (!GroupArg(c, group1, &g1, "group1") || !GroupArg(c, group2, &g2, "group2") ||
      !c.NotNull(result, "result"))
    return c.Fail();
  *result = Compare(g1->world_ranks, g2->world_ranks);
  return MPI_SUCCESS;
}

}  // extern "C"
