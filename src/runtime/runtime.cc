// rt:: environment and progress: Init/Finalize, thread level, ProgressWait.
#include "runtime/runtime.h"

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "core/config.h"
#include "core/log.h"
#include "core/progress_hooks.h"
#include "runtime/async_progress.h"
#include "runtime/runtime_state.h"
#include "transport/tag.h"

namespace nicq::rt {

namespace detail {
State& S() {
  static State* s = new State;  // never destroyed: atexit order must not matter
  return *s;
}
double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}
std::int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int CpusAllowed() {
  cpu_set_t set;
  const int cpus = sched_getaffinity(0, sizeof(set), &set) == 0
                       ? CPU_COUNT(&set)
                       : int(sysconf(_SC_NPROCESSORS_ONLN));
  return std::max(cpus, 1);
}

// The ranks of this node that run on our cpuset: all of them, unless the
// launcher bound each rank to its own CPUs (nicqrun --bind-to core sets
// NICQ_BOUND); bound ranks share a CPU only when they outnumber the CPUs.
int RanksSharingCpus(int local_size) {
  local_size = std::max(local_size, 1);
  if (config::GetInt("NICQ_BOUND") != 1) return local_size;
  const long online = std::max(sysconf(_SC_NPROCESSORS_ONLN), 1L);
  return int(std::max(1L, (long(local_size) * CpusAllowed() + online - 1) / online));
}

// More ranks on our cpuset than cores in it: every poll of a waiter then
// steals the core from the rank that would send what it awaits.
bool NodeOversubscribed(int local_size) {
  return RanksSharingCpus(local_size) > CpusAllowed();
}

// How long a waiter polls before yielding (NICQ_WAIT_SPIN_US; -1: 50 us when
// each rank has a core, else none).
std::int64_t ChooseWaitSpinNs(bool oversubscribed) {
  std::int64_t us = config::GetInt("NICQ_WAIT_SPIN_US");
  if (us < 0) us = oversubscribed ? 0 : 50;
  return us * 1000;
}
// comm.cc
Status BuildWorldAndSelf();
Status FabricBarrier();
void DestroyComms();
}  // namespace detail

using detail::EngineLock;
using detail::S;

Status Init(int required, int* provided) {
  auto& s = S();
  if (s.initialized) return Error(Code::kOther, "Init: the runtime is already initialized");
  if (s.finalized) return Error(Code::kOther, "Init: the runtime was already finalized");
  NICQ_RETURN_IF_ERROR(CreateBootstrap(s.boot).WithContext("Init: bootstrap"));
  log::SetRank(s.boot->Rank());
  if (s.boot->Size() > transport::kMaxWorldSize)
    return Error(Code::kOther, "Init: " + std::to_string(s.boot->Size()) +
                                   " ranks exceed the tag layout's limit of " +
                                   std::to_string(transport::kMaxWorldSize));
  s.thread_level = std::clamp(required, 0, 3);
  if (provided) *provided = s.thread_level;
  s.locking.store(s.thread_level == 3, std::memory_order_relaxed);
  s.peer_timeout_s = double(std::max<std::int64_t>(1, config::GetInt("NICQ_PEER_TIMEOUT")));
  s.oversubscribed = detail::NodeOversubscribed(s.boot->LocalSize());
  s.wait_spin_max_ns = detail::ChooseWaitSpinNs(s.oversubscribed);
  // A waiter's short sleeps (5-80 us) are meaningless under the default
  // 50 us timer slack: nanosleep(5 us) took 60-77 us here, the floor of every
  // host collective step. 1 us of slack for this (the application's) thread.
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  s.wait_spin_ns.store(s.wait_spin_max_ns, std::memory_order_relaxed);
  NICQ_RETURN_IF_ERROR(s.fabric.Open(*s.boot).WithContext("Init: fabric"));
  {
    std::unordered_map<std::uint64_t, int> first_on_node;
    s.node_id.assign(std::size_t(s.fabric.size()), 0);
    for (int w = 0; w < s.fabric.size(); ++w)
      s.node_id[std::size_t(w)] =
          first_on_node.try_emplace(s.fabric.peer(w).node_hash, w).first->second;
  }
  NICQ_RETURN_IF_ERROR(s.engine.Init(&s.fabric, s.boot->Rank()));
  NICQ_RETURN_IF_ERROR(detail::BuildWorldAndSelf());
  // Every endpoint is enabled and every bounce buffer posted before anyone sends.
  NICQ_RETURN_IF_ERROR(s.boot->Barrier().WithContext("Init: barrier"));
  s.last_event_s.store(detail::NowSeconds(), std::memory_order_relaxed);
  s.initialized = true;
  NICQ_LOG(kInfo, kCore, "initialized: %d ranks, provider %s, domain %s, eager limit %zu",
           s.boot->Size(), s.fabric.provider().c_str(), s.fabric.domain_name().c_str(),
           s.engine.eager_limit());
  return Status::Ok();
}

Status Finalize() {
  auto& s = S();
  if (!s.initialized || s.finalized)
    return Error(Code::kOther, "Finalize: runtime not initialized");
  // The host progress thread polls the engine and the hooks: gone before
  // either closes.
  StopAsyncProgress();
  // A fabric barrier first: with manual-progress providers a peer may still
  // need our progress (e.g. to read our rendezvous buffer); after it, every
  // message of ours has been received.
  Status st = detail::FabricBarrier();
  Backoff b;
  while (st.ok() && s.engine.sends_in_flight() > 0) st = ProgressWait(b);
  if (!st.ok()) NICQ_LOG(kWarn, kCore, "Finalize: %s; closing anyway", st.message().c_str());
  // A failed peer needs nothing more from this process, and its failure
  // was reported to the calls that needed it: the survivor's Finalize
  // closes and succeeds, as under --enable-recovery it must.
  if (st.code() == Code::kProcFailed) st = Status::Ok();
  if (!s.engine.any_dead()) {
    Status bs = s.boot->Barrier();
    if (!bs.ok()) NICQ_LOG(kWarn, kCore, "Finalize: bootstrap barrier: %s", bs.message().c_str());
  }
  s.engine.Shutdown();
  s.fabric.Close();
  detail::DestroyComms();
  Status fs = s.boot->Finalize();
  s.finalized = true;
  s.initialized = false;
  return st.ok() ? fs : st;
}

bool Initialized() {
  return S().initialized;
}
bool Finalized() {
  return S().finalized;
}
int ThreadLevel() {
  return S().thread_level;
}
int RanksSharingMyCpus() {
  return detail::RanksSharingCpus(S().boot ? S().boot->LocalSize() : 1);
}
int WorldRank() {
  return S().boot ? S().boot->Rank() : 0;
}
int WorldSize() {
  return S().boot ? S().boot->Size() : 1;
}
Bootstrap& Boot() {
  return *S().boot;
}
const char* ProviderName() {
  return S().fabric.provider().c_str();
}
const char* FabricDomain() {
  return S().fabric.domain_name().c_str();
}
std::string DescribeFabric() {
  return transport::DescribeFabric();
}
int NodeIdOf(int world) {
  // Before Init (one-process schedule tests): every rank is a node.
  const std::vector<int>& ids = S().node_id;
  return std::size_t(world) < ids.size() ? ids[std::size_t(world)] : world;
}
bool SameNodeShm(int world) {
  const transport::ShmTransport& shm = S().fabric.shm();
  return shm.active() && (world == WorldRank() || shm.local(world));
}
bool CrossMemoryReads() {
  return S().fabric.shm().active() && S().fabric.shm().cma();
}
int ReadFromRank(int world, void* dst, std::uint64_t addr, std::size_t len) {
  return S().fabric.shm().ReadFrom(world, dst, addr, len);
}
offload::AgentBell* AgentBellOf(int world) {
  return S().fabric.shm().agent_bell(world);
}
bool LocalProcessGone(int world) {
  EngineLock lock;
  return S().engine.LocalPeerGone(world);
}
bool Oversubscribed() {
  return S().oversubscribed;
}
std::size_t EagerLimit() {
  return S().engine.eager_limit();
}
static_assert(kMaxUserTag == transport::kMaxUserTag);
int TagUpperBound() {
  return transport::kMaxUserTag;
}
Comm* World() {
  return S().world;
}
Comm* Self() {
  return S().self;
}

void Abort(int code, const char* why) {
  auto& s = S();
  NICQ_LOG(kError, kCore, "abort(%d): %s", code, why ? why : "");
  if (s.boot) s.boot->Abort(code, why ? why : "");
  std::fflush(stderr);
  _exit(code ? code : 1);
}

Status Progress(bool* progressed) {
  int n;
  {
    EngineLock lock;
    n = S().engine.Poll();
  }
  // Engines above p2p (collective schedules, queues) run outside the engine
  // lock: they call back into rt:: point-to-point.
  if (progress::PollAll()) ++n;
  if (progressed) *progressed = n > 0;
  return Status::Ok();
}

bool PollEngine() {
  EngineLock lock;
  return S().engine.Poll() > 0;
}

namespace {
// Manual-progress providers (shm, tcp;ofi_rxm) move data only when polled,
// so a waiter polls a while before it sleeps. Auto-progress providers
// (sockets) move data on their own thread, which polling only starves:
// measured on 2 loaded cores, an 8-byte sockets ping-pong took ~20 ms per
// half round trip with 32 polls + 64 yields + 1 ms sreads, and 60-550 us
// with 2 polls and 10 ms sreads.
struct WaitPolicy {
  std::uint32_t spin, yield;
  int block_ms;
};
constexpr WaitPolicy kManualProgress{32, 64, 1};
// Ranks outnumber cores: every pass polls once and yields (measured, 4
// ranks on 2 cores, 8-byte persistent allreduce: 27-35 us with 32 polls,
// 16-22 us with 2, 10-15 us yielding at once).
constexpr WaitPolicy kOversubscribed{0, 256, 1};
constexpr WaitPolicy kAutoProgress{2, 0, 10};
// Longest sleep on an offload engine's counter (progress::SleepInEngine).
constexpr int kEngineSleepMs = 1;
// The adaptive spin never drops below this (about a shm round trip).
constexpr std::int64_t kMinSpinNs = 2000;
// State::last_event_s when a poll found work since the clock was last read.
constexpr double kEventSeen = -1.0;

void ShortSleep(std::uint32_t sleeps) {
  // 5 us growing to 80 us: short enough for latency, long enough to give
  // the other ranks and progress threads on a shared core their turn.
  long ns = 5000L << std::min<std::uint32_t>(sleeps, 4);
  timespec ts{0, ns};
  nanosleep(&ts, nullptr);
}
}  // namespace

Status ProgressWait(Backoff& b) {
  auto& s = S();
  const WaitPolicy& w = s.fabric.auto_progress() ? kAutoProgress
                        : s.oversubscribed       ? kOversubscribed
                                                 : kManualProgress;
  // With the host progress thread running, a waiter that still spins or
  // yields asks it to keep quiet (it would only contend); one past that
  // phase sleeps and leaves the progress to the thread.
  const bool async = s.async_running.load(std::memory_order_relaxed);
  if (async && b.polls <= w.spin + w.yield)
    s.app_pass_ns.store(detail::NowNs(), std::memory_order_relaxed);
  int n;
  {
    EngineLock lock;
    n = s.engine.Poll();
  }
  if (progress::PollAll()) ++n;
  if (n > 0) {
    if (b.spin_until_ns != 0 && !b.spin_expired) {  // spinning paid off: spin longer next time
      const std::int64_t cur = s.wait_spin_ns.load(std::memory_order_relaxed);
      if (cur < s.wait_spin_max_ns)
        s.wait_spin_ns.store(std::min(s.wait_spin_max_ns, cur * 2), std::memory_order_relaxed);
    }
    b.Reset();
    // No clock read on the message path: the mark says "an event came";
    // the first pass of a blocking phase (the only reader, which reads the
    // clock anyway) turns it into the time the silence started.
    if (s.last_event_s.load(std::memory_order_relaxed) != kEventSeen)
      s.last_event_s.store(kEventSeen, std::memory_order_relaxed);
    return Status::Ok();
  }
  if (s.engine.any_dead()) {
    EngineLock lock;
    return Error(Code::kProcFailed, "a peer process has failed (" + s.engine.DeadPeers() +
                                        "); the operation cannot complete");
  }
  ++b.polls;
  const std::uint32_t kSpinPolls = w.spin, kYieldPolls = w.yield;
  const int kBlockMs = w.block_ms;
  if (b.polls <= kSpinPolls) return Status::Ok();
  // Manual progress on a core of our own: keep polling for wait_spin_ns
  // (the clock is read only on empty polls, past the first kSpinPolls).
  if (!s.fabric.auto_progress() && s.wait_spin_max_ns > 0 && !b.spin_expired) {
    const std::int64_t now_ns = detail::NowNs();
    const std::int64_t budget = s.wait_spin_ns.load(std::memory_order_relaxed);
    if (b.spin_until_ns == 0) b.spin_until_ns = now_ns + budget;
    if (now_ns < b.spin_until_ns) {
      --b.polls;  // still spinning: the yield phase has not begun
      return Status::Ok();
    }
    b.spin_expired = true;  // spun in vain: spin less next time (at least kMinSpinNs)
    s.wait_spin_ns.store(std::max(kMinSpinNs, budget / 2), std::memory_order_relaxed);
  }
  if (b.polls <= kSpinPolls + kYieldPolls) {
    sched_yield();
    return Status::Ok();
  }
  // Blocking phase: sleep in the CQ's wait object when it has one. Under
  // MPI_THREAD_MULTIPLE only one thread sleeps there (holding the lock for at
  // most kBlockMs); the others take short sleeps without the lock.
  // (Not in the CQ while the host progress thread runs: the waiter would
  // hold the engine lock, the thread could not progress, and the waiter's
  // request, completed by a thread's pass, would not end its CQ sleep.)
  if (async) {
    ShortSleep(b.polls - kSpinPolls - kYieldPolls);
  } else if (progress::SleepInEngine(std::min(kBlockMs, kEngineSleepMs))) {
    // An offloaded request is pending: its counter, not the CQ, ends the
    // sleep; short, so that a point-to-point request waited beside it is
    // still noticed soon.
  } else if (s.engine.can_block() && !s.locking.load(std::memory_order_relaxed)) {
    n = s.engine.BlockingPoll(kBlockMs);
  } else if (s.engine.can_block() && s.mu.try_lock()) {
    n = s.engine.BlockingPoll(kBlockMs);
    s.mu.unlock();
  } else {
    ShortSleep(b.polls - kSpinPolls - kYieldPolls);
  }
  const double now = detail::NowSeconds();
  if (n > 0) {
    b.Reset();
    s.last_event_s.store(now, std::memory_order_relaxed);
    return Status::Ok();
  }
  // A long silence: make sure the peers on this node still exist (remote
  // peers show up as provider errors on our sends).
  double last_event = s.last_event_s.load(std::memory_order_relaxed);
  if (last_event == kEventSeen) {
    last_event = now;
    s.last_event_s.store(now, std::memory_order_relaxed);
  }
  if (now - last_event >= s.peer_timeout_s &&
      now - s.last_liveness_s.load(std::memory_order_relaxed) >= 1.0) {
    s.last_liveness_s.store(now, std::memory_order_relaxed);
    EngineLock lock;
    NICQ_LOG(kDebug, kP2p, "no progress for %.0f s: %s", now - last_event,
             s.engine.DescribeState().c_str());
    if (s.engine.CheckLocalPeers())
      return Error(Code::kProcFailed,
                   "a peer process on this host has exited (" + s.engine.DeadPeers() + ")");
  }
  return Status::Ok();
}

Status Wait(Request* req) {
  Backoff b;
  while (!req->IsDone()) NICQ_RETURN_IF_ERROR(ProgressWait(b));
  return Status::Ok();
}

Status Test(Request* req, bool* done) {
  if (!req->IsDone()) NICQ_RETURN_IF_ERROR(Progress());
  *done = req->IsDone();
  return Status::Ok();
}

}  // namespace nicq::rt
