// State of one simulated NIC: counters with their trigger lists, the
// trigger slots holding posted commands, registered memory, and the tagged
// match lists. Plain data; the World drives it.
#pragma once

#include <cstdint>
#include <vector>

#include "firmware-sim/atomic_math.h"
#include "firmware-sim/loggp.h"

namespace nicq::fwsim {

inline constexpr std::uint32_t kNone = 0xffffffffu;

enum class CmdKind : std::uint8_t {
  kSend,
  kRecv,
  kPut,
  kAtomic,
  kCounterAdd,
  kCounterSet,
  kRemoteCounterAdd,
  kHost
};

// A command as the firmware sees it (the sim provider translates the
// backend's TriggeredOp into this).
struct Command {
  CmdKind kind = CmdKind::kHost;
  AluOp aop = AluOp::kSum;
  AluType atype = AluType::kDouble;
  std::uint32_t trigger = kNone;  // kNone: execute at once
  std::uint64_t threshold = 0;
  std::uint32_t completion = kNone;
  std::uint64_t completion_inc = 1;
  std::int32_t peer = -1;
  const void* src = nullptr;
  void* dst = nullptr;
  std::uint64_t bytes = 0;
  std::uint64_t tag = 0;
  std::uint64_t remote_addr = 0;
  std::uint64_t remote_key = 0;
  std::uint32_t target_counter = kNone;
  std::uint64_t value = 0;
  void (*host_fn)(void*) = nullptr;
  void* host_arg = nullptr;
};

// Trigger-list entry: ordered by (threshold, seq), seq = posting order.
struct TriggerEntry {
  std::uint64_t threshold;
  std::uint64_t seq;
  std::uint32_t slot;
};
struct TriggerLater {  // min-heap comparator for std::push_heap
  bool operator()(const TriggerEntry& a, const TriggerEntry& b) const {
    return a.threshold != b.threshold ? a.threshold > b.threshold : a.seq > b.seq;
  }
};

struct Counter {
  std::uint64_t value = 0;
  std::uint64_t errors = 0;
  bool allocated = false;
  std::vector<TriggerEntry> waiting;  // heap ordered by TriggerLater
};

enum class SlotState : std::uint8_t { kFree, kArmed, kExecuting };

struct Slot {
  Command cmd;
  SlotState state = SlotState::kFree;
  std::uint32_t next_free = kNone;
};

struct Region {
  std::uintptr_t base = 0;
  std::uint64_t len = 0;
  std::uint64_t key = 0;
  std::uint32_t arrival_counter = kNone;
  bool live = false;
};

// A send that arrived before its receive was posted. The data stays in the
// sender's buffer (rendezvous on the NIC): the send completes only when matched.
struct Unexpected {
  std::uint32_t src_nic;
  std::uint32_t src_slot;
  std::uint64_t tag;
};

struct NicStats {
  std::uint64_t messages = 0;  // messages injected
  std::uint64_t bytes = 0;     // payload bytes injected
  std::uint64_t fired = 0;     // commands executed
  std::uint64_t errors = 0;    // commands that failed
  std::uint64_t retries = 0;   // retransmissions
  std::size_t slots_high_water = 0;
  std::size_t counters_allocated = 0;
  Time last_completion = 0;
};

struct Nic {
  std::vector<Counter> counters;
  std::vector<std::uint32_t> free_counters;
  std::vector<Slot> slots;  // grows up to slot_limit, then recycled
  std::uint32_t free_slot = kNone;
  std::size_t slots_in_use = 0;
  std::size_t slot_limit = 0;
  std::uint64_t post_seq = 0;
  std::vector<Region> regions;  // key = index + 1 + key_salt
  std::uint64_t key_salt = 0;
  std::vector<std::uint32_t> posted_recvs;  // slots, posting order
  std::vector<Unexpected> unexpected;       // arrival order
  Time tx_free = 0;                         // injection port busy until
  Time host_free = 0;                       // host core busy with host steps until
  std::size_t in_flight = 0;                // commands executing (not armed, not done)
  bool dead = false;
  NicStats stats;
};

}  // namespace nicq::fwsim
