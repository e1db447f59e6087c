// Taking messages out of the normal match: cancelling receives and sends
// (kCancel / kCancelReply, see docs/p2p-protocol.md), the matched probe,
// and the buffers buffered sends copy into.
#include <memory>

#include "p2p/engine.h"

namespace nicq::p2p {

using transport::Proto;

Status Engine::Cancel(Request* req) {
  if (req->IsDone()) return Status::Ok();
  Op* op = static_cast<Op*>(req->engine);
  if (!op) return Status::Ok();
  if (op->kind == Op::Kind::kSend) {
    // Only a send that waits for its receiver anyway (synchronous eager,
    // rendezvous) asks: its wait then depends on the receiver's answer,
    // which it did before. A standard eager send finishes on its own.
    if (op->remote_pending == 0 || op->cancel_asked || dead_[op->peer]) return Status::Ok();
    op->cancel_asked = true;
    ++op->remote_pending;  // the kCancelReply
    SendCtrl(Proto::kCancel, op->peer, op->token, transport::DataSeq(op->wire.data));
    return Status::Ok();
  }
  if (op->kind != Op::Kind::kRecv || !op->in_posted) return Status::Ok();
  posted_.erase(op);
  req->status.cancelled = true;
  req->status.bytes = 0;
  req->status.error = 0;
  req->engine = nullptr;
  PutOp(op);
  req->MarkDone();
  return Status::Ok();
}

// Receiver side of a send's cancel: the message `seq` from `src` is dropped
// if it still waits on the unexpected list (a matched one, or one taken by a
// matched probe, is not there any more).
void Engine::OnCancelAsked(int src, std::uint64_t data) {
  const std::uint32_t seq = transport::DataSeq(data);
  std::uint32_t withdrawn = 0;
  for (Unexpected* u = unexpected_.front(); u; u = u->next) {
    if (transport::TagSrc(u->tag) != src || transport::DataSeq(u->data) != seq) continue;
    unexpected_.erase(u);
    PutUnexpected(u);
    withdrawn = 1;
    break;
  }
  SendCtrl(Proto::kCancelReply, src, transport::DataToken(data), withdrawn);
}

void Engine::OnCancelReply(std::uint64_t data) {
  const std::uint32_t t = transport::DataToken(data);
  Op* op = t < tokens_.size() ? tokens_[t] : nullptr;
  if (!op || op->kind != Op::Kind::kSend || !op->cancel_asked) return;
  op->cancel_asked = false;
  if (transport::DataSeq(data) == 1) {
    op->cancelled = true;
    op->remote_pending = 0;  // no kAck / kFin / kCts will come for a withdrawn message
  } else {
    --op->remote_pending;
  }
  MaybeFinishSend(op);
}

Unexpected* Engine::Improbe(int src, std::uint32_t ctx, int tag, const Comm* comm,
                            RequestStatus* st) {
  const transport::MatchSpec m = transport::MakeMatch(ctx, src, tag);
  for (Unexpected* u = unexpected_.front(); u; u = u->next) {
    if (!transport::Matches(m, u->tag)) continue;
    (void)Iprobe(src, ctx, tag, comm, st);  // u is the first match: same status
    unexpected_.erase(u);
    return u;
  }
  return nullptr;
}

Status Engine::Mrecv(Unexpected* u, void* buf, std::size_t len, const Comm* comm, Request* req) {
  Op* op = NewOp(Op::Kind::kRecv);
  req->buf = buf;
  req->bytes = len;
  op->req = req;
  op->comm = const_cast<Comm*>(comm);
  op->peer = transport::TagSrc(u->tag);
  req->engine = op;
  if (dead_[op->peer] && transport::TagProto(u->tag) == Proto::kRts) {
    FailRequest(op, Code::kProcFailed);
    PutOp(op);
  } else if (transport::TagProto(u->tag) == Proto::kRts) {
    Deliver(op, u->tag, u->data, reinterpret_cast<const std::uint8_t*>(&u->hdr), sizeof u->hdr);
  } else {
    Deliver(op, u->tag, u->data, u->payload.data(), u->len);
  }
  PutUnexpected(u);
  return Status::Ok();
}

BsendBuffer* Engine::OwnedBuffer(std::uint64_t key, bool create) {
  for (auto& [k, b] : owned_bsend_)
    if (k == key) return b.get();
  if (!create) return nullptr;
  owned_bsend_.emplace_back(key, std::make_unique<BsendBuffer>());
  return owned_bsend_.back().second.get();
}

void Engine::SetContextSession(std::uint32_t ctx, int session) {
  for (auto it = ctx_session_.begin(); it != ctx_session_.end(); ++it) {
    if (it->first != ctx) continue;
    if (session < 0)
      ctx_session_.erase(it);
    else
      it->second = session;
    return;
  }
  if (session >= 0) ctx_session_.emplace_back(ctx, session);
}

BsendBuffer* Engine::BufferForContext(std::uint32_t ctx) {
  if (BsendBuffer* b = OwnedBuffer(ctx, false); b && b->attached()) return b;
  for (const auto& [c, session] : ctx_session_) {
    if (c != ctx) continue;
    if (BsendBuffer* b = OwnedBuffer(kSessionKey | std::uint32_t(session), false);
        b && b->attached())
      return b;
    break;
  }
  return bsend_.attached() ? &bsend_ : nullptr;
}

}  // namespace nicq::p2p
