// MPI_Iallreduce, MPI_Ireduce, MPI_Ibcast and MPI_Ibarrier of a communicator whose
// ranks all share the node, on the area's reserved op slots
// (node_persistent.h).
//
// Nonblocking collectives on a communicator are started in the same order
// on every rank (MPI 4.1 7.12), so the n-th call that takes the area takes
// reserved slot n mod kNbSlots on every rank without agreeing on anything.
// A call whose slot still runs this rank's previous call there waits in
// the slot's queue and is started by the progress hook once that one has
// completed: the start never waits for the peers, and each slot's starts
// keep their order. Whether a call takes the area is decided from the
// arguments and from whether the communicator's area exists already: it
// is made only inside a collective call (which every rank makes in the
// same order), never here, since making it would wait for every rank.
#include <cstdio>

#include "coll/coll.h"
#include "coll/node_area.h"
#include "coll/node_persistent.h"
#include "coll/node_reduce.h"
#include "core/config.h"

namespace nicq::coll {

bool TryNodeNonblocking(const Args& a, Request* req, Status* st) {
  NodeArea* area = NodeAreaIfMade(a.comm);
  if (area == nullptr || !NodeSlotCollective::Fits(a, *area)) return false;
  if (!NodeSlotCollective::EnsureHook()) return false;
  const std::uint64_t call = area->nb_calls++;
  const int i = int(call % NodeArea::kNbSlots);
  std::shared_ptr<NodeSlotCollective>& op = area->nb_slots[i];
  if (!op) op = NodeSlotCollective::ForReservedSlot(area, NodeArea::kOpSlots + i);
  static const bool dump = !config::GetString("NICQ_PLAN_DUMP").empty();
  if (dump && call < NodeArea::kNbSlots)
    std::fprintf(stderr, "nicq[%d] coll plan: i%s ranks=%d slot=%d engine=node\n", area->rank(),
                 KindName(a.kind), area->ranks(), NodeArea::kOpSlots + i);
  *st = op->StartOrQueue(a, req);
  return true;
}

}  // namespace nicq::coll
