#include "providers/ofi_common/progress_thread.h"

#include <hwloc.h>
#include <sched.h>

#include "core/config.h"
#include "core/log.h"
#include "providers/ofi_common/backoff.h"

namespace nicq::ofi {
namespace {

// The PUs this process may run on. sched_getaffinity, not a hwloc
// topology load: loading binds the thread to each PU in turn (the x86
// backend reads cpuid there), and left two ranks on one core.
int AllowedPus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n < 1 ? 1 : n;
}

}  // namespace

// Auto: only when every rank of the node can have a second core. With the
// ranks filling the cores, each rank's thread takes its core from a rank
// (and contends for the provider's locks): on 2 ranks and 2 cores the
// queued ring of Example 13.1 took 5.0-5.7 us per iteration with the
// threads and 2.0-2.9 without (MPI_Startall: 2.8-3.5, same minutes).
bool ProgressThread::WantedByConfig(int local_ranks) {
  const std::int64_t v = config::GetInt("NICQ_PROGRESS_THREAD");
  if (v >= 0) return v != 0;
  return AllowedPus() >= 2 * (local_ranks < 1 ? 1 : local_ranks);
}

Status ProgressThread::Start(Step step, Block block, Wake wake, int spin_us) {
  if (running()) return Status::Ok();
  step_ = std::move(step);
  block_ = std::move(block);
  wake_ = std::move(wake);
  stop_.store(false);
  const int app_pu = sched_getcpu();
  thread_ = std::thread([this, spin_us, app_pu] {
    id_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    BindAwayFromApp(app_pu);
    Run(spin_us);
  });
  return Status::Ok();
}

void ProgressThread::Stop() {
  if (!thread_.joinable()) return;
  stop_.store(true, std::memory_order_release);
  if (wake_) wake_();
  thread_.join();
  id_.store(std::thread::id(), std::memory_order_relaxed);
}

// The application thread keeps the core it runs on; the progress thread
// takes another PU of the process's cpuset (the last one unlike the app's),
// so on a two-core machine each rank's progress thread sits on the other
// core and, being mostly blocked, costs the ranks there little.
void ProgressThread::BindAwayFromApp(int app_pu) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  // Without the x86 backend: it binds this thread to every PU in turn.
  hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
  if (hwloc_topology_load(topo) == 0) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0 && hwloc_bitmap_weight(set) > 1) {
      int chosen = -1;
      for (int pu = hwloc_bitmap_last(set); pu >= 0; --pu) {
        if (hwloc_bitmap_isset(set, pu) && pu != app_pu) {
          chosen = pu;
          break;
        }
      }
      if (chosen >= 0) {
        hwloc_bitmap_t one = hwloc_bitmap_alloc();
        hwloc_bitmap_only(one, chosen);
        if (hwloc_set_cpubind(topo, one, HWLOC_CPUBIND_THREAD) == 0) bound_pu_.store(chosen);
        hwloc_bitmap_free(one);
      }
    }
    hwloc_bitmap_free(set);
  }
  hwloc_topology_destroy(topo);
  NICQ_LOG(kDebug, kProvider, "progress thread bound to PU %d (application on PU %d)",
           bound_pu_.load(), app_pu);
}

void ProgressThread::Run(int spin_us) {
  const std::int64_t spin_ns = static_cast<std::int64_t>(spin_us) * 1000;
  // Spin and yield only after work was seen: a thread that woke from
  // block_() to nothing goes straight back to it. Otherwise, on providers
  // whose CQ has no wait object (shm), block_() is a 50 us nap and every nap
  // was followed by spin_us of spinning: an idle process burnt half a core.
  bool worked = true;
  awake_.store(true, std::memory_order_seq_cst);
  while (!stop_.load(std::memory_order_acquire)) {
    // Spin while work keeps coming; after spin_us without any, yield a few
    // times, then block until the wait object fires (or 10 ms pass).
    std::int64_t idle_since = NowNs();
    int yields = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      if (step_()) {
        worked = true;
        idle_since = NowNs();
        yields = 0;
        continue;
      }
      if (!worked) break;
      if (NowNs() - idle_since < spin_ns) continue;
      if (yields++ < 8) {
        sched_yield();
        continue;
      }
      break;
    }
    if (stop_.load(std::memory_order_relaxed)) break;
    worked = false;
    awake_.store(false, std::memory_order_seq_cst);
    block_(10);
    awake_.store(true, std::memory_order_seq_cst);
  }
}

}  // namespace nicq::ofi
