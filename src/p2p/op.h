// Request-private state of the p2p engine, pooled so that after warm-up a
// send, receive or control message allocates nothing.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "runtime/request.h"
#include "transport/tag.h"

namespace nicq::p2p {

class BsendBuffer;

// One thing the engine has handed (or will hand) to the provider. The
// pointer to it is the libfabric operation context.
struct Op {
  enum class Kind : std::uint8_t { kSend, kRecv, kCtrl, kBounce };
  Kind kind = Kind::kSend;
  transport::Proto proto = transport::Proto::kEager;
  bool in_posted = false;  // on the posted-receive list (cancellable)
  Request* req = nullptr;  // null once the request completed early (bsend) or failed

  Op* prev = nullptr;  // posted-receive list
  Op* next = nullptr;
  Op* next_post = nullptr;  // post queue
  Op* next_free = nullptr;  // pool

  int peer = -1;               // world rank of the other side
  transport::WireHeader wire;  // sent in front of the payload
  std::uint32_t token = 0;     // our slot in the token table (sync/rendezvous sends)
  // shm transport: bytes of the current message already in the ring; the
  // op waits on the engine's ring-completion list (once at most) with
  // `ring_local` local completions (kRts / eager copy) to report.
  std::size_t ring_off = 0;
  bool ring_queued = false;
  std::uint8_t ring_local = 0;
  Code error = Code::kOk;

  // send side
  const void* sbuf = nullptr;
  std::size_t slen = 0;
  int local_pending = 0;   // provider completions still to come
  int remote_pending = 0;  // acks/fins still to come
  fid_mr* mr = nullptr;
  transport::RndvHeader hdr;
  void* bsend_block = nullptr;
  BsendBuffer* bsend_pool = nullptr;  // the buffer bsend_block came from
  bool cancel_asked = false;          // kCancel sent, its kCancelReply still to come
  bool cancelled = false;             // the receiver withdrew the message unmatched
  // push rendezvous (sender): payload still to post, one header per chunk
  bool pushing = false;
  const std::uint8_t* push_buf = nullptr;
  std::size_t push_len = 0, push_off = 0;
  transport::WireHeader* chunk_hdrs = nullptr;  // owned; freed when the send finishes

  // receive side
  transport::MatchSpec match;
  Comm* comm = nullptr;
  std::size_t delivered = 0;
  std::size_t full_len = 0;
  // rendezvous read: remote region, what is left to post, reads in flight
  std::uint64_t raddr = 0, rkey = 0;
  std::size_t read_len = 0, read_off = 0;
  int reads_out = 0;
  std::uint32_t peer_token = 0;
  int msg_tag = 0;

  // bounce receive
  std::uint8_t* bounce = nullptr;
  std::size_t bounce_size = 0;
};

// A message that arrived before its receive was posted.
struct Unexpected {
  Unexpected* prev = nullptr;
  Unexpected* next = nullptr;
  Unexpected* next_free = nullptr;
  std::uint64_t tag = 0;
  std::uint64_t data = 0;
  transport::RndvHeader hdr;          // kRts only
  std::vector<std::uint8_t> payload;  // eager only; capacity is kept for reuse
  std::size_t len = 0;
};

// Free-list pool; grows in chunks, never shrinks while the engine lives.
template <class T>
class Pool {
 public:
  T* Get() {
    if (!free_) Grow();
    T* x = free_;
    free_ = x->next_free;
    x->next_free = nullptr;
    ++in_use_;
    return x;
  }
  void Put(T* x) {
    x->next_free = free_;
    free_ = x;
    --in_use_;
  }
  std::size_t in_use() const { return in_use_; }

 private:
  void Grow() {
    constexpr std::size_t kChunk = 256;
    chunks_.push_back(std::make_unique<T[]>(kChunk));
    T* c = chunks_.back().get();
    for (std::size_t i = 0; i < kChunk; ++i) {
      c[i].next_free = free_;
      free_ = &c[i];
    }
  }
  std::vector<std::unique_ptr<T[]>> chunks_;
  T* free_ = nullptr;
  std::size_t in_use_ = 0;
};

}  // namespace nicq::p2p
