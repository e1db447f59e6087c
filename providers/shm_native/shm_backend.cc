// The shm backend's life cycle, wire-up, waiting, memory registration and
// factory. Posting and counters: shm_triggers.cc; execution:
// shm_executor.cc, shm_match.cc, shm_copy.cc.
#include "providers/shm_native/shm_backend.h"

#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include "core/config.h"
#include "core/cpu_relax.h"
#include "providers/shm_native/shm_atomics.h"

namespace nicq::shmtrig {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

namespace {

// What LocalAddress publishes: where to find the area and how to check it.
struct WireAddress {
  std::uint64_t magic = kAreaMagic;
  std::uint64_t nonce = 0;
  std::int32_t pid = 0;
  std::int32_t fd = -1;
  std::uint64_t probe_addr = 0;  // address of kProbeWord in the process
  char host[64] = {};
};

// Read by peers with process_vm_readv: tells whether the kernel lets them.
constexpr std::uint64_t kProbeMagic = 0x6e69637170726f62;
const volatile std::uint64_t kProbeWord = kProbeMagic;

bool ProbeCrossMemory(int pid, std::uint64_t addr) {
  std::uint64_t got = 0;
  iovec mine{&got, sizeof got};
  iovec theirs{reinterpret_cast<void*>(addr), sizeof got};
  return process_vm_readv(pid, &mine, 1, &theirs, 1, 0) == sizeof got && got == kProbeMagic;
}

}  // namespace

Status ShmTriggerBackend::Open(const ShmOptions& options, std::unique_ptr<ShmTriggerBackend>* out) {
  std::unique_ptr<ShmTriggerBackend> b(new ShmTriggerBackend());
  NICQ_RETURN_IF_ERROR(CreateArea(options.sizes, &b->own_, &b->own_fd_));
  b->my_pid_ = getpid();
  b->areas_.push_back(b->own_);
  b->caps_.native_triggers = false;  // executed by host calls, not by a NIC
  b->caps_.remote_counters = true;
  AllowAtomics(b->caps_);
  b->caps_.max_trigger_slots = options.sizes.nodes;
  b->caps_.withdraws_unfired_ops = true;
  b->caps_.memory_poll = true;
  *out = std::move(b);
  return Status::Ok();
}

ShmTriggerBackend::~ShmTriggerBackend() {
  for (std::uint32_t a = 0; a < areas_.size(); ++a)
    if (a != self_) UnmapArea(&areas_[a]);
  UnmapArea(&own_);
  if (own_fd_ >= 0) close(own_fd_);
}

Status ShmTriggerBackend::LocalAddress(std::vector<std::uint8_t>& out) {
  WireAddress w;
  w.nonce = Own()->nonce;
  w.pid = my_pid_;
  w.fd = own_fd_;
  w.probe_addr = reinterpret_cast<std::uintptr_t>(&kProbeWord);
  gethostname(w.host, sizeof w.host - 1);
  out.resize(sizeof w);
  std::memcpy(out.data(), &w, sizeof w);
  return Status::Ok();
}

Status ShmTriggerBackend::SetPeers(std::span<const std::vector<std::uint8_t>> addrs) {
  if (addrs.size() > kMaxAreas)
    return Error(Code::kUnsupportedOperation, "shm SetPeers: " + std::to_string(addrs.size()) +
                                                  " processes, at most " +
                                                  std::to_string(kMaxAreas));
  if (addrs.empty()) return Status::Ok();
  char host[64] = {};
  gethostname(host, sizeof host - 1);
  std::vector<AreaView> mapped(addrs.size());
  std::uint32_t self = kNoSlot;
  Status st = Status::Ok();
  for (std::size_t i = 0; i < addrs.size() && st.ok(); ++i) {
    WireAddress w;
    if (addrs[i].size() != sizeof w) {
      st = Error(Code::kArg, "shm SetPeers: address " + std::to_string(i) + " is not an shm one");
      break;
    }
    std::memcpy(&w, addrs[i].data(), sizeof w);
    if (w.magic != kAreaMagic || std::strncmp(w.host, host, sizeof host) != 0) {
      st = Error(Code::kUnsupportedOperation,
                 "shm SetPeers: rank " + std::to_string(i) + " is on host " +
                     std::string(w.host, strnlen(w.host, 64)) + ", not on this node");
    } else if (w.nonce == Own()->nonce) {
      self = static_cast<std::uint32_t>(i);
      mapped[i] = own_;
    } else if (w.pid != my_pid_ && !ProbeCrossMemory(w.pid, w.probe_addr)) {
      st = Error(Code::kUnsupportedOperation,
                 "shm SetPeers: process_vm_readv from rank " + std::to_string(i) + " (pid " +
                     std::to_string(w.pid) + ") refused: the kernel forbids cross-memory access");
    } else {
      st = MapPeerArea(w.pid, w.fd, w.nonce, &mapped[i]);
    }
  }
  if (st.ok() && self == kNoSlot)
    st = Error(Code::kArg, "shm SetPeers: this process's address is not in the table");
  if (!st.ok()) {
    for (std::size_t i = 0; i < mapped.size(); ++i)
      if (mapped[i].base && mapped[i].base != own_.base) UnmapArea(&mapped[i]);
    return st;
  }
  for (std::uint32_t a = 0; a < areas_.size(); ++a)
    if (a != self_) UnmapArea(&areas_[a]);
  areas_ = std::move(mapped);
  self_ = self;
  return Status::Ok();
}

Status ShmTriggerBackend::WaitCounter(CounterId id, std::uint64_t value, int timeout_ms) {
  if (!ValidCounter(self_, id) || !own_.counters()[id].allocated)
    return Error(Code::kArg, "shm WaitCounter: no counter " + std::to_string(id));
  Counter& c = own_.counters()[id];
  AreaHeader* h = Own();
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  // A caller that polls with short limits (the queue's backpressure) may
  // be the only one left to notice a dead peer: its limit checks too.
  auto expired = [&] {
    if (!PeersAlive()) return DeadPeerError("WaitCounter");
    return Error(Code::kPending, "shm WaitCounter: counter " + std::to_string(id) + " at " +
                                     std::to_string(c.value.load()) + " < " +
                                     std::to_string(value) + " after " +
                                     std::to_string(timeout_ms) + " ms");
  };
  for (std::uint64_t round = 0;; ++round) {
    if (PeerDied()) return DeadPeerError("WaitCounter");
    if (const std::uint64_t e = c.errors.load(std::memory_order_acquire))
      return Error(Code::kOther, "shm WaitCounter: counter " + std::to_string(id) + " has " +
                                     std::to_string(e) + " failed op(s)");
    if (c.value.load(std::memory_order_acquire) >= value) return Status::Ok();
    if (Progress()) continue;
    if (round < 64) {
      CpuRelax();
      continue;
    }
    if (round < 96) {
      // Yields on a busy core can take whole time slices: the limit holds.
      if (timeout_ms >= 0 && Clock::now() >= deadline) return expired();
      sched_yield();
      continue;
    }
    std::int64_t wait_ns = 1000000000;  // re-check now and then; wakes come from adders
    if (timeout_ms >= 0) {
      const auto left = deadline - Clock::now();
      if (left <= Clock::duration::zero()) return expired();
      wait_ns = std::min<std::int64_t>(
          wait_ns, std::chrono::duration_cast<std::chrono::nanoseconds>(left).count());
    }
    // Announce the sleeper before the last look (adders read `sleepers`
    // after their update, both sequentially consistent).
    bool slept_out = false;
    h->sleepers.fetch_add(1, std::memory_order_seq_cst);
    c.sleepers.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seen = c.change.load(std::memory_order_seq_cst);
    if (c.value.load(std::memory_order_seq_cst) < value &&
        c.errors.load(std::memory_order_seq_cst) == 0 &&
        h->host_pending.load(std::memory_order_seq_cst) == 0) {
      sleeps_.fetch_add(1, std::memory_order_relaxed);
      if (FutexWait(&c.change, seen, wait_ns)) {
        sleep_timeouts_.fetch_add(1, std::memory_order_relaxed);
        slept_out = true;
      }
    }
    c.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    h->sleepers.fetch_sub(1, std::memory_order_seq_cst);
    // A whole nap without a change: the adder may be a process that died.
    if (slept_out && !PeersAlive()) return DeadPeerError("WaitCounter");
  }
}

Status ShmTriggerBackend::RegisterMemory(void* addr, std::size_t len, CounterId arrival_counter,
                                         offload::MemRegion* out) {
  if (arrival_counter != kNoCounter &&
      (!ValidCounter(self_, arrival_counter) || !own_.counters()[arrival_counter].allocated))
    return Error(Code::kArg, "shm RegisterMemory: arrival_counter " +
                                 std::to_string(arrival_counter) + " is not a counter");
  AreaHeader* h = Own();
  Region* regions = own_.regions();
  if (!LockArea(h->lock)) return DeadPeerError("RegisterMemory");
  std::uint32_t i = h->region_free;
  if (i != kNoSlot)
    h->region_free = regions[i].next_free;
  else if (h->regions_used < h->n_regions)
    i = h->regions_used++;
  if (i != kNoSlot) {
    Region& r = regions[i];
    r.addr = reinterpret_cast<std::uintptr_t>(addr);
    r.len = len;
    r.arrival = arrival_counter;
    r.generation++;
    r.in_use = 1;
    out->addr = addr;
    out->len = len;
    out->remote_addr = r.addr;
    out->key = std::uint64_t{r.generation} << 32 | (i + 1);
    out->handle = nullptr;
  }
  h->lock.Unlock();
  if (i == kNoSlot)
    return Error(Code::kNoMem, "shm RegisterMemory: the area's " + std::to_string(h->n_regions) +
                                   " regions are in use");
  return Status::Ok();
}

Status ShmTriggerBackend::DeregisterMemory(offload::MemRegion* mr) {
  const std::uint64_t i = (mr->key & 0xffffffffu) - 1;
  AreaHeader* h = Own();
  if (i >= h->n_regions) return Error(Code::kArg, "shm DeregisterMemory: not a region key");
  Region& r = own_.regions()[i];
  if (!LockArea(h->lock)) return DeadPeerError("DeregisterMemory");
  const bool ok = r.in_use && r.generation == static_cast<std::uint32_t>(mr->key >> 32);
  if (ok) {
    r.in_use = 0;
    r.next_free = h->region_free;
    h->region_free = static_cast<std::uint32_t>(i);
  }
  h->lock.Unlock();
  if (!ok) return Error(Code::kArg, "shm DeregisterMemory: the region is not registered");
  return Status::Ok();
}

Status ShmTriggerBackend::CheckOps(std::span<const TriggeredOp> ops) const {
  NICQ_RETURN_IF_ERROR(OffloadBackend::CheckOps(ops));
  const std::uint32_t n = Own()->n_counters;
  auto own_counter = [&](CounterId c) { return c == kNoCounter || c < n; };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const TriggeredOp& op = ops[i];
    const bool local_target = op.kind == OpKind::kCounterAdd || op.kind == OpKind::kCounterSet;
    const bool needs_peer = op.kind != OpKind::kCounterAdd && op.kind != OpKind::kCounterSet &&
                            op.kind != OpKind::kHost && op.kind != OpKind::kRecv;
    if (!own_counter(op.trigger) || !own_counter(op.completion) ||
        (local_target && (op.target_counter == kNoCounter || op.target_counter >= n)))
      return Error(Code::kArg, "shm Post: op " + std::to_string(i) + " (" +
                                   offload::OpKindName(op.kind) + ") names no counter of ours");
    const bool peer_ok = op.peer >= 0 && static_cast<std::size_t>(op.peer) < areas_.size();
    if ((needs_peer && !peer_ok) || (op.kind == OpKind::kRecv && op.peer >= 0 && !peer_ok))
      return Error(Code::kRank, "shm Post: op " + std::to_string(i) + " (" +
                                    offload::OpKindName(op.kind) + "): no peer " +
                                    std::to_string(op.peer));
  }
  return Status::Ok();
}

bool ShmTriggerBackend::Progress() {
  const bool any = RunHostSteps();
  RunWork();
  return any;
}

Status ShmTriggerBackend::Flush() {
  AreaHeader* h = Own();
  if (PeerDied() || !LockArea(h->lock)) return DeadPeerError("Flush");
  for (std::uint32_t i = 0; i < h->counters_used; ++i)
    if (own_.counters()[i].allocated) CancelLocked(own_.counters()[i]);
  h->lock.Unlock();
  WithdrawUnmatched();
  if (PeerDied()) return DeadPeerError("Flush");
  // What is left has fired: an executor (maybe another process) is running
  // it, or it is a host step queued for us.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (std::uint64_t round = 0; SlotsInUse() != 0; ++round) {
    if (Progress()) continue;
    if (PeerDied()) return DeadPeerError("Flush");
    if (round < 64) continue;
    if (std::chrono::steady_clock::now() > deadline)
      return Error(Code::kPending,
                   "shm Flush: " + std::to_string(SlotsInUse()) + " fired ops did not complete");
    sched_yield();
  }
  return Status::Ok();
}

Status CreateShmBackend(const offload::BackendOptions& options,
                        std::unique_ptr<offload::OffloadBackend>* out) {
  if (options.world_size > options.node_ranks || options.nodes > 1)
    return Error(Code::kUnsupportedOperation,
                 "shm backend: the job spans " +
                     (options.nodes > 1 ? std::to_string(options.nodes) + " nodes"
                                        : std::to_string(options.world_size - options.node_ranks) +
                                              " ranks on other nodes") +
                     " (it needs every rank on one node)");
  if (options.cross_memory == 0)
    return Error(Code::kUnsupportedOperation,
                 "shm backend: the kernel refuses process_vm_readv between this node's ranks");
  ShmOptions o;
  o.sizes.counters = static_cast<std::uint32_t>(config::GetInt("NICQ_OFFLOAD_COUNTERS"));
  o.sizes.nodes = static_cast<std::uint32_t>(config::GetInt("NICQ_SHM_TRIGGER_OPS"));
  if (options.slot_budget) o.sizes.nodes = static_cast<std::uint32_t>(options.slot_budget);
  std::unique_ptr<ShmTriggerBackend> b;
  NICQ_RETURN_IF_ERROR(ShmTriggerBackend::Open(o, &b));
  *out = std::move(b);
  return Status::Ok();
}

}  // namespace nicq::shmtrig

namespace nicq::offload {
void RegisterShmBackend() {
  RegisterBackend("shm", 5, &shmtrig::CreateShmBackend,
                  "shared-memory triggers on one node: the process that completes a condition "
                  "executes the op");
}
}  // namespace nicq::offload
