// Data path of matched persistent send/recv: one epoch = at most two
// preposted triggered ops (see matched_p2p.h for the protocol).
#include "queue/matched_p2p.h"

#include <cstdio>
#include <string>

#include "core/config.h"
#include "offload/trigger_plan.h"
#include "queue/epoch_ops.h"
#include "queue/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::queue {

using offload::CounterId;
using offload::kNoCounter;
using offload::TriggeredOp;

MatchedP2p::~MatchedP2p() {
  (void)Release();
}

Status MatchedP2p::AllocCounters() {
  offload::OffloadBackend* b = Backend();
  if (!b) return Error(Code::kIntern, "matched request: no offload context");
  CounterId c[2];
  const bool sender = a_.is_send && a_.peer >= 0;
  NICQ_RETURN_IF_ERROR(b->AllocCounters(sender ? 2 : 1, c));
  done_ = c[0];
  if (sender) gate_ = c[1];
  return Status::Ok();
}

void MatchedP2p::ResolveWire() {
  P2pWire& w = wire_;
  w.role = a_.peer == -1 ? P2pWire::Role::kProcNull
                         : (a_.is_send ? P2pWire::Role::kSend : P2pWire::Role::kRecv);
  w.buf = a_.buf;
  w.bytes = a_.bytes;
  w.peer = peer_world_;
  w.gate = gate_;
  w.done = done_;
  w.peer_gate = peer_gate_;
  w.peer_done = peer_done_;
  w.peer_arrival = peer_arrival_;
  w.remote_addr = remote_addr_;
  w.remote_key = remote_key_;
  eager_tag_ = kEagerTag | (a_.is_send ? peer_arrival_ : done_);
  DumpPlan();
}

// NICQ_PLAN_DUMP: what a start of this matched request becomes and who runs it.
void MatchedP2p::DumpPlan() const {
  static const bool dump = !config::GetString("NICQ_PLAN_DUMP").empty();
  if (!dump || wire_.role == P2pWire::Role::kProcNull) return;
  const char* how =
      eager_ ? "tagged send into the receiver's matched receive"
             : (a_.is_send ? "put into the receive buffer gated on ready + start"
                           : "ready token to the sender, the put's arrival counted here");
  std::fprintf(stderr, "nicq[%d] p2p plan: %s peer=%d bytes=%zu: %s, executor %s\n",
               rt::WorldRank(), a_.is_send ? "send" : "recv", peer_world_, a_.bytes, how,
               offload::ExecutorName(Backend()).c_str());
}

Status MatchedP2p::BuildStart(CounterId gate, std::uint64_t threshold, TriggeredOp* ops,
                              std::size_t* count, CounterId* host_add) {
  if (state_ != State::kMatched) return Error(Code::kMatch, "request is not matched");
  offload::OffloadBackend* b = Backend();
  // A gate already reached is the same as no gate: the host bumps the
  // counter itself, one triggered op fewer (and one NIC trigger slot).
  if (gate != kNoCounter && b->ReadCounter(gate) >= threshold) gate = kNoCounter;
  const std::uint64_t n = epochs_ + 1;
  // At most kRing epochs run ahead of the completions (QueueSlot::kRing):
  // epoch n begins only once epoch n - kRing is done (the done counter is
  // bumped by the last op of an epoch). Backends copy descriptors at Post,
  // so this bounds the work in flight, not descriptor storage.
  if (n > std::uint64_t(kRing) && b->ReadCounter(done_) < n - std::uint64_t(kRing))
    return Status(Code::kAgain, {});  // no message: a retry path
  *count = eager_ ? BuildEagerEpochOps(wire_, gate, threshold, a_.buf, a_.bytes, eager_tag_, ops,
                                       host_add)
                  : BuildEpochOps(wire_, n, gate, threshold, ops, host_add);
  return Status::Ok();
}

Status MatchedP2p::CommitStart(CounterId host_add) {
  ++epochs_;
  if (host_add != kNoCounter) return Backend()->AddCounter(host_add, 1);
  return Status::Ok();
}

Status MatchedP2p::StartGated(CounterId gate, std::uint64_t threshold) {
  // The request's own scratch: a fresh array here would default-initialize
  // 256 bytes of descriptors on every start (backends copy them at Post).
  std::size_t count = 0;
  CounterId host_add = kNoCounter;
  NICQ_RETURN_IF_ERROR(BuildStart(gate, threshold, start_ops_, &count, &host_add));
  if (count) NICQ_RETURN_IF_ERROR(Backend()->Post({start_ops_, count}));
  return CommitStart(host_add);
}

void MatchedP2p::GetStatus(RequestStatus* out) const {
  *out = RequestStatus{};
  if (a_.peer == -1) {
    out->source = -1;  // MPI_PROC_NULL
    out->tag = -1;     // MPI_ANY_TAG
    return;
  }
  out->source = a_.is_send ? a_.peer : source_;
  out->tag = a_.is_send ? a_.tag : tag_;
  out->bytes = a_.is_send ? a_.bytes : matched_bytes_;
  offload::OffloadBackend* b = Backend();
  if (b && done_ != kNoCounter && b->ReadErrors(done_) > 0) out->error = int(Code::kOther);
}

std::string MatchedP2p::DebugString() const {
  offload::OffloadBackend* b = Backend();
  std::string s = std::string(a_.is_send ? "send to " : "recv from ") + std::to_string(a_.peer) +
                  " tag " + std::to_string(a_.tag) + " epochs " + std::to_string(epochs_);
  if (b && gate_ != kNoCounter)
    s += " gate " + std::to_string(b->ReadCounter(gate_)) + "/" + std::to_string(2 * epochs_);
  if (b && done_ != kNoCounter) s += " errors " + std::to_string(b->ReadErrors(done_));
  return s;
}

void MatchedP2p::Nudge() {
  offload::OffloadBackend* b = Backend();
  if (!b) return;
  for (CounterId c : {gate_, done_})
    if (c != kNoCounter) (void)b->AddCounter(c, 0);
}

Status MatchedP2p::Release() {
  TrackMatched(this, false);
  offload::OffloadBackend* b = Backend();
  if (!b) return Status::Ok();  // the context is gone, and with it every resource
  Status st;
  if (registered_) {
    st = b->DeregisterMemory(&region_);
    registered_ = false;
  }
  for (CounterId* c : {&gate_, &done_}) {
    if (*c != kNoCounter) b->FreeCounter(*c);
    *c = kNoCounter;
  }
  return st;
}

}  // namespace nicq::queue
