#include "offload/algorithms/gather_fold.h"

#include <string>

namespace nicq::offload {

Status BuildGatherFold(const GatherFoldArgs& a, Schedule* s) {
  const int p = a.size, me = a.rank, root = a.root;
  const bool is_root = me == root;
  if (p < 2 || root < 0 || root >= p || a.peers == nullptr || a.bytes == 0)
    return Error(Code::kArg, "BuildGatherFold: size, root, peers or bytes");
  if (is_root &&
      (a.fold.fn == nullptr || a.slots == nullptr || a.result_from.size() != std::size_t(p) ||
       a.result_bytes.size() != std::size_t(p)))
    return Error(Code::kArg, "BuildGatherFold: the root needs slots, a fold and p results");
  if (!s->counters().empty() || !s->buffers().empty())
    return Error(Code::kArg, "BuildGatherFold: the schedule already has counters or buffers");
  const bool lands = !is_root && a.landing_bytes > 0;
  // Counter and buffer indices must agree across ranks: ready, arrive,
  // down; gather slots, result.
  const PlanCounter ready = s->AddCounter("ready", is_root ? 0 : 1);
  const PlanCounter arrive = s->AddCounter("arrive", is_root ? std::uint64_t(p - 1) : 0);
  const PlanCounter down = s->AddCounter("down", lands ? 1 : 0);
  const std::size_t slots_len = is_root ? std::size_t(p) * a.bytes : 8;
  void* slots = is_root ? a.slots : s->AllocScratch(8);
  const BufferId gather = s->ExposeBuffer("gather slots", slots, slots_len, arrive);
  void* landing = lands ? a.landing : s->AllocScratch(8);
  const BufferId res = s->ExposeBuffer("result", landing, lands ? a.landing_bytes : 8, down);
  if (!is_root) {
    StepId before_put;
    if (a.pack.fn != nullptr) {
      before_put = s->Host(a.pack.fn, a.pack.arg, {});
      s->SetLabel(before_put, a.pack.label);
    } else {
      // The start reaches the put as a zero add to `ready`, which the
      // root's token completes (as the edge exchange gates its puts).
      before_put = s->CounterAdd(ready, 0, {});
      s->SetLabel(before_put, "start counted into ready");
    }
    const StepId put =
        s->Put(a.contribution, a.bytes,
               RemoteBuffer{a.peers[root], gather, std::uint64_t(me) * a.bytes}, {before_put});
    s->WaitOn(put, ready);
    // The root counts the landing itself, and this rank's next contribution
    // waits for the root's next token, sent only once its fold is done: the
    // put's own completion need only free the source (MPI's own completion
    // of a reduce at a rank that gets no result back).
    s->CompleteAtSource(put);
    s->SetLabel(put, "contribution -> slot " + std::to_string(me) + " at root " +
                         std::to_string(root) + " (NIC put)");
    if (lands && a.unpack.fn != nullptr) {
      const StepId u = s->Host(a.unpack.fn, a.unpack.arg, {});
      s->WaitOn(u, down);
      s->SetLabel(u, a.unpack.label);
    } else if (lands) {
      const StepId arrived = s->Nop({});
      s->WaitOn(arrived, down);
      s->SetLabel(arrived, "result arrived");
    }
    return Status::Ok();
  }
  for (int j = 0; j < p; ++j) {
    if (j == me) continue;
    const StepId tok = s->RemoteCounterAdd(RemoteCounter{a.peers[j], ready}, 1, {});
    s->CompleteAtSource(tok);  // the fold waits for the puts it gates
    s->SetLabel(tok, "ready token to " + std::to_string(j));
  }
  // Every put into the slots follows this rank's token, sent at its start:
  // the arrivals gate the fold after the start too.
  const StepId fold = s->Host(a.fold.fn, a.fold.arg, {});
  s->WaitOn(fold, arrive);
  s->SetLabel(fold, a.fold.label);
  for (int j = 0; j < p; ++j) {
    if (j == me || a.result_bytes[j] == 0) continue;
    const StepId put =
        s->Put(a.result_from[j], a.result_bytes[j], RemoteBuffer{a.peers[j], res, 0}, {fold});
    // Rank j counts the landing; the next fold, which rewrites what this
    // put reads, waits for j's next contribution, sent after j's epoch saw
    // the result.
    s->CompleteAtSource(put);
    s->SetLabel(put, "result to " + std::to_string(j) + " (NIC put)");
  }
  return Status::Ok();
}

}  // namespace nicq::offload
