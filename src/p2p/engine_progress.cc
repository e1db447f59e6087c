// Posting to the provider and polling its completion queue.
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/log.h"
#include "p2p/engine.h"

namespace nicq::p2p {

using transport::Proto;

namespace {
constexpr int kCqBatch = 16;
}  // namespace

Status Engine::TryPost(Op* op) {
  fid_ep* ep = fab_->ep();
  ssize_t rc = 0;
  switch (op->kind) {
    case Op::Kind::kBounce:
      rc = fi_recv(ep, op->bounce, op->bounce_size, nullptr, FI_ADDR_UNSPEC, op);
      break;
    case Op::Kind::kSend:
      if (shm_->local(op->peer)) return RingPost(op);
      if (op->pushing) {  // push rendezvous: post the remaining chunks in order
        if (dead_[op->peer]) return Error(Code::kProcFailed, "peer is dead");
        const std::size_t cs = chunk_size();
        while (op->push_off < op->push_len) {
          const std::size_t n = std::min(cs, op->push_len - op->push_off);
          iovec iov[2] = {{&op->chunk_hdrs[op->push_off / cs], sizeof(transport::WireHeader)},
                          {const_cast<std::uint8_t*>(op->push_buf) + op->push_off, n}};
          rc = fi_sendv(ep, iov, nullptr, 2, fab_->peer(op->peer).addr, op);
          if (rc) break;
          op->push_off += n;
          ++op->local_pending;
        }
        break;
      }
      [[fallthrough]];
    case Op::Kind::kCtrl:
      if (dead_[op->peer]) return Error(Code::kProcFailed, "peer is dead");
      if (shm_->local(op->peer)) return RingPost(op);
      {
        iovec iov[2] = {{&op->wire, sizeof op->wire}, {const_cast<void*>(op->sbuf), op->slen}};
        rc = fi_sendv(ep, iov, nullptr, op->slen ? 2 : 1, fab_->peer(op->peer).addr, op);
      }
      break;
    case Op::Kind::kRecv: {  // rendezvous reads, in chunks
      if (dead_[op->peer]) return Error(Code::kProcFailed, "peer is dead");
      auto* base = static_cast<std::uint8_t*>(op->req ? op->req->buf : nullptr);
      if (!base) return Error(Code::kProcFailed, "receive abandoned");
      while (op->read_off < op->read_len) {
        std::size_t n = std::min(read_chunk_, op->read_len - op->read_off);
        rc = fi_read(ep, base + op->read_off, n, nullptr, fab_->peer(op->peer).addr,
                     op->raddr + op->read_off, op->rkey, op);
        if (rc) break;
        op->read_off += n;
        ++op->reads_out;
      }
      break;
    }
  }
  if (rc == 0) return Status::Ok();
  // Full: stays queued; Poll() reads the CQ, which frees provider slots.
  if (rc == -FI_EAGAIN) return Error(Code::kAgain, "");
  // A provider may report a peer's exit as a plain error before the loss of
  // its connection shows: a peer on this node is asked directly.
  return Error(
      IsPeerLossError(int(-rc)) || LocalPeerGone(op->peer) ? Code::kProcFailed : Code::kIntern,
      std::string("posting to rank ") + std::to_string(op->peer) + ": " + fi_strerror(int(-rc)));
}

void Engine::OnPostError(Op* op, const Status& s) {
  NICQ_LOG(kDebug, kP2p, "post failed: %s", s.message().c_str());
  const Code code = s.code() == Code::kProcFailed ? Code::kProcFailed : s.code();
  if (s.code() == Code::kProcFailed && op->peer >= 0 && !dead_[op->peer])
    FailPeer(op->peer, s.message().c_str());
  switch (op->kind) {
    case Op::Kind::kBounce:
      NICQ_LOG(kError, kP2p, "cannot post receive buffer: %s", s.message().c_str());
      break;
    case Op::Kind::kCtrl:
      PutOp(op);
      break;
    case Op::Kind::kSend:
      if (op->pushing)
        op->push_off = op->push_len;  // posted chunks still complete
      else
        op->local_pending = 0;
      op->remote_pending = 0;
      op->error = code;
      MaybeFinishSend(op);
      break;
    case Op::Kind::kRecv:
      op->read_len = op->read_off;  // post no more chunks
      FailRequest(op, code);
      if (op->reads_out == 0) {
        FreeToken(op);
        PutOp(op);
      }
      break;
  }
}

void Engine::SubmitTx(Op* op) {
  tx_queue_.Submit(
      op, [this](Op* x) { return TryPost(x); },
      [this](Op* x, const Status& s) { OnPostError(x, s); });
}

Status Engine::RingPost(Op* op) {
  if (dead_[op->peer]) return Error(Code::kProcFailed, "peer is dead");
  constexpr std::size_t kHdr = sizeof(transport::WireHeader);
  if (op->kind == Op::Kind::kSend && op->pushing) {  // push rendezvous: every chunk, in order
    const std::size_t cs = chunk_size();
    while (op->push_off < op->push_len) {
      const std::size_t n = std::min(cs, op->push_len - op->push_off);
      const iovec iov[2] = {{&op->chunk_hdrs[op->push_off / cs], kHdr},
                            {const_cast<std::uint8_t*>(op->push_buf) + op->push_off, n}};
      if (!shm_->Send(op->peer, iov, 2, kHdr + n, &op->ring_off)) return Error(Code::kAgain, "");
      op->ring_off = 0;
      op->push_off += n;
    }
  } else {
    const iovec iov[2] = {{&op->wire, kHdr}, {const_cast<void*>(op->sbuf), op->slen}};
    if (!shm_->Send(op->peer, iov, op->slen ? 2 : 1, kHdr + op->slen, &op->ring_off))
      return Error(Code::kAgain, "");  // full: Poll retries from ring_off
    op->ring_off = 0;
  }
  // In the ring: the send completes at the next poll (FinishRingPosts), as
  // a provider's would at the next CQ read. Not here: the post queue may
  // still hold the op, and a buffered send's block stays taken until
  // progress runs, as with any provider. An op already on the list (its
  // kRts, when the kCts came back and the chunks went out before that
  // poll) is not linked twice.
  if (!(op->kind == Op::Kind::kSend && op->pushing)) ++op->ring_local;
  if (op->ring_queued) return Status::Ok();
  op->ring_queued = true;
  op->next = nullptr;
  if (ring_done_tail_)
    ring_done_tail_->next = op;
  else
    ring_done_head_ = op;
  ring_done_tail_ = op;
  return Status::Ok();
}

int Engine::FinishRingPosts() {
  int n = 0;
  while (Op* op = ring_done_head_) {
    ring_done_head_ = op->next;
    if (!ring_done_head_) ring_done_tail_ = nullptr;
    op->next = nullptr;
    op->ring_queued = false;
    ++n;
    if (op->kind == Op::Kind::kCtrl) {
      PutOp(op);
      continue;
    }
    // A pushed payload's chunks are no local completion of their own (the
    // send finishes once push_off reaches push_len).
    op->local_pending = std::max(0, op->local_pending - int(op->ring_local));
    op->ring_local = 0;
    MaybeFinishSend(op);
  }
  return n;
}

int Engine::DrainRings() {
  return shm_->Drain([this](const std::uint8_t* msg, std::size_t len) {
    transport::WireHeader h;
    if (len < sizeof h) return;
    std::memcpy(&h, msg, sizeof h);
    OnArrival(msg + sizeof h, len - sizeof h, h.tag, h.data);
  });
}

bool Engine::can_block() const {
  return fab_ && (fab_->cq_can_block() || shm_->active());
}

void Engine::SubmitRx(Op* op) {
  rx_queue_.Submit(
      op, [this](Op* x) { return TryPost(x); },
      [this](Op* x, const Status& s) { OnPostError(x, s); });
}

void Engine::SendCtrl(Proto proto, int peer, std::uint32_t token, std::uint32_t word) {
  if (dead_[peer]) return;
  Op* op = NewOp(Op::Kind::kCtrl);
  op->peer = peer;
  op->proto = proto;
  op->wire.tag = transport::PackTag(proto, 0, std::uint32_t(me_), 0);
  op->wire.data = transport::PackData(word, token);
  SubmitTx(op);
}

void Engine::RepostBounces() {
  for (Op* b : repost_) SubmitRx(b);
  repost_.clear();
}

int Engine::Poll() {
  if (!fab_) return 0;
  int n = 0;
  if (!rx_queue_.empty())
    n += int(rx_queue_.Drain([this](Op* x) { return TryPost(x); },
                             [this](Op* x, const Status& s) { OnPostError(x, s); }));
  if (!tx_queue_.empty())
    n += int(tx_queue_.Drain([this](Op* x) { return TryPost(x); },
                             [this](Op* x, const Status& s) { OnPostError(x, s); }));
  if (shm_->active()) n += DrainRings();
  n += FinishRingPosts();
  // With every peer on the rings the endpoint only carries fallbacks
  // (libfabric reads where process_vm_readv is refused): reading its CQ on
  // every poll would cost each message a provider progress call.
  const bool read_cq = !shm_only_ || (++quiet_cq_polls_ & 15) == 0;
  fi_cq_tagged_entry e[kCqBatch];
  for (int round = 0; read_cq && round < 8; ++round) {
    ssize_t got = fi_cq_read(fab_->cq(), e, kCqBatch);
    if (got > 0) {
      n += HandleEntries(e, int(got));
      if (got < kCqBatch) break;
    } else if (got == -FI_EAVAIL) {
      HandleCqError();
      ++n;
    } else {
      break;
    }
  }
  if (n == 0 && !repost_.empty()) RepostBounces();  // idle: the waiter has time
  if (n > 0) idle_sleeps_ = 0;
  return n;
}

int Engine::BlockingPoll(int timeout_ms) {
  if (!fab_) return 0;
  if (!repost_.empty()) RepostBounces();  // before sleeping, every bounce posted
  if (shm_->active()) {
    if (ring_done_head_) return Poll();  // completions to report: no sleep
    // Sleep on our inbox's futex (a sender wakes us). Short, and capped
    // whatever the caller asked: events that do not come through a ring
    // (the endpoint's CQ when peers are remote, progress threads of other
    // layers) are seen only when we wake. With every peer on the rings the
    // sleep doubles while nothing happens (100 us to the caller's limit),
    // so a long idle wait costs little CPU; any event starts it over. Not
    // while a send waits for room in a ring: the receiver's draining does
    // not wake us.
    constexpr int kAllLocalSleepUs = 100, kMixedSleepUs = 20;
    const int limit_us = std::max(timeout_ms, 1) * 1000;
    const unsigned doublings = tx_queue_.empty() ? std::min(idle_sleeps_, 4u) : 0;
    const int us = shm_only_ ? std::min(limit_us, kAllLocalSleepUs << doublings)
                             : std::min(limit_us, kMixedSleepUs);
    shm_->Sleep(us);
    const int n = Poll();
    if (n == 0) ++idle_sleeps_;
    return n;
  }
  if (!fab_->cq_can_block() || !tx_queue_.empty() || !rx_queue_.empty()) return Poll();
  fi_cq_tagged_entry e[kCqBatch];
  ssize_t got = fi_cq_sread(fab_->cq(), e, kCqBatch, nullptr, timeout_ms);
  if (got > 0) return HandleEntries(e, int(got));
  if (got == -FI_EAVAIL) {
    HandleCqError();
    return 1;
  }
  return 0;
}

}  // namespace nicq::p2p
