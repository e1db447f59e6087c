// The emulated backend's setup and lifetime: the endpoint and its
// capabilities, peers' addresses and bells, memory registration, the
// agent's refillers, and the flush before teardown. The host's calls on
// counters and ops are in emulated_host_calls.cc, the data path in
// emulated_issue.cc.
#include "providers/ofi_emulated/emulated_backend.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "core/config.h"
#include "core/log.h"
#include "providers/ofi_common/atomic_map.h"
#include "providers/ofi_common/backoff.h"
#include "providers/ofi_common/mr_key.h"
#include "providers/ofi_common/ofi_error.h"
#include "providers/ofi_common/tsan_annotations.h"

namespace nicq::ofi {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

const std::uint64_t EmulatedBackend::kDoorbellSource = 0;

namespace {
std::atomic<std::uint64_t> g_next_backend_gen{1};
}  // namespace

EmulatedBackend::EmulatedBackend(const EmulatedConfig& config)
    : config_(config), queue_(config.num_counters, config.num_ops) {
  add_path_.gen = g_next_backend_gen.fetch_add(1, std::memory_order_relaxed);
  add_path_.membarrier = config_.host_add_fence != 0 && RegisterMembarrier();
  if (config_.min_nap_us < 1) config_.min_nap_us = 1;
  if (config_.max_nap_us < config_.min_nap_us) config_.max_nap_us = config_.min_nap_us;
  nap_us_.store(config_.min_nap_us, std::memory_order_relaxed);
}

bool EmulatedBackend::RegisterMembarrier() {
  static const bool registered = [] {
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0) {
      NICQ_LOG(kInfo, kProvider,
               "emulated: the agent fences its sleep with membarrier (private expedited); a "
               "host add through its ring is two stores and a load");
      return true;
    }
    NICQ_LOG(kInfo, kProvider,
             "emulated: membarrier(REGISTER_PRIVATE_EXPEDITED) refused (%s); a host add through "
             "its ring and the agent's sleep fence seq_cst",
             std::strerror(errno));
    return false;
  }();
  return registered;
}

void EmulatedBackend::Membarrier() {
  syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

Status EmulatedBackend::Create(const EmulatedConfig& config,
                               std::unique_ptr<EmulatedBackend>* out) {
  std::unique_ptr<EmulatedBackend> b(new EmulatedBackend(config));
  NICQ_RETURN_IF_ERROR(b->Init().WithContext("emulated backend on " + config.provider));
  *out = std::move(b);
  return Status::Ok();
}

Status EmulatedBackend::Init() {
  EndpointOptions o;
  o.provider = config_.provider;
  o.remote_cq_data = true;
  o.cq_wait_object = true;
  if (!CountersFitCqData(config_.num_counters))
    return Error(Code::kArg, "emulated backend: " + std::to_string(config_.num_counters) +
                                 " counters exceed the 2^20 that remote CQ data names");
  NICQ_RETURN_IF_ERROR(OfiEndpoint::Open(o, &ep_));
  caps_.native_triggers = false;
  caps_.withdraws_unfired_ops = true;  // the trigger queue cancels them (trigger_queue_ops.cc)
  caps_.max_remote_add = 0xffffffffu;  // remote CQ data carries 32 bits
  caps_.remote_counters = true;
  ep_->QueryAtomics(&caps_);
  caps_.max_trigger_slots = config_.num_ops;
  caps_.max_msg_bytes = ep_->info()->ep_attr->max_msg_size;
  inject_max_ = ep_->inject_size();
  caps_.memory_poll = std::string_view(ep_->provider_name()) == "shm";
  caps_.converging_atomics_lose_updates = caps_.memory_poll;  // shm (backend.h)
  // On shm (libfabric 1.17) a delivery-complete put waits for the target's
  // CQ read to answer it and the sender's to read the answer (two agent
  // wake-ups), and the next such put to that peer fails with EAGAIN until
  // then (8-byte neighbour alltoall, 2 ranks: 24-87 EAGAINs per rank and
  // epoch of 4 puts, none injected). The delivery response does not carry a
  // bad key's error there either (conformance_ofi_test.cc).
  inject_puts_ = caps_.memory_poll;
  if (caps_.memory_poll && caps_.max_atomic_count > 0 && ep_->FetchesEveryAtomic(caps_))
    fetch_sink_.resize(caps_.max_atomic_count * sizeof(std::uint64_t));
  keys_ = MrKeyLayout(ep_->mr_key_bytes());
  NICQ_RETURN_IF_ERROR(ep_->RegisterMr(&doorbell_, sizeof(doorbell_), FI_REMOTE_WRITE,
                                       keys_.DoorbellKey(0), &doorbell_mr_));
  want_thread_ = config_.progress_thread < 0 ? ProgressThread::WantedByConfig(config_.local_ranks)
                                             : config_.progress_thread != 0;
  return Status::Ok();
}

EmulatedBackend::~EmulatedBackend() {
  thread_.Stop();
  LogHopCounts();
  if (doorbell_mr_) fi_close(&doorbell_mr_->fid);
}

void EmulatedBackend::LogHopCounts() const {
  auto get = [](const std::atomic<std::uint64_t>& c) {
    return static_cast<unsigned long long>(c.load(std::memory_order_relaxed));
  };
  for (const auto& [who, h] : {std::pair<const char*, const HopCounts*>{"agent", &agent_hops_},
                               std::pair<const char*, const HopCounts*>{"host", &host_hops_}}) {
    NICQ_LOG(kDebug, kProvider,
             "emulated hops, %s: %llu polls, %llu with work, %llu CQ entries, %llu ops issued", who,
             get(h->polls), get(h->polls_with_work), get(h->cq_entries), get(h->issued));
  }
  NICQ_LOG(kDebug, kProvider,
           "emulated hops, agent naps: %llu ended by a ring, %llu timed out, %llu while an epoch "
           "was awaited; %llu epoch yield-polls",
           get(bell_wakes_), get(nap_timeouts_), get(epoch_naps_), get(epoch_yields_));
}

Status EmulatedBackend::LocalAddress(std::vector<std::uint8_t>& out) {
  WireAddress w;
  NICQ_RETURN_IF_ERROR(ep_->Name(w.name));
  w.doorbell_base = ep_->RemoteBase(&doorbell_);
  w.doorbell_key = fi_mr_key(doorbell_mr_);
  return EncodeWire(w, out);
}

Status EmulatedBackend::SetPeers(std::span<const std::vector<std::uint8_t>> addrs) {
  std::vector<WireAddress> peers(addrs.size());
  for (std::size_t i = 0; i < addrs.size(); ++i)
    NICQ_RETURN_IF_ERROR(DecodeWire(addrs[i], &peers[i])
                             .WithContext("emulated SetPeers: peer " + std::to_string(i)));
  NICQ_RETURN_IF_ERROR(ep_->InsertPeers(peers));
  doorbells_.resize(peers.size());
  doorbell_keys_.resize(peers.size());
  for (std::size_t i = 0; i < peers.size(); ++i) {
    doorbells_[i] = peers[i].doorbell_base;
    doorbell_keys_[i] = peers[i].doorbell_key;
  }
  return Status::Ok();
}

void EmulatedBackend::SetAgentBells(offload::AgentBell* own,
                                    std::span<offload::AgentBell* const> peers) {
  if (ep_->cq_waitable() || own == nullptr) return;
  own_bell_ = own;
  peer_bells_.assign(peers.begin(), peers.end());
  queue_.SetBell(own);
  for (std::size_t i = 0; i < peers.size(); ++i)
    if (peers[i] == own) ring_back_ = RingBackData(offload::PeerId(i));
}

bool EmulatedBackend::AddRefiller(void (*refill)(void*), void* arg) {
  if (!thread_.running() || refill == nullptr) return false;
  std::lock_guard<std::mutex> lock(refill_mu_);
  const std::size_t n = num_refillers_.load(std::memory_order_relaxed);
  if (n == kMaxRefillers) return false;  // the host re-arms this one
  refillers_[n] = {refill, arg};
  num_refillers_.store(n + 1, std::memory_order_release);
  return true;
}

void EmulatedBackend::RemoveRefiller(void* arg) {
  std::lock_guard<std::mutex> lock(refill_mu_);
  std::size_t n = num_refillers_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < n; ++i) {
    if (refillers_[i].arg != arg) continue;
    refillers_[i] = refillers_[--n];
    num_refillers_.store(n, std::memory_order_release);
    return;
  }
}

void EmulatedBackend::RunRefillers() {
  if (num_refillers_.load(std::memory_order_acquire) == 0) return;
  std::unique_lock<std::mutex> lock(refill_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // a plan comes or goes: next poll
  const std::size_t n = num_refillers_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < n; ++i) refillers_[i].fn(refillers_[i].arg);
}

Status EmulatedBackend::RegisterMemory(void* addr, std::size_t len, CounterId arrival_counter,
                                       offload::MemRegion* out) {
  EnsureThread();
  if (arrival_counter != kNoCounter && !queue_.CounterInUse(arrival_counter))
    return Error(Code::kArg, "emulated RegisterMemory: arrival_counter " +
                                 std::to_string(arrival_counter) + " is not allocated");
  const std::uint64_t key = keys_.UserKey(arrival_counter, next_key_.fetch_add(1));
  fid_mr* mr = nullptr;
  NICQ_RETURN_IF_ERROR(
      ep_->RegisterMr(addr, len, FI_REMOTE_WRITE | FI_REMOTE_READ | FI_READ | FI_WRITE, key, &mr)
          .WithContext("emulated RegisterMemory"));
  out->addr = addr;
  out->len = len;
  out->remote_addr = ep_->RemoteBase(addr);
  out->key = fi_mr_key(mr);
  out->handle = mr;
  regions_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Status EmulatedBackend::DeregisterMemory(offload::MemRegion* mr) {
  if (mr == nullptr || mr->handle == nullptr) return Status::Ok();
  Status s = Check(fi_close(&static_cast<fid_mr*>(mr->handle)->fid), "fi_close", "memory region");
  mr->handle = nullptr;
  regions_.fetch_sub(1, std::memory_order_relaxed);
  return s;
}

Status EmulatedBackend::Flush() {
  queue_.CancelAll();  // fire nothing more; what is ready or in flight completes
  const std::int64_t limit_ms = config::GetInt("NICQ_PEER_TIMEOUT") * 1000;
  const std::int64_t deadline = NowMs() + limit_ms;
  Backoff backoff(200, 20);
  // After CancelAll every node still in use is ready, being issued, or in
  // flight (an EAGAIN moves it back to ready): wait for the pool to drain.
  // Nodes return to the pool only after their completion counter moved.
  while (queue_.nodes_in_use() > 0) {
    if (NowMs() >= deadline)
      return Error(Code::kPending, "emulated Flush: " + std::to_string(queue_.nodes_in_use()) +
                                       " op(s) still ready or in flight after NICQ_PEER_TIMEOUT");
    if (thread_.running() ? Drain() : PollNow())
      backoff.Reset();
    else
      backoff.Pause();
  }
  return Status::Ok();
}

}  // namespace nicq::ofi
