// The shared-memory layout of the shm trigger backend.
//
// Every process owns one *area* (a memfd it creates; peers map it through
// /proc/<pid>/fd/<fd>): its counters, the op pool whose nodes hold its
// posted ops, the trigger list of each counter, its registered regions, its
// tagged match lists and the queue of host steps others left for it. Since
// every area is mapped by every process of the node, any process can add to
// any counter and claim the ops gated on it ("the last arriver executes").
//
// Locking: one futex mutex per area guards its lists, its free lists and
// its region table; nobody holds two area locks at once, and no lock is held
// while an op executes. A lock word names its holder's pid, so a waiter can
// tell a holder that died inside its critical section from a slow one.
// Counter values are atomics, read without the lock. Lists of an area's own
// nodes (free list, trigger lists, posted receives, host queue) link node
// indices; a list that holds other areas' nodes (a send waiting in the
// receiver's unexpected list, an executor's work list) links global handles
// (area, index).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace nicq::shmtrig {

using Handle = std::uint32_t;  // area << kIndexBits | index
inline constexpr Handle kNil = 0xffffffffu;
inline constexpr unsigned kIndexBits = 22;
inline constexpr std::uint32_t kMaxAreas = 1u << (32 - kIndexBits);
inline constexpr std::uint32_t kNoSlot = 0xffffffffu;

inline Handle MakeHandle(std::uint32_t area, std::uint32_t index) {
  return area << kIndexBits | index;
}
inline std::uint32_t AreaOf(Handle h) {
  return h >> kIndexBits;
}
inline std::uint32_t IndexOf(Handle h) {
  return h & ((1u << kIndexBits) - 1);
}

// A futex mutex in shared memory whose word is 0 (free) or the holder's
// pid, with kWaiters set while someone sleeps on it. Lock spins briefly,
// then sleeps in the kernel in bounded naps; after each nap it checks that
// the holder still lives. A holder that died never unlocks: Lock gives up
// and reports its pid instead of waiting forever.
struct ShmMutex {
  static constexpr std::uint32_t kWaiters = 0x80000000u;
  std::atomic<std::uint32_t> word{0};
  // `self_pid` is the caller's getpid() (passed in: no system call on the
  // uncontended path). true: locked. false: the holder, *dead_holder, died.
  [[nodiscard]] bool Lock(int self_pid, int* dead_holder);
  void Unlock();
};

// Whether process `pid` exists and has not exited (a zombie counts as
// exited: its parent may not have reaped it yet).
bool ProcessAlive(int pid);

// Futex helpers on words of a MAP_SHARED mapping (never FUTEX_PRIVATE).
// timeout_ns < 0: no limit. Returns true when the wait timed out.
bool FutexWait(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::int64_t timeout_ns);
void FutexWakeAll(std::atomic<std::uint32_t>* word);

struct alignas(64) Counter {
  std::atomic<std::uint64_t> value{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint32_t> change{0};    // futex word: bumped on every change
  std::atomic<std::uint32_t> sleepers{0};  // threads asleep on `change`
  Handle head = kNil;                      // trigger list, sorted by threshold
  Handle tail = kNil;
  std::atomic<std::uint32_t> allocated{0};  // read without the lock by NotePeerDeath
  std::uint32_t next_free = kNoSlot;
};

enum class NodeState : std::uint32_t {
  kFree,
  kArmed,    // in its trigger counter's list
  kClaimed,  // taken by an executor (work list, match list, host queue)
};

// One posted op. Pointers are addresses in the owner's address space.
struct Node {
  Handle next = kNil;  // index, or a handle in `unexpected`
  Handle prev = kNil;  // trigger list only (index)
  Handle work_next = kNil;
  NodeState state = NodeState::kFree;
  std::uint8_t kind = 0;
  std::uint8_t aop = 0;
  std::uint8_t atype = 0;
  std::uint32_t trigger = 0;
  std::uint32_t completion = 0;
  std::uint32_t target_counter = 0;
  std::uint32_t peer_slot = kNoSlot;  // area of the peer; kNoSlot: any source (recv)
  std::uint64_t threshold = 0;
  std::uint64_t completion_inc = 0;
  std::uint64_t local_buf = 0;
  std::uint64_t local_rbuf = 0;
  std::uint64_t bytes = 0;
  std::uint64_t tag = 0;
  std::uint64_t remote_addr = 0;
  std::uint64_t remote_key = 0;
  std::uint64_t value = 0;
  std::uint64_t host_fn = 0;
  std::uint64_t host_arg = 0;
};

struct Region {
  std::uint64_t addr = 0;
  std::uint64_t len = 0;
  std::uint32_t generation = 0;  // part of the key: a stale key fails
  std::uint32_t in_use = 0;
  std::uint32_t arrival = 0xffffffffu;
  std::uint32_t next_free = kNoSlot;
  ShmMutex atomic_lock;  // serializes atomics that land in this region
};

struct List {
  Handle head = kNil;
  Handle tail = kNil;
};

inline constexpr std::uint64_t kAreaMagic = 0x6e69637173686d74;  // "nicqshmt"

struct alignas(64) AreaHeader {
  std::uint64_t magic = 0;
  std::uint64_t nonce = 0;  // random: tells areas (and worlds) apart
  std::int32_t pid = 0;
  std::uint32_t n_counters = 0;
  std::uint32_t n_nodes = 0;
  std::uint32_t n_regions = 0;
  std::uint64_t counters_off = 0;
  std::uint64_t nodes_off = 0;
  std::uint64_t regions_off = 0;
  std::uint64_t total_bytes = 0;
  ShmMutex lock;
  Handle free_nodes = kNil;
  std::atomic<std::uint32_t> nodes_free{0};
  std::uint32_t counter_free = kNoSlot;
  std::uint32_t counters_used = 0;  // high-water mark of the counter table
  std::uint32_t region_free = kNoSlot;
  std::uint32_t regions_used = 0;
  List host_ready;  // host steps others claimed for this process
  List posted;      // fired receives of this process, unmatched
  List unexpected;  // fired sends to this process, unmatched
  std::atomic<std::uint32_t> host_pending{0};
  std::atomic<std::uint32_t> sleepers{0};  // threads of the owner asleep in WaitCounter
  std::atomic<std::uint64_t> work_requests{0};
};

struct AreaSizes {
  std::uint32_t counters = 4096;
  std::uint32_t nodes = 16384;
  std::uint32_t regions = 1024;
};

// A mapped area (ours or a peer's).
struct AreaView {
  void* base = nullptr;
  std::size_t bytes = 0;
  int pid = 0;
  AreaHeader* hdr() const { return static_cast<AreaHeader*>(base); }
  Counter* counters() const {
    return reinterpret_cast<Counter*>(static_cast<char*>(base) + hdr()->counters_off);
  }
  Node* nodes() const {
    return reinterpret_cast<Node*>(static_cast<char*>(base) + hdr()->nodes_off);
  }
  Region* regions() const {
    return reinterpret_cast<Region*>(static_cast<char*>(base) + hdr()->regions_off);
  }
};

// Creating our own area (a memfd, closed with the process: nothing to
// clean up after a crash) and mapping a peer's through /proc/<pid>/fd/<fd>,
// which the kernel allows under the same rule as process_vm_readv.
std::size_t AreaBytes(const AreaSizes& sizes);
Status CreateArea(const AreaSizes& sizes, AreaView* out, int* fd_out);
Status MapPeerArea(int pid, int fd, std::uint64_t nonce, AreaView* out);
void UnmapArea(AreaView* v);

}  // namespace nicq::shmtrig
