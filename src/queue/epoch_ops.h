// The triggered ops one epoch of a matched point-to-point request posts, and
// the three counter ops of an enqueued wait: pure functions of what the match
// resolved, so that the simulator tests (tests/queue/sim_example_test.cc) run
// exactly the ops MatchedP2p and Queue post, on many ranks in one process.
// The protocol itself is described in matched_p2p.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "providers/backend.h"

namespace nicq::queue {

// One side of a matched pair, as the match left it.
struct P2pWire {
  enum class Role : std::uint8_t { kProcNull, kSend, kRecv };
  Role role = Role::kProcNull;
  const void* buf = nullptr;                              // send buffer (sender)
  std::size_t bytes = 0;                                  // send bytes (sender)
  offload::PeerId peer = -1;                              // the peer's world rank
  offload::CounterId gate = offload::kNoCounter;          // sender: ready tokens + starts
  offload::CounterId done = offload::kNoCounter;          // sender: acks; receiver: arrivals
  offload::CounterId peer_gate = offload::kNoCounter;     // receiver: the sender's gate
  offload::CounterId peer_done = offload::kNoCounter;     // receiver: the sender's done
  offload::CounterId peer_arrival = offload::kNoCounter;  // sender: receiver's arrivals
  std::uint64_t remote_addr = 0, remote_key = 0;          // sender: receive buffer
};

inline offload::TriggeredOp LocalCounterAdd(offload::CounterId trigger, std::uint64_t threshold,
                                            offload::CounterId target) {
  offload::TriggeredOp op;
  op.kind = offload::OpKind::kCounterAdd;
  op.trigger = trigger;
  op.threshold = threshold;
  op.target_counter = target;
  op.value = 1;
  return op;
}

// Epoch n (1, 2, ...) gated on `gate` >= `threshold` (kNoCounter: at once).
// Fills ops[0..2) and returns how many to post; *host_add is the counter the
// host bumps by one after posting them (kNoCounter: none).
inline std::size_t BuildEpochOps(const P2pWire& w, std::uint64_t n, offload::CounterId gate,
                                 std::uint64_t threshold, offload::TriggeredOp* ops,
                                 offload::CounterId* host_add) {
  using offload::kNoCounter;
  using offload::OpKind;
  using offload::TriggeredOp;
  *host_add = kNoCounter;
  switch (w.role) {
    case P2pWire::Role::kProcNull:  // the start is the completion
      if (gate == kNoCounter) {
        *host_add = w.done;
        return 0;
      }
      ops[0] = LocalCounterAdd(gate, threshold, w.done);
      return 1;
    case P2pWire::Role::kSend: {
      TriggeredOp& put = ops[0];
      put = TriggeredOp{};
      put.trigger = w.gate;
      put.threshold = 2 * n;  // receiver ready + this send started
      // No local completion counter: the receiver's acknowledgement is it.
      put.peer = w.peer;
      put.target_counter = w.peer_arrival;
      if (w.bytes == 0) {
        put.kind = OpKind::kRemoteCounterAdd;
        put.value = 1;
      } else {
        put.kind = OpKind::kPut;
        put.local_buf = w.buf;
        put.bytes = w.bytes;
        put.remote_addr = w.remote_addr;
        put.remote_key = w.remote_key;
      }
      if (gate == kNoCounter) {
        *host_add = w.gate;
        return 1;
      }
      ops[1] = LocalCounterAdd(gate, threshold, w.gate);
      return 2;
    }
    case P2pWire::Role::kRecv: {  // the start is the ready token; the landing is acknowledged
      TriggeredOp& token = ops[0];
      token = TriggeredOp{};
      token.kind = OpKind::kRemoteCounterAdd;
      token.trigger = gate;
      token.threshold = gate == kNoCounter ? 0 : threshold;
      token.peer = w.peer;
      token.target_counter = w.peer_gate;
      token.value = 1;
      TriggeredOp& ack = ops[1];
      ack = TriggeredOp{};
      ack.kind = OpKind::kRemoteCounterAdd;
      ack.trigger = w.done;
      ack.threshold = n;
      ack.peer = w.peer;
      ack.target_counter = w.peer_done;
      ack.value = 1;
      return 2;
    }
  }
  return 0;
}

// Eager variant (backends without native triggers, for standard, buffered
// and ready sends): epoch n is one tagged send and one tagged receive, each
// gated on `gate` >= `threshold`, completing into the side's done counter.
// A standard send may complete before its receive starts (the provider holds
// an unexpected message, as MPI's eager protocol does), so a queued
// iteration costs one fabric hop instead of three (ready token, put,
// acknowledgement), which is what a ring of MPI_Startall pays. `tag` is the
// same on both sides: kEagerTag | the receiver's done counter, unique per
// receiving process; one sender per tag keeps epochs matched in order.
inline constexpr std::uint64_t kEagerTag = std::uint64_t(1) << 60;

inline std::size_t BuildEagerEpochOps(const P2pWire& w, offload::CounterId gate,
                                      std::uint64_t threshold, void* recv_buf,
                                      std::size_t recv_capacity, std::uint64_t tag,
                                      offload::TriggeredOp* ops, offload::CounterId* host_add) {
  using offload::kNoCounter;
  using offload::OpKind;
  *host_add = kNoCounter;
  if (w.role == P2pWire::Role::kProcNull) {
    if (gate == kNoCounter) {
      *host_add = w.done;
      return 0;
    }
    ops[0] = LocalCounterAdd(gate, threshold, w.done);
    return 1;
  }
  offload::TriggeredOp& op = ops[0];
  op = offload::TriggeredOp{};
  op.trigger = gate;
  op.threshold = gate == kNoCounter ? 0 : threshold;
  op.peer = w.peer;
  op.tag = tag;
  op.completion = w.done;
  if (w.role == P2pWire::Role::kSend) {
    op.kind = OpKind::kSend;
    op.local_buf = w.buf;
    op.bytes = w.bytes;
  } else {
    op.kind = OpKind::kRecv;
    op.local_rbuf = recv_buf;
    op.bytes = recv_capacity;
  }
  return 1;
}

// One request of an enqueued wait: done when `done` reaches `target`.
struct WaitTarget {
  offload::CounterId done = offload::kNoCounter;
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
inline std::size_t BuildWaitAllOps(std::span<const WaitTarget> reqs, offload::CounterId join,
                                   std::uint64_t join_target, offload::CounterId qc,
                                   std::uint64_t k0, bool gate_implied, bool back_edge_remote,
                                   std::uint64_t max_remote_add, offload::PeerId self,
                                   offload::TriggeredOp* ops) {
  std::size_t i = 0;
  for (const WaitTarget& r : reqs) ops[i++] = LocalCounterAdd(r.done, r.target, join);
  if (gate_implied)
    back_edge_remote = false;  // no qc -> join edge: no cycle to break
  else
    ops[i++] = LocalCounterAdd(qc, k0, join);
  std::uint64_t left = reqs.size();
  while (left > 0) {
    offload::TriggeredOp& edge = ops[i++];
    edge = LocalCounterAdd(join, join_target, qc);
    edge.value = left;
    if (back_edge_remote) {
      edge.kind = offload::OpKind::kRemoteCounterAdd;
      edge.peer = self;
      if (max_remote_add > 0 && edge.value > max_remote_add) edge.value = max_remote_add;
    }
    left -= edge.value;
  }
  return i;
}

}  // namespace nicq::queue
