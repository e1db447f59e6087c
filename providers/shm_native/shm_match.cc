// Tagged messages and host steps of the shm backend.
//
// A fired receive looks for a matching send in its own area's unexpected
// list and otherwise waits in its area's posted list; a fired send looks in
// the receiver's posted list and otherwise waits in the receiver's
// unexpected list (its data stays in the sender's buffer: one copy, by
// whichever process makes the match). Lists are in firing order, so sends
// from one peer match in the order they fired (non-overtaking).
#include <vector>

#include "providers/shm_native/shm_backend.h"

namespace nicq::shmtrig {

namespace {
bool TagMatches(const Node& recv, std::uint32_t sender, const Node& send) {
  return (recv.peer_slot == kNoSlot || recv.peer_slot == sender) && recv.tag == send.tag;
}
}  // namespace

void ShmTriggerBackend::FireSend(Handle h) {
  const Node& s = N(h);
  const std::uint32_t to = s.peer_slot;
  if (to >= areas_.size()) {
    Finish(h, false);
    return;
  }
  AreaHeader* th = A(to).hdr();
  Node* tn = A(to).nodes();
  if (!LockArea(th->lock)) {
    Finish(h, false);
    return;
  }
  std::uint32_t prev = kNil, r = th->posted.head;
  while (r != kNil && !TagMatches(tn[r], AreaOf(h), s)) {
    prev = r;
    r = tn[r].next;
  }
  if (r != kNil) {
    (prev == kNil ? th->posted.head : tn[prev].next) = tn[r].next;
    if (th->posted.tail == r) th->posted.tail = prev;
    tn[r].next = kNil;
  } else {
    N(h).next = kNil;
    if (th->unexpected.tail == kNil)
      th->unexpected.head = h;
    else
      N(th->unexpected.tail).next = h;
    th->unexpected.tail = h;
  }
  th->lock.Unlock();
  if (r != kNil) Deliver(h, MakeHandle(to, r));
}

void ShmTriggerBackend::FireRecv(Handle h) {
  const std::uint32_t at = AreaOf(h);
  Node& r = N(h);
  AreaHeader* ah = A(at).hdr();
  if (!LockArea(ah->lock)) {
    Finish(h, false);
    return;
  }
  Handle prev = kNil, s = ah->unexpected.head;
  while (s != kNil && !TagMatches(r, AreaOf(s), N(s))) {
    prev = s;
    s = N(s).next;
  }
  if (s != kNil) {
    (prev == kNil ? ah->unexpected.head : N(prev).next) = N(s).next;
    if (ah->unexpected.tail == s) ah->unexpected.tail = prev;
    N(s).next = kNil;
  } else {
    r.next = kNil;
    if (ah->posted.tail == kNil)
      ah->posted.head = IndexOf(h);
    else
      A(at).nodes()[ah->posted.tail].next = IndexOf(h);
    ah->posted.tail = IndexOf(h);
  }
  ah->lock.Unlock();
  if (s != kNil) Deliver(s, h);
}

// A receive shorter than its send gets its bytes and fails (truncation);
// the send completes.
void ShmTriggerBackend::Deliver(Handle send, Handle recv) {
  const Node& s = N(send);
  const Node& r = N(recv);
  const std::size_t bytes = s.bytes < r.bytes ? s.bytes : r.bytes;
  const bool moved = Move(AreaOf(send), s.local_buf, AreaOf(recv), r.local_rbuf, bytes);
  const bool fits = s.bytes <= r.bytes;
  Finish(recv, moved && fits);
  Finish(send, moved);
}

// The owner runs it (Progress, WaitCounter); a sleeping owner is woken on
// the counters it sleeps on.
void ShmTriggerBackend::QueueHostStep(Handle h) {
  AreaView& a = A(AreaOf(h));
  AreaHeader* ah = a.hdr();
  if (!LockArea(ah->lock)) {
    Finish(h, false);
    return;
  }
  a.nodes()[IndexOf(h)].next = kNil;
  if (ah->host_ready.tail == kNil)
    ah->host_ready.head = IndexOf(h);
  else
    a.nodes()[ah->host_ready.tail].next = IndexOf(h);
  ah->host_ready.tail = IndexOf(h);
  ah->host_pending.store(1, std::memory_order_seq_cst);
  const std::uint32_t used = ah->counters_used;
  ah->lock.Unlock();
  if (ah->sleepers.load(std::memory_order_seq_cst) == 0) return;
  Counter* c = a.counters();
  for (std::uint32_t i = 0; i < used; ++i)
    if (c[i].sleepers.load(std::memory_order_relaxed) != 0) WakeCounter(c[i]);
}

bool ShmTriggerBackend::RunHostSteps() {
  AreaHeader* h = Own();
  if (h->host_pending.load(std::memory_order_acquire) == 0) return false;
  if (!LockArea(h->lock)) return false;
  std::uint32_t i = h->host_ready.head;
  h->host_ready = List{};
  h->host_pending.store(0, std::memory_order_relaxed);
  h->lock.Unlock();
  bool any = false;
  while (i != kNil) {
    Node& n = own_.nodes()[i];
    const std::uint32_t next = n.next;
    reinterpret_cast<void (*)(void*)>(n.host_fn)(reinterpret_cast<void*>(n.host_arg));
    Finish(MakeHandle(self_, i), true);
    i = next;
    any = true;
  }
  return any;
}

// Flush: fired receives and sends of ours that no peer matched cannot
// complete without that peer; they are withdrawn (never complete).
bool ShmTriggerBackend::WithdrawUnmatched() {
  std::vector<std::uint32_t> mine;
  AreaHeader* h = Own();
  if (!LockArea(h->lock)) return false;
  for (std::uint32_t i = h->posted.head; i != kNil; i = own_.nodes()[i].next) mine.push_back(i);
  h->posted = List{};
  h->lock.Unlock();
  for (std::uint32_t a = 0; a < areas_.size(); ++a) {
    AreaHeader* ah = A(a).hdr();
    if (!LockArea(ah->lock)) return false;  // what we took stays taken
    Handle prev = kNil;
    for (Handle s = ah->unexpected.head; s != kNil;) {
      const Handle next = N(s).next;
      if (AreaOf(s) == self_) {
        (prev == kNil ? ah->unexpected.head : N(prev).next) = next;
        if (ah->unexpected.tail == s) ah->unexpected.tail = prev;
        mine.push_back(IndexOf(s));
      } else {
        prev = s;
      }
      s = next;
    }
    ah->lock.Unlock();
  }
  if (!LockArea(h->lock)) return false;
  for (std::uint32_t i : mine) FreeNodeLocked(h, i);
  h->lock.Unlock();
  return !mine.empty();
}

}  // namespace nicq::shmtrig
