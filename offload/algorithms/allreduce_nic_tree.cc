// k-ary tree allreduce on NIC atomics and puts.
//
// Up: each rank copies its contribution into recvbuf, tells its children
// they may combine into it (ready token), waits for their atomics plus its
// parent's ready token, then combines recvbuf into the parent's recvbuf.
// Down: the root, once every child has combined in, puts the result into
// its children's recvbuf; each child forwards it when it lands. recvbuf is
// exposed twice, so that arrivals up and down count on different counters.
#include "offload/algorithms/allreduce.h"

namespace nicq::offload {

Status BuildAllreduceNicTree(const AllreduceArgs& a, Schedule* s) {
  if (a.size < 1 || a.rank < 0 || a.rank >= a.size || a.radix < 1) {
    return Error(Code::kArg, "BuildAllreduceNicTree: rank " + std::to_string(a.rank) + " size " +
                                 std::to_string(a.size) + " radix " + std::to_string(a.radix));
  }
  const std::size_t bytes = a.count * AtomicTypeSize(a.type);
  auto peer = [&](int r) { return a.peers ? a.peers[r] : static_cast<PeerId>(r); };
  const bool has_parent = a.rank > 0;
  const int parent = has_parent ? (a.rank - 1) / a.radix : -1;
  std::vector<int> children;
  for (int c = a.rank * a.radix + 1; c <= a.rank * a.radix + a.radix && c < a.size; ++c) {
    children.push_back(c);
  }
  const std::uint64_t nchild = children.size();
  // Counter 0 "up": children's atomics + the parent's ready token.
  // Counter 1 "down": the parent's result put.
  const PlanCounter up = s->AddCounter("up", nchild + (has_parent ? 1 : 0));
  const PlanCounter down = s->AddCounter("down", has_parent ? 1 : 0);
  const BufferId acc = s->ExposeBuffer("acc", a.recvbuf, bytes, up);
  const BufferId res = s->ExposeBuffer("res", a.recvbuf, bytes, down);

  const StepId copy = s->Copy(a.recvbuf, a.sendbuf, bytes, {});
  s->SetLabel(copy, "copy send->recv");
  for (int c : children) {
    const StepId t = s->RemoteCounterAdd(RemoteCounter{peer(c), up}, 1, {copy});
    s->SetLabel(t, "ready token to " + std::to_string(c));
  }
  if (has_parent) {
    const StepId at =
        s->Atomic(a.op, a.type, a.recvbuf, bytes, RemoteBuffer{peer(parent), acc, 0}, {copy});
    s->WaitOn(at, up);
    s->SetLabel(at, "combine into parent " + std::to_string(parent));
  }
  // Down: root starts it once all children are in; others forward on arrival.
  for (int c : children) {
    const StepId p = s->Put(a.recvbuf, bytes, RemoteBuffer{peer(c), res, 0},
                            has_parent ? std::vector<StepId>{} : std::vector<StepId>{copy});
    s->WaitOn(p, has_parent ? down : up);
    s->SetLabel(p, "result to child " + std::to_string(c));
  }
  if (has_parent && children.empty()) {
    const StepId done = s->Nop({});  // a leaf is done when the result has landed
    s->WaitOn(done, down);
    s->SetLabel(done, "result arrived");
  }
  return Status::Ok();
}

}  // namespace nicq::offload
