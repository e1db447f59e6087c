#include "runtime/offload_context.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "boot/bootstrap.h"
#include "core/config.h"
#include "core/log.h"
#include "runtime/offload_select.h"
#include "runtime/runtime.h"

namespace nicq::rt {
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
  NICQ_RETURN_IF_ERROR(b->SetPeers(addrs));
  // The node's doorbells: a software agent sleeps on ours, rings a peer's.
  std::vector<offload::AgentBell*> bells(std::size_t(n), nullptr);
  for (int r = 0; r < n; ++r) bells[std::size_t(r)] = rt::AgentBellOf(r);
  b->SetAgentBells(rt::AgentBellOf(rt::WorldRank()), bells);
  return Status::Ok();
}

// Every rank must end up with the same backend (their ops address each
// other's counters): each tries the candidate, then all share whether it
// opened and, where not, why (a fixed frame: ok byte, reason text).
constexpr std::size_t kVerdictFrame = 384;

// Opens `name` here and agrees on it with every rank. Ok: every rank has
// it open in c.owner. Otherwise nobody keeps it and *why is the first
// failing rank's reason (this rank's own when it failed itself).
Status OpenAgreed(const std::string& name, Context& c, std::string* why) {
  offload::BackendOptions o;
  o.provider = rt::ProviderName();
  o.rank = rt::WorldRank();
  o.world_size = rt::WorldSize();
  o.local_ranks = rt::RanksSharingMyCpus();
  o.node_ranks = rt::Boot().LocalSize();
  for (int r = 0; r < o.world_size; ++r)
    if (rt::NodeIdOf(r) == r && r != rt::NodeIdOf(0)) ++o.nodes;
  // What the shm transport probed at Init; unknown when it is off.
  o.cross_memory = rt::SameNodeShm(rt::WorldRank()) ? (rt::CrossMemoryReads() ? 1 : 0) : -1;
  Status st = OpenBackend(name, o, &c.owner);
  std::vector<std::uint8_t> frame(kVerdictFrame, 0), all;
  frame[0] = st.ok() ? 1 : 0;
  if (!st.ok()) {
    const std::string& m = st.message();
    std::memcpy(frame.data() + 1, m.data(), std::min(m.size(), kVerdictFrame - 2));
  }
  Status ag = rt::Boot().Allgather(frame.data(), frame.size(), all);
  if (!ag.ok()) {
    c.owner.reset();
    return ag;  // the bootstrap itself failed: no agreement is possible
  }
  *why = st.ok() ? std::string() : st.message();
  for (int r = 0; r < rt::WorldSize() && why->empty(); ++r) {
    const std::uint8_t* f = all.data() + std::size_t(r) * kVerdictFrame;
    if (!f[0])
      *why = "rank " + std::to_string(r) + ": " + std::string(reinterpret_cast<const char*>(f + 1));
  }
  if (!why->empty()) {
    c.owner.reset();
    return Error(Code::kUnsupportedOperation, *why);
  }
  c.name = name;
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
  c.failure = CreateLocked(c);  // logged there, once
  return c.failure;
}

namespace {
Status CreateLocked(Context& c) {
  RegisterOffloadBackends();
  const std::string want = config::GetString("NICQ_OFFLOAD");
  const std::string provider = rt::ProviderName();
  // The opt-out of the context MPI_Init creates (its endpoint's memory).
  if (want == "none")
    return Error(Code::kUnsupportedOperation,
                 "NICQ_OFFLOAD=none: this process has no offload backend (MPI_Queue_init and "
                 "MPI_Match* need one)");
  // The requested backend first, then the others over the same provider:
  // not getting the NIC is never an error while another backend opens.
  std::vector<Refusal> refused;
  for (const std::string& name : BackendChain(want)) {
    std::string why;
    Status st = OpenAgreed(name, c, &why);
    if (st.ok()) break;
    if (why.empty()) return st.WithContext("offload context: agreeing on a backend");
    refused.push_back({name, why});
  }
  // One line per process, at info, whichever way it went.
  const std::string line = FallbackMessage(provider, refused, c.owner ? c.name : "");
  if (!c.owner) {
    NICQ_LOG(kInfo, kOffload, "%s", line.c_str());
    return Error(Code::kUnsupportedOperation,
                 "offload context (NICQ_OFFLOAD=" + (want.empty() ? std::string("auto") : want) +
                     "): " + line);
  }
  Status st = ExchangeAddresses(c.owner.get());
  if (!st.ok()) {
    c.owner.reset();
    c.name.clear();
    return st.WithContext("offload context: address exchange");
  }
  c.backend = c.owner.get();
  if (refused.empty())
    NICQ_LOG(kInfo, kOffload, "%s backend over provider %s", c.name.c_str(), provider.c_str());
  else
    NICQ_LOG(kInfo, kOffload, "%s", line.c_str());
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

bool OffloadContextDecided() {
  Context& c = Ctx();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.attempted;
}

offload::OffloadBackend* Backend() {
  return Ctx().backend;
}
const char* BackendName() {
  return Ctx().name.c_str();
}
bool NicFiresOps() {
  const offload::OffloadBackend* be = Backend();
  return be != nullptr && be->Fires() == offload::Firing::kNic;
}
bool AgentFiresOps() {
  const offload::OffloadBackend* be = Backend();
  return be != nullptr && be->Fires() == offload::Firing::kAgentThread;
}
bool NicBackendExpected() {
  const std::string mode = config::GetString("NICQ_OFFLOAD");
  return mode == "native" || (mode == "auto" && ProviderOffersTriggers(ProviderName()));
}

}  // namespace nicq::rt
