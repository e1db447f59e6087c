// Completion handling: finished sends and reads, arrivals, provider
// errors, and peers that are gone.
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/log.h"
#include "core/peer_loss.h"
#include "p2p/engine.h"

namespace nicq::p2p {

using transport::Proto;

bool IsPeerLossError(int err) {
  return IsPeerLossErrno(err);
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
  // A message (eager, synchronous eager, rendezvous header) in send order:
  // the common case, tested before the control messages.
  if (proto <= Proto::kRts) [[likely]] {
    const int src = transport::TagSrc(tag);
    if (src >= 0 && src < int(recv_seq_.size()) && transport::DataSeq(data) == recv_seq_[src]) {
      Dispatch(tag, data, buf, len);
      ++recv_seq_[src];
      if (!out_of_order_[src].empty()) [[unlikely]]  // the provider reordered
        DispatchHeldBack(src);
      return;
    }
  }
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
  DispatchHeldBack(src);
}

void Engine::DispatchHeldBack(int src) {
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
  // Any process this one can see by pid, not only those of its node: ranks
  // of another virtual node on this host would otherwise go unchecked, and a
  // wait on one that exited would hang (a remote peer shows up as provider
  // errors on our sends, a receive alone never fails).
  if (w < 0 || w == me_ || !fab_->peer(w).pid_visible) return false;
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

std::string Engine::DeadPeers() const {
  std::string list;
  int n = 0;
  for (int w = 0; w < int(dead_.size()); ++w) {
    if (!dead_[w]) continue;
    list += (n++ ? ", " : "") + std::to_string(w);
  }
  if (n == 0) return "";
  return (n == 1 ? "world rank " : "world ranks ") + list;
}

}  // namespace nicq::p2p
