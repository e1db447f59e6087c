// Communicators: rank/size, dup/split/create/free, compare, names, and the
// creation of a communicator by its members alone.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "api/api_more.h"
#include "coll/hier_node.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

// Tags of CreateCommFromMembers' exchange sit in the upper half of the
// runtime tag space, away from the parent's own creation sequence (which
// counts up from 0), so a subset creating a communicator never matches
// a whole-parent creation in flight.
constexpr std::uint32_t kMemberTagBit = 1u << 23;
constexpr std::uint32_t kMemberTagMask = kMemberTagBit - 1;

}  // namespace

namespace nicq::api {

int AdoptComm(Call& c, int errhandler, Comm* child, int* out, Creation how) {
  if (!child) {
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  child->errhandler = errhandler;
  DropCommHints(child);  // a new communicator starts without hints
  if (how == Creation::kBlocking) {
    Status st = coll::MakeNodeGroupAtCreation(child);
    if (!st.ok()) {
      rt::CommFree(child).IgnoreError();
      return c.Fail(st);
    }
  }
  int h = RegisterComm(child);
  if (h == MPI_COMM_NULL) {
    rt::CommFree(child).IgnoreError();
    return c.Fail(Code::kNoMem, "communicator table is full");
  }
  *out = h;
  return MPI_SUCCESS;
}

Status CreateCommFromMembers(Comm* parent, const std::vector<int>& world_members, std::uint32_t tag,
                             Comm** out) {
  // A stand-in parent made of the members alone: rt::CommSplit then runs its
  // exchange (and picks a context id free on every member) among them only,
  // on the real parent's runtime context. Non-members never take part.
  Comm members;
  members.context_id = parent->context_id;
  members.world_ranks = world_members;
  members.size = static_cast<int>(world_members.size());
  auto me = std::find(world_members.begin(), world_members.end(), rt::WorldRank());
  if (me == world_members.end())
    return Error(Code::kGroup, "this process is not a member of the group");
  members.rank = static_cast<int>(me - world_members.begin());
  members.rt_seq = kMemberTagBit | (tag & kMemberTagMask);
  members.rt_map_checked = true;
  return rt::CommSplit(&members, 0, members.rank, out);
}

}  // namespace nicq::api

using api::AdoptComm;

namespace {

// MPI_Comm_dup (the parent's hints) and MPI_Comm_dup_with_info (those of `info`).
int DupComm(Call& c, MPI_Comm comm, bool with_info, MPI_Info info, MPI_Comm* newcomm) {
  Comm* cm;
  api::Hints hints;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(newcomm, "newcomm") ||
      (with_info && !api::InfoPairs(c, info, &hints)))
    return c.Fail();
  if (!with_info) hints = api::CommHints(cm);
  Comm* child = nullptr;
  Status st = cm->inter ? rt::IntercommSplit(cm, 0, cm->rank, &child) : rt::CommDup(cm, &child);
  if (!st.ok()) return c.Fail(st);
  MPI_Comm h;
  if (int rc = AdoptComm(c, cm->errhandler, child, &h); rc != MPI_SUCCESS) return rc;
  // Attributes follow their copy callbacks; a failing callback undoes the dup.
  if (int rc = api::CopyCommAttrs(c, comm, cm, h, child); rc != MPI_SUCCESS) {
    rt::CommFree(child).IgnoreError();
    api::UnregisterComm(h);
    return rc;
  }
  api::SetCommHints(child, std::move(hints));
  *newcomm = h;
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
  return DupComm(c, comm, false, MPI_INFO_NULL, newcomm);
}

// nicq acts on no hint; they are kept for MPI_Comm_get_info.
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  Call c("MPI_Comm_dup_with_info");
  return DupComm(c, comm, true, info, newcomm);
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  Call c("MPI_Comm_split");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(newcomm, "newcomm") ||
      !c.Check(color >= 0 || color == MPI_UNDEFINED, Code::kArg,
               "invalid color " + std::to_string(color) + " (must be >= 0 or MPI_UNDEFINED)"))
    return c.Fail();
  Comm* child = nullptr;
  const int col = color == MPI_UNDEFINED ? -1 : color;
  Status st =
      cm->inter ? rt::IntercommSplit(cm, col, key, &child) : rt::CommSplit(cm, col, key, &child);
  if (!st.ok()) return c.Fail(st);
  return AdoptComm(c, cm->errhandler, child, newcomm);
}

int MPI_Comm_free(MPI_Comm* comm) {
  Call c("MPI_Comm_free");
  Comm* cm;
  if (!c.Init() || !c.NotNull(comm, "comm") || !c.CommArg(*comm, &cm)) return c.Fail();
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return c.Fail(Code::kComm, std::string("cannot free ") +
                                   (*comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF"));
  // MPI runs the attribute delete callbacks first; one that fails fails the free.
  if (int rc = api::DeleteCommAttrs(c, *comm, cm); rc != MPI_SUCCESS) return rc;
  api::DropCommHints(cm);
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
  if (a->inter || b->inter) {
    *result = api::CompareInter(a, b);
    return MPI_SUCCESS;
  }
  int g = api::CompareRankLists(a->world_ranks, b->world_ranks);
  *result = g == MPI_IDENT ? MPI_CONGRUENT : g;
  return MPI_SUCCESS;
}

// Collective over all of comm. Each rank passes the group it belongs to (the
// same group everywhere, or disjoint groups as MPI-2.2 allows): members get
// the new communicator, the others MPI_COMM_NULL. A split whose color is the
// group's lowest parent rank builds every disjoint group at once.
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  Call c("MPI_Comm_create");
  Comm* cm;
  const std::vector<int>* g;
  if (!c.Init() || !c.CommArg(comm, &cm) || !api::GroupArg(c, group, &g) ||
      !c.NotNull(newcomm, "newcomm"))
    return c.Fail();
  int color = -1, key = -1;
  for (int i = 0; i < static_cast<int>(g->size()); ++i) {
    int r = cm->RankOfWorld((*g)[i]);
    if (!c.Check(r >= 0 && r < cm->size, Code::kGroup,
                 "group member (world rank " + Str((*g)[i]) + ") is not in the communicator"))
      return c.Fail();
    color = color < 0 ? r : std::min(color, r);
    if (r == cm->rank) key = i;
  }
  Comm* child = nullptr;
  // Intercommunicators: each group passes a subgroup of itself; the new
  // intercommunicator joins the two subgroups (one color on both sides).
  Status st = cm->inter ? rt::IntercommSplit(cm, key < 0 ? -1 : 0, key, &child)
                        : rt::CommSplit(cm, key < 0 ? -1 : color, key, &child);
  if (!st.ok()) return c.Fail(st);
  return AdoptComm(c, cm->errhandler, child, newcomm);
}

// Collective over the group's members only, told apart by `tag`.
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  Call c("MPI_Comm_create_group");
  Comm* cm;
  const std::vector<int>* g;
  if (!c.Init() || !c.CommArg(comm, &cm) || !api::GroupArg(c, group, &g) ||
      !c.NotNull(newcomm, "newcomm") || !c.SendTagArg(tag) ||
      !c.Check(!cm->inter, Code::kComm, "comm must be an intracommunicator"))
    return c.Fail();
  for (int w : *g)
    if (!c.Check(cm->RankOfWorld(w) >= 0 && cm->RankOfWorld(w) < cm->size, Code::kGroup,
                 "group member (world rank " + Str(w) + ") is not in the communicator"))
      return c.Fail();
  if (std::find(g->begin(), g->end(), rt::WorldRank()) == g->end()) {
    *newcomm = MPI_COMM_NULL;  // MPI: a non-member gets MPI_COMM_NULL
    return MPI_SUCCESS;
  }
  Comm* child = nullptr;
  Status st = api::CreateCommFromMembers(cm, *g, static_cast<std::uint32_t>(tag), &child);
  if (!st.ok()) return c.Fail(st);
  return AdoptComm(c, cm->errhandler, child, newcomm);
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  Call c("MPI_Comm_group");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(group, "group")) return c.Fail();
  return api::NewGroup(c, cm->world_ranks, group);
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

}  // extern "C"
