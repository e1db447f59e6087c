// ShmTransport: nicq's own point-to-point transport between ranks of one
// node, used by the p2p engine instead of libfabric for same-node peers
// (NICQ_SHM=auto|on|off; docs/p2p-protocol.md "Same-node transport").
//
// Each rank owns one inbox segment: a header (magic, the futex word its
// sleeping waiter blocks on) and one ShmRing per rank of the node, ring i
// written only by local rank i. A sender writes (16-byte wire header,
// payload) messages into its ring of the receiver's inbox, fragmented into
// several frames when larger than a frame; the receiver drains its rings
// and hands each whole message to the engine's arrival path. Messages of
// one sender to one receiver therefore arrive in send order.
//
// Large payloads do not travel through the rings: the receiver copies them
// straight from the sender's buffer with process_vm_readv (cross-memory
// attach) when the kernel allows it, which Open() probes once with a real
// read from a peer; otherwise the engine keeps libfabric's RMA read.
//
// The engine serializes all calls (one producer per ring by construction).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/agent_bell.h"
#include "core/status.h"
#include "transport/shm_ring.h"

namespace nicq {
class Bootstrap;
}

namespace nicq::transport {

struct PeerInfo;

// Split copy of a large message: the receiver offers the first part of its
// buffer to the sender, copies the rest itself, and then either finds that
// the sender wrote the first part (process_vm_writev) or takes it back and
// copies it too. Exactly one side copies each byte, and the receive never
// completes while the sender may still write into the buffer.
enum class SplitStage : std::uint64_t {
  kOffered = 1,        // receiver: addr/len are valid, either side may claim
  kSenderWriting = 2,  // sender claimed it and is copying
  kSenderDone = 3,     // sender copied all len bytes
  kSenderFailed = 4,   // sender claimed it but could not copy: receiver copies
  kReceiverKept = 5,   // receiver claimed it back before the sender came
};

// One offer in the receiver's inbox header. `state` holds the offer's
// generation (24 bits, so a late sender cannot claim a reused slot) and
// its stage; the sender reads addr/len only after claiming.
struct ShmSplitOffer {
  std::atomic<std::uint64_t> state{0};
  std::uint64_t addr = 0;
  std::uint64_t len = 0;
};
inline constexpr int kSplitOffers = 64;

// The first cache lines of an inbox segment.
struct alignas(kShmCell) ShmInboxHeader {
  std::uint64_t magic = 0;
  std::uint32_t rings = 0;
  std::uint32_t cells = 0;
  std::uint64_t cookie = 0;  // a random value peers read with process_vm_readv as the probe
  // The owner's waiter sets `sleeping`, re-checks its rings and waits on
  // `wake_seq`; a sender that sees `sleeping` bumps `wake_seq` and wakes it.
  alignas(kShmCell) std::atomic<std::uint32_t> wake_seq{0};
  std::atomic<std::uint32_t> sleeping{0};
  // Written by the owner (offers) and by the senders it offers to (claims).
  alignas(kShmCell) ShmSplitOffer offers[kSplitOffers];
  // The owner's offload agent sleeps on this one; peers' agents ring it
  // after handing it work (providers/common/agent_bell.h).
  alignas(kShmCell) offload::AgentBell agent_bell;
};

class ShmTransport {
 public:
  ShmTransport() = default;
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;
  ~ShmTransport() { Close(); }

  // Collective over the job (every rank calls it, with the same NICQ_SHM):
  // creates this rank's inbox, maps the inboxes of the other ranks on this
  // node and unlinks the names. Leaves the transport inactive (and returns
  // Ok) when NICQ_SHM=off, when no other rank shares the node, or under
  // auto when a segment cannot be made.
  Status Open(Bootstrap& boot, const std::vector<PeerInfo>& peers, int me);
  void Close();

  bool active() const { return active_; }
  // This world rank's messages go through a ring.
  bool local(int world) const { return active_ && tx_[world].attached(); }
  // Every other rank is on this node (no libfabric traffic but fallbacks).
  bool all_local() const { return all_local_; }
  // Large messages may be read with process_vm_readv.
  bool cma() const { return cma_; }
  // The offload agent's doorbell of world rank `world` (this one's own
  // included) while the transport is open; nullptr when not on this node.
  offload::AgentBell* agent_bell(int world) const;
  // Largest message that fits one frame (the fast path: one write, done).
  std::size_t max_frame() const { return max_frame_; }

  // Writes bytes [*off, total) of the message `iov` to world `dest`'s inbox,
  // advancing *off; true once the whole message is in the ring. False: the
  // ring is full, *off says how far it got (call again later).
  bool Send(int dest, const iovec* iov, int n, std::size_t total, std::size_t* off);
  // A message of a kHead-byte header and a payload that fits one frame
  // (kHead + body_len <= max_frame()), all or nothing: the small-send
  // path, inlined with the header's copy a few stores. False: the ring is
  // full (nothing written).
  template <std::size_t kHead>
  [[gnu::always_inline]] bool SendWhole(int dest, const void* head, const void* body,
                                        std::size_t body_len) {
    if (!tx_[dest].WriteWhole(head, kHead, body, body_len)) return false;
    Wake(dest);
    return true;
  }

  // Hands each complete message that arrived to deliver(bytes, len) (bytes
  // start with the wire header; valid only during the call). Returns the
  // number of frames taken.
  template <class Deliver>
  int Drain(Deliver&& deliver);

  // Blocks up to timeout_us unless a message is already waiting or arrives
  // (a sender wakes us); spurious returns are fine.
  void Sleep(int timeout_us);
  bool AnyPending() const;

  // Copies len bytes at `addr` in world `src`'s address space to dst.
  // Returns 0 or an errno (ESRCH: the process is gone).
  int ReadFrom(int src, void* dst, std::uint64_t addr, std::size_t len) const;

  // Receiver: offers [dst, dst + len) to be written by the sender; false
  // when every offer slot is in use (copy it all yourself). *ticket names
  // the offer in the control message to the sender.
  bool OfferSplit(void* dst, std::size_t len, std::uint32_t* ticket);
  // Receiver, after copying its own part: true when the sender wrote the
  // offered part, false when the receiver must copy it (it claimed it back,
  // or the sender failed). Waits while the sender is copying, unless
  // `peer_gone` says the sender's process has ended (then false: the data
  // is incomplete and the caller's read reports the failure). Frees the slot.
  template <class PeerGone>
  bool FinishSplit(std::uint32_t ticket, PeerGone&& peer_gone);
  // Sender: claims world `dest`'s offer `ticket` and writes its bytes from
  // `src`; does nothing when the receiver took it back. Returns 0 or the
  // errno of process_vm_writev (the receiver then copies the part itself).
  int TakeSplit(int dest, std::uint32_t ticket, const void* src);

 private:
  struct Segment {
    void* base = nullptr;
    std::size_t bytes = 0;
  };
  void Wake(int dest);
  ShmSplitOffer& OwnOffer(std::uint32_t ticket);
  static std::uint64_t SplitState(std::uint32_t ticket, SplitStage stage) {
    return (std::uint64_t(ticket >> 8) << 8) | std::uint64_t(stage);
  }
  void WaitBriefly(int round) const;
  Status CreateInbox(int me, std::size_t rings, std::size_t cells, std::string* name);

  bool active_ = false;
  bool all_local_ = false;
  bool cma_ = false;
  std::size_t max_frame_ = 0;
  int me_ = -1;  // world rank
  Segment own_;
  std::string own_name_;                      // set until unlinked
  std::vector<Segment> mapped_;               // peers' inboxes
  std::vector<ShmRingWriter> tx_;             // by world rank (unattached: not local)
  std::vector<ShmInboxHeader*> peer_header_;  // by world rank
  std::vector<std::int32_t> pid_;             // by world rank
  std::vector<ShmMessageReader> rx_;          // one per local sender
  std::vector<std::uint8_t> free_offers_;     // slots of our header's offers not in use
  std::uint32_t offer_generation_ = 0;
};

template <class PeerGone>
bool ShmTransport::FinishSplit(std::uint32_t ticket, PeerGone&& peer_gone) {
  ShmSplitOffer& o = OwnOffer(ticket);
  std::uint64_t seen = SplitState(ticket, SplitStage::kOffered);
  bool sender_wrote = false;
  if (!o.state.compare_exchange_strong(seen, SplitState(ticket, SplitStage::kReceiverKept),
                                       std::memory_order_acq_rel)) {
    // The sender claimed it: wait for its copy (tens of microseconds).
    for (int round = 0;; ++round) {
      seen = o.state.load(std::memory_order_acquire);
      if (seen != SplitState(ticket, SplitStage::kSenderWriting)) break;
      if (round % 1024 == 1023 && peer_gone()) break;
      WaitBriefly(round);
    }
    sender_wrote = seen == SplitState(ticket, SplitStage::kSenderDone);
  }
  free_offers_.push_back(std::uint8_t(ticket & 0xff));
  return sender_wrote;
}

template <class Deliver>
int ShmTransport::Drain(Deliver&& deliver) {
  constexpr int kFramesPerRing = 64;  // bounded work per poll and per sender
  int taken = 0;
  for (ShmMessageReader& in : rx_) taken += in.Drain(deliver, kFramesPerRing);
  return taken;
}

}  // namespace nicq::transport
