// Executing claimed ops: the calling thread's work list, data ops, tagged
// matching and host steps. Nothing here holds an area lock while it moves
// data or calls a host function.
#include <string>
#include <vector>

#include "providers/shm_native/shm_atomics.h"
#include "providers/shm_native/shm_backend.h"

namespace nicq::shmtrig {

using offload::AtomicOp;
using offload::AtomicType;
using offload::kNoCounter;
using offload::OpKind;

namespace {

// Ops claimed by this thread and not yet executed. An op whose completion
// makes more ops ready appends them here instead of recursing. A thread
// drives one backend world at a time (the handles name its areas).
struct WorkList {
  Handle head = kNil;
  Handle tail = kNil;
  bool running = false;
};
thread_local WorkList tl_work;

}  // namespace

void ShmTriggerBackend::PushWork(Handle h) {
  N(h).work_next = kNil;
  if (tl_work.tail == kNil)
    tl_work.head = h;
  else
    N(tl_work.tail).work_next = h;
  tl_work.tail = h;
}

void ShmTriggerBackend::RunWork() {
  if (tl_work.running) return;
  tl_work.running = true;
  while (tl_work.head != kNil) {
    const Handle h = tl_work.head;
    tl_work.head = N(h).work_next;
    if (tl_work.head == kNil) tl_work.tail = kNil;
    Execute(h);
  }
  tl_work.running = false;
}

void ShmTriggerBackend::Finish(Handle h, bool ok) {
  const std::uint32_t owner = AreaOf(h);
  Node& n = N(h);
  const std::uint32_t completion = n.completion;
  const std::uint64_t inc = n.completion_inc;
  AreaHeader* oh = A(owner).hdr();
  // Without the lock the slot stays taken; the completion still counts (as
  // an error) so that a waiter on it returns.
  const bool freed = LockArea(oh->lock);
  if (freed) {
    FreeNodeLocked(oh, IndexOf(h));
    oh->lock.Unlock();
  }
  if (completion == kNoCounter) return;
  if (ok && freed)
    UpdateCounter(owner, completion, inc, false);
  else
    RecordError(owner, completion);
}

void ShmTriggerBackend::Execute(Handle h) {
  executed_.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t owner = AreaOf(h);
  const Node& n = N(h);
  switch (static_cast<OpKind>(n.kind)) {
    case OpKind::kCounterAdd:
    case OpKind::kCounterSet:
      Finish(h,
             UpdateCounter(owner, n.target_counter, n.value, n.kind == int(OpKind::kCounterSet)));
      return;
    case OpKind::kRemoteCounterAdd:
      Finish(h, n.peer_slot < areas_.size() &&
                    UpdateCounter(n.peer_slot, n.target_counter, n.value, false));
      return;
    case OpKind::kPut:
      Finish(h, ExecutePut(n, owner));
      return;
    case OpKind::kAtomic:
      Finish(h, ExecuteAtomic(n, owner));
      return;
    case OpKind::kSend:
      FireSend(h);
      return;
    case OpKind::kRecv:
      FireRecv(h);
      return;
    case OpKind::kHost:
      if (Local(owner)) {
        reinterpret_cast<void (*)(void*)>(n.host_fn)(reinterpret_cast<void*>(n.host_arg));
        Finish(h, true);
      } else {
        QueueHostStep(h);
      }
      return;
  }
  Finish(h, false);
}

bool ShmTriggerBackend::FindRegion(std::uint32_t area, std::uint64_t key, std::uint64_t addr,
                                   std::size_t bytes, Region** region) {
  if (area >= areas_.size()) return false;
  AreaHeader* h = A(area).hdr();
  const std::uint64_t index = (key & 0xffffffffu) - 1;
  if (index >= h->n_regions) return false;
  Region& r = A(area).regions()[index];
  if (!LockArea(h->lock)) return false;
  const bool ok = r.in_use && r.generation == static_cast<std::uint32_t>(key >> 32) &&
                  addr >= r.addr && bytes <= r.len && addr - r.addr <= r.len - bytes;
  h->lock.Unlock();
  if (ok) *region = &r;
  return ok;
}

bool ShmTriggerBackend::ExecutePut(const Node& n, std::uint32_t owner) {
  Region* r = nullptr;
  if (!FindRegion(n.peer_slot, n.remote_key, n.remote_addr, n.bytes, &r)) return false;
  const std::uint32_t arrival = r->arrival;
  if (!Move(owner, n.local_buf, n.peer_slot, n.remote_addr, n.bytes)) return false;
  if (arrival != kNoCounter) UpdateCounter(n.peer_slot, arrival, 1, false);
  return true;
}

// Target and operand are staged in the thread's buffers in chunks; the
// region's lock makes each chunk's read-combine-write atomic with respect to
// every other atomic on that region (not to puts or the owner's stores).
bool ShmTriggerBackend::ExecuteAtomic(const Node& n, std::uint32_t owner) {
  const auto type = static_cast<AtomicType>(n.atype);
  const std::size_t elem = offload::AtomicTypeSize(type);
  if (n.bytes % elem != 0) return false;
  Region* r = nullptr;
  if (!FindRegion(n.peer_slot, n.remote_key, n.remote_addr, n.bytes, &r)) return false;
  const std::uint32_t arrival = r->arrival;
  AtomicStage& stage = ThreadStage();
  if (!LockArea(r->atomic_lock)) return false;
  bool ok = true;
  for (std::size_t done = 0; ok && done < n.bytes; done += kStageBytes) {
    const std::size_t len = std::min<std::size_t>(kStageBytes, n.bytes - done);
    ok = Read(n.peer_slot, n.remote_addr + done, stage.target, len) &&
         Read(owner, n.local_buf + done, stage.operand, len) &&
         Combine(static_cast<AtomicOp>(n.aop), type, stage.target, stage.operand, len / elem) &&
         Write(n.peer_slot, n.remote_addr + done, stage.target, len);
  }
  r->atomic_lock.Unlock();
  if (ok && arrival != kNoCounter) UpdateCounter(n.peer_slot, arrival, 1, false);
  return ok;
}

}  // namespace nicq::shmtrig
