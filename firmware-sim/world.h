// World: many simulated NICs in one process, driven one event at a time.
//
// Deterministic by construction: single-threaded, events ordered by
// (time, sequence number), every random decision drawn from one seeded Rng
// in event order. Memory is the process's own: a put copies bytes from the
// source pointer to the target address after checking the target NIC's
// registered regions, which is what lets tests run many "ranks" in one
// process and check their data.
//
// Message protocol (LogGP, see loggp.h): the initiator's injection port is
// busy for max(g, (k-1)G); the target NIC sees the message o + (k-1)G + L
// after injection starts and processes it in o; acknowledgements take L. A
// put/atomic/send completes at the initiator when its ack arrives, so the
// source buffer is read when the message lands and is reusable only after
// completion; nothing is buffered in between (no per-message allocation).
//
// Pools (events, slots, trigger lists) grow to their high-water mark and are
// reused after: steady-state posting and firing allocate nothing.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "firmware-sim/faults.h"
#include "firmware-sim/loggp.h"
#include "firmware-sim/nic.h"

namespace nicq::fwsim {

enum class EventType : std::uint8_t {
  kExecute,   // a command leaves the trigger list and starts
  kArrive,    // a message lands at the target NIC (aux = target)
  kAck,       // the target's acknowledgement reaches the initiator (aux = 1: error)
  kComplete,  // a local command (counter op, host step, recv) completes (aux = 1: error)
};

struct Event {
  Time time;
  std::uint64_t seq;
  std::uint32_t nic;
  std::uint32_t slot;
  EventType type;
  std::uint32_t aux;
};

struct TraceRecord {
  Time time;
  std::uint32_t nic;
  std::uint32_t slot;
  EventType type;
  CmdKind kind;
};

class World {
 public:
  World(const LogGP& params, std::size_t nics, const FaultPlan& faults = FaultPlan{});

  std::size_t size() const { return nics_.size(); }
  const LogGP& params() const { return params_; }
  const FaultPlan& faults() const { return faults_; }
  Time Now() const { return now_; }

  // ---- counters (host side, at the current simulated time) ----
  Status AllocCounters(std::uint32_t nic, std::size_t n, std::uint32_t* out);
  void FreeCounter(std::uint32_t nic, std::uint32_t id);
  std::uint64_t ReadCounter(std::uint32_t nic, std::uint32_t id) const;
  std::uint64_t ReadErrors(std::uint32_t nic, std::uint32_t id) const;
  Status AddCounter(std::uint32_t nic, std::uint32_t id, std::uint64_t value);
  bool ValidCounter(std::uint32_t nic, std::uint32_t id) const;

  // ---- memory ----
  Status RegisterRegion(std::uint32_t nic, void* addr, std::uint64_t len, std::uint32_t arrival,
                        std::uint64_t* key);
  Status DeregisterRegion(std::uint32_t nic, std::uint64_t key);

  // ---- commands ----
  // All or nothing: kAgain when the NIC lacks cmds.size() free slots.
  Status Post(std::uint32_t nic, std::span<const Command> cmds);
  // Removes armed commands gated on `counter` (kNone: all of this NIC's);
  // returns how many.
  std::size_t Cancel(std::uint32_t nic, std::uint32_t counter);
  std::size_t SlotsInUse(std::uint32_t nic) const { return nics_[nic].slots_in_use; }
  std::size_t SlotLimit(std::uint32_t nic) const { return nics_[nic].slot_limit; }
  void SetSlotLimit(std::uint32_t nic, std::size_t n) { nics_[nic].slot_limit = n; }
  std::size_t InFlight(std::uint32_t nic) const { return nics_[nic].in_flight; }

  // ---- driving ----
  bool Step();                              // one event; false when none is left
  std::size_t Run(std::size_t max_events);  // up to max_events; returns how many ran
  std::size_t RunUntilIdle() { return Run(~std::size_t{0}); }
  bool Idle() const { return events_.empty(); }
  std::uint64_t EventsProcessed() const { return events_processed_; }

  void KillNic(std::uint32_t nic) { nics_[nic].dead = true; }
  const NicStats& Stats(std::uint32_t nic) const { return nics_[nic].stats; }

  // Trace: a running hash of every event is always kept; the full record
  // only when enabled.
  void EnableTrace(bool on) { trace_on_ = on; }
  const std::vector<TraceRecord>& Trace() const { return trace_; }
  std::uint64_t TraceHash() const { return trace_hash_; }

 private:
  void Schedule(Time t, std::uint32_t nic, std::uint32_t slot, EventType type, std::uint32_t aux);
  void Bump(std::uint32_t nic, std::uint32_t counter, std::uint64_t v);
  void Fire(std::uint32_t nic, std::uint32_t slot);
  void Execute(std::uint32_t nic, std::uint32_t slot);
  void Arrive(std::uint32_t target, std::uint32_t src_nic, std::uint32_t slot);
  void Deliver(std::uint32_t target, std::uint32_t src_nic, std::uint32_t slot, Time t);
  void MatchSend(std::uint32_t target, std::uint32_t recv_slot, std::uint32_t src_nic,
                 std::uint32_t send_slot, Time t);
  void Finish(std::uint32_t nic, std::uint32_t slot, bool error);
  void ReleaseSlot(Nic& n, std::uint32_t slot);
  const Region* FindRegion(const Nic& n, std::uint64_t key) const;
  Time OneSidedJitter();
  void Record(const Event& e);

  LogGP params_;
  FaultPlan faults_;
  Rng rng_;
  std::vector<Nic> nics_;
  std::vector<Event> events_;  // binary heap, earliest first
  std::uint64_t event_seq_ = 0;
  std::uint64_t events_processed_ = 0;
  Time now_ = 0;
  bool trace_on_ = false;
  std::vector<TraceRecord> trace_;
  std::uint64_t trace_hash_ = 1469598103934665603ULL;
};

}  // namespace nicq::fwsim
