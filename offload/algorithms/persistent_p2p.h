// Matched persistent point-to-point (DESIGN.md, "the life of a persistent
// allreduce", last paragraph): after the match the sender holds the receive
// buffer's address and key, and each start is an RMA write gated on "sender
// started" plus "receiver ready" (both feed one counter: threshold 2 per
// epoch); the write's arrival counter at the receiver completes the receive,
// and the receiver acknowledges each landing, so a sender's completion means
// the data arrived. No tag matching on the data path.
//
// BuildEpochOps / BuildEagerEpochOps are the triggered ops one epoch of a
// matched request posts (src/queue's MatchedP2p, at a start or when it arms
// a resident window). They are pure functions of what the match resolved
// (P2pWire), so the tests (tests/offload/persistent_p2p_test.cc, and
// tests/queue/sim_example_test.cc on 64 ranks in one process) run exactly
// the ops MatchedP2p posts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "offload/algorithms/counter_ops.h"

namespace nicq::offload {

// One side of a matched pair, as the match left it.
struct P2pWire {
  enum class Role : std::uint8_t { kProcNull, kSend, kRecv };
  Role role = Role::kProcNull;
  const void* buf = nullptr;                      // send buffer (sender)
  std::size_t bytes = 0;                          // send bytes (sender)
  PeerId peer = -1;                               // the peer's world rank
  CounterId gate = kNoCounter;                    // sender: ready tokens + starts
  CounterId done = kNoCounter;                    // sender: acks; receiver: arrivals
  CounterId peer_gate = kNoCounter;               // receiver: the sender's gate
  CounterId peer_done = kNoCounter;               // receiver: the sender's done
  CounterId peer_arrival = kNoCounter;            // sender: receiver's arrivals
  std::uint64_t remote_addr = 0, remote_key = 0;  // sender: receive buffer
};

// Epoch n (1, 2, ...) gated on `gate` >= `threshold` (kNoCounter: at once).
// Fills ops[0..2) and returns how many to post; *host_add is the counter the
// host bumps by one after posting them (kNoCounter: none).
inline std::size_t BuildEpochOps(const P2pWire& w, std::uint64_t n, CounterId gate,
                                 std::uint64_t threshold, TriggeredOp* ops, CounterId* host_add) {
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

inline std::size_t BuildEagerEpochOps(const P2pWire& w, CounterId gate, std::uint64_t threshold,
                                      void* recv_buf, std::size_t recv_capacity, std::uint64_t tag,
                                      TriggeredOp* ops, CounterId* host_add) {
  *host_add = kNoCounter;
  if (w.role == P2pWire::Role::kProcNull) {
    if (gate == kNoCounter) {
      *host_add = w.done;
      return 0;
    }
    ops[0] = LocalCounterAdd(gate, threshold, w.done);
    return 1;
  }
  TriggeredOp& op = ops[0];
  op = TriggeredOp{};
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

}  // namespace nicq::offload
