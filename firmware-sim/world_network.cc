// What a NIC does with a command once it fires: local counter ops and host
// steps complete locally; sends, puts, atomics and remote counter adds
// become messages timed by the LogGP model and acknowledged by the target.
#include <algorithm>
#include <cstring>

#include "firmware-sim/world.h"

namespace nicq::fwsim {

Time World::OneSidedJitter() {
  Time extra = 0;
  if (faults_.delay_permille && rng_.Permille(faults_.delay_permille)) {
    extra += rng_.Below(faults_.delay_max_ns + 1) * kPsPerNs;
  }
  if (faults_.reorder_max_ns) extra += rng_.Below(faults_.reorder_max_ns + 1) * kPsPerNs;
  return extra;
}

void World::Execute(std::uint32_t nic, std::uint32_t slot) {
  Nic& x = nics_[nic];
  ++x.stats.fired;
  const Command& c = x.slots[slot].cmd;
  switch (c.kind) {
    case CmdKind::kCounterAdd:
      if (!ValidCounter(nic, c.target_counter)) return Finish(nic, slot, true);
      Bump(nic, c.target_counter, c.value);
      return Finish(nic, slot, false);
    case CmdKind::kCounterSet: {
      if (!ValidCounter(nic, c.target_counter)) return Finish(nic, slot, true);
      Counter& t = x.counters[c.target_counter];
      t.value = 0;  // Bump re-checks the trigger list at the new value
      Bump(nic, c.target_counter, c.value);
      return Finish(nic, slot, false);
    }
    case CmdKind::kHost: {
      // Host steps serialize on the host core that runs the progress engine.
      const Time start = std::max(now_, x.host_free);
      x.host_free = start + params_.host_op + c.bytes * params_.host_byte;
      return Schedule(x.host_free, nic, slot, EventType::kComplete, 0);
    }
    case CmdKind::kRecv: {
      for (std::size_t i = 0; i < x.unexpected.size(); ++i) {
        const Unexpected u = x.unexpected[i];
        if ((c.peer < 0 || static_cast<std::uint32_t>(c.peer) == u.src_nic) && c.tag == u.tag) {
          x.unexpected.erase(x.unexpected.begin() + static_cast<std::ptrdiff_t>(i));
          return MatchSend(nic, slot, u.src_nic, u.src_slot, now_);
        }
      }
      x.posted_recvs.push_back(slot);
      return;
    }
    default:
      break;
  }
  // A message: send, put, atomic or remote counter add.
  if (c.peer < 0 || static_cast<std::size_t>(c.peer) >= nics_.size()) {
    return Finish(nic, slot, true);
  }
  const std::uint32_t target = static_cast<std::uint32_t>(c.peer);
  const std::uint64_t bytes = c.kind == CmdKind::kRemoteCounterAdd ? 8 : c.bytes;
  const Time start = std::max(now_, x.tx_free);
  x.tx_free = start + InjectionBusy(params_, bytes);
  ++x.stats.messages;
  x.stats.bytes += bytes;
  Time arrival = start + OneWay(params_, bytes);
  if (c.kind != CmdKind::kSend) {
    arrival += OneSidedJitter();
    // Drop with retry: each lost transmission costs a retry timeout.
    std::size_t lost = 0;
    const bool dead = nics_[target].dead;
    while (lost <= params_.max_retries && (dead || rng_.Permille(faults_.drop_permille))) {
      ++lost;
      arrival += params_.retry_timeout;
    }
    x.stats.retries += lost;
    if (lost > params_.max_retries) {  // the initiator gives up: error completion
      return Schedule(arrival, nic, slot, EventType::kAck, 1);
    }
  } else if (nics_[target].dead) {
    return Schedule(arrival + params_.retry_timeout * (params_.max_retries + 1), nic, slot,
                    EventType::kAck, 1);
  }
  Schedule(arrival, nic, slot, EventType::kArrive, target);
}

void World::Arrive(std::uint32_t target, std::uint32_t src_nic, std::uint32_t slot) {
  const Command& c = nics_[src_nic].slots[slot].cmd;
  Nic& t = nics_[target];
  const Time ack = now_ + params_.L;
  switch (c.kind) {
    case CmdKind::kSend: {
      for (std::size_t i = 0; i < t.posted_recvs.size(); ++i) {
        const std::uint32_t rs = t.posted_recvs[i];
        const Command& r = t.slots[rs].cmd;
        if ((r.peer < 0 || static_cast<std::uint32_t>(r.peer) == src_nic) && r.tag == c.tag) {
          t.posted_recvs.erase(t.posted_recvs.begin() + static_cast<std::ptrdiff_t>(i));
          return MatchSend(target, rs, src_nic, slot, now_);
        }
      }
      t.unexpected.push_back(Unexpected{src_nic, slot, c.tag});
      return;
    }
    case CmdKind::kPut:
    case CmdKind::kAtomic: {
      const Region* r = FindRegion(t, c.remote_key);
      const bool in_range =
          r != nullptr && c.remote_addr >= r->base && c.remote_addr + c.bytes <= r->base + r->len;
      const bool ok_op = c.kind == CmdKind::kPut || AluSupports(c.aop, c.atype);
      if (!in_range || !ok_op) return Schedule(ack, src_nic, slot, EventType::kAck, 1);
      void* dst = reinterpret_cast<void*>(c.remote_addr);
      if (c.kind == CmdKind::kPut) {
        if (c.bytes) std::memmove(dst, c.src, c.bytes);
      } else {
        AluApply(c.aop, c.atype, dst, c.src, c.bytes);
      }
      const std::uint32_t arrival = r->arrival_counter;
      if (arrival != kNone) Bump(target, arrival, 1);
      return Schedule(ack, src_nic, slot, EventType::kAck, 0);
    }
    case CmdKind::kRemoteCounterAdd:
      if (!ValidCounter(target, c.target_counter)) {
        return Schedule(ack, src_nic, slot, EventType::kAck, 1);
      }
      Bump(target, c.target_counter, c.value);
      return Schedule(ack, src_nic, slot, EventType::kAck, 0);
    default:
      return;
  }
}

// Data moves when both sides are there; a longer send than the receive
// buffer truncates (error on the receive, as MPI_ERR_TRUNCATE).
void World::MatchSend(std::uint32_t target, std::uint32_t recv_slot, std::uint32_t src_nic,
                      std::uint32_t send_slot, Time t) {
  const Command& s = nics_[src_nic].slots[send_slot].cmd;
  const Command& r = nics_[target].slots[recv_slot].cmd;
  const bool truncated = s.bytes > r.bytes;
  const std::uint64_t n = truncated ? r.bytes : s.bytes;
  if (n) std::memcpy(r.dst, s.src, n);
  Schedule(t, target, recv_slot, EventType::kComplete, truncated ? 1 : 0);
  Schedule(t + params_.L, src_nic, send_slot, EventType::kAck, 0);
}

void World::Finish(std::uint32_t nic, std::uint32_t slot, bool error) {
  Nic& x = nics_[nic];
  const std::uint32_t comp = x.slots[slot].cmd.completion;
  const std::uint64_t inc = x.slots[slot].cmd.completion_inc;
  ReleaseSlot(x, slot);  // before the bump: ops it fires may need the slot
  --x.in_flight;
  x.stats.last_completion = now_;
  if (error) ++x.stats.errors;
  if (comp == kNone || !x.counters[comp].allocated) return;
  if (error) {
    ++x.counters[comp].errors;
  } else {
    Bump(nic, comp, inc);
  }
}

}  // namespace nicq::fwsim
