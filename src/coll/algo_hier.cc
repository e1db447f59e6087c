// Hierarchical builders (node_layout.h): a phase inside each node, one
// between the nodes' leaders, one inside each node again. Each phase is an
// ordinary builder run on a subgroup through the schedule's peer map.
#include "coll/algo_hier.h"

#include "coll/algorithms.h"
#include "coll/select.h"

namespace nicq::coll {
namespace {

int NodeSize(const NodeGroups& g) {
  return int(g.node.size());
}
int Leaders(const NodeGroups& g) {
  return int(g.leaders.size());
}

void BcastInGroup(Schedule& s, int r, int p, int root, void* buf, std::size_t bytes) {
  if (BcastUsesScatterAllgather(p, bytes))
    BuildBcastScatterAllgather(s, r, p, root, buf, bytes);
  else
    BuildBcastKnomial(s, r, p, root, buf, bytes, 2);
}

}  // namespace

void BuildAllreduceAmongLeaders(Schedule& s, const NodeGroups& g, void* buf, std::size_t elems,
                                std::size_t esize) {
  if (g.leader >= 0) {
    s.SetPeerMap(g.leaders.data());
    const int l = Leaders(g);
    if (AllreduceUsesBandwidth(l, elems * esize, elems)) {
      if (IsPof2(l))
        BuildAllreduceRabenseifner(s, g.leader, l, buf, buf, elems, esize);
      else
        BuildAllreduceRing(s, g.leader, l, buf, buf, elems, esize);
    } else {
      BuildAllreduceRecursiveDoubling(s, g.leader, l, buf, buf, elems, esize, true);
    }
  }
  s.SetPeerMap(nullptr);
}

void BuildReduceAmongLeaders(Schedule& s, const NodeGroups& g, const void* partial, void* out,
                             std::size_t elems, std::size_t esize) {
  if (g.leader >= 0) {
    s.SetPeerMap(g.leaders.data());
    BuildReduce(s, g.leader, Leaders(g), g.root_leader, partial, out, elems, esize, true);
  }
  s.SetPeerMap(nullptr);
}

void BuildBcastAmongLeaders(Schedule& s, const NodeGroups& g, void* buf, std::size_t bytes) {
  if (g.leader >= 0) {
    s.SetPeerMap(g.leaders.data());
    BcastInGroup(s, g.leader, Leaders(g), g.root_leader, buf, bytes);
  }
  s.SetPeerMap(nullptr);
}

void BuildBarrierAmongLeaders(Schedule& s, const NodeGroups& g) {
  if (g.leader >= 0) {
    s.SetPeerMap(g.leaders.data());
    BuildBarrier(s, g.leader, Leaders(g));
  }
  s.SetPeerMap(nullptr);
}

void BuildAllreduceHierarchical(Schedule& s, const NodeGroups& g, const void* in, void* out,
                                std::size_t elems, std::size_t esize) {
  const std::size_t bytes = elems * esize;
  // Inside the node, toward its leader (index 0).
  s.SetPeerMap(g.node.data());
  BuildReduce(s, g.local, NodeSize(g), 0, in, out, elems, esize, /*commute=*/true);
  // Between the leaders, in place in the leaders' output.
  BuildAllreduceAmongLeaders(s, g, out, elems, esize);
  // The result back to every rank of the node.
  s.SetPeerMap(g.node.data());
  BcastInGroup(s, g.local, NodeSize(g), 0, out, bytes);
  s.SetPeerMap(nullptr);
}

void BuildReduceHierarchical(Schedule& s, const NodeGroups& g, const void* in, void* out,
                             std::size_t elems, std::size_t esize) {
  // Inside the node toward its leader; a leader other than the root keeps
  // its node's partial result in scratch.
  const bool root = g.leader >= 0 && g.leader == g.root_leader;
  void* partial = g.leader >= 0 && !root ? s.Scratch(elems * esize) : out;
  s.SetPeerMap(g.node.data());
  BuildReduce(s, g.local, NodeSize(g), 0, in, partial, elems, esize, /*commute=*/true);
  // Between the leaders, toward the root's.
  BuildReduceAmongLeaders(s, g, partial, out, elems, esize);
}

void BuildBcastHierarchical(Schedule& s, const NodeGroups& g, void* buf, std::size_t bytes) {
  BuildBcastAmongLeaders(s, g, buf, bytes);
  s.SetPeerMap(g.node.data());
  BcastInGroup(s, g.local, NodeSize(g), 0, buf, bytes);
  s.SetPeerMap(nullptr);
}

void BuildBarrierHierarchical(Schedule& s, const NodeGroups& g) {
  // Everyone on the node has arrived at its leader ...
  s.SetPeerMap(g.node.data());
  if (g.local == 0) {
    for (int i = 1; i < NodeSize(g); ++i) s.Recv(nullptr, 0, i);
  } else {
    s.Send(nullptr, 0, 0);
  }
  s.EndPhase();
  // ... the leaders know every node has ...
  BuildBarrierAmongLeaders(s, g);
  // ... and each leader releases its node.
  s.SetPeerMap(g.node.data());
  if (g.local == 0) {
    for (int i = 1; i < NodeSize(g); ++i) s.Send(nullptr, 0, i);
  } else {
    s.Recv(nullptr, 0, 0);
  }
  s.EndPhase();
  s.SetPeerMap(nullptr);
}

}  // namespace nicq::coll
