// Intercommunicators (MPI 4.1 7.6): creation (from a peer communicator or
// from groups), merge, the remote group's queries, and the
// intercommunicator forms of dup/split/create/compare that comm.cc
// dispatches to. The agreement between the two groups is rt::Intercomm*
// (src/runtime/intercomm.cc); collectives are src/coll/build_inter.cc.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

bool InterArg(Call& c, MPI_Comm comm, Comm** cm) {
  return c.CommArg(comm, cm) && c.Check((*cm)->inter, Code::kComm,
                                        "communicator " + Str(comm) +
                                            " is an intracommunicator, not an intercommunicator");
}

bool IntraArg(Call& c, MPI_Comm comm, Comm** cm, const char* what) {
  return c.CommArg(comm, cm) &&
         c.Check(!(*cm)->inter, Code::kComm,
                 std::string(what) + " " + Str(comm) + " must be an intracommunicator");
}

// FNV-1a of the string tag: both groups derive the same leaders' tag.
std::uint32_t TagOfString(const char* s) {
  std::uint32_t h = 2166136261u;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 16777619u;
  return h;
}

}  // namespace

namespace nicq::api {

// MPI_Comm_compare of two communicators of which one at least is an
// intercommunicator: congruent when both local and both remote groups are
// the same in order, similar when they hold the same members.
int CompareInter(const Comm* a, const Comm* b) {
  if (a->inter != b->inter) return MPI_UNEQUAL;
  const int l = CompareRankLists(a->world_ranks, b->world_ranks);
  const int r = CompareRankLists(a->remote_world_ranks, b->remote_world_ranks);
  if (l == MPI_UNEQUAL || r == MPI_UNEQUAL) return MPI_UNEQUAL;
  return l == MPI_IDENT && r == MPI_IDENT ? MPI_CONGRUENT : MPI_SIMILAR;
}

}  // namespace nicq::api

extern "C" {

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                         int remote_leader, int tag, MPI_Comm* newintercomm) {
  Call c("MPI_Intercomm_create");
  Comm* lc;
  if (!c.Init() || !IntraArg(c, local_comm, &lc, "local_comm") ||
      !c.NotNull(newintercomm, "newintercomm") ||
      !c.Check(local_leader >= 0 && local_leader < lc->size, Code::kRank,
               "invalid local_leader " + Str(local_leader) + " (local_comm size " + Str(lc->size) +
                   ")") ||
      !c.SendTagArg(tag))
    return c.Fail();
  // peer_comm and remote_leader are significant at the local leader only.
  // A leader that refuses them still takes part, so that its group fails
  // with it instead of waiting for it (the remote group is erroneous too).
  int remote_world = -1;
  Comm* peer = nullptr;
  bool leader_ok = true;
  if (lc->rank == local_leader) {
    leader_ok = c.CommArg(peer_comm, &peer) &&
                c.Check(remote_leader >= 0 && remote_leader < peer->PeerSize(), Code::kRank,
                        "invalid remote_leader " + Str(remote_leader) + " (peer_comm size " +
                            Str(peer->PeerSize()) + ")") &&
                c.Check(lc->RankOfWorld(peer->PeerWorld(remote_leader)) < 0, Code::kRank,
                        "remote_leader " + Str(remote_leader) +
                            " is a member of local_comm (the groups must be disjoint)");
    c.set_comm_handle(local_comm);  // errors go to local_comm's handler, not peer_comm's
    if (leader_ok) remote_world = peer->PeerWorld(remote_leader);
  }
  Comm* child = nullptr;
  Status st = rt::IntercommCreate(lc, local_leader, leader_ok ? peer : nullptr, remote_world, tag,
                                  leader_ok ? Code::kOk : c.error_class(), &child);
  if (!leader_ok) return c.Fail();
  if (!st.ok()) return c.Fail(st);
  return api::AdoptComm(c, lc->errhandler, child, newintercomm);
}

int MPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                     MPI_Group remote_group, int remote_leader,
                                     const char* stringtag, MPI_Info info,
                                     MPI_Errhandler errhandler, MPI_Comm* newintercomm) {
  Call c("MPI_Intercomm_create_from_groups");
  const std::vector<int>*lg, *rg;
  if (!c.Init() || !api::GroupArg(c, local_group, &lg, "local_group") ||
      !api::GroupArg(c, remote_group, &rg, "remote_group") || !c.NotNull(stringtag, "stringtag") ||
      !c.NotNull(newintercomm, "newintercomm") ||
      !c.Check(api::ValidErrhandler(errhandler), Code::kArg,
               "invalid errhandler " + Str(errhandler)) ||
      !c.Check(std::find(lg->begin(), lg->end(), rt::WorldRank()) != lg->end(), Code::kGroup,
               "this process is not a member of local_group") ||
      !c.Check(local_leader >= 0 && local_leader < int(lg->size()), Code::kRank,
               "invalid local_leader " + Str(local_leader) + " (local_group size " +
                   Str(long(lg->size())) + ")") ||
      !c.Check(remote_leader >= 0 && remote_leader < int(rg->size()), Code::kRank,
               "invalid remote_leader " + Str(remote_leader) + " (remote_group size " +
                   Str(long(rg->size())) + ")"))
    return c.Fail();
  for (int w : *rg)
    if (!c.Check(std::find(lg->begin(), lg->end(), w) == lg->end(), Code::kGroup,
                 "world rank " + Str(w) + " is in both groups (they must be disjoint)"))
      return c.Fail();
  const std::uint32_t tag = TagOfString(stringtag);
  Comm* local = nullptr;
  Status st = api::CreateCommFromMembers(rt::World(), *lg, tag, &local);
  if (!st.ok()) return c.Fail(st);
  rt::CommSetSession(local, api::GroupSession(local_group));  // the intercommunicator inherits it
  Comm* child = nullptr;
  st = rt::IntercommCreate(local, local_leader, rt::World(), (*rg)[std::size_t(remote_leader)],
                           int(tag & 0x3fffff), Code::kOk, &child);
  rt::CommFree(local).IgnoreError();
  if (!st.ok()) return c.Fail(st);
  return api::AdoptComm(c, errhandler, child, newintercomm);
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  Call c("MPI_Intercomm_merge");
  Comm* cm;
  if (!c.Init() || !InterArg(c, intercomm, &cm) || !c.NotNull(newintracomm, "newintracomm"))
    return c.Fail();
  Comm* child = nullptr;
  Status st = rt::IntercommMerge(cm, high != 0, &child);
  if (!st.ok()) return c.Fail(st);
  return api::AdoptComm(c, cm->errhandler, child, newintracomm);
}

int MPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  Call c("MPI_Comm_test_inter");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(flag, "flag")) return c.Fail();
  *flag = cm->inter ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_Comm_remote_size(MPI_Comm comm, int* size) {
  Call c("MPI_Comm_remote_size");
  Comm* cm;
  if (!c.Init() || !InterArg(c, comm, &cm) || !c.NotNull(size, "size")) return c.Fail();
  *size = cm->PeerSize();
  return MPI_SUCCESS;
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  Call c("MPI_Comm_remote_group");
  Comm* cm;
  if (!c.Init() || !InterArg(c, comm, &cm) || !c.NotNull(group, "group")) return c.Fail();
  return api::NewGroup(c, cm->remote_world_ranks, group);
}

}  // extern "C"
