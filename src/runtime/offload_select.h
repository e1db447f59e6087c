// Which offload backend a process gets over a provider, and why the ones
// before it in the chain were refused. One decision with two users:
// InitOffloadContext (runtime/offload_context.h) takes it on every rank and
// logs it once, and nicq_info prints it per provider without MPI, so both
// say the same thing for the same reason (docs/offload-backends.md, "When
// offload cannot open").
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "providers/backend.h"
#include "providers/common/backend_registry.h"

namespace nicq::rt {

// Trigger slots a backend must give one process: the largest batch a queue
// posts in one call, an enqueued waitall of Queue::kMaxWaitAll (64)
// requests (two ops per request and two more), which also bounds what a
// queued ring of 64 requests holds in flight (each receive's
// acknowledgement holds a slot until its data lands). With fewer, such a
// queue can hold every slot in ops whose peers' starts cannot be posted.
// 0 (unlimited) passes. On cxi the node's deferred-work queue (504) shared
// by more than three ranks is below this: those runs take the emulated
// backend (docs/offload-backends.md, "When offload cannot open").
inline constexpr std::size_t kMinTriggerSlots = 2 * 64 + 2;

struct Refusal {
  std::string backend;  // "native", "emulated", ...
  std::string reason;   // names the missing capability where one is known
};

// Registers native, emulated and sim with the backend registry (programs
// linking the layer archives get no static registration). Idempotent.
void RegisterOffloadBackends();

// Whether libfabric's provider of that name offers FI_TRIGGER (a native
// backend can open over it).
bool ProviderOffersTriggers(const std::string& provider);

// The backends to try, in order, for NICQ_OFFLOAD=`want` ("" is auto):
// the requested one first, then the others over the same provider, so a
// forced native that cannot open still leaves a correct run. "sim" has no
// fallback (a one-process test world), "none" an empty chain.
std::vector<std::string> BackendChain(const std::string& want);

// Opens backend `name` for `options` and checks that it can carry the
// largest batch a queue posts (kMinTriggerSlots). On failure the message
// names the provider and the capability it lacks (FI_TRIGGER, trigger
// slots, ...) when that can be told, else the backend's own error.
Status OpenBackend(const std::string& name, const offload::BackendOptions& options,
                   std::unique_ptr<offload::OffloadBackend>* out);

// The one line a process logs (and nicq_info prints) when it did not get
// the first backend of its chain: "native backend unavailable on provider
// sockets: <reason>; using emulated", or, when `chosen` is empty, that no
// backend opens there at all.
std::string FallbackMessage(const std::string& provider, const std::vector<Refusal>& refused,
                            const std::string& chosen);

// nicq_info: walks the chain for `provider` as a single process would
// (rank 0 of 1), opening each backend and closing it again. *chosen is the
// backend it would get ("" if none opens), *refused the ones before it (the
// fallback line), *later the ones after it that would not open either.
void ProbeProvider(const std::string& provider, const std::string& want, std::string* chosen,
                   std::vector<Refusal>* refused, std::vector<Refusal>* later);

}  // namespace nicq::rt
