// The blocking hierarchical collectives whose node phases run through the
// same-node area (hier_node.h): node phase in, leaders' phase, node phase
// out.
//   barrier    node barrier, leaders' barrier, node barrier (the second
//              releases a node only once its leader is through)
//   bcast      leaders' bcast from the root, node bcast from each leader
//   reduce     node reduce into each leader (the root on its node; a
//              leader other than the root into private scratch), leaders'
//              reduce into the root
//   allreduce  node reduce into each leader, leaders' allreduce in place,
//              node bcast from each leader
// Leaders follow GroupByNode's rule: a node's lowest rank, or the root.
#include "coll/hier_node.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "coll/algo_hier.h"
#include "coll/build_util.h"
#include "coll/node_area.h"
#include "coll/node_layout.h"
#include "coll/node_reduce.h"
#include "coll/select.h"
#include "core/config.h"
#include "core/log.h"
#include "dtype/reduce.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

void LogChoice(Comm* comm, const NodeGroup& ng) {
  const char* how = ng.node == nullptr ? "alone on its node"
                    : ng.area          ? "through the same-node area"
                                       : "point-to-point (no same-node area)";
  NICQ_LOG(kInfo, kColl,
           "communicator of %d ranks spans nodes: node phases of its barrier, bcast, reduce and "
           "allreduce (blocking, nonblocking, persistent) %s (%d ranks on this node)",
           comm->size, how, ng.node ? ng.node->size : 1);
}

// One node phase: the node communicator's own blocking collective (its
// area when the call fits there). *on_area turns false when it did not.
Status NodePhase(const Args& na, bool* on_area) {
  Status st;
  if (TryNodeCollective(na, &st)) return st;
  *on_area = false;
  return RunBlocking(na);
}

// The leaders' phase, blocking (a non-leader has nothing to do).
Status LeadersPhase(const Args& a, const NodeGroups& g, int tag, const void* partial) {
  if (g.leader < 0) return Status::Ok();
  Schedule* s = AcquireSchedule();
  Status st = BuildLeadersPhase(a, g, partial, s);
  if (!st.ok()) {
    ReleaseSchedule(s);
    return st;
  }
  s->release_on_done = true;
  Request req;
  req.kind = ReqKind::kColl;
  NICQ_RETURN_IF_ERROR(s->Launch(ShadowOf(a.comm), tag, &req, nullptr));
  Activate(s, /*async=*/false);
  return WaitRequest(&req);
}

// The communicator of this rank's node's ranks (in comm's order; null when
// alone on its node), agreed among those ranks only: a stand-in parent made
// of them runs the agreement on comm's runtime context under comm's next
// runtime tag, which every rank of comm draws. Other nodes' agreements use
// that tag too, but their ranks are other sources, so they never match
// these; and a context slot needs to be free only on the ranks that use
// it. Agreeing over the whole of comm instead would cost as much as comm's
// own creation (its rounds cross the network).
Status SplitByNode(Comm* comm, Comm** out) {
  *out = nullptr;
  const std::uint64_t tag = comm->rt_seq++;
  const std::vector<int>& node_of = NodeLayoutOf(comm).node;
  const int mine = node_of[std::size_t(comm->rank)];
  Comm members;
  for (int r = 0; r < comm->size; ++r) {
    if (node_of[std::size_t(r)] != mine) continue;
    if (r == comm->rank) members.rank = int(members.world_ranks.size());
    members.world_ranks.push_back(comm->world_ranks[std::size_t(r)]);
  }
  members.size = int(members.world_ranks.size());
  if (members.size < 2) return Status::Ok();
  members.context_id = comm->context_id;
  members.session = comm->session;
  members.rt_seq = tag;
  members.rt_map_checked = true;
  return rt::CommSplit(&members, 0, members.rank, out);
}

}  // namespace

bool HierarchicalNodeFits(const Args& a) {
  switch (a.kind) {
    case Kind::kBarrier:
    case Kind::kBcast:
      break;
    case Kind::kReduce:
    case Kind::kAllreduce: {
      // A leader's node result is a buffer of whole items (the same type
      // on every rank: MPI requires it of reductions).
      const dtype::Type* t = a.rtype;
      if (t == nullptr || !t->IsContiguous() || t->size <= 0 || a.rcount < 0) return false;
      break;
    }
    default:
      return false;
  }
  if (a.comm->inter || !WantsHierarchy(a.comm)) return false;
  return std::strcmp(PickAlgorithm(a), "hierarchical") == 0;
}

Status NodeGroupOf(Comm* comm, NodeGroup** out) {
  if (comm->node_group.p != nullptr) {
    *out = static_cast<NodeGroup*>(comm->node_group.p);
    return Status::Ok();
  }
  Comm* node = nullptr;
  NICQ_RETURN_IF_ERROR(
      SplitByNode(comm, &node)
          .WithContext("making the node communicator of a hierarchical collective"));
  EnsureCollDestroyHook();
  auto* ng = new NodeGroup;
  ng->node = node;
  comm->node_group.p = ng;
  if (node != nullptr && node->size <= NodeArea::kMaxRanks) {
    NodeArea* area = nullptr;
    NICQ_RETURN_IF_ERROR(NodeAreaOf(node, &area));
    ng->area = area != nullptr;
  }
  LogChoice(comm, *ng);
  *out = ng;
  return Status::Ok();
}

const NodeGroups& GroupsFor(NodeGroup* ng, const Args& a) {
  const int root = a.kind == Kind::kBcast || a.kind == Kind::kReduce ? a.root : -1;
  if (ng->groups_root != root) {
    GroupByNode(a.comm, root, &ng->groups);
    ng->groups_root = root;
  }
  return ng->groups;
}

Args NodeArgs(const Args& a, const NodeGroup& ng) {
  // The leader's rank in the node communicator (ranked as in `comm`).
  const NodeGroups& g = ng.groups;
  int leader = 0;
  for (int r : g.node) leader += r < g.node[0];
  Args na = a;
  na.comm = ng.node;
  na.root = leader;
  na.algo.clear();
  return na;
}

Status BuildLeadersPhase(const Args& a, const NodeGroups& g, const void* partial, Schedule* s) {
  s->algorithm = "hierarchical";
  Unpacks u;
  const bool root = a.comm->rank == a.root;
  switch (a.kind) {
    case Kind::kBarrier:
      BuildBarrierAmongLeaders(*s, g);
      break;
    case Kind::kBcast: {
      // A non-contiguous buffer travels packed (the root packs it first).
      char* b = Out(*s, u, a.recvbuf, a.scount, a.stype, root);
      if (root) u.list.clear();
      BuildBcastAmongLeaders(*s, g, b, std::size_t(a.scount) * std::size_t(a.stype->size));
      break;
    }
    default: {
      const dtype::Type* t = a.rtype;
      const dtype::Op* op = dtype::LookupOp(a.op);
      RedType red;
      NICQ_RETURN_IF_ERROR(op ? ResolveRedType(t, op, &red)
                              : Error(Code::kOp, "invalid reduction operation"));
      s->SetReduce(a.op, red.handle, red.image ? -red.lb : 0);
      const std::size_t n = std::size_t(a.rcount) * red.per_item;
      if (a.kind == Kind::kAllreduce) {
        char* b = RedOut(*s, red, u, a.recvbuf, a.rcount, t, /*pack_first=*/true);
        BuildAllreduceAmongLeaders(*s, g, b, n, red.esize);
      } else if (root) {
        char* b = RedOut(*s, red, u, a.recvbuf, a.rcount, t, /*pack_first=*/true);
        BuildReduceAmongLeaders(*s, g, b, b, n, red.esize);
      } else {
        BuildReduceAmongLeaders(*s, g, RedIn(*s, red, partial, a.rcount, t), nullptr, n, red.esize);
      }
      break;
    }
  }
  s->EndPhase();
  AddUnpacks(*s, u);
  s->EndPhase();
  return Status::Ok();
}

void DumpHierarchical(const Args& a, const NodeGroup& ng, const char* node_phases, const char* form,
                      const char* suffix) {
  static const bool dump = !config::GetString("NICQ_PLAN_DUMP").empty();
  if (!dump) return;
  std::fprintf(stderr,
               "nicq[%d] coll plan: %s%s%s algorithm=hierarchical ranks=%d node_ranks=%d "
               "node_phases=%s leaders=%zu engine=host\n",
               a.comm->rank, form, KindName(a.kind), suffix, a.comm->size,
               ng.node ? ng.node->size : 1, node_phases, ng.groups.leaders.size());
}

bool TryHierarchicalNode(const Args& a, Status* st) {
  if (!NodeCollEnabled() || !HierarchicalNodeFits(a)) return false;
  NodeGroup* ng = nullptr;
  *st = NodeGroupOf(a.comm, &ng);
  if (!st->ok()) return true;
  const NodeGroups& g = GroupsFor(ng, a);
  // Every rank draws the leaders' tag, so the blocking sequence stays the
  // same on all of them.
  const int tag = NextTag(a.comm, 2);
  bool on_area = ng->node != nullptr;
  Args na = NodeArgs(a, *ng);
  const bool alone = ng->node == nullptr;
  switch (a.kind) {
    case Kind::kBarrier:
      if (!alone) *st = NodePhase(na, &on_area);
      if (st->ok()) *st = LeadersPhase(a, g, tag, nullptr);
      if (st->ok() && !alone) *st = NodePhase(na, &on_area);
      break;
    case Kind::kBcast:
      *st = LeadersPhase(a, g, tag, nullptr);
      if (st->ok() && !alone) *st = NodePhase(na, &on_area);
      break;
    case Kind::kReduce: {
      const bool is_root = a.comm->rank == a.root;
      const std::size_t bytes = std::size_t(a.rcount) * std::size_t(a.rtype->size);
      const void* partial = nullptr;  // what a leader other than the root contributes
      if (alone) {
        if (!is_root)
          partial = a.sendbuf;
        else if (a.sendbuf != kInPlace && bytes > 0)
          std::memcpy(a.recvbuf, a.sendbuf, bytes);
      } else {
        if (g.leader >= 0 && !is_root) {
          ng->partial.resize(bytes);
          na.recvbuf = ng->partial.data();
          partial = na.recvbuf;
        }
        *st = NodePhase(na, &on_area);
      }
      if (st->ok()) *st = LeadersPhase(a, g, tag, partial);
      break;
    }
    default: {  // allreduce
      na.kind = Kind::kReduce;
      if (!alone) {
        *st = NodePhase(na, &on_area);
      } else if (a.sendbuf != kInPlace && a.rcount > 0) {
        std::memcpy(a.recvbuf, a.sendbuf, std::size_t(a.rcount) * std::size_t(a.rtype->size));
      }
      if (st->ok()) *st = LeadersPhase(a, g, tag, nullptr);
      if (st->ok() && !alone) {
        na.kind = Kind::kBcast;
        na.sendbuf = nullptr;
        na.scount = a.rcount;
        na.stype = a.rtype;
        *st = NodePhase(na, &on_area);
      }
      break;
    }
  }
  DumpHierarchical(a, *ng, ng->node == nullptr ? "alone" : on_area ? "area" : "p2p");
  return true;
}

Status MakeNodeGroupAtCreation(Comm* comm) {
  if (comm == nullptr || comm->inter || !NodeCollEnabled() || !WantsHierarchy(comm))
    return Status::Ok();
  // Decided from the agreed slot, not from a count of this process's
  // groups: members also belong to different other communicators, so such
  // counts differ between them.
  const std::uint32_t slot = comm->context_id / rt::kContextStride;
  if (slot >= kEagerContextSlots) {
    NICQ_LOG(kInfo, kColl,
             "communicator of %d ranks spans nodes: its node group waits for its first blocking or "
             "persistent collective (context slot %u, groups are made at creation below %u)",
             comm->size, slot, kEagerContextSlots);
    return Status::Ok();
  }
  NodeGroup* ng = nullptr;
  return NodeGroupOf(comm, &ng);
}

void FreeNodeGroup(Comm* comm) {
  auto* ng = static_cast<NodeGroup*>(comm->node_group.p);
  if (ng == nullptr) return;
  comm->node_group.p = nullptr;
  if (ng->node != nullptr) rt::CommRelease(ng->node);
  delete ng;
}

}  // namespace nicq::coll
