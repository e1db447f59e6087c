// Posting to the provider, completion handling and dead peers.
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

bool IsPeerLossError(int err) {
  switch (err) {
    case FI_ECONNREFUSED:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_EHOSTUNREACH:
    case FI_ENOTCONN:
    case FI_ETIMEDOUT:
    case FI_EIO:
    case EPIPE:
    case FI_EADDRNOTAVAIL:
      return true;
    default:
      return false;
  }
}
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

int Engine::HandleEntries(const fi_cq_tagged_entry* e, int n) {
  for (int i = 0; i < n; ++i) {
    Op* op = static_cast<Op*>(e[i].op_context);
    if (!op) continue;
    switch (op->kind) {
      case Op::Kind::kBounce: {
        transport::WireHeader h;
        if (e[i].len >= sizeof h) {
          std::memcpy(&h, op->bounce, sizeof h);
          OnArrival(op->bounce + sizeof h, e[i].len - sizeof h, h.tag, h.data);
        }
        // Deferred on manual-progress providers only (shm, tcp;ofi_rxm: the
        // latency path, where the waiter reposts in its idle polls). On
        // sockets its own thread receives while we may not poll for long:
        // its bounces go back at once.
        if (!fab_->auto_progress()) {
          repost_.push_back(op);  // capacity kBounces: no allocation
          if (repost_.size() >= kRepostBatch) RepostBounces();
        } else {
          SubmitRx(op);
        }
        break;
      }
      case Op::Kind::kSend:
        --op->local_pending;
        MaybeFinishSend(op);
        break;
      case Op::Kind::kCtrl:
        PutOp(op);
        break;
      case Op::Kind::kRecv:
        OnReadDone(op);
        break;
    }
  }
  return n;
}

void Engine::HandleCqError() {
  fi_cq_err_entry err = {};
  if (fi_cq_readerr(fab_->cq(), &err, 0) != 1) return;
  Op* op = static_cast<Op*>(err.op_context);
  if (!op) return;
  // As for post errors: a peer on this node that exited is a lost peer,
  // whatever error code the provider chose.
  const bool lost =
      IsPeerLossError(err.err) || (op->kind != Op::Kind::kBounce && LocalPeerGone(op->peer));
  const char* what = fi_strerror(err.err);
  switch (op->kind) {
    case Op::Kind::kBounce:
      if (err.err == FI_ECANCELED) return;  // shutdown
      NICQ_LOG(kWarn, kP2p, "receive completion error: %s (len %zu); reposting", what, err.olen);
      SubmitRx(op);
      return;
    case Op::Kind::kCtrl:
      if (lost && !dead_[op->peer]) FailPeer(op->peer, what);
      PutOp(op);
      return;
    case Op::Kind::kSend: {
      // Finish (or fail) this send before failing the peer: FailPeer may
      // release ops, and this one must not be released twice.
      const int peer = op->peer;
      --op->local_pending;
      if (op->error == Code::kOk) op->error = lost ? Code::kProcFailed : Code::kIntern;
      NICQ_LOG(kError, kP2p, "send to rank %d failed: %s", peer, what);
      op->remote_pending = 0;
      MaybeFinishSend(op);
      if (lost && !dead_[peer]) FailPeer(peer, what);
      return;
    }
    case Op::Kind::kRecv:
      NICQ_LOG(kError, kP2p, "rendezvous read from rank %d failed: %s", op->peer, what);
      FailRequest(op, lost ? Code::kProcFailed : Code::kIntern);
      if (lost && !dead_[op->peer]) FailPeer(op->peer, what);
      OnReadDone(op);
      return;
  }
}

void Engine::MaybeFinishSend(Op* op) {
  if (op->ring_queued) return;  // FinishRingPosts still holds it; it asks again
  if (op->local_pending > 0 || op->remote_pending > 0) return;
  if (op->pushing && op->push_off < op->push_len) return;  // chunks still queued
  delete[] op->chunk_hdrs;
  op->chunk_hdrs = nullptr;
  if (op->mr) fi_close(&op->mr->fid);
  op->mr = nullptr;
  if (op->bsend_block) op->bsend_pool->Free(op->bsend_block);
  FreeToken(op);
  --sends_in_flight_;
  Request* req = op->req;
  if (req) {
    req->status.error = int(op->error);
    req->status.bytes = op->cancelled ? 0 : op->proto == Proto::kRts ? op->hdr.len : op->slen;
    req->status.cancelled = op->cancelled;
    req->engine = nullptr;
  }
  PutOp(op);
  if (req) req->MarkDone();
}

void Engine::OnReadDone(Op* op) {
  --op->reads_out;
  if (op->reads_out > 0 || op->read_off < op->read_len) return;
  if (!op->req) {  // failed earlier; the last read just came back
    FreeToken(op);
    PutOp(op);
    return;
  }
  SendCtrl(Proto::kFin, op->peer, op->peer_token);
  CompleteRecv(op, op->read_len, op->full_len);
}

void Engine::OnArrival(const std::uint8_t* buf, std::size_t len, std::uint64_t tag,
                       std::uint64_t data) {
  const Proto proto = transport::TagProto(tag);
  if (proto == Proto::kData) return OnChunk(buf, len, tag, data);
  if (proto == Proto::kCts) {
    const std::uint32_t t = transport::DataToken(data);
    Op* op = t < tokens_.size() ? tokens_[t] : nullptr;
    if (!op || op->kind != Op::Kind::kSend || op->pushing) return;
    --op->remote_pending;
    StartPush(op, transport::DataSeq(data));
    return;
  }
  if (proto == Proto::kSplit) {
    // The receiver offers to let us write the first part of its copy.
    const std::uint32_t t = transport::DataToken(data);
    Op* op = t < tokens_.size() ? tokens_[t] : nullptr;
    if (!op || op->kind != Op::Kind::kSend || op->hdr.push != transport::kRndvCrossMemory) return;
    const int err = shm_->TakeSplit(transport::TagSrc(tag), transport::DataSeq(data),
                                    reinterpret_cast<const void*>(op->hdr.addr));
    if (err)
      NICQ_LOG(kDebug, kP2p, "process_vm_writev to rank %d: %s (the receiver copies it)",
               transport::TagSrc(tag), std::strerror(err));
    return;
  }
  if (proto == Proto::kCancel) return OnCancelAsked(transport::TagSrc(tag), data);
  if (proto == Proto::kCancelReply) return OnCancelReply(data);
  if (proto == Proto::kAck || proto == Proto::kFin) {
    std::uint32_t t = transport::DataToken(data);
    Op* op = t < tokens_.size() ? tokens_[t] : nullptr;
    if (!op || op->kind != Op::Kind::kSend) return;  // already failed
    --op->remote_pending;
    MaybeFinishSend(op);
    return;
  }
  const int src = transport::TagSrc(tag);
  if (src < 0 || src >= int(recv_seq_.size())) return;
  const std::uint32_t seq = transport::DataSeq(data);
  if (seq != recv_seq_[src]) {
    // The provider delivered out of send order: hold it until the gap fills.
    NICQ_LOG(kTrace, kP2p, "from %d: seq %u arrived, expecting %u (held back)", src, seq,
             recv_seq_[src]);
    out_of_order_[src][seq] = Stash(tag, data, buf, len);
    return;
  }
  Dispatch(tag, data, buf, len);
  ++recv_seq_[src];
  auto& ooo = out_of_order_[src];
  while (!ooo.empty() && ooo.begin()->first == recv_seq_[src]) {
    Unexpected* u = ooo.begin()->second;
    ooo.erase(ooo.begin());
    if (transport::TagProto(u->tag) == Proto::kRts)
      Dispatch(u->tag, u->data, reinterpret_cast<const std::uint8_t*>(&u->hdr), sizeof u->hdr);
    else
      Dispatch(u->tag, u->data, u->payload.data(), u->len);
    PutUnexpected(u);
    ++recv_seq_[src];
  }
}

void Engine::FailPeer(int world, const char* why) {
  if (dead_[world]) return;
  dead_[world] = true;
  any_dead_ = true;
  NICQ_LOG(kError, kP2p, "rank %d has failed (%s); its operations complete with kProcFailed", world,
           why);
  // Posted receives naming this source.
  for (Op* op = posted_.front(); op;) {
    Op* nx = op->next;
    if ((op->match.ignore & transport::kSrcMask) == 0 &&
        transport::TagSrc(op->match.bits) == world) {
      posted_.erase(op);
      op->in_posted = false;
      FailRequest(op, Code::kProcFailed);
      PutOp(op);
    }
    op = nx;
  }
  // Sends waiting for the dead peer's ack/fin, receives reading from it.
  for (std::size_t t = 1; t < tokens_.size(); ++t) {
    Op* op = tokens_[t];
    if (!op || op->peer != world) continue;
    if (op->kind == Op::Kind::kSend) {
      op->error = Code::kProcFailed;
      FailRequest(op, Code::kProcFailed);
      op->remote_pending = 0;
      MaybeFinishSend(op);
    } else if (op->kind == Op::Kind::kRecv) {
      FailRequest(op, Code::kProcFailed);
    }
  }
}

std::string Engine::DescribeState() const {
  std::size_t ooo = 0;
  for (const auto& m : out_of_order_) ooo += m.size();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "posted=%zu unexpected=%zu out_of_order=%zu tx_queue=%zu rx_queue=%zu ops=%zu "
                "tokens=%zu sends_in_flight=%zu",
                posted_.size(), unexpected_.size(), ooo, tx_queue_.size(), rx_queue_.size(),
                ops_.in_use(), tokens_.size() - 1 - free_tokens_.size(), sends_in_flight_);
  return buf;
}

bool Engine::LocalPeerGone(int w) const {
  if (w < 0 || w == me_ || !fab_->peer(w).same_node) return false;
  const int pid = fab_->peer(w).pid;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  // An exited child not yet reaped still answers kill().
  char path[64], state = 0;
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  if (FILE* f = std::fopen(path, "r")) {
    if (std::fscanf(f, "%*d %*s %c", &state) != 1) state = 0;
    std::fclose(f);
  }
  return state == 'Z' || state == 'X';
}

bool Engine::CheckLocalPeers() {
  bool found = false;
  for (int w = 0; w < fab_->size(); ++w) {
    if (dead_[w]) continue;
    if (LocalPeerGone(w)) {
      FailPeer(w, "process no longer exists");
      found = true;
    }
  }
  return found;
}

}  // namespace nicq::p2p
