// Data path of matched persistent send/recv: one epoch = at most two
// preposted triggered ops (see matched_p2p.h for the protocol).
#include "queue/matched_p2p.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>

#include "core/config.h"
#include "offload/algorithms/persistent_p2p.h"
#include "offload/trigger_plan.h"
#include "queue/queue.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::queue {

using offload::BuildEagerEpochOps;
using offload::BuildEpochOps;
using offload::CounterId;
using offload::kEagerTag;
using offload::kNoCounter;
using offload::LocalCounterAdd;
using offload::P2pWire;
using offload::TriggeredOp;

namespace detail {
std::atomic<int> g_host_engine_requests{0};
}  // namespace detail
using detail::g_host_engine_requests;

MatchedP2p::~MatchedP2p() {
  (void)Release();
}

bool MatchedP2p::HostEngineFits(int world) const {
  // Buffered sends complete locally, which an engine send of a large
  // message does not: they keep the backend's eager protocol.
  return a_.mode != SendMode::kBuffered && HostSequencedQueues() && rt::SameNodeShm(world);
}

void MatchedP2p::SetHostEngine() {
  host_engine_ = true;
  qslot.host_engine = true;
  epoch_req_.MarkDone();  // no epoch running
  g_host_engine_requests.fetch_add(1, std::memory_order_relaxed);
}

Status MatchedP2p::StartOnEngine() {
  // What MPI_Start of the unmatched request would post (a ready send as a
  // standard one: its receive is started by then in a correct program).
  // The peer and tag were checked when the match resolved them, and the
  // request is reset here: the engine's entries for a fresh request, not
  // rt::Isend/Irecv's checks, reset and lock object (about 25 instructions
  // a start, docs/performance.md).
  epoch_req_.MakeFresh();
  if (!a_.is_send) {  // as rt::Irecv records them
    epoch_req_.buf = a_.buf;
    epoch_req_.bytes = a_.bytes;
  }
  Status st = a_.is_send ? rt::IsendFresh(a_.buf, a_.bytes, epoch_peer_, epoch_tag_, reply_comm_,
                                          a_.mode == SendMode::kSynchronous ? SendMode::kSynchronous
                                                                            : SendMode::kStandard,
                                          &epoch_req_)
                         : rt::IrecvFresh(a_.buf, a_.bytes, epoch_peer_, epoch_tag_, reply_comm_,
                                          &epoch_req_);
  if (!st.ok()) {  // the epoch ends at once, in error: its wait reports it
    epoch_req_.status.error = int(st.code());
    epoch_req_.MarkDone();
  }
  return st;
}

bool MatchedP2p::EpochDone(bool* failed) const {
  if (!host_engine_) return Enqueueable::EpochDone(failed);
  *failed = false;
  return HostEpochDone(failed);
}

Status MatchedP2p::AllocCounters() {
  offload::OffloadBackend* b = rt::Backend();
  if (!b) return Error(Code::kIntern, "matched request: no offload context");
  static const bool resident_enabled = config::GetInt("NICQ_RESIDENT_PLANS") == 1;
  // An epoch armed but never started must be withdrawable when the request
  // is freed (cxi cannot): elsewhere each start arms its epoch. Nor where
  // the host fires every op itself (host-sequenced queues): an armed epoch
  // is then a Post now and a counter add with its drain at the start, where
  // an unarmed one is one ungated Post at the start (8-byte shm ring,
  // callgrind: about 1,700 of 14,500 instructions per iteration).
  resident_ =
      resident_enabled && a_.peer >= 0 && b->Caps().withdraws_unfired_ops && !HostSequencedQueues();
  CounterId c[3];
  const bool sender = a_.is_send && a_.peer >= 0;
  // A sender's starts go to its gate (the eager protocol leaves it unused
  // otherwise): only a receiver needs a start counter of its own.
  const std::size_t n = 1 + (sender ? 1 : 0) + (resident_ && !sender ? 1 : 0);
  NICQ_RETURN_IF_ERROR(b->AllocCounters(n, c));
  done_ = c[0];
  if (sender) gate_ = c[1];
  if (resident_ && !sender) start_ = c[n - 1];
  // The window: this request's share of the slot budget, as a TriggerPlan
  // takes it (1/32 of the budget per op of an epoch), 2..kRing epochs.
  constexpr std::size_t kRequestsPerBudget = 32;
  const std::size_t budget = b->Caps().max_trigger_slots;
  const std::size_t ops_per_epoch = sender ? 1 : 2;
  window_ = budget == 0 ? std::size_t(kRing)
                        : std::clamp<std::size_t>(budget / (kRequestsPerBudget * ops_per_epoch), 2,
                                                  std::size_t(kRing));
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
  // Everything an epoch's ops name is known now: the window goes on the
  // backend (a failure shows again at the first start, which arms itself).
  (void)Refill();
}

std::size_t MatchedP2p::ResidentEpochOps(std::uint64_t k, TriggeredOp* ops) const {
  CounterId unused = kNoCounter;
  if (eager_)  // the tagged send/recv of epoch k, at the k-th start of this side
    return BuildEagerEpochOps(wire_, StartTarget(), k, a_.buf, a_.bytes, eager_tag_, ops, &unused);
  // Sender: the put at gate >= 2k (its start is the host's add on the gate).
  // Receiver: the ready token at start >= k and the acknowledgement.
  return a_.is_send ? BuildEpochOps(wire_, k, kNoCounter, 0, ops, &unused)
                    : BuildEpochOps(wire_, k, start_, k, ops, &unused);
}

// Epoch k's ops may go out only once epoch k - kRing is done: that bounds
// the work in flight per request (the same rule as a start's).
Status MatchedP2p::ArmEpoch(std::uint64_t k) {
  offload::OffloadBackend* b = rt::Backend();
  if (k > std::uint64_t(kRing) && b->ReadCounter(done_) < k - std::uint64_t(kRing))
    return Status(Code::kAgain, {});
  TriggeredOp ops[kMaxStartOps];
  const std::size_t count = ResidentEpochOps(k, ops);
  if (count) NICQ_RETURN_IF_ERROR(b->Post({ops, count}));
  armed_upto_ = k;
  return Status::Ok();
}

Status MatchedP2p::Refill() {
  if (!resident_ || state_ == State::kFailed || wire_.role == P2pWire::Role::kProcNull)
    return Status::Ok();
  offload::OffloadBackend* b = rt::Backend();
  if (!b || StartTarget() == kNoCounter) return Status::Ok();
  // Keep half the budget free, as TriggerPlan::Refill does: resident epochs
  // of idle requests never starve a start.
  const std::size_t budget = b->Caps().max_trigger_slots;
  const std::size_t ops_per_epoch = a_.is_send || eager_ ? 1 : 2;
  while (armed_upto_ < epochs_ + window_ &&
         (budget == 0 || b->FreeSlots() >= ops_per_epoch + budget / 2)) {
    Status st = ArmEpoch(armed_upto_ + 1);
    if (st.code() == Code::kAgain) return Status::Ok();  // not done yet, or no slots: later
    NICQ_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
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
               offload::ExecutorName(rt::Backend()).c_str());
}

Status MatchedP2p::BuildStart(CounterId gate, std::uint64_t threshold, TriggeredOp* ops,
                              std::size_t* count, CounterId* host_add) {
  if (state_ != State::kMatched) return Error(Code::kMatch, "request is not matched");
  offload::OffloadBackend* b = rt::Backend();
  // A gate already reached is the same as no gate: the host bumps the
  // counter itself, one triggered op fewer (and one NIC trigger slot).
  if (gate != kNoCounter && b->ReadCounter(gate) >= threshold) gate = kNoCounter;
  if (host_engine_) {
    // The host posts it when its turn comes (host-sequenced queues and
    // MPI_Start): never behind a gate, one epoch at a time.
    if (gate != kNoCounter)
      return Error(Code::kIntern, "a host-engine matched request started behind a counter gate");
    if (!epoch_req_.IsDone()) return Status(Code::kAgain, {});
    *count = 0;
    *host_add = kNoCounter;
    return Status::Ok();
  }
  const std::uint64_t n = epochs_ + 1;
  if (resident_ && wire_.role != P2pWire::Role::kProcNull) {
    // Not resident (the program ran the window ahead, or slots ran out):
    // this start arms its epoch itself, then starts it like a resident one.
    if (armed_upto_ < n) NICQ_RETURN_IF_ERROR(ArmEpoch(n));
    *host_add = kNoCounter;
    if (gate == kNoCounter) {
      *host_add = StartTarget();
      *count = 0;
    } else {
      ops[0] = LocalCounterAdd(gate, threshold, StartTarget());
      *count = 1;
    }
    return Status::Ok();
  }
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
  if (host_engine_) return StartOnEngine();
  if (host_add != kNoCounter) return rt::Backend()->AddCounter(host_add, 1);
  return Status::Ok();
}

Status MatchedP2p::StartGated(CounterId gate, std::uint64_t threshold) {
  // The request's own scratch: a fresh array here would default-initialize
  // 256 bytes of descriptors on every start (backends copy them at Post).
  std::size_t count = 0;
  CounterId host_add = kNoCounter;
  NICQ_RETURN_IF_ERROR(BuildStart(gate, threshold, start_ops_, &count, &host_add));
  if (count) NICQ_RETURN_IF_ERROR(rt::Backend()->Post({start_ops_, count}));
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
  if (host_engine_) {
    if (!a_.is_send) out->bytes = epoch_req_.status.bytes;
    out->error = epoch_req_.status.error;
    return;
  }
  offload::OffloadBackend* b = rt::Backend();
  if (b && done_ != kNoCounter) out->error = int(b->ErrorClass(done_));
}

std::string MatchedP2p::OperationText() const {
  // A receive's peer is the sender its match found (a wildcard resolved).
  const int peer = a_.is_send ? a_.peer : source_;
  return std::string(a_.is_send ? "send to " : "receive from ") +
         (peer == rt::kProcNull ? std::string("MPI_PROC_NULL") : "rank " + std::to_string(peer)) +
         " tag " + std::to_string(a_.is_send ? a_.tag : tag_);
}

bool MatchedP2p::PeerGone(int* rank) const {
  if (a_.peer == -1 || peer_world_ < 0 || !rt::LocalProcessGone(peer_world_)) return false;
  *rank = a_.is_send ? a_.peer : source_;
  return true;
}

std::string MatchedP2p::DebugString() const {
  offload::OffloadBackend* b = rt::Backend();
  std::string s = std::string(a_.is_send ? "send to " : "recv from ") + std::to_string(a_.peer) +
                  " tag " + std::to_string(a_.tag) + " epochs " + std::to_string(epochs_);
  if (b && gate_ != kNoCounter)
    s += " gate " + std::to_string(b->ReadCounter(gate_)) + "/" + std::to_string(2 * epochs_);
  if (resident_) s += " armed " + std::to_string(armed_upto_);
  if (host_engine_) s += epoch_req_.IsDone() ? " host engine, idle" : " host engine, running";
  if (b && done_ != kNoCounter) s += " errors " + std::to_string(b->ReadErrors(done_));
  return s;
}

void MatchedP2p::Nudge() {
  offload::OffloadBackend* b = rt::Backend();
  if (!b) return;
  for (CounterId c : {gate_, done_, start_})
    if (c != kNoCounter) (void)b->AddCounter(c, 0);
}

Status MatchedP2p::Release() {
  TrackMatched(this, false);
  if (host_engine_) {
    // The engine holds epoch_req_ until it completes (a request freed while
    // active completes in the background in MPI; here, before the free).
    rt::Backoff wait;
    while (!epoch_req_.IsDone() && rt::ProgressWait(wait).ok()) {
    }
    host_engine_ = false;
    qslot.host_engine = false;
    g_host_engine_requests.fetch_sub(1, std::memory_order_relaxed);
  }
  offload::OffloadBackend* b = rt::Backend();
  if (!b) return Status::Ok();  // the context is gone, and with it every resource
  Status st;
  if (registered_) {
    st = b->DeregisterMemory(&region_);
    registered_ = false;
  }
  // Freeing a counter withdraws the unfired ops hanging on it
  // (withdraws_unfired_ops): the resident epochs never started go with it.
  for (CounterId* c : {&start_, &gate_, &done_}) {
    if (*c != kNoCounter) b->FreeCounter(*c);
    *c = kNoCounter;
  }
  return st;
}

}  // namespace nicq::queue
