// The runtime's process-wide state, shared by runtime.cc, comm.cc and p2p.cc.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "boot/bootstrap.h"
#include "p2p/engine.h"
#include "runtime/comm.h"
#include "transport/fabric.h"

namespace nicq::rt::detail {

struct State {
  std::unique_ptr<Bootstrap> boot;
  transport::Fabric fabric;
  p2p::Engine engine;
  Comm* world = nullptr;
  Comm* self = nullptr;
  int thread_level = 0;
  bool initialized = false;
  bool finalized = false;
  // Only MPI_THREAD_MULTIPLE takes the lock; lower levels are serialized by
  // the application (MPI's promise), so they pay nothing.
  // Relaxed atomic: the host progress thread's start turns it on while
  // other threads (THREAD_MULTIPLE: already on) may read it.
  std::atomic<bool> locking{false};
  std::mutex mu;
  std::vector<std::uint8_t> ctx_used;  // one byte per context slot (id / kContextStride)
  std::vector<int> node_id;            // world rank -> lowest world rank on its node
  double peer_timeout_s = 30;
  // Written by every waiting thread (MPI_THREAD_MULTIPLE, the host progress
  // thread): relaxed atomics, only timestamps for the liveness check.
  std::atomic<double> last_event_s{0};
  std::atomic<double> last_liveness_s{0};
  // Nanoseconds a waiter on a manual-progress provider polls before it
  // yields. wait_spin_max_ns comes from NICQ_WAIT_SPIN_US (or, in auto, from
  // whether each rank has a core); wait_spin_ns adapts below it: it halves
  // when a spin ends empty (a loaded machine, or a peer busy computing) and
  // doubles when a message arrives while spinning.
  std::int64_t wait_spin_max_ns = 0;
  bool oversubscribed = false;  // more ranks on this node than cores in our cpuset
  std::atomic<std::int64_t> wait_spin_ns{0};
  // Host progress thread (async_progress.cc): set while it runs (its one
  // running flag); a waiting application thread then stamps every pass
  // with the time, and the thread stays out of the way while the stamps
  // keep coming.
  std::atomic<bool> async_running{false};
  std::atomic<std::int64_t> app_pass_ns{0};
};

State& S();

class EngineLock {
 public:
  EngineLock() : locked_(S().locking.load(std::memory_order_relaxed)) {
    if (locked_) S().mu.lock();
  }
  ~EngineLock() {
    if (locked_) S().mu.unlock();
  }
  EngineLock(const EngineLock&) = delete;
  EngineLock& operator=(const EngineLock&) = delete;

 private:
  bool locked_;
};

// A communicator of `world_ranks` on context slot `slot` (marked used).
Comm* NewComm(std::uint32_t slot, std::vector<int> world_ranks, int my_world);

double NowSeconds();                   // CLOCK_MONOTONIC_COARSE: no syscall (vDSO)
std::int64_t NowNs();                  // CLOCK_MONOTONIC (vDSO): spin deadlines
int CpusAllowed();                     // PUs in this process's cpuset (at least 1)
int RanksSharingCpus(int local_size);  // ranks of the node on our cpuset (NICQ_BOUND)

}  // namespace nicq::rt::detail
