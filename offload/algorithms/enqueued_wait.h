// The counter ops of an enqueued wait (src/queue's Queue posts them at
// MPI_Enqueue_wait / MPI_Enqueue_waitall): a pure function of the requests'
// done counters and the queue's counter, so the simulator tests
// (tests/queue/sim_example_test.cc) run exactly the ops a queue posts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "offload/algorithms/counter_ops.h"

namespace nicq::offload {

// One request of an enqueued wait: done when `done` reaches `target`.
struct WaitTarget {
  CounterId done = kNoCounter;
  std::uint64_t target = 0;
};

// An enqueued wait for n requests (MPI_Enqueue_waitall; MPI_Enqueue_wait is
// n = 1): waits k0+1 .. k0+n of the queue whose counter is qc, as counter
// ops on a join counter:
//   request i done                         -> join += 1   (n ops)
//   qc >= k0 (every earlier wait is done)   -> join += 1   (unless implied)
//   join >= join_target                     -> qc += n
// join_target is the join's cumulative count once this wait's adds have
// landed (n + 1, or n when gate_implied). A join serves one outstanding
// wait at a time: were two to share it, a later wait's completions could
// stand in for an earlier one's (Queue keeps a ring of joins).
// `gate_implied`: every request's pending start was gated on qc >= k0 (no
// wait was enqueued between those starts and this wait). An epoch
// completes only after it began, so "all done" already implies qc >= k0:
// that op is left out, and with it the counter-op cycle qc -> join -> qc.
// `back_edge_remote` (Capabilities::counter_op_cycles_deadlock): when the
// cycle exists, the last edge goes out as doorbell writes to this process
// (`self`), which land outside the firing chain, in adds of at most
// `max_remote_add` (all gated on the join: qc still passes k0 only once
// every request is done). ops needs n + 2 + n / max_remote_add entries at
// most; returns how many it filled.
inline std::size_t BuildWaitAllOps(std::span<const WaitTarget> reqs, CounterId join,
                                   std::uint64_t join_target, CounterId qc, std::uint64_t k0,
                                   bool gate_implied, bool back_edge_remote,
                                   std::uint64_t max_remote_add, PeerId self, TriggeredOp* ops) {
  std::size_t i = 0;
  for (const WaitTarget& r : reqs) ops[i++] = LocalCounterAdd(r.done, r.target, join);
  if (gate_implied)
    back_edge_remote = false;  // no qc -> join edge: no cycle to break
  else
    ops[i++] = LocalCounterAdd(qc, k0, join);
  std::uint64_t left = reqs.size();
  while (left > 0) {
    TriggeredOp& edge = ops[i++];
    edge = LocalCounterAdd(join, join_target, qc);
    edge.value = left;
    if (back_edge_remote) {
      edge.kind = OpKind::kRemoteCounterAdd;
      edge.peer = self;
      if (max_remote_add > 0 && edge.value > max_remote_add) edge.value = max_remote_add;
    }
    left -= edge.value;
  }
  return i;
}

}  // namespace nicq::offload
