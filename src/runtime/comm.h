// nicq::Comm — a communicator: a group of world ranks plus the context ids
// that separate its traffic. An intercommunicator (inter = true) keeps its
// local group in rank/size/world_ranks like an intracommunicator does (so
// MPI_Comm_rank/size/group and every group-level check see the local
// group) and adds the remote group, which point-to-point ranks name: the
// Peer* accessors are what send/receive/status translation use. Point-to-point and collective
// traffic use different context ids so they never match each other;
// nonblocking and blocking collectives use different sub-contexts.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace nicq {

// The references that keep a communicator alive: its handle's (until
// MPI_Comm_free) and one per request that uses it. A copy (the collectives'
// shadow of a communicator) starts with its own single reference.
struct CommRefs {
  std::atomic<int> n{1};
  CommRefs() = default;
  CommRefs(const CommRefs&) {}
  CommRefs& operator=(const CommRefs&) { return *this; }
};

// A process-unique number per Comm object; a copy gets a number of its own.
// State kept elsewhere by a communicator's address (the collectives') tells
// by it that the object at that address is a new communicator: the address
// and the context id of a freed communicator are both reused.
struct CommSerial {
  std::uint64_t value;
  CommSerial() : value(Next()) {}
  CommSerial(const CommSerial&) : value(Next()) {}
  CommSerial& operator=(const CommSerial&) { return *this; }
  static std::uint64_t Next() {
    static std::atomic<std::uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
  }
};

// A pointer the collectives layer owns per communicator (its same-node
// area, coll/node_area.h; its per-node communicator of a communicator
// spanning nodes, coll/hier_node.h), released through the runtime's
// communicator destroy hook. A copy (the collectives' shadow) starts
// without one, so only the communicator that made it ever frees it.
struct CommCollOwned {
  void* p = nullptr;
  CommCollOwned() = default;
  CommCollOwned(const CommCollOwned&) {}
  CommCollOwned& operator=(const CommCollOwned&) { return *this; }
};

// Which node each rank of a communicator is on, as the collectives layer
// groups them for hierarchical schedules (coll/node_layout.h); filled on
// first use from world_ranks, so copies may keep it.
struct CommNodeLayout {
  std::vector<int> node;            // comm rank -> node id; empty: not known yet
  bool spans_shared_nodes = false;  // more than one node, and a node holds two ranks or more
};

struct Comm {
  CommRefs refs;      // rt::CommRetain / CommRelease
  CommSerial serial;  // see CommSerial
  // p2p context; context_id+1 collectives; +2 internal (match replies of
  // queue/matched_p2p_match.cc);
  // +3 the runtime's own traffic (comm creation, finalize); +4 and +5
  // partitioned communication's offers and data (api/partitioned.cc); +6
  // and +7 unused. Ids come in steps of 8 (rt::kContextStride).
  std::uint32_t context_id = 0;
  int rank = 0;  // this process's rank in the comm
  int size = 1;
  std::vector<int> world_ranks;  // comm rank -> world rank
  std::uint64_t coll_seq = 0;    // collective sequence number (tags internal coll messages)

  // API-layer fields (the runtime never interprets them).
  int errhandler = 0;  // MPI_Errhandler handle value
  std::string name;
  void* api_data = nullptr;

  // Runtime fields (additive): world rank -> comm rank, -1 for non-members;
  // empty means the identity (World and its duplicates).
  std::vector<int> world_to_rank;
  std::uint64_t rt_seq = 0;  // tags of the runtime's own messages (comm creation)
  // The session the communicator derives from (an index, -1: none): its
  // buffered sends fall back on that session's buffer (rt::CommSetSession).
  int session = -1;
  bool rt_map_checked = false;  // world_to_rank validated (comms built outside the runtime)
  CommCollOwned node_area;      // see CommCollOwned
  CommCollOwned node_group;     // see CommCollOwned
  CommNodeLayout node_layout;   // see CommNodeLayout

  // Intercommunicators: the remote group (comm rank -> world rank, and
  // world rank -> remote rank, -1 for others) and the local group as an
  // intracommunicator of its own (its own context id), which carries the
  // local phases of intercommunicator collectives and creation exchanges.
  bool inter = false;
  std::vector<int> remote_world_ranks;
  std::vector<int> remote_world_to_rank;
  Comm* local_comm = nullptr;  // owned; freed with the intercommunicator

  int WorldRank(int comm_rank) const { return world_ranks[comm_rank]; }
  int RankOfWorld(int world) const {
    if (world_to_rank.empty()) return world;
    return world >= 0 && world < int(world_to_rank.size()) ? world_to_rank[world] : -1;
  }
  // The group point-to-point ranks name: the remote group of an
  // intercommunicator, the group itself otherwise.
  int PeerSize() const { return inter ? int(remote_world_ranks.size()) : size; }
  int PeerWorld(int peer_rank) const {
    return inter ? remote_world_ranks[peer_rank] : world_ranks[peer_rank];
  }
  int PeerOfWorld(int world) const {
    if (!inter) return RankOfWorld(world);
    return world >= 0 && world < int(remote_world_to_rank.size()) ? remote_world_to_rank[world]
                                                                  : -1;
  }
};

}  // namespace nicq
