// Counters and trigger lists of the shm backend: posting, counter updates
// that claim ready ops, cancel. Every list operation runs under the lock of
// the area that owns the counter; ops are executed after it is released.
#include <string>

#include "providers/shm_native/shm_backend.h"

namespace nicq::shmtrig {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

bool ShmTriggerBackend::ValidCounter(std::uint32_t area, CounterId id) const {
  return area < areas_.size() && id < A(area).hdr()->n_counters;
}

void ShmTriggerBackend::WakeCounter(Counter& c) {
  c.change.fetch_add(1, std::memory_order_seq_cst);
  if (c.sleepers.load(std::memory_order_seq_cst) != 0) FutexWakeAll(&c.change);
}

void ShmTriggerBackend::InsertArmedLocked(Counter& c, std::uint32_t index) {
  Node* nodes = own_.nodes();
  Node& n = nodes[index];
  // From the tail: plans post growing thresholds, so this is O(1) for them;
  // equal thresholds go after the ones already there (posting order).
  std::uint32_t after = c.tail;
  while (after != kNil && nodes[after].threshold > n.threshold) after = nodes[after].prev;
  n.prev = after;
  n.next = after == kNil ? c.head : nodes[after].next;
  if (n.next != kNil)
    nodes[n.next].prev = index;
  else
    c.tail = index;
  if (after != kNil)
    nodes[after].next = index;
  else
    c.head = index;
}

void ShmTriggerBackend::UnlinkArmedLocked(Counter& c, std::uint32_t index) {
  Node* nodes = own_.nodes();
  Node& n = nodes[index];
  if (n.prev != kNil)
    nodes[n.prev].next = n.next;
  else
    c.head = n.next;
  if (n.next != kNil)
    nodes[n.next].prev = n.prev;
  else
    c.tail = n.prev;
  n.next = n.prev = kNil;
}

void ShmTriggerBackend::FreeNodeLocked(AreaHeader* h, std::uint32_t index) {
  Node& n = reinterpret_cast<Node*>(reinterpret_cast<char*>(h) + h->nodes_off)[index];
  n.state = NodeState::kFree;
  n.prev = kNil;
  n.work_next = kNil;
  n.next = h->free_nodes;
  h->free_nodes = index;
  h->nodes_free.fetch_add(1, std::memory_order_release);
}

void ShmTriggerBackend::ClaimReadyLocked(std::uint32_t area, Counter& c) {
  Node* nodes = A(area).nodes();
  const std::uint64_t v = c.value.load(std::memory_order_relaxed);
  while (c.head != kNil && nodes[c.head].threshold <= v) {
    const std::uint32_t index = c.head;
    Node& n = nodes[index];
    c.head = n.next;
    if (c.head != kNil)
      nodes[c.head].prev = kNil;
    else
      c.tail = kNil;
    n.next = n.prev = kNil;
    n.state = NodeState::kClaimed;
    PushWork(MakeHandle(area, index));
  }
}

bool ShmTriggerBackend::UpdateCounter(std::uint32_t area, CounterId id, std::uint64_t v, bool set) {
  if (!ValidCounter(area, id)) return false;
  AreaHeader* h = A(area).hdr();
  Counter& c = A(area).counters()[id];
  if (!LockArea(h->lock)) return false;
  if (!c.allocated) {
    h->lock.Unlock();
    return false;
  }
  if (set)
    c.value.store(v, std::memory_order_seq_cst);
  else
    c.value.fetch_add(v, std::memory_order_seq_cst);
  if (c.head != kNil) ClaimReadyLocked(area, c);
  h->lock.Unlock();
  WakeCounter(c);
  return true;
}

void ShmTriggerBackend::RecordError(std::uint32_t area, CounterId id) {
  if (!ValidCounter(area, id)) return;
  Counter& c = A(area).counters()[id];
  c.errors.fetch_add(1, std::memory_order_seq_cst);
  WakeCounter(c);
}

std::size_t ShmTriggerBackend::CancelLocked(Counter& c) {
  std::size_t n = 0;
  while (c.head != kNil) {
    const std::uint32_t index = c.head;
    UnlinkArmedLocked(c, index);
    FreeNodeLocked(Own(), index);
    ++n;
  }
  return n;
}

Status ShmTriggerBackend::AllocCounters(std::size_t n, CounterId* out) {
  AreaHeader* h = Own();
  Counter* counters = own_.counters();
  if (PeerDied() || !LockArea(h->lock)) return DeadPeerError("AllocCounters");
  std::size_t got = 0;
  for (; got < n; ++got) {
    std::uint32_t id = h->counter_free;
    if (id != kNoSlot) {
      h->counter_free = counters[id].next_free;
    } else if (h->counters_used < h->n_counters) {
      id = h->counters_used++;
    } else {
      break;
    }
    Counter& c = counters[id];
    c.value.store(0);
    c.errors.store(0);
    c.head = c.tail = kNil;
    c.next_free = kNoSlot;
    c.allocated = 1;
    out[got] = id;
  }
  if (got < n) {  // all or nothing
    for (std::size_t i = 0; i < got; ++i) {
      counters[out[i]].allocated = 0;
      counters[out[i]].next_free = h->counter_free;
      h->counter_free = out[i];
    }
  }
  h->lock.Unlock();
  if (got < n)
    return Error(Code::kNoMem, "shm AllocCounters: the area's " + std::to_string(h->n_counters) +
                                   " counters are in use");
  return Status::Ok();
}

void ShmTriggerBackend::FreeCounter(CounterId id) {
  if (!ValidCounter(self_, id)) return;
  AreaHeader* h = Own();
  Counter& c = own_.counters()[id];
  if (!LockArea(h->lock)) return;  // the job is failing: the counter stays
  if (c.allocated) {
    CancelLocked(c);
    c.allocated = 0;
    c.next_free = h->counter_free;
    h->counter_free = id;
  }
  h->lock.Unlock();
}

std::uint64_t ShmTriggerBackend::ReadCounter(CounterId id) const {
  return ValidCounter(self_, id) ? own_.counters()[id].value.load(std::memory_order_acquire) : 0;
}

std::uint64_t ShmTriggerBackend::ReadErrors(CounterId id) const {
  return ValidCounter(self_, id) ? own_.counters()[id].errors.load(std::memory_order_acquire) : 0;
}

Status ShmTriggerBackend::AddCounter(CounterId id, std::uint64_t value) {
  if (PeerDied()) return DeadPeerError("AddCounter");
  if (!UpdateCounter(self_, id, value, false)) {
    if (PeerDied()) return DeadPeerError("AddCounter");
    return Error(Code::kArg, "shm AddCounter: no counter " + std::to_string(id));
  }
  RunWork();
  if (PeerDied()) return DeadPeerError("AddCounter");
  return Status::Ok();
}

Status ShmTriggerBackend::Post(std::span<const TriggeredOp> ops) {
  NICQ_RETURN_IF_ERROR(CheckOps(ops));
  AreaHeader* h = Own();
  Counter* counters = own_.counters();
  Node* nodes = own_.nodes();
  if (PeerDied() || !LockArea(h->lock)) return DeadPeerError("Post");
  if (h->nodes_free.load(std::memory_order_relaxed) < ops.size()) {
    h->lock.Unlock();
    return Error(Code::kAgain, "shm Post: " + std::to_string(ops.size()) + " ops, " +
                                   std::to_string(h->nodes_free.load()) + " trigger slots free");
  }
  for (const TriggeredOp& op : ops) {
    const std::uint32_t index = h->free_nodes;
    Node& n = nodes[index];
    h->free_nodes = n.next;
    h->nodes_free.fetch_sub(1, std::memory_order_relaxed);
    n.next = n.prev = n.work_next = kNil;
    n.kind = static_cast<std::uint8_t>(op.kind);
    n.aop = static_cast<std::uint8_t>(op.aop);
    n.atype = static_cast<std::uint8_t>(op.atype);
    n.trigger = op.trigger;
    n.threshold = op.threshold;
    n.completion = op.completion;
    n.completion_inc = op.completion_inc;
    n.peer_slot = op.peer < 0 ? kNoSlot : static_cast<std::uint32_t>(op.peer);
    n.local_buf = reinterpret_cast<std::uintptr_t>(op.local_buf);
    n.local_rbuf = reinterpret_cast<std::uintptr_t>(op.local_rbuf);
    n.bytes = op.bytes;
    n.tag = op.tag;
    n.remote_addr = op.remote_addr;
    n.remote_key = op.remote_key;
    n.target_counter = op.target_counter;
    n.value = op.value;
    n.host_fn = reinterpret_cast<std::uintptr_t>(op.host_fn);
    n.host_arg = reinterpret_cast<std::uintptr_t>(op.host_arg);
    if (op.trigger == kNoCounter ||
        counters[op.trigger].value.load(std::memory_order_relaxed) >= op.threshold) {
      n.state = NodeState::kClaimed;
      PushWork(MakeHandle(self_, index));
    } else {
      n.state = NodeState::kArmed;
      InsertArmedLocked(counters[op.trigger], index);
    }
  }
  h->work_requests.fetch_add(ops.size(), std::memory_order_relaxed);
  h->lock.Unlock();
  RunWork();
  if (PeerDied()) return DeadPeerError("Post");
  return Status::Ok();
}

Status ShmTriggerBackend::Cancel(CounterId trigger) {
  if (!ValidCounter(self_, trigger) || !own_.counters()[trigger].allocated)
    return Error(Code::kArg, "shm Cancel: no counter " + std::to_string(trigger));
  if (PeerDied() || !LockArea(Own()->lock)) return DeadPeerError("Cancel");
  CancelLocked(own_.counters()[trigger]);
  Own()->lock.Unlock();
  return Status::Ok();
}

std::size_t ShmTriggerBackend::SlotsInUse() const {
  const AreaHeader* h = Own();
  return h->n_nodes - h->nodes_free.load(std::memory_order_acquire);
}

std::uint64_t ShmTriggerBackend::WorkRequests() const {
  return Own()->work_requests.load(std::memory_order_relaxed);
}

}  // namespace nicq::shmtrig
