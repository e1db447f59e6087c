#include "offload/algorithms/persistent_p2p.h"

namespace nicq::offload {

Status BuildPersistentSend(PeerId receiver, const void* buf, std::size_t bytes, Schedule* s) {
  if (receiver < 0)
    return Error(Code::kRank, "BuildPersistentSend: receiver " + std::to_string(receiver));
  const PlanCounter ready = s->AddCounter("ready", 1);
  // The start counter cannot feed a named counter directly; a zero-cost NIC
  // op triggered by the start does ("sender started").
  const StepId started = s->Nop({});
  s->SetLabel(started, "sender started");
  const StepId put = s->Put(buf, bytes, RemoteBuffer{receiver, 0, 0}, {started});
  s->WaitOn(put, ready);
  s->SetLabel(put, "write to matched receive buffer");
  return Status::Ok();
}

Status BuildPersistentRecv(PeerId sender, void* buf, std::size_t bytes, Schedule* s) {
  if (sender < 0)
    return Error(Code::kRank, "BuildPersistentRecv: sender " + std::to_string(sender));
  const PlanCounter data = s->AddCounter("data", 1);
  s->ExposeBuffer("recv buffer", buf, bytes, data);
  const StepId token = s->RemoteCounterAdd(RemoteCounter{sender, 0}, 1, {});
  s->SetLabel(token, "receiver ready");
  const StepId arrived = s->Nop({});
  s->WaitOn(arrived, data);
  s->SetLabel(arrived, "data arrived");
  return Status::Ok();
}

}  // namespace nicq::offload
