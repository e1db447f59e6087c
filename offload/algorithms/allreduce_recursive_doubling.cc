// Recursive-doubling allreduce as a Schedule.
//
// Round r pairs rank with rank ^ 2^r (in the folded numbering). Each round
// posts its receive at the start of the epoch (into its own scratch slot, so
// an early partner never overwrites data still being reduced), sends the
// running result once the previous round's reduce is done, and reduces when
// both its send has completed (the buffer is free to change) and the
// partner's data is in.
#include "offload/algorithms/allreduce.h"

namespace nicq::offload {

Status BuildAllreduceRecursiveDoubling(const AllreduceArgs& a, Schedule* s) {
  if (a.size < 1 || a.rank < 0 || a.rank >= a.size) {
    return Error(Code::kArg, "BuildAllreduceRecursiveDoubling: rank " + std::to_string(a.rank) +
                                 " outside size " + std::to_string(a.size));
  }
  const std::size_t bytes = a.count * AtomicTypeSize(a.type);
  auto peer = [&](int r) { return a.peers ? a.peers[r] : static_cast<PeerId>(r); };
  std::vector<StepId> last;  // the step(s) after which recvbuf holds this rank's running result
  if (a.sendbuf != a.recvbuf) {
    const StepId c = s->Copy(a.recvbuf, a.sendbuf, bytes, {});
    s->SetLabel(c, "copy send->recv");
    last = {c};
  }
  int pof2 = 1;
  while (pof2 * 2 <= a.size) pof2 *= 2;
  const int rem = a.size - pof2;
  const std::uint64_t fold_tag = a.tag_base + 62, unfold_tag = a.tag_base + 63;

  // Fold: among the first 2*rem ranks, even ones hand their data to the next
  // odd one and wait for the result.
  int newrank;
  if (a.rank < 2 * rem) {
    if (a.rank % 2 == 0) {
      const StepId snd = s->Send(peer(a.rank + 1), a.recvbuf, bytes, fold_tag, last);
      s->SetLabel(snd, "fold send");
      const StepId rcv = s->Recv(peer(a.rank + 1), a.recvbuf, bytes, unfold_tag, {snd});
      s->SetLabel(rcv, "unfold recv");
      return Status::Ok();
    }
    void* tmp = s->AllocScratch(bytes);
    const StepId rcv = s->Recv(peer(a.rank - 1), tmp, bytes, fold_tag, {});
    s->SetLabel(rcv, "fold recv");
    std::vector<StepId> in = last;
    in.push_back(rcv);
    const StepId red = s->Reduce(a.op, a.type, a.recvbuf, tmp, bytes, in);
    s->SetLabel(red, "fold reduce");
    last = {red};
    newrank = a.rank / 2;
  } else {
    newrank = a.rank - rem;
  }
  auto real = [&](int nr) { return nr < rem ? nr * 2 + 1 : nr + rem; };

  for (int mask = 1, round = 0; mask < pof2; mask <<= 1, ++round) {
    const PeerId partner = peer(real(newrank ^ mask));
    const std::uint64_t tag = a.tag_base + static_cast<std::uint64_t>(round);
    void* tmp = s->AllocScratch(bytes);
    const StepId rcv = s->Recv(partner, tmp, bytes, tag, {});
    const StepId snd = s->Send(partner, a.recvbuf, bytes, tag, last);
    const StepId red = s->Reduce(a.op, a.type, a.recvbuf, tmp, bytes, {snd, rcv});
    s->SetLabel(rcv, "round " + std::to_string(round) + " recv");
    s->SetLabel(snd, "round " + std::to_string(round) + " send");
    s->SetLabel(red, "round " + std::to_string(round) + " reduce");
    last = {red};
  }
  if (a.rank < 2 * rem) {  // odd rank of a folded pair: hand back the result
    const StepId snd = s->Send(peer(a.rank - 1), a.recvbuf, bytes, unfold_tag, last);
    s->SetLabel(snd, "unfold send");
  } else if (last.empty()) {
    s->SetLabel(s->Nop({}), "nothing to do");  // size 1, in place
  }
  return Status::Ok();
}

}  // namespace nicq::offload
