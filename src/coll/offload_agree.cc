#include "coll/offload_agree.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "coll/algorithms.h"
#include "coll/coll.h"
#include "coll/schedule.h"

namespace nicq::coll {

Status Exchange(Comm* comm, const void* mine, std::size_t bytes, void* all) {
  Schedule* s = AcquireSchedule();
  BuildAllgatherBruck(*s, comm->rank, comm->size, mine, static_cast<char*>(all), bytes);
  s->release_on_done = true;
  s->algorithm = "offload-exchange";
  Request req;
  NICQ_RETURN_IF_ERROR(s->Launch(ShadowOf(comm), NextTag(comm, 3), &req));
  Activate(s, /*async=*/false);
  return WaitRequest(&req);
}

Status AllAgree(Comm* comm, bool mine, bool* all_ok) {
  const std::uint64_t v = mine ? 1 : 0;
  std::vector<std::uint64_t> all(comm->size);
  NICQ_RETURN_IF_ERROR(Exchange(comm, &v, sizeof v, all.data()));
  *all_ok = std::all_of(all.begin(), all.end(), [](std::uint64_t x) { return x != 0; });
  return Status::Ok();
}

Status ExchangeAndResolve(Comm* comm, offload::TriggerPlan* plan, bool* resolved,
                          std::string* why) {
  *resolved = false;
  const int size = comm->size;
  std::vector<std::uint64_t> words;
  if (plan != nullptr) words = plan->Exports().Serialize();
  // Who offers a plan, and the largest export (the exchange is fixed-size).
  const std::uint64_t head[2] = {plan != nullptr ? 1u : 0u, words.size()};
  std::vector<std::uint64_t> heads(2 * std::size_t(size));
  NICQ_RETURN_IF_ERROR(Exchange(comm, head, sizeof head, heads.data()));
  std::size_t maxw = 0;
  for (int r = 0; r < size; ++r) {
    if (!heads[2 * r]) {
      *why = plan == nullptr ? "no plan here" : "rank " + std::to_string(r) + " has no plan";
      return Status::Ok();
    }
    maxw = std::max<std::size_t>(maxw, heads[2 * r + 1]);
  }
  words.resize(maxw, 0);
  std::vector<std::uint64_t> all(maxw * size);
  NICQ_RETURN_IF_ERROR(Exchange(comm, words.data(), maxw * sizeof(std::uint64_t), all.data()));
  std::vector<offload::PlanExports> exports(size);
  for (int r = 0; r < size; ++r)
    NICQ_RETURN_IF_ERROR(
        offload::PlanExports::Deserialize(&all[maxw * r], heads[2 * r + 1], &exports[r]));
  const Status mine = plan->Resolve([&](offload::PeerId world) -> const offload::PlanExports* {
    const int r = comm->RankOfWorld(world);
    return r >= 0 && r < size ? &exports[r] : nullptr;
  });
  bool all_ok = false;
  NICQ_RETURN_IF_ERROR(AllAgree(comm, mine.ok(), &all_ok));
  if (!all_ok) {
    *why = mine.ok() ? "a peer could not resolve its plan" : mine.message();
    return Status::Ok();
  }
  *resolved = true;
  return Status::Ok();
}

}  // namespace nicq::coll
