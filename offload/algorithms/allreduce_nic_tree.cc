// k-ary tree allreduce (and reduce) on NIC atomics and puts.
//
// Up: each rank puts its contribution where it folds (recvbuf, or plan
// scratch for a reduce's non-root), tells its children they may combine
// into it (ready token), waits for their atomics plus its parent's ready
// token, then combines its fold buffer into the parent's. Down (allreduce
// only): the root, once every child has combined in, puts the result into
// its children's recvbuf; each child forwards it when it lands. recvbuf is
// exposed twice, so that arrivals up and down count on different counters.
#include "offload/algorithms/allreduce.h"

namespace nicq::offload {
namespace {

struct TreeShape {
  bool has_parent = false;
  int parent = -1;
  std::vector<int> children;
};

TreeShape Shape(int rank, int size, int radix) {
  TreeShape t;
  t.has_parent = rank > 0;
  t.parent = t.has_parent ? (rank - 1) / radix : -1;
  for (int c = rank * radix + 1; c <= rank * radix + radix && c < size; ++c)
    t.children.push_back(c);
  return t;
}

}  // namespace

Status BuildAllreduceNicTree(const AllreduceArgs& a, Schedule* s) {
  if (a.size < 1 || a.rank < 0 || a.rank >= a.size || a.radix < 1) {
    return Error(Code::kArg, "BuildAllreduceNicTree: rank " + std::to_string(a.rank) + " size " +
                                 std::to_string(a.size) + " radix " + std::to_string(a.radix));
  }
  const std::size_t bytes = a.count * AtomicTypeSize(a.type);
  auto peer = [&](int r) { return a.peers ? a.peers[r] : static_cast<PeerId>(r); };
  const TreeShape t = Shape(a.rank, a.size, a.radix);
  // A reduce's non-root folds in scratch (its recvbuf is not significant).
  void* const fold = a.reduce && t.has_parent ? s->AllocScratch(bytes) : a.recvbuf;
  // Counter and buffer indices must agree across ranks: up, down first.
  // "up": children's atomics + the parent's ready token; "down": the
  // parent's result put.
  const PlanCounter up = s->AddCounter("up", t.children.size() + (t.has_parent ? 1 : 0));
  const PlanCounter down = s->AddCounter("down", t.has_parent && !a.reduce ? 1 : 0);
  StepId ready;
  BufferId acc, res;
  if (a.copy_by_put) {
    // The contribution moves by a put to this rank's own exposed buffer,
    // a NIC step like the others: nothing of an epoch runs on the host, so
    // a chain of enqueued epochs completes with every host thread asleep.
    const bool copy = a.sendbuf != fold;
    const PlanCounter self = s->AddCounter("self", copy ? 1 : 0);
    acc = s->ExposeBuffer("acc", fold, bytes, up);
    res = a.reduce ? acc : s->ExposeBuffer("res", a.recvbuf, bytes, down);
    const BufferId mine = s->ExposeBuffer("mine", fold, bytes, self);
    if (copy) {
      const StepId put = s->Put(a.sendbuf, bytes, RemoteBuffer{peer(a.rank), mine, 0}, {});
      s->SetLabel(put, a.reduce && t.has_parent ? "sendbuf -> own scratch (NIC put)"
                                                : "sendbuf -> own recvbuf (NIC put)");
      ready = s->Nop({put});
      s->WaitOn(ready, self);
      s->SetLabel(ready, "own contribution in place");
    } else {
      ready = s->Nop({});
      s->SetLabel(ready, "start (in place)");
    }
  } else {
    acc = s->ExposeBuffer("acc", fold, bytes, up);
    res = a.reduce ? acc : s->ExposeBuffer("res", a.recvbuf, bytes, down);
    ready = s->Copy(fold, a.sendbuf, bytes, {});
    s->SetLabel(ready, "copy send->recv");
  }
  for (int c : t.children) {
    const StepId token = s->RemoteCounterAdd(RemoteCounter{peer(c), up}, 1, {ready});
    s->SetLabel(token, "ready token to " + std::to_string(c));
  }
  if (t.has_parent) {
    const StepId at =
        s->Atomic(a.op, a.type, fold, bytes, RemoteBuffer{peer(t.parent), acc, 0}, {ready});
    s->WaitOn(at, up);
    s->SetLabel(at, "combine into parent " + std::to_string(t.parent));
  }
  if (a.reduce) {
    if (!t.has_parent) {  // the root: done once every child's contribution is in
      const StepId done = s->Nop({ready});
      s->WaitOn(done, up);
      s->SetLabel(done, "children's contributions arrived");
    }
    return Status::Ok();
  }
  // Down: the root starts it once all children are in; others forward on
  // arrival.
  for (int c : t.children) {
    const StepId p = s->Put(a.recvbuf, bytes, RemoteBuffer{peer(c), res, 0},
                            t.has_parent ? std::vector<StepId>{} : std::vector<StepId>{ready});
    s->WaitOn(p, t.has_parent ? down : up);
    s->SetLabel(p, "result to child " + std::to_string(c));
  }
  if (t.has_parent && t.children.empty()) {
    const StepId done = s->Nop({});  // a leaf is done when the result has landed
    s->WaitOn(done, down);
    s->SetLabel(done, "result arrived");
  }
  return Status::Ok();
}

}  // namespace nicq::offload
