#include "coll/node_layout.h"

#include <algorithm>
#include <unordered_map>

#include "core/log.h"
#include "runtime/runtime.h"

namespace nicq::coll {

void SetNodeLayout(Comm* comm, std::vector<int> node_of_rank) {
  CommNodeLayout& l = comm->node_layout;
  l.node = std::move(node_of_rank);
  std::unordered_map<int, int> members;
  for (int id : l.node) ++members[id];
  bool shared = false;
  for (const auto& [id, n] : members) shared |= n > 1;
  l.spans_shared_nodes = members.size() > 1 && shared;
}

const CommNodeLayout& NodeLayoutOf(Comm* comm) {
  if (comm->node_layout.node.empty() && comm->size > 0) {
    std::vector<int> ids(std::size_t(comm->size));
    for (int r = 0; r < comm->size; ++r)
      ids[std::size_t(r)] = rt::NodeIdOf(comm->world_ranks[std::size_t(r)]);
    SetNodeLayout(comm, std::move(ids));
    if (comm->node_layout.spans_shared_nodes && !comm->inter)
      NICQ_LOG(kInfo, kColl,
               "communicator of %d ranks spans nodes: barrier, bcast and commutative allreduce "
               "are hierarchical",
               comm->size);
  }
  return comm->node_layout;
}

bool WantsHierarchy(Comm* comm) {
  return !comm->inter && comm->size > 2 && NodeLayoutOf(comm).spans_shared_nodes;
}

void GroupByNode(Comm* comm, int root, NodeGroups* out) {
  const std::vector<int>& node = NodeLayoutOf(comm).node;
  const int me = comm->rank;
  const int my_node = node[std::size_t(me)];
  out->node.clear();
  out->leaders.clear();
  // Leaders in order of their node's lowest rank: the first rank seen of
  // each node, replaced by the root on the root's node.
  std::unordered_map<int, int> slot;  // node id -> index in leaders
  for (int r = 0; r < comm->size; ++r) {
    const int id = node[std::size_t(r)];
    if (slot.try_emplace(id, int(out->leaders.size())).second) out->leaders.push_back(r);
    if (id == my_node) out->node.push_back(r);
  }
  if (root >= 0) {
    const int rs = slot[node[std::size_t(root)]];
    out->leaders[std::size_t(rs)] = root;
    out->root_leader = rs;
  } else {
    out->root_leader = 0;
  }
  const int my_leader = out->leaders[std::size_t(slot[my_node])];
  // The leader first, the others in rank order.
  auto it = std::find(out->node.begin(), out->node.end(), my_leader);
  std::rotate(out->node.begin(), it, it + 1);
  out->local = int(std::find(out->node.begin(), out->node.end(), me) - out->node.begin());
  out->leader = me == my_leader ? slot[my_node] : -1;
}

}  // namespace nicq::coll
