// World: counters, memory registration, posting, cancel and the event loop.
// Message handling (execute, arrive, match, complete) is in world_network.cc.
#include "firmware-sim/world.h"

#include <algorithm>
#include <string>

namespace nicq::fwsim {
namespace {

struct EventLater {  // min-heap on (time, seq)
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};

std::string NicArg(std::uint32_t nic, std::uint32_t id) {
  return "nic " + std::to_string(nic) + " counter " + std::to_string(id);
}

}  // namespace

World::World(const LogGP& params, std::size_t nics, const FaultPlan& faults)
    : params_(params), faults_(faults), rng_(faults.seed), nics_(nics) {
  const std::size_t limit = faults.slot_limit ? faults.slot_limit : params.trigger_slots;
  for (std::size_t i = 0; i < nics; ++i) {
    nics_[i].slot_limit = limit;
    nics_[i].key_salt = static_cast<std::uint64_t>(i + 1) << 32;
  }
  if (faults.dead_nic >= 0 && static_cast<std::size_t>(faults.dead_nic) < nics) {
    nics_[faults.dead_nic].dead = true;
  }
  events_.reserve(1024);
}

Status World::AllocCounters(std::uint32_t nic, std::size_t n, std::uint32_t* out) {
  if (nic >= nics_.size())
    return Error(Code::kArg, "fwsim AllocCounters: no nic " + std::to_string(nic));
  Nic& x = nics_[nic];
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t id;
    if (!x.free_counters.empty()) {
      id = x.free_counters.back();
      x.free_counters.pop_back();
    } else {
      id = static_cast<std::uint32_t>(x.counters.size());
      x.counters.emplace_back();
    }
    Counter& c = x.counters[id];
    c.value = 0;
    c.errors = 0;
    c.allocated = true;
    c.waiting.clear();
    out[i] = id;
  }
  x.stats.counters_allocated =
      std::max(x.stats.counters_allocated, x.counters.size() - x.free_counters.size());
  return Status::Ok();
}

void World::FreeCounter(std::uint32_t nic, std::uint32_t id) {
  if (!ValidCounter(nic, id)) return;
  Cancel(nic, id);
  nics_[nic].counters[id].allocated = false;
  nics_[nic].free_counters.push_back(id);
}

bool World::ValidCounter(std::uint32_t nic, std::uint32_t id) const {
  return nic < nics_.size() && id < nics_[nic].counters.size() && nics_[nic].counters[id].allocated;
}

std::uint64_t World::ReadCounter(std::uint32_t nic, std::uint32_t id) const {
  return ValidCounter(nic, id) ? nics_[nic].counters[id].value : 0;
}

std::uint64_t World::ReadErrors(std::uint32_t nic, std::uint32_t id) const {
  return ValidCounter(nic, id) ? nics_[nic].counters[id].errors : 0;
}

Status World::AddCounter(std::uint32_t nic, std::uint32_t id, std::uint64_t value) {
  if (!ValidCounter(nic, id)) return Error(Code::kArg, "fwsim AddCounter: no " + NicArg(nic, id));
  Bump(nic, id, value);
  return Status::Ok();
}

void World::Bump(std::uint32_t nic, std::uint32_t id, std::uint64_t v) {
  Nic& x = nics_[nic];
  Counter& c = x.counters[id];
  if (v > params_.CounterMax() - c.value) {  // would pass the counter's width
    ++c.errors;
    ++x.stats.errors;
    return;
  }
  c.value += v;
  if (x.dead) return;  // a dead NIC fires nothing
  // Pop in (threshold, seq) order; Fire only schedules, so the heap is stable.
  while (!c.waiting.empty() && c.waiting.front().threshold <= c.value) {
    std::pop_heap(c.waiting.begin(), c.waiting.end(), TriggerLater{});
    const std::uint32_t slot = c.waiting.back().slot;
    c.waiting.pop_back();
    Fire(nic, slot);
  }
}

void World::Fire(std::uint32_t nic, std::uint32_t slot) {
  Nic& x = nics_[nic];
  x.slots[slot].state = SlotState::kExecuting;
  ++x.in_flight;
  Schedule(now_ + params_.nic_op, nic, slot, EventType::kExecute, 0);
}

Status World::RegisterRegion(std::uint32_t nic, void* addr, std::uint64_t len,
                             std::uint32_t arrival, std::uint64_t* key) {
  if (nic >= nics_.size())
    return Error(Code::kArg, "fwsim RegisterRegion: no nic " + std::to_string(nic));
  if (arrival != kNone && !ValidCounter(nic, arrival)) {
    return Error(Code::kArg, "fwsim RegisterRegion: arrival counter: no " + NicArg(nic, arrival));
  }
  Nic& x = nics_[nic];
  Region r;
  r.base = reinterpret_cast<std::uintptr_t>(addr);
  r.len = len;
  r.arrival_counter = arrival;
  r.live = true;
  r.key = x.key_salt | (x.regions.size() + 1);
  x.regions.push_back(r);
  *key = r.key;
  return Status::Ok();
}

Status World::DeregisterRegion(std::uint32_t nic, std::uint64_t key) {
  if (nic >= nics_.size()) return Error(Code::kArg, "fwsim DeregisterRegion: no nic");
  Region* r = const_cast<Region*>(FindRegion(nics_[nic], key));
  if (r == nullptr)
    return Error(Code::kArg, "fwsim DeregisterRegion: no region with key " + std::to_string(key));
  r->live = false;
  return Status::Ok();
}

const Region* World::FindRegion(const Nic& n, std::uint64_t key) const {
  if ((key & 0xffffffff00000000ULL) != n.key_salt) return nullptr;
  const std::uint64_t idx = (key & 0xffffffffULL) - 1;
  if (idx >= n.regions.size() || !n.regions[idx].live) return nullptr;
  return &n.regions[idx];
}

Status World::Post(std::uint32_t nic, std::span<const Command> cmds) {
  if (nic >= nics_.size()) return Error(Code::kArg, "fwsim Post: no nic " + std::to_string(nic));
  Nic& x = nics_[nic];
  if (x.slot_limit - x.slots_in_use < cmds.size()) {
    return Error(Code::kAgain, "fwsim Post: nic " + std::to_string(nic) + " needs " +
                                   std::to_string(cmds.size()) + " trigger slots, " +
                                   std::to_string(x.slot_limit - x.slots_in_use) + " free");
  }
  for (const Command& cmd : cmds) {  // validate first: all or nothing
    if (cmd.trigger != kNone && !ValidCounter(nic, cmd.trigger))
      return Error(Code::kArg, "fwsim Post: trigger: no " + NicArg(nic, cmd.trigger));
    if (cmd.completion != kNone && !ValidCounter(nic, cmd.completion))
      return Error(Code::kArg, "fwsim Post: completion: no " + NicArg(nic, cmd.completion));
  }
  for (const Command& cmd : cmds) {
    std::uint32_t slot = x.free_slot;
    if (slot != kNone) {
      x.free_slot = x.slots[slot].next_free;
    } else {
      slot = static_cast<std::uint32_t>(x.slots.size());
      x.slots.emplace_back();
    }
    Slot& s = x.slots[slot];
    s.cmd = cmd;
    s.state = SlotState::kArmed;
    ++x.slots_in_use;
    const std::uint64_t seq = x.post_seq++;
    if (cmd.trigger == kNone || x.counters[cmd.trigger].value >= cmd.threshold) {
      if (!x.dead) Fire(nic, slot);
      continue;
    }
    auto& w = x.counters[cmd.trigger].waiting;
    w.push_back(TriggerEntry{cmd.threshold, seq, slot});
    std::push_heap(w.begin(), w.end(), TriggerLater{});
  }
  x.stats.slots_high_water = std::max(x.stats.slots_high_water, x.slots_in_use);
  return Status::Ok();
}

std::size_t World::Cancel(std::uint32_t nic, std::uint32_t counter) {
  Nic& x = nics_[nic];
  std::size_t n = 0;
  for (std::uint32_t id = 0; id < x.counters.size(); ++id) {
    if (counter != kNone && id != counter) continue;
    for (const TriggerEntry& e : x.counters[id].waiting) {
      ReleaseSlot(x, e.slot);
      ++n;
    }
    x.counters[id].waiting.clear();
  }
  return n;
}

void World::ReleaseSlot(Nic& n, std::uint32_t slot) {
  n.slots[slot].state = SlotState::kFree;
  n.slots[slot].next_free = n.free_slot;
  n.free_slot = slot;
  --n.slots_in_use;
}

void World::Schedule(Time t, std::uint32_t nic, std::uint32_t slot, EventType type,
                     std::uint32_t aux) {
  events_.push_back(Event{t, event_seq_++, nic, slot, type, aux});
  std::push_heap(events_.begin(), events_.end(), EventLater{});
}

std::size_t World::Run(std::size_t max_events) {
  std::size_t n = 0;
  while (n < max_events && Step()) ++n;
  return n;
}

bool World::Step() {
  if (events_.empty()) return false;
  std::pop_heap(events_.begin(), events_.end(), EventLater{});
  const Event e = events_.back();
  events_.pop_back();
  now_ = e.time;
  ++events_processed_;
  Record(e);
  switch (e.type) {
    case EventType::kExecute:
      Execute(e.nic, e.slot);
      break;
    case EventType::kArrive:
      Arrive(e.aux, e.nic, e.slot);
      break;
    case EventType::kAck:
      Finish(e.nic, e.slot, e.aux != 0);
      break;
    case EventType::kComplete: {
      const Command& c = nics_[e.nic].slots[e.slot].cmd;
      if (c.kind == CmdKind::kHost && e.aux == 0) c.host_fn(c.host_arg);
      Finish(e.nic, e.slot, e.aux != 0);
      break;
    }
  }
  return true;
}

void World::Record(const Event& e) {
  // The event's identity (time, where, what) is enough to tell runs apart;
  // reading the command's kind here would cost a cache miss per event.
  const std::uint64_t words[3] = {e.time, (std::uint64_t{e.nic} << 32) | e.slot,
                                  static_cast<std::uint64_t>(e.type)};
  for (std::uint64_t w : words) {  // FNV-1a
    trace_hash_ ^= w;
    trace_hash_ *= 1099511628211ULL;
  }
  if (trace_on_) {
    trace_.push_back(
        TraceRecord{e.time, e.nic, e.slot, e.type, nics_[e.nic].slots[e.slot].cmd.kind});
  }
}

}  // namespace nicq::fwsim
