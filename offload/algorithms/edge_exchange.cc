#include "offload/algorithms/edge_exchange.h"

#include <string>

namespace nicq::offload {

Status BuildEdgeExchange(const EdgeExchangeArgs& a, Schedule* s) {
  if (a.send_blocks.size() != a.destinations.size() ||
      a.send_bytes.size() != a.destinations.size() ||
      a.remote_offset.size() != a.destinations.size() || a.recv_bytes.size() != a.sources.size())
    return Error(Code::kArg, "BuildEdgeExchange: per-edge lists of different lengths");
  if (!s->counters().empty() || !s->buffers().empty())
    return Error(Code::kArg, "BuildEdgeExchange: the schedule already has counters or buffers");
  const PeerId self = a.self;
  // Empty edges move nothing on either end (both ends know the edge's size),
  // so they owe no token and count no arrival.
  auto live_out = [&](std::size_t j) { return a.destinations[j] >= 0 && a.send_bytes[j] > 0; };
  auto live_in = [&](std::size_t i) { return a.sources[i] >= 0 && a.recv_bytes[i] > 0; };
  // Tokens this rank is owed per epoch: one per live out-edge to another
  // rank (that rank's in-edge from us). Edges to itself need none: its own
  // start gates them.
  std::uint64_t tokens_owed = 0, in_edges = 0;
  for (std::size_t j = 0; j < a.destinations.size(); ++j)
    tokens_owed += live_out(j) && a.destinations[j] != self;
  for (std::size_t i = 0; i < a.sources.size(); ++i) in_edges += live_in(i);
  // Counter and buffer indices must agree across ranks: ready, arrive, recvbuf.
  const PlanCounter ready = s->AddCounter("ready", tokens_owed);
  const PlanCounter arrive = s->AddCounter("arrive", in_edges);
  // A rank nothing arrives at still exposes a buffer (index 0 on every rank).
  void* recv_at = !a.recv_len ? s->AllocScratch(8)
                  : a.recvbuf ? a.recvbuf
                              : s->AllocScratch(a.recv_len);
  const BufferId recv = s->ExposeBuffer("recvbuf", recv_at, a.recv_len ? a.recv_len : 8, arrive);

  // Tokens hang off the start counter itself, and the start reaches the
  // puts as a zero add to `ready` (its completion counts the start there):
  // one op, where a start step that tokens and puts share lowers to two
  // (its zero add and the fan-out of its completion into `ready`). Nothing
  // the start fires adds to the done counter: on sockets a counter op fires
  // its target's triggers inside the add, and the done counter's last add
  // of an epoch fires a queue's next start (Capabilities::
  // counter_op_cycles_deadlock).
  std::vector<StepId> puts_after;
  if (tokens_owed) {
    const StepId started = s->CounterAdd(ready, 0, {});
    s->SetLabel(started, "start counted into ready");
    puts_after.push_back(started);
  }
  // Every put waits on the pack step (the steps waiting on `ready` must
  // share their inputs); it reads the user's send buffer at the start.
  if (a.pack.fn != nullptr) {
    const StepId packed = s->Host(a.pack.fn, a.pack.arg, {});
    s->SetLabel(packed, a.pack.label);
    puts_after.push_back(packed);
  }
  for (std::size_t i = 0; i < a.sources.size(); ++i) {
    if (!live_in(i) || a.sources[i] == self) continue;
    const StepId t = s->RemoteCounterAdd(RemoteCounter{a.sources[i], ready}, 1, {});
    // The sender learns of the token from its own ready counter, and this
    // epoch's done waits for the sender's put, which the token gates: the
    // token's own completion need only say that it left.
    s->CompleteAtSource(t);
    s->SetLabel(t, "ready token to " + std::to_string(a.sources[i]) + " (in-edge " +
                       std::to_string(i) + ")");
  }
  for (std::size_t j = 0; j < a.destinations.size(); ++j) {
    if (!live_out(j)) continue;  // MPI_PROC_NULL or empty: nothing moves
    const PeerId dst = a.destinations[j];
    const StepId p = s->Put(a.send_blocks[j], a.send_bytes[j],
                            RemoteBuffer{dst, recv, a.remote_offset[j]}, puts_after);
    if (tokens_owed) s->WaitOn(p, ready);
    // The receiver learns of the landing from its arrival counter, and this
    // edge's next put waits for its next token, sent only once its epoch
    // is done: the put's own completion need only free the source.
    s->CompleteAtSource(p);
    std::string label = "block " + std::to_string(j) + " -> " + std::to_string(dst) + " at byte " +
                        std::to_string(a.remote_offset[j]);
    if (j < a.send_notes.size()) label += " (" + a.send_notes[j] + ")";
    if (j < a.send_packed.size() && a.send_packed[j]) label += " from the packed copy";
    s->SetLabel(p, label);
  }
  if (in_edges && a.unpack.fn != nullptr) {
    const StepId u = s->Host(a.unpack.fn, a.unpack.arg, {});
    s->WaitOn(u, arrive);
    s->SetLabel(u, a.unpack.label);
  } else if (in_edges) {
    const StepId arrived = s->Nop({});
    s->WaitOn(arrived, arrive);
    s->SetLabel(arrived, std::to_string(in_edges) + " blocks arrived");
  }
  return Status::Ok();
}

}  // namespace nicq::offload
