// The "shm" offload backend: triggered ops among processes of one node,
// executed by whichever process completes their condition ("the last
// arriver executes"; docs/offload-backends.md, "shm: the last arriver
// executes").
//
// Counters, trigger lists, the op pool, registered regions and tagged match
// lists live in shared memory (shm_segment.h), one area per process, mapped
// by every peer. A counter update (a host AddCounter, a remote counter add,
// a put's arrival, an op's completion) claims the ops it made ready under
// the owning area's lock and runs them after releasing it, on the calling
// thread, from an explicit work list: a chain advances whenever any process
// involved is inside a call, with no progress thread. Data moves with
// memcpy inside one process and process_vm_readv/writev across processes.
// Host steps run only in their owner process (its Progress or WaitCounter).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "providers/backend.h"
#include "providers/common/backend_registry.h"
#include "providers/shm_native/shm_segment.h"

namespace nicq::shmtrig {

struct ShmOptions {
  AreaSizes sizes;
};

class ShmTriggerBackend final : public offload::OffloadBackend {
 public:
  // Creates this process's area; Open() refuses where memfd is missing.
  static Status Open(const ShmOptions& options, std::unique_ptr<ShmTriggerBackend>* out);
  ~ShmTriggerBackend() override;

  const char* Name() const override { return "shm"; }
  offload::Firing Fires() const override { return offload::Firing::kUpdater; }
  const offload::Capabilities& Caps() const override { return caps_; }

  Status LocalAddress(std::vector<std::uint8_t>& out) override;
  Status SetPeers(std::span<const std::vector<std::uint8_t>> addrs) override;

  Status AllocCounters(std::size_t n, offload::CounterId* out) override;
  void FreeCounter(offload::CounterId id) override;
  std::uint64_t ReadCounter(offload::CounterId id) const override;
  std::uint64_t ReadErrors(offload::CounterId id) const override;
  // A peer's death is the one failure counted on every counter at once.
  Code ErrorClass(offload::CounterId id) const override {
    if (ReadErrors(id) == 0) return Code::kOk;
    return dead_pid_.load(std::memory_order_acquire) != 0 ? Code::kProcFailed : Code::kOther;
  }
  Status WaitCounter(offload::CounterId id, std::uint64_t value, int timeout_ms) override;
  Status AddCounter(offload::CounterId id, std::uint64_t value) override;

  Status RegisterMemory(void* addr, std::size_t len, offload::CounterId arrival_counter,
                        offload::MemRegion* out) override;
  Status DeregisterMemory(offload::MemRegion* mr) override;

  Status CheckOps(std::span<const offload::TriggeredOp> ops) const override;
  Status Post(std::span<const offload::TriggeredOp> ops) override;
  Status Cancel(offload::CounterId trigger) override;
  Status Flush() override;
  bool Progress() override;
  std::size_t SlotsInUse() const override;
  std::uint64_t WorkRequests() const override;

  // For tests: which area (PeerId) is this process's, and how many ops
  // this backend instance executed for any owner.
  std::uint32_t self() const { return self_; }
  std::uint64_t ops_executed() const { return executed_.load(std::memory_order_relaxed); }
  // WaitCounter's sleeps in the kernel, and those that ended by timing out
  // rather than by an adder's wake.
  std::uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  std::uint64_t sleep_timeouts() const { return sleep_timeouts_.load(std::memory_order_relaxed); }
  // Takes the lock of area `area` and never releases it: a test kills the
  // process afterwards to leave a dead holder behind. false: no such area,
  // or its holder died.
  bool HoldAreaLockForTest(std::uint32_t area);
  // Whether a thread sleeps on counter `id` of area `area` (a peer's too).
  bool CounterHasSleeper(std::uint32_t area, offload::CounterId id) const {
    return ValidCounter(area, id) && A(area).counters()[id].sleepers.load() != 0;
  }

 private:
  ShmTriggerBackend() = default;

  // ---- dead peers (shm_faults.cc) ----
  // Locks `m`; false when its holder died (NotePeerDeath has run).
  [[nodiscard]] bool LockArea(ShmMutex& m);
  // The first death seen is remembered (every later call of this backend
  // fails with DeadPeerError) and every allocated counter of this process
  // counts an error, so that whoever waits on one returns.
  void NotePeerDeath(int pid, bool held_a_lock);
  bool PeerDied() const { return dead_pid_.load(std::memory_order_relaxed) != 0; }
  // kProcFailed naming the dead process (rank and pid).
  Status DeadPeerError(const char* call) const;
  // At most every 250 ms: whether every peer process still lives
  // (false: NotePeerDeath has run). Between checks: true.
  bool PeersAlive();

  // ---- counters and trigger lists (shm_triggers.cc) ----
  // Adds `v` to (or sets) counter `id` of area `area` and claims the ops it
  // made ready onto the calling thread's work list. false: no such counter.
  bool UpdateCounter(std::uint32_t area, offload::CounterId id, std::uint64_t v, bool set);
  void RecordError(std::uint32_t area, offload::CounterId id);
  void WakeCounter(Counter& c);
  // Claims, under the lock of counter `c`'s area, the armed ops whose
  // thresholds its value reached.
  void ClaimReadyLocked(std::uint32_t area, Counter& c);
  void InsertArmedLocked(Counter& c, std::uint32_t index);
  void UnlinkArmedLocked(Counter& c, std::uint32_t index);
  void FreeNodeLocked(AreaHeader* h, std::uint32_t index);
  std::size_t CancelLocked(Counter& c);
  bool ValidCounter(std::uint32_t area, offload::CounterId id) const;

  // ---- executing claimed ops (shm_executor.cc) ----
  void PushWork(Handle h);
  // Runs the thread's work list to the end, unless an outer call on this
  // thread is already running it (then that call runs what we added).
  void RunWork();
  void Execute(Handle h);
  // Releases the op's slot, then counts its completion (ok) or error.
  void Finish(Handle h, bool ok);
  bool ExecutePut(const Node& n, std::uint32_t owner);
  bool ExecuteAtomic(const Node& n, std::uint32_t owner);
  void FireSend(Handle h);
  void FireRecv(Handle h);
  void Deliver(Handle send, Handle recv);
  void QueueHostStep(Handle h);
  bool RunHostSteps();
  bool WithdrawUnmatched();

  // ---- data movement (shm_copy.cc) ----
  // Copies bytes from (area src, address) to (area dst, address).
  bool Move(std::uint32_t src, std::uint64_t src_addr, std::uint32_t dst, std::uint64_t dst_addr,
            std::size_t bytes);
  bool Read(std::uint32_t area, std::uint64_t addr, void* dst, std::size_t bytes);
  bool Write(std::uint32_t area, std::uint64_t addr, const void* src, std::size_t bytes);
  bool Local(std::uint32_t area) const { return areas_[area].pid == my_pid_; }
  // Looks up a region of area `area` by key; false when key or range fail.
  bool FindRegion(std::uint32_t area, std::uint64_t key, std::uint64_t addr, std::size_t bytes,
                  Region** region);

  AreaView& A(std::uint32_t area) { return areas_[area]; }
  const AreaView& A(std::uint32_t area) const { return areas_[area]; }
  Node& N(Handle h) { return areas_[AreaOf(h)].nodes()[IndexOf(h)]; }
  AreaHeader* Own() const { return own_.hdr(); }

  offload::Capabilities caps_;
  AreaView own_;
  int own_fd_ = -1;
  int my_pid_ = 0;
  std::uint32_t self_ = 0;
  std::vector<AreaView> areas_;  // by PeerId; areas_[self_] is own_
  std::atomic<std::uint64_t> executed_{0};
  std::atomic<std::uint64_t> sleeps_{0};
  std::atomic<std::uint64_t> sleep_timeouts_{0};
  std::atomic<int> dead_pid_{0};  // the first peer found dead; 0: none
  std::atomic<bool> dead_held_lock_{false};
  std::atomic<std::int64_t> liveness_due_ns_{0};  // steady clock
};

// Factory registered as "shm": refuses (kUnsupportedOperation) unless every
// rank of the job is on this node (BackendOptions::node_ranks == world_size).
Status CreateShmBackend(const offload::BackendOptions& options,
                        std::unique_ptr<offload::OffloadBackend>* out);

}  // namespace nicq::shmtrig

namespace nicq::offload {
// Registers "shm" (providers/shm_native). Idempotent.
void RegisterShmBackend();
}  // namespace nicq::offload
