// The rendezvous of large messages: the receiver reads the payload from the
// sender (the provider's RMA read, or a cross-memory copy on one node), or
// the sender pushes it in bounce-sized chunks once the receiver matched.
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/log.h"
#include "p2p/engine.h"

namespace nicq::p2p {

using transport::Proto;

void Engine::StartRead(Op* op, const transport::RndvHeader& hdr, std::uint32_t token) {
  op->raddr = hdr.addr;
  op->rkey = hdr.key;
  op->full_len = hdr.len;
  op->read_len = std::min<std::size_t>(hdr.len, op->req->bytes);
  op->read_off = 0;
  op->peer_token = token;
  if (hdr.push == transport::kRndvPush) {  // ask for the chunks; OnChunk completes the receive
    AllocToken(op);
    op->delivered = 0;
    if (dead_[op->peer]) {
      FailRequest(op, Code::kProcFailed);
      return;
    }
    Op* cts = NewOp(Op::Kind::kCtrl);
    cts->peer = op->peer;
    cts->proto = Proto::kCts;
    cts->wire.tag = transport::PackTag(Proto::kCts, 0, std::uint32_t(me_), 0);
    cts->wire.data = transport::PackData(op->token, token);
    SubmitTx(cts);
    return;
  }
  if (op->read_len == 0) {  // truncated to nothing: the sender may go at once
    SendCtrl(Proto::kFin, op->peer, token);
    CompleteRecv(op, 0, hdr.len);
    return;
  }
  if (hdr.push == transport::kRndvCrossMemory) {  // one copy, done before we return
    const int err = CrossMemoryCopy(op, hdr.addr, token);
    if (err) {
      const int peer = op->peer;
      const bool gone = err == ESRCH || LocalPeerGone(peer);
      NICQ_LOG(kError, kP2p, "process_vm_readv of %zu bytes from rank %d: %s", op->read_len, peer,
               std::strerror(err));
      FailRequest(op, gone ? Code::kProcFailed : Code::kIntern);
      PutOp(op);
      if (gone) FailPeer(peer, "its process is gone (process_vm_readv)");
      return;
    }
    SendCtrl(Proto::kFin, op->peer, token);
    CompleteRecv(op, op->read_len, hdr.len);
    return;
  }
  AllocToken(op);  // so a dead sender can fail this receive
  SubmitTx(op);
}

int Engine::CrossMemoryCopy(Op* op, std::uint64_t addr, std::uint32_t token) {
  auto* buf = static_cast<std::uint8_t*>(op->req->buf);
  const int peer = op->peer;
  std::uint32_t ticket = 0;
  // The sender writes the first part while we read the rest: two cores
  // copy. Page-aligned split, so neither side touches the other's pages.
  const std::size_t first = (op->read_len / 2) & ~std::size_t(4095);
  if (split_min_ == 0 || op->read_len < split_min_ || first == 0 || dead_[peer] ||
      !shm_->OfferSplit(buf, first, &ticket))
    return shm_->ReadFrom(peer, buf, addr, op->read_len);
  SendCtrl(Proto::kSplit, peer, token, ticket);
  int err = shm_->ReadFrom(peer, buf + first, addr + first, op->read_len - first);
  const bool sender_wrote = shm_->FinishSplit(ticket, [&] { return LocalPeerGone(peer); });
  if (sender_wrote) {
    ++split_by_sender_;
  } else if (!err) {
    err = shm_->ReadFrom(peer, buf, addr, first);
    ++split_kept_;
  }
  return err;
}

std::size_t Engine::chunk_size() const {
  return std::max(eager_limit_, sizeof(transport::RndvHeader));  // what a bounce holds
}

// Sender side of a push rendezvous: the receiver matched (kCts); post the
// payload as bounce-sized chunks, each tagged with its offset.
void Engine::StartPush(Op* op, std::uint32_t receiver_token) {
  const std::size_t cs = chunk_size();
  const std::size_t n = (op->push_len + cs - 1) / cs;
  op->chunk_hdrs = new transport::WireHeader[n];
  for (std::size_t i = 0; i < n; ++i) {
    op->chunk_hdrs[i].tag = transport::PackChunkTag(i * cs);
    op->chunk_hdrs[i].data = transport::PackData(0, receiver_token);
  }
  op->pushing = true;
  op->push_off = 0;
  SubmitTx(op);
}

// Receiver side: one chunk of a pushed message.
void Engine::OnChunk(const std::uint8_t* buf, std::size_t len, std::uint64_t tag,
                     std::uint64_t data) {
  const std::uint32_t t = transport::DataToken(data);
  Op* op = t < tokens_.size() ? tokens_[t] : nullptr;
  if (!op || op->kind != Op::Kind::kRecv) return;
  const std::size_t off = transport::ChunkOffset(tag);
  if (op->req && off < op->read_len) {
    std::memcpy(static_cast<std::uint8_t*>(op->req->buf) + off, buf,
                std::min(len, op->read_len - off));
  }
  op->delivered += len;
  if (op->delivered < op->full_len) return;
  if (!op->req) {  // failed earlier
    FreeToken(op);
    PutOp(op);
    return;
  }
  CompleteRecv(op, op->read_len, op->full_len);
}

}  // namespace nicq::p2p
