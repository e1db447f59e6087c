#include "queue/offload_context.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "boot/bootstrap.h"
#include "core/config.h"
#include "core/log.h"
#include "providers/common/backend_registry.h"
#include "providers/ofi_emulated/emulated_backend.h"
#include "providers/ofi_native/native_backend.h"
#include "runtime/runtime.h"

namespace nicq::queue {
namespace {

struct Context {
  std::mutex mu;  // init/finalize only; the hot path reads `backend` without it
  std::unique_ptr<offload::OffloadBackend> owner;
  offload::OffloadBackend* backend = nullptr;
  std::string name;
  bool lazy = false;
  bool attempted = false;  // InitOffloadContext ran (MPI_Init): never retry lazily
  Status failure;          // why it failed, for every later queue/match call
};
Context& Ctx() {
  static auto* c = new Context();  // never destroyed: read during exit
  return *c;
}

// The ofi backends do not register themselves by name (only sim does), so
// the context registers them; registration is idempotent (replace).
void RegisterOfiBackends() {
  offload::RegisterBackend("native", 20, &ofi::CreateNativeBackend,
                           "libfabric triggered ops (FI_TRIGGER, deferred work)");
  offload::RegisterBackend("emulated", 10, &ofi::CreateEmulatedBackend,
                           "software counter emulator with a progress thread");
  offload::RegisterSimBackend();
}

// Addresses have one length per provider, but Allgather needs equal lengths
// everywhere: send a fixed-size frame with a length prefix.
constexpr std::size_t kAddrFrame = 512;

Status ExchangeAddresses(offload::OffloadBackend* b) {
  std::vector<std::uint8_t> mine;
  NICQ_RETURN_IF_ERROR(b->LocalAddress(mine));
  if (mine.empty() && rt::WorldSize() == 1) return b->SetPeers({});
  if (mine.size() + 4 > kAddrFrame)
    return Error(Code::kIntern, "offload context: backend address of " +
                                    std::to_string(mine.size()) + " bytes exceeds the frame");
  std::vector<std::uint8_t> frame(kAddrFrame, 0), all;
  const std::uint32_t len = static_cast<std::uint32_t>(mine.size());
  std::memcpy(frame.data(), &len, 4);
  if (len) std::memcpy(frame.data() + 4, mine.data(), len);
  NICQ_RETURN_IF_ERROR(rt::Boot().Allgather(frame.data(), frame.size(), all));
  const int n = rt::WorldSize();
  std::vector<std::vector<std::uint8_t>> addrs(n);
  for (int r = 0; r < n; ++r) {
    const std::uint8_t* f = all.data() + std::size_t(r) * kAddrFrame;
    std::uint32_t l;
    std::memcpy(&l, f, 4);
    addrs[r].assign(f + 4, f + 4 + l);
  }
  return b->SetPeers(addrs);
}

Status Create(const std::string& which, Context& c) {
  offload::BackendOptions o;
  o.provider = rt::ProviderName();
  o.rank = rt::WorldRank();
  o.world_size = rt::WorldSize();
  o.local_ranks = rt::RanksSharingMyCpus();
  o.node_ranks = rt::Boot().LocalSize();
  Status st = offload::CreateBackend(which, o, &c.owner);
  if (!st.ok()) return st;
  c.name = which;
  return Status::Ok();
}

Status CreateLocked(Context& c);

void AtExit() {
  Context& c = Ctx();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.backend) return;
  (void)c.backend->Flush();
  c.backend = nullptr;
  c.owner.reset();
}

}  // namespace

Status InitOffloadContext() {
  Context& c = Ctx();
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.backend) return Status::Ok();
  if (!rt::Initialized())
    return Error(Code::kOther, "offload context: the runtime is not initialized");
  c.attempted = true;
  c.failure = CreateLocked(c);
  if (!c.failure.ok())
    NICQ_LOG(kInfo, kQueue, "no offload context: %s", c.failure.message().c_str());
  return c.failure;
}

namespace {
Status CreateLocked(Context& c) {
  RegisterOfiBackends();
  std::string want = config::GetString("NICQ_OFFLOAD");
  // The opt-out of the context MPI_Init creates (its endpoint's memory).
  if (want == "none")
    return Error(Code::kUnsupportedOperation,
                 "NICQ_OFFLOAD=none: this process has no offload backend (MPI_Queue_init and "
                 "MPI_Match* need one)");
  Status st;
  if (want.empty() || want == "auto") {
    // native needs FI_TRIGGER; its factory refuses (kUnsupportedOperation)
    // on providers without it, and emulated takes over.
    st = Create("native", c);
    if (!st.ok()) {
      NICQ_LOG(kInfo, kQueue, "offload auto: native refused (%s); using emulated",
               st.message().c_str());
      st = Create("emulated", c);
    }
  } else {
    st = Create(want, c);
  }
  if (!st.ok()) return st.WithContext("offload context (NICQ_OFFLOAD=" + want + ")");
  st = ExchangeAddresses(c.owner.get());
  if (!st.ok()) {
    c.owner.reset();
    return st.WithContext("offload context: address exchange");
  }
  c.backend = c.owner.get();
  NICQ_LOG(kInfo, kQueue, "offload backend %s over provider %s", c.name.c_str(),
           rt::ProviderName());
  return Status::Ok();
}
}  // namespace

Status FinalizeOffloadContext() {
  Context& c = Ctx();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.attempted) return Status::Ok();
  c.attempted = false;
  Status st = c.backend ? c.backend->Flush() : Status::Ok();
  // No peer may still target our counters or memory when they go away.
  // Every rank attempted the context in MPI_Init, so every rank is here,
  // also one whose backend could not be created.
  Status b = rt::Boot().Barrier();
  c.backend = nullptr;
  c.owner.reset();
  c.name.clear();
  return st.ok() ? b : st;
}

Status EnsureOffloadContext() {
  if (Ctx().backend) return Status::Ok();
  Context& c = Ctx();
  {
    // Created (or refused) in MPI_Init on every rank: a retry here would be
    // a collective step that only some ranks take, and hang.
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.attempted)
      return c.failure.ok() ? Error(Code::kOther, "offload context was finalized") : c.failure;
  }
  NICQ_RETURN_IF_ERROR(InitOffloadContext());
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.lazy) {
    c.lazy = true;
    std::atexit(&AtExit);
  }
  return Status::Ok();
}

offload::OffloadBackend* Backend() {
  return Ctx().backend;
}
const char* BackendName() {
  return Ctx().name.c_str();
}

}  // namespace nicq::queue
