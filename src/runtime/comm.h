// nicq::Comm — an intracommunicator: a group of world ranks plus the
// context ids that separate its traffic. Point-to-point and collective
// traffic use different context ids so they never match each other;
// nonblocking and blocking collectives use different sub-contexts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nicq {

struct Comm {
  std::uint32_t context_id = 0;  // p2p context; context_id+1 collectives; +2 internal
  int rank = 0;                  // this process's rank in the comm
  int size = 1;
  std::vector<int> world_ranks;  // comm rank -> world rank
  std::uint64_t coll_seq = 0;    // collective sequence number (tags internal coll messages)

  // API-layer fields (the runtime never interprets them).
  int errhandler = 0;  // MPI_Errhandler handle value
  std::string name;
  void* api_data = nullptr;

  int WorldRank(int comm_rank) const { return world_ranks[comm_rank]; }
};

}  // namespace nicq
