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
  offload::EdgeExchangeArgs x = a.edges;
  x.pack = PreparePack(a, s, &x.send_blocks, &x.send_packed);
  std::size_t live_in = 0;
  for (std::size_t i = 0; i < x.sources.size(); ++i)
    live_in += x.sources[i] >= 0 && x.recv_bytes[i] > 0;
  if (a.unpack && live_in > 0 && x.recv_len > 0) {
    // The blocks land back to back in plan scratch and the unpack step
    // scatters them into the user's buffer.
    x.recvbuf = s->AllocScratch(x.recv_len);
    x.unpack = PrepareUnpack(a, static_cast<const char*>(x.recvbuf), s);
  }
  return offload::BuildEdgeExchange(x, s);
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
