#include "coll/exchange_plan.h"

#include <string>

#include "coll/exchange_pack.h"
#include "coll/offload_agree.h"
#include "core/log.h"

namespace nicq::coll {
namespace {

// Descriptor arrays per plan: as many epochs as a queue may run ahead
// (queue::QueueSlot::kRing), as for the offloaded allreduce.
constexpr std::size_t kPlanDepth = 16;
// The queue arms the next epoch before the previous one is done: two
// epochs must fit the backend's trigger slots whole.
constexpr std::size_t kEpochsInFlight = 2;

}  // namespace

Status BuildExchangePlan(const ExchangePlanArgs& a, offload::Schedule* s) {
  const offload::PeerId self = a.self;
  // Empty edges move nothing on either end (both ends know the edge's size:
  // CheckNeighborSizes, or the dense plan's layout exchange), so they owe
  // no token and count no arrival.
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
  const auto ready = s->AddCounter("ready", tokens_owed);
  const auto arrive = s->AddCounter("arrive", in_edges);
  // A rank nothing arrives at still exposes a buffer (index 0 on every rank).
  void* recv_at = !a.recv_len ? s->AllocScratch(8)
                  : a.recvbuf ? a.recvbuf
                              : s->AllocScratch(a.recv_len);
  const auto recv = s->ExposeBuffer("recvbuf", recv_at, a.recv_len ? a.recv_len : 8, arrive);

  // Tokens hang off the start counter itself, and the start reaches the
  // puts as a zero add to `ready` (its completion counts the start there):
  // one op, where a start step that tokens and puts share lowers to two
  // (its zero add and the fan-out of its completion into `ready`). Nothing
  // the start fires adds to the done counter: on sockets a counter op fires
  // its target's triggers inside the add, and the done counter's last add
  // of an epoch fires a queue's next start (Capabilities::
  // counter_op_cycles_deadlock).
  std::vector<offload::StepId> puts_after;
  if (tokens_owed) {
    const auto started = s->CounterAdd(ready, 0, {});
    s->SetLabel(started, "start counted into ready");
    puts_after.push_back(started);
  }
  // Every put waits on the pack step (the steps waiting on `ready` must
  // share their inputs); it reads the user's send buffer at the start.
  std::vector<const void*> src;
  offload::StepId packed = 0;
  if (AddPackStep(a, s, &src, &packed)) puts_after.push_back(packed);
  for (std::size_t i = 0; i < a.sources.size(); ++i) {
    if (!live_in(i) || a.sources[i] == self) continue;
    const auto t = s->RemoteCounterAdd(offload::RemoteCounter{a.sources[i], ready}, 1, {});
    s->SetLabel(t, "ready token to " + std::to_string(a.sources[i]) + " (in-edge " +
                       std::to_string(i) + ")");
  }
  for (std::size_t j = 0; j < a.destinations.size(); ++j) {
    if (!live_out(j)) continue;  // MPI_PROC_NULL or empty: nothing moves
    const offload::PeerId dst = a.destinations[j];
    const auto p = s->Put(src[j], a.send_bytes[j],
                          offload::RemoteBuffer{dst, recv, a.remote_offset[j]}, puts_after);
    if (tokens_owed) s->WaitOn(p, ready);
    // The receiver learns of the landing from its arrival counter, and this
    // edge's next put waits for its next token, sent only once its epoch
    // is done: the put's own completion need only free the source.
    s->CompleteAtSource(p);
    std::string label = "block " + std::to_string(j) + " -> " + std::to_string(dst) + " at byte " +
                        std::to_string(a.remote_offset[j]);
    if (j < a.send_notes.size()) label += " (" + a.send_notes[j] + ")";
    if (src[j] != a.send_blocks[j]) label += " from the packed copy";
    s->SetLabel(p, label);
  }
  if (in_edges && a.unpack) {
    (void)AddUnpackStep(a, static_cast<const char*>(recv_at), arrive, s);
  } else if (in_edges) {
    const auto arrived = s->Nop({});
    s->WaitOn(arrived, arrive);
    s->SetLabel(arrived, std::to_string(in_edges) + " blocks arrived");
  }
  return Status::Ok();
}

Status LowerAndBindExchange(offload::Schedule& s, offload::OffloadBackend* be,
                            std::unique_ptr<offload::TriggerPlan>* plan) {
  NICQ_RETURN_IF_ERROR(offload::Lower(s, plan));
  const std::size_t slots = be->Caps().max_trigger_slots;
  if (slots != 0 && kEpochsInFlight * (*plan)->slots_needed() > slots)
    return Error(Code::kUnsupportedOperation,
                 "trigger slots: the plan needs " +
                     std::to_string(kEpochsInFlight * (*plan)->slots_needed()) + ", the " +
                     std::string(be->Name()) + " backend has " + std::to_string(slots));
  return (*plan)->Bind(be, kPlanDepth);
}

void LogHostSchedule(const Args& a, const std::string& why) {
  NICQ_LOG(kInfo, kColl, "persistent %s: trigger plan not used (%s); host schedule",
           KindName(a.kind), why.c_str());
}

Status AdoptExchangePlan(const Args& a, const Status& built,
                         std::unique_ptr<offload::TriggerPlan> plan,
                         std::unique_ptr<OffloadedPlan>* out) {
  out->reset();
  if (!built.ok()) {
    LogHostSchedule(a, built.message());
    plan.reset();
  }
  bool resolved = false;
  std::string why;
  NICQ_RETURN_IF_ERROR(ExchangeAndResolve(a.comm, plan.get(), &resolved, &why));
  if (!resolved) {
    if (plan) LogHostSchedule(a, why);
    return Status::Ok();
  }
  offload::MaybeDumpPlan(*plan, a.comm->rank);
  *out = OffloadedPlan::Adopt(std::move(plan));
  return Status::Ok();
}

}  // namespace nicq::coll
