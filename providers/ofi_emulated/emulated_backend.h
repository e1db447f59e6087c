// EmulatedBackend: the triggered-op contract on libfabric providers without
// triggered operations (tcp;ofi_rxm, shm, verbs;ofi_rxm). Counters are
// 64-bit software counters (TriggerQueue); they grow from local completions
// (CQ entries), from host adds, and from remote CQ data: a put carries the
// target's arrival counter id in fi_writedata's data, a remote counter add is
// an 8-byte fi_writedata to the peer's doorbell region, so the target's CQ
// names the counter to bump and by how much.
//
// Ops become ready under the queue's lock and are issued after it is
// released by whichever thread holds the "drainer" role (Post, AddCounter,
// Progress, the progress thread): one issuer at a time keeps the order in
// which ops became ready; the others return at once. A provider EAGAIN puts
// the op back at the front, to be retried on the next Progress().
//
// Provider calls: one thread at a time inside the endpoint's data path
// (every issue and every CQ read), though the endpoint is FI_THREAD_SAFE.
// libfabric 1.17's shm loses a tagged match when one thread posts fi_trecv
// while another reads the CQ as the message arrives: the receive stays
// posted and the message unexpected, each missing the other, forever
// (tools/repro/shm_recv_race.c shows it without nicq in a few thousand
// rounds; queued matched receives stalled this way, see
// docs/queue-semantics.md "Resident epochs"). A mutex held for one call
// closes it: the issuer is always the drainer, so it is contended only by a
// concurrent CQ read. Blocking reads (fi_cq_sread on providers with a CQ
// wait object, never shm here) are left outside it, or a thread asleep in
// the CQ would hold every issue back for its whole timeout.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "providers/backend.h"
#include "providers/common/backend_registry.h"
#include "providers/ofi_common/mr_key.h"
#include "providers/ofi_common/ofi_endpoint.h"
#include "providers/ofi_common/progress_thread.h"
#include "providers/ofi_emulated/host_add_ring.h"
#include "providers/ofi_emulated/trigger_queue.h"

namespace nicq::ofi {

struct EmulatedConfig {
  std::string provider;
  std::size_t num_counters = 4096;
  std::size_t num_ops = 65536;
  int progress_thread = -1;  // 1 on, 0 off, -1 NICQ_PROGRESS_THREAD
  int local_ranks = 1;       // ranks on this node (NICQ_PROGRESS_THREAD auto)
  int spin_us = 20;
  // The progress thread's naps on a CQ without wait object (shm): the
  // shortest, while work comes or an epoch is awaited, and the longest, that
  // an idle thread doubles up to. A doorbell (SetAgentBells) ends them early.
  int min_nap_us = 50;
  int max_nap_us = 1000;
  // While a started epoch awaits its peers (ExpectCounter), how long after
  // its last work the thread polls with a sched_yield between polls before
  // it naps (shm only; 0: nap at once).
  int epoch_spin_us = 50;
  // How a host add through a ring (host_add_ring.h) and the agent's sleep
  // see each other: -1 membarrier on the agent's side where the kernel
  // allows it (a compiler barrier on the host's), 0 a seq_cst fence on both.
  int host_add_fence = -1;
};

class EmulatedBackend final : public offload::OffloadBackend {
 public:
  static Status Create(const EmulatedConfig& config, std::unique_ptr<EmulatedBackend>* out);
  ~EmulatedBackend() override;

  const char* Name() const override { return "emulated"; }
  const offload::Capabilities& Caps() const override { return caps_; }
  Status LocalAddress(std::vector<std::uint8_t>& out) override;
  Status SetPeers(std::span<const std::vector<std::uint8_t>> addrs) override;
  Status AllocCounters(std::size_t n, offload::CounterId* out) override;
  void FreeCounter(offload::CounterId id) override;
  // The calling thread's own adds to `id` still in its ring are applied
  // first: a thread reads what it added (emulated_host_calls.cc).
  std::uint64_t ReadCounter(offload::CounterId id) const override;
  std::uint64_t ReadErrors(offload::CounterId id) const override { return queue_.Errors(id); }
  Code ErrorClass(offload::CounterId id) const override { return queue_.ErrorClass(id); }
  Status WaitCounter(offload::CounterId id, std::uint64_t value, int timeout_ms) override;
  Status AddCounter(offload::CounterId id, std::uint64_t value) override;
  Status RegisterMemory(void* addr, std::size_t len, offload::CounterId arrival_counter,
                        offload::MemRegion* out) override;
  Status DeregisterMemory(offload::MemRegion* mr) override;
  Status Post(std::span<const offload::TriggeredOp> ops) override;
  Status Cancel(offload::CounterId trigger) override;
  Status Flush() override;
  // A progress pass of a host call: an idle backend reads its CQ only now
  // and then (emulated_issue.cc).
  bool Progress() override;
  bool HostDriven() const override { return !want_thread_; }
  void ExpectCounter(offload::CounterId id, std::uint64_t value) override;
  // With the progress thread running: resident plans re-armed in its polls.
  bool AddRefiller(void (*refill)(void*), void* arg) override;
  void RemoveRefiller(void* arg) override;
  // Before the backend's first use (the progress thread reads the tables
  // unlocked). Ignored where the CQ has a wait object: peers' writes signal it.
  void SetAgentBells(offload::AgentBell* own, std::span<offload::AgentBell* const> peers) override;
  std::size_t SlotsInUse() const override { return queue_.nodes_in_use(); }
  // Ops posted by host threads. The agent's own posts (its re-arming of
  // resident plans, AddRefiller) are the emulator's work, as a NIC's would
  // be, and are counted apart: they run beside the host's starts, and a
  // start read around them posted nothing.
  std::uint64_t WorkRequests() const override {
    return work_requests_.load(std::memory_order_relaxed);
  }
  std::uint64_t agent_work_requests_for_test() const {
    return agent_work_requests_.load(std::memory_order_relaxed);
  }

  const char* provider() const { return ep_->provider_name(); }

  // Tests: told on entry to and exit from every serialized provider call,
  // inside the serialization (emulated_thread_test.cc parks a thread there
  // to order the race). nullptr: none; the hot path pays one relaxed load.
  class ProviderCallObserver {
   public:
    virtual ~ProviderCallObserver() = default;
    virtual void Enter() = 0;
    virtual void Leave() = 0;
  };
  void SetProviderCallObserverForTest(ProviderCallObserver* o) {
    call_observer_.store(o, std::memory_order_release);
  }
  bool progress_thread_running() const { return thread_.running(); }
  int progress_thread_pu() const { return thread_.bound_pu(); }
  // Tests: the progress thread's next nap on a CQ without wait object (us).
  int nap_us_for_test() const { return nap_us_.load(std::memory_order_relaxed); }
  // Tests: naps on the doorbell that a ring ended, and that ran to their
  // timeout; whether a thread is asleep on it now.
  std::uint64_t bell_wakes_for_test() const { return bell_wakes_.load(std::memory_order_relaxed); }
  std::uint64_t nap_timeouts_for_test() const {
    return nap_timeouts_.load(std::memory_order_relaxed);
  }
  // Tests: naps (on the doorbell or the queue's futex) taken while a
  // started epoch awaited its peers, and yield-polls made instead.
  std::uint64_t epoch_naps_for_test() const { return epoch_naps_.load(std::memory_order_relaxed); }
  std::uint64_t epoch_yields_for_test() const {
    return epoch_yields_.load(std::memory_order_relaxed);
  }
  bool asleep_on_bell_for_test() const {
    return own_bell_ != nullptr && own_bell_->sleepers.load(std::memory_order_seq_cst) > 0;
  }
  // Tests: host adds published through the threads' rings, host adds made
  // the read-modify-write way while the agent runs (no ring, a full ring),
  // and whether the agent's sleep is fenced with membarrier.
  std::uint64_t ring_adds_for_test() const {
    std::uint64_t n = 0;
    for (const HostAddRing& r : rings_) n += r.pushed();
    return n;
  }
  std::uint64_t rmw_adds_for_test() const { return rmw_adds_.load(std::memory_order_relaxed); }
  bool fences_with_membarrier() const { return add_path_.membarrier; }

 private:
  EmulatedBackend(const EmulatedConfig& config);
  Status Init();
  // Scope of one provider data-path call (see the top of this file).
  class ProviderCall {
   public:
    explicit ProviderCall(EmulatedBackend* b) : b_(b), lock_(b->provider_mu_) {
      if (auto* o = b_->call_observer_.load(std::memory_order_acquire)) o->Enter();
    }
    ~ProviderCall() {
      if (auto* o = b_->call_observer_.load(std::memory_order_acquire)) o->Leave();
    }
    ProviderCall(const ProviderCall&) = delete;
    ProviderCall& operator=(const ProviderCall&) = delete;

   private:
    EmulatedBackend* b_;
    std::lock_guard<std::mutex> lock_;
  };
  // Reads the CQ and issues ready ops, idle or not (the progress thread,
  // waits and flush).
  bool PollNow();
  // Host adds while the agent runs (emulated_host_calls.cc): the calling
  // thread's ring (claimed at its first add; nullptr: none, it adds the
  // read-modify-write way), the wake of a sleeping agent, and on the
  // agent's side the adds taken from every ring and its sleep announced.
  inline HostAddRing* OwnRing();  // emulated_host_calls.cc only
  HostAddRing* ClaimRing();
  // Waits (spin, yield, sleep) until the agent applied the calling
  // thread's published adds to `id`; returns at once where it has none.
  inline void AwaitOwnAdds(offload::CounterId id) const;  // emulated_host_calls.cc only
  void AwaitAgent(HostAddRing* ring, offload::CounterId id) const;
  // Until the agent has applied every add the rings held at the call (or
  // it stops).
  void AwaitAllRings() const;
  void WakeAgentForHostAdds();
  bool TakeHostAdds();
  bool HostAddsPending() const;
  void AnnounceSleep();
  void EndSleep() { agent_asleep_.store(false, std::memory_order_relaxed); }
  // membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED), once per process
  // (false: the kernel refused it; logged once at info), and the barrier.
  static bool RegisterMembarrier();
  static void Membarrier();
  // Issues ready ops while this thread holds the drainer role.
  bool Drain();
  // Post's fast path: every op fires at once and is no local counter op.
  static bool AllFireNow(std::span<const offload::TriggeredOp> ops);
  // Issues ops at once; the caller holds the drainer role, the FIFO empty.
  Status IssueNow(std::span<const offload::TriggeredOp> ops);
  // 0: issued or done; -FI_EAGAIN: retry later; other <0: failed.
  long Issue(EmuNode* n);
  // The ops that complete at issue (emulated_issue.cc); *injected false: any other.
  long IssueInjected(const offload::TriggeredOp& op, bool* injected);
  long IssueDoorbell(EmuNode* n, offload::PeerId peer, offload::CounterId counter,
                     std::uint64_t value);
  void Complete(EmuNode* n);
  // Ops complete at issue (inject, local counter and host ops) are batched
  // by the drainer and completed under one lock after each batch it pops.
  void CompleteAtIssue(EmuNode* n);
  void FlushCompletedAtIssue();
  void Fail(EmuNode* n, long err);
  int HandleEntries(const fi_cq_data_entry* entries, int n);
  int ReadCq();
  void BlockInCq(int timeout_ms);
  // BlockInCq on shm: a nap on the queue's change futex, or on the doorbell.
  void NapOnChange(int timeout_us);
  void NapOnBell(int timeout_us);
  // After another thread than the progress thread issued ops: their
  // completions land in the CQ, which the thread, asleep on the bell,
  // reads only once woken.
  void WakeAgentForCompletions() {
    if (own_bell_ != nullptr && own_bell_->sleepers.load(std::memory_order_seq_cst) > 0 &&
        !thread_.on_thread())
      offload::RingBell(own_bell_);
  }
  // After the provider call `r` of an op that hands work to `peer`: ring
  // when it went out, and when the provider said EAGAIN too, since on shm
  // that waits for the peer's progress (its command queue is full, or it
  // has yet to answer our first message's address exchange).
  void RingPeer(offload::PeerId peer, long r) {
    if (r != 0 && r != -FI_EAGAIN) return;
    if (static_cast<std::size_t>(peer) < peer_bells_.size() && peer_bells_[peer] != nullptr)
      offload::RingBell(peer_bells_[peer]);
  }
  bool PeerOk(offload::PeerId p) const {
    return p >= 0 && static_cast<std::size_t>(p) < doorbells_.size();
  }

  EmulatedConfig config_;
  offload::Capabilities caps_;
  // Where atomics that bump an arrival counter fetch the target's old
  // values, which nothing reads; empty: they ask for delivery completion
  // instead. libfabric 1.17's shm sends a delivery-complete atomic through
  // an inject buffer of the target's region and frees that buffer twice, at
  // the target once applied and at the initiator on the response; the pool
  // then hands one buffer to two initiators, and one contribution replaces
  // another (the conformance test ConvergingAtomicsEveryEpoch).
  // A fetching atomic takes the path whose buffer only the initiator frees,
  // and completes after the target applied it just the same. One sink per
  // backend: the provider copies into it only inside the initiator's
  // serialized CQ reads (ProviderCall). Declared before ep_, so that it
  // outlives the endpoint: a fetch still in flight when the endpoint
  // closes writes into live memory.
  std::vector<std::uint8_t> fetch_sink_;
  std::unique_ptr<OfiEndpoint> ep_;
  std::mutex provider_mu_;  // ProviderCall
  std::atomic<ProviderCallObserver*> call_observer_{nullptr};
  TriggerQueue queue_;
  std::atomic<bool> draining_{false};
  std::atomic<bool> retry_{false};                     // an op got EAGAIN: keep progressing
  std::atomic<int> in_flight_{0};                      // issued, completion not yet seen
  std::atomic<int> regions_{0};                        // registered memory regions
  std::atomic<std::uint32_t> idle_polls_{0};           // Progress calls that found it idle
  std::atomic<std::uint64_t> work_requests_{0};        // ops accepted by Post from host threads
  std::atomic<std::uint64_t> agent_work_requests_{0};  // and from the agent
  // Progress thread's nap on a CQ without wait object (shm): 50 us while
  // work comes, doubling to 1 ms while nothing does (an idle process then
  // wakes 1000 times a second, not 20000); EmulatedConfig's min/max_nap_us.
  std::atomic<int> nap_us_{50};
  // This process's doorbell and, by peer, those of the peers on this node
  // (agent_bell.h); nullptr: none (naps end on their timeout or on local work).
  offload::AgentBell* own_bell_ = nullptr;
  std::vector<offload::AgentBell*> peer_bells_;
  // The low CQ-data bits of our puts that ask the target to ring us back
  // (emulated_issue.cc); 0 without a bell.
  std::uint64_t ring_back_ = 0;
  static std::uint64_t RingBackData(offload::PeerId self);
  static bool CountersFitCqData(std::size_t num_counters);
  std::atomic<std::uint64_t> bell_wakes_{0}, nap_timeouts_{0};
  std::atomic<std::uint64_t> epoch_naps_{0}, epoch_yields_{0};
  // Where the work of an epoch runs, by the agent and by host calls: polls
  // and those that found work, CQ entries read, ops issued.
  // NICQ_LOG=debug:provider prints them when the backend closes. Plain
  // loads and stores: a lost update between host threads loses a count,
  // and the data path pays no locked instruction for them.
  struct HopCounts {
    std::atomic<std::uint64_t> polls{0}, polls_with_work{0}, cq_entries{0}, issued{0};
    static void Bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) {
      c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
  };
  HopCounts agent_hops_, host_hops_;
  HopCounts& Hops() { return thread_.on_thread() ? agent_hops_ : host_hops_; }
  void LogHopCounts() const;
  // When the progress thread last found work (its own clock, ns); the
  // epoch spin of BlockInCq runs until epoch_spin_us past it.
  std::int64_t thread_worked_ns_ = 0;
  // BlockInCq while an epoch is awaited: polls, yielding between polls,
  // until work comes (true), the epoch is done or the spin is spent.
  bool SpinForEpoch();
  // Epochs started and not seen done (ExpectCounter): while one is, naps
  // stay at their shortest, since the peers' tokens and puts that finish it
  // land in the CQ, which only a poll reads (no wait object on shm). One
  // word per slot, counter id in the top 16 bits and the value below; a
  // counter hashes to its slot, and a collision only drops the older hint.
  static constexpr std::size_t kExpectSlots = 32;
  static constexpr int kExpectIdBits = 16, kExpectValueBits = 64 - kExpectIdBits;
  std::atomic<std::uint64_t> expect_[kExpectSlots] = {};
  // Whether an epoch ExpectCounter named is still short of its value
  // (clears the slots of those that are not).
  bool AwaitingExpected();
  // Resident plans the thread re-arms (AddRefiller), in a table sized at
  // creation. The thread takes refill_mu_ with try_lock (a plan being added
  // or removed skips one poll's refills); RemoveRefiller takes it, so no
  // refill of a removed plan runs after it returns.
  struct Refiller {
    void (*fn)(void*) = nullptr;
    void* arg = nullptr;
  };
  static constexpr std::size_t kMaxRefillers = 256;
  std::mutex refill_mu_;
  Refiller refillers_[kMaxRefillers];
  std::atomic<std::size_t> num_refillers_{0};
  void RunRefillers();
  alignas(8) std::uint64_t doorbell_ = 0;      // target of peers' doorbell writes
  static const std::uint64_t kDoorbellSource;  // 8 bytes we write to a doorbell
  fid_mr* doorbell_mr_ = nullptr;
  std::vector<std::uint64_t> doorbells_;      // per peer: remote address of its doorbell
  std::vector<std::uint64_t> doorbell_keys_;  // per peer: key of its doorbell
  std::atomic<std::uint32_t> next_key_{1};
  MrKeyLayout keys_;
  // The layout that decodes a peer's user key, or null where keys do not
  // carry the arrival counter (provider keys): ops then name it.
  const MrKeyLayout* key_arrival() const { return ep_->prov_key() ? nullptr : &keys_; }
  // Sends up to this size go out with fi_tinject and complete at issue.
  std::size_t inject_max_ = 0;
  // Puts that ask only for source completion (TriggeredOp::
  // source_completion) and fit inject_max_ go out with fi_inject_write(data)
  // and complete at issue (shm: see Init); so do remote counter adds that
  // ask for it.
  bool inject_puts_ = false;
  static constexpr int kIssueBatch = 16;      // ready ops popped under one lock
  EmuCompletion done_at_issue_[kIssueBatch];  // drainer only
  int ndone_at_issue_ = 0;
  // The host's add path, read at every add and written once: a line of its
  // own. `gen` names this backend in the threads' ring caches (a new
  // backend at the same address is another backend).
  struct alignas(64) HostAddPath {
    std::uint64_t gen = 0;
    bool membarrier = false;            // the agent's sleep fenced with membarrier
    std::atomic<bool> any_ring{false};  // a thread claimed a ring
  };
  HostAddPath add_path_;
  // Set by the agent just before it sleeps (a nap, a blocking CQ read)
  // and cleared when it wakes; a host add that finds it set wakes it.
  alignas(64) std::atomic<bool> agent_asleep_{false};
  static constexpr int kHostRings = 4;  // host threads with a ring; others add the RMW way
  HostAddRing rings_[kHostRings];
  std::atomic<std::uint64_t> rmw_adds_{0};
  ProgressThread thread_;
  bool want_thread_ = false;  // NICQ_PROGRESS_THREAD / config: start on first use
  std::atomic<bool> thread_started_{false};
  std::once_flag thread_once_;
  void EnsureThread();
};

// Factory for the backend registry (providers/common).
Status CreateEmulatedBackend(const offload::BackendOptions& options,
                             std::unique_ptr<offload::OffloadBackend>* out);

}  // namespace nicq::ofi
