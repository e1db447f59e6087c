// Posting sends and receives, matching, delivery (the rendezvous reads and
// pushes are in engine_rndv.cc).
#include "p2p/engine.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/config.h"
#include "core/log.h"

namespace nicq::p2p {

using transport::Proto;

namespace {
constexpr int kBounces = 64;
constexpr std::size_t kMaxEager = 1u << 20;
}  // namespace

Status Engine::Init(transport::Fabric* fabric, int my_world) {
  fab_ = fabric;
  me_ = my_world;
  std::int64_t lim = config::GetInt("NICQ_EAGER_LIMIT");
  if (lim < 0) lim = 0;
  if (std::size_t(lim) > kMaxEager) {
    NICQ_LOG(kWarn, kP2p, "NICQ_EAGER_LIMIT=%lld too large; using %zu", (long long)lim, kMaxEager);
    lim = kMaxEager;
  }
  eager_limit_ = std::size_t(lim);
  const std::size_t inj = fab_->inject_size();
  inject_max_ = inj > sizeof(transport::WireHeader)
                    ? std::min(kInjectMax, inj - sizeof(transport::WireHeader))
                    : 0;
  if (fab_->max_msg_size() > 0) read_chunk_ = std::min(read_chunk_, fab_->max_msg_size());
  const std::string rndv = config::GetString("NICQ_RNDV");
  push_forced_ = rndv == "push";
  push_rndv_ = push_forced_ || !fab_->has_rma_read();
  shm_ = &fab_->shm();
  shm_only_ = shm_->active() && shm_->all_local();
  split_min_ = std::size_t(std::max<std::int64_t>(0, config::GetInt("NICQ_SHM_SPLIT_MIN")));
  if (rndv == "read" && !fab_->has_rma_read())
    NICQ_LOG(kWarn, kP2p, "NICQ_RNDV=read but provider %s has no RMA read: pushing chunks",
             fab_->provider().c_str());
  const int n = fab_->size();
  send_seq_.assign(n, 0);
  recv_seq_.assign(n, 0);
  out_of_order_.assign(n, {});
  dead_.assign(n, false);
  tokens_.assign(1, nullptr);
  // Small unexpected entries with their payload room, taken once now: the
  // first messages that beat their receives (common once small sends are
  // injected and complete at once) then allocate nothing.
  {
    Unexpected* warm[kWarmUnexpected];
    for (auto& u : warm) u = GetUnexpected(0);
    for (auto* u : warm) PutUnexpected(u);
  }
  // Every eager message and every rendezvous header fits one bounce buffer.
  const std::size_t bsize =
      sizeof(transport::WireHeader) + std::max(eager_limit_, sizeof(transport::RndvHeader));
  repost_.reserve(kBounces);
  for (int i = 0; i < kBounces; ++i) {
    bounce_mem_.push_back(std::make_unique<std::uint8_t[]>(bsize));
    Op* b = new Op;
    b->kind = Op::Kind::kBounce;
    b->bounce = bounce_mem_.back().get();
    b->bounce_size = bsize;
    bounces_.push_back(b);
    SubmitRx(b);
  }
  return Status::Ok();
}

void Engine::Shutdown() {
  if (!fab_) return;
  for (Op* b : bounces_) {
    if (fab_->ep()) fi_cancel(&fab_->ep()->fid, b);
  }
  // The endpoint is closed right after; drop the bounce state with it.
  fab_ = nullptr;
}

Op* Engine::NewOp(Op::Kind kind) {
  Op* op = ops_.Get();
  Op* keep = op->next_free;
  *op = Op{};
  op->next_free = keep;
  op->kind = kind;
  return op;
}

void Engine::PutOp(Op* op) {
  ops_.Put(op);
}

std::uint32_t Engine::AllocToken(Op* op) {
  std::uint32_t t;
  if (!free_tokens_.empty()) {
    t = free_tokens_.back();
    free_tokens_.pop_back();
    tokens_[t] = op;
  } else {
    t = std::uint32_t(tokens_.size());
    tokens_.push_back(op);
  }
  op->token = t;
  return t;
}

void Engine::FreeToken(Op* op) {
  if (op->token == 0) return;
  tokens_[op->token] = nullptr;
  free_tokens_.push_back(op->token);
  op->token = 0;
}

Status Engine::Isend(const void* buf, std::size_t len, int dest, std::uint32_t ctx, int tag,
                     SendMode mode, Request* req) {
  // A small standard or ready send to a same-node peer, with nothing queued
  // ahead of it (order), whose ring has room for it in one frame: the copy
  // into the ring is the send, and it completes here. Tested first, and
  // everything else is out of line, so that this path saves few registers.
  if (shm_->local(dest) && len <= eager_limit_ &&
      len + sizeof(transport::WireHeader) <= shm_->max_frame() &&
      (mode == SendMode::kStandard || mode == SendMode::kReady) && tx_queue_.empty() &&
      !dead_[dest]) [[likely]] {
    transport::WireHeader w;
    w.tag = transport::PackTag(Proto::kEager, ctx, std::uint32_t(me_), std::uint32_t(tag));
    w.data = transport::PackData(send_seq_[dest], 0);
    if (shm_->SendWhole<sizeof w>(dest, &w, buf, len)) [[likely]] {
      ++send_seq_[dest];
      if (req) {
        req->status.error = 0;
        req->status.bytes = len;
        req->MarkDone();
      }
      return Status::Ok();
    }
  }
  return IsendGeneral(buf, len, dest, ctx, tag, mode, req);
}

Status Engine::IsendGeneral(const void* buf, std::size_t len, int dest, std::uint32_t ctx, int tag,
                            SendMode mode, Request* req) {
  if (dead_[dest])
    return Error(Code::kProcFailed, "send to rank " + std::to_string(dest) + " which has failed");
  // Small standard/ready sends go out with fi_inject when nothing is queued
  // ahead of them (order): the send completes here, without an op, a CQ
  // entry or a later poll.
  // Same for a same-node peer whose ring has room for the message in one
  // frame (the copy into the ring is the send).
  const bool ring = shm_->local(dest);
  const bool injectable =
      ring ? len <= eager_limit_ && len + sizeof(transport::WireHeader) <= shm_->max_frame()
           : len <= inject_max_;
  if (injectable && (mode == SendMode::kStandard || mode == SendMode::kReady) &&
      tx_queue_.empty() && TryInject(buf, len, dest, ctx, tag)) {
    if (req) {
      req->status.error = 0;
      req->status.bytes = len;
      req->MarkDone();
    }
    return Status::Ok();
  }
  Op* op = NewOp(Op::Kind::kSend);
  op->peer = dest;
  op->req = req;
  op->sbuf = buf;
  op->slen = len;
  if (mode == SendMode::kBuffered) {
    BsendBuffer* pool = BufferForContext(ctx);
    void* block = pool ? pool->Alloc(len) : nullptr;
    if (!block) {
      PutOp(op);
      return Error(Code::kBuffer, "buffered send of " + std::to_string(len) +
                                      " bytes: attached buffer too small or full (each message "
                                      "needs its size + MPI_BSEND_OVERHEAD)");
    }
    if (len) std::memcpy(block, buf, len);
    op->sbuf = block;
    op->bsend_block = block;
    op->bsend_pool = pool;
    op->req = nullptr;  // the request completes now; the copy travels alone
  }
  const bool sync = mode == SendMode::kSynchronous;
  Proto proto;
  op->local_pending = 1;
  if (len <= eager_limit_) {
    proto = sync ? Proto::kEagerSync : Proto::kEager;
    if (sync) {
      op->remote_pending = 1;
      AllocToken(op);
    }
  } else {
    proto = Proto::kRts;
    Status s;
    if (ring && shm_->cma() && !push_forced_) {
      // The receiver copies straight out of our buffer: nothing to register.
      op->hdr.addr = reinterpret_cast<std::uint64_t>(op->sbuf);
      op->hdr.push = transport::kRndvCrossMemory;
    } else if (push_rndv_) {
      op->push_buf = static_cast<const std::uint8_t*>(op->sbuf);
      op->push_len = len;
      op->hdr.push = transport::kRndvPush;
    } else {
      s = fab_->RegisterForRead(op->sbuf, len, &op->mr, &op->hdr.addr, &op->hdr.key);
    }
    if (!s.ok()) {
      if (op->bsend_block) op->bsend_pool->Free(op->bsend_block);
      PutOp(op);
      return s.WithContext("rendezvous send to rank " + std::to_string(dest));
    }
    op->hdr.len = len;
    op->sbuf = &op->hdr;
    op->slen = sizeof op->hdr;
    op->remote_pending = 1;
    AllocToken(op);
  }
  op->proto = proto;
  op->wire.tag = transport::PackTag(proto, ctx, std::uint32_t(me_), std::uint32_t(tag));
  op->wire.data = transport::PackData(send_seq_[dest]++, op->token);
  ++sends_in_flight_;
  if (req) req->engine = op;
  SubmitTx(op);
  if (mode == SendMode::kBuffered && req) {
    req->status.bytes = len;
    req->MarkDone();
  }
  return Status::Ok();
}

bool Engine::TryInject(const void* buf, std::size_t len, int dest, std::uint32_t ctx, int tag) {
  transport::WireHeader w;
  w.tag = transport::PackTag(Proto::kEager, ctx, std::uint32_t(me_), std::uint32_t(tag));
  w.data = transport::PackData(send_seq_[dest], 0);
  if (shm_->local(dest)) {
    // Isend let only messages of one frame come here: all or nothing.
    if (!shm_->SendWhole<sizeof w>(dest, &w, buf, len)) return false;
    ++send_seq_[dest];
    return true;
  }
  alignas(8) std::uint8_t msg[sizeof w + kInjectMax];
  std::memcpy(msg, &w, sizeof w);
  if (len) std::memcpy(msg + sizeof w, buf, len);
  if (fi_inject(fab_->ep(), msg, sizeof w + len, fab_->peer(dest).addr) != 0)
    return false;  // full (or failing): the queued path retries or reports it
  ++send_seq_[dest];
  return true;
}

Status Engine::Irecv(void* buf, std::size_t len, int src, std::uint32_t ctx, int tag,
                     const Comm* comm, Request* req) {
  req->buf = buf;  // delivery reads the destination from the request
  req->bytes = len;
  if (src >= 0 && dead_[src]) {
    req->status.error = int(Code::kProcFailed);
    req->engine = nullptr;
    req->MarkDone();
    return Status::Ok();
  }
  const transport::MatchSpec match = transport::MakeMatch(ctx, src, tag);
  Unexpected* u = unexpected_.front();
  while (u && !transport::Matches(match, u->tag)) u = u->next;
  if (u && transport::TagProto(u->tag) != Proto::kRts) {
    // An eager message that came first (the common case of a receive
    // posted late): copied out and completed here, with no op.
    unexpected_.erase(u);
    CompleteEagerNow(req, comm, u);
    PutUnexpected(u);
    return Status::Ok();
  }
  Op* op = NewOp(Op::Kind::kRecv);
  op->req = req;
  op->comm = const_cast<Comm*>(comm);
  op->match = match;
  op->peer = src;
  req->engine = op;
  if (u) {  // a rendezvous header: the read needs the op
    unexpected_.erase(u);
    Deliver(op, u->tag, u->data, reinterpret_cast<const std::uint8_t*>(&u->hdr), sizeof u->hdr);
    PutUnexpected(u);
    return Status::Ok();
  }
  op->in_posted = true;
  posted_.push_back(op);
  return Status::Ok();
}

void Engine::CompleteEagerNow(Request* req, const Comm* comm, const Unexpected* u) {
  const int peer = transport::TagSrc(u->tag);
  const std::size_t n = std::min(u->len, req->bytes);
  if (n) std::memcpy(req->buf, u->payload.data(), n);
  if (transport::TagProto(u->tag) == Proto::kEagerSync)
    SendCtrl(Proto::kAck, peer, transport::DataToken(u->data));
  req->status.source = comm ? comm->PeerOfWorld(peer) : peer;
  req->status.tag = transport::TagUser(u->tag);
  req->status.bytes = n;
  req->status.cancelled = false;
  req->status.error = int(u->len > n ? Code::kTruncate : Code::kOk);
  req->engine = nullptr;
  req->MarkDone();
}

bool Engine::Iprobe(int src, std::uint32_t ctx, int tag, const Comm* comm, RequestStatus* st) {
  const transport::MatchSpec m = transport::MakeMatch(ctx, src, tag);
  for (Unexpected* u = unexpected_.front(); u; u = u->next) {
    if (!transport::Matches(m, u->tag)) continue;
    int w = transport::TagSrc(u->tag);
    st->source = comm ? comm->PeerOfWorld(w) : w;
    st->tag = transport::TagUser(u->tag);
    st->bytes = transport::TagProto(u->tag) == Proto::kRts ? u->hdr.len : u->len;
    st->error = 0;
    st->cancelled = false;
    return true;
  }
  return false;
}

// A message is in order: hand it to the first posted receive it matches, or
// keep it as unexpected.
void Engine::Dispatch(std::uint64_t tag, std::uint64_t data, const std::uint8_t* payload,
                      std::size_t len) {
  for (Op* op = posted_.front(); op; op = op->next) {
    if (!transport::Matches(op->match, tag)) continue;
    posted_.erase(op);
    op->in_posted = false;
    Deliver(op, tag, data, payload, len);
    return;
  }
  unexpected_.push_back(Stash(tag, data, payload, len));
}

Unexpected* Engine::GetUnexpected(std::size_t len) {
  if (len <= kSmallPayload) {
    Unexpected* u = unexp_small_.Get();
    if (u->payload.capacity() < kSmallPayload) u->payload.reserve(kSmallPayload);
    return u;
  }
  Unexpected* u = unexp_large_.Get();
  const std::size_t cap = std::max(len, eager_limit_);
  if (u->payload.capacity() < cap) u->payload.reserve(cap);
  return u;
}

void Engine::PutUnexpected(Unexpected* u) {
  if (u->payload.capacity() > kSmallPayload)
    unexp_large_.Put(u);
  else
    unexp_small_.Put(u);
}

Unexpected* Engine::Stash(std::uint64_t tag, std::uint64_t data, const std::uint8_t* payload,
                          std::size_t len) {
  const bool rts = transport::TagProto(tag) == Proto::kRts;
  Unexpected* u = GetUnexpected(rts ? 0 : len);
  u->prev = u->next = nullptr;
  u->tag = tag;
  u->data = data;
  if (transport::TagProto(tag) == Proto::kRts) {
    std::memcpy(&u->hdr, payload, sizeof u->hdr);
    u->len = 0;
  } else {
    u->payload.resize(len);  // keeps capacity from earlier use
    if (len) std::memcpy(u->payload.data(), payload, len);
    u->len = len;
  }
  return u;
}

void Engine::Deliver(Op* op, std::uint64_t tag, std::uint64_t data, const std::uint8_t* payload,
                     std::size_t len) {
  op->msg_tag = transport::TagUser(tag);
  op->peer = transport::TagSrc(tag);
  const Proto proto = transport::TagProto(tag);
  if (proto == Proto::kRts) {
    transport::RndvHeader hdr;
    std::memcpy(&hdr, payload, sizeof hdr);
    StartRead(op, hdr, transport::DataToken(data));
    return;
  }
  const std::size_t cap = op->req->bytes;
  const std::size_t n = std::min(len, cap);
  if (n) std::memcpy(op->req->buf, payload, n);
  if (proto == Proto::kEagerSync) SendCtrl(Proto::kAck, op->peer, transport::DataToken(data));
  CompleteRecv(op, n, len);
}

void Engine::CompleteRecv(Op* op, std::size_t delivered, std::size_t full_len) {
  Request* req = op->req;
  if (req) {
    req->status.source = op->comm ? op->comm->PeerOfWorld(op->peer) : op->peer;
    req->status.tag = op->msg_tag;
    req->status.bytes = delivered;
    req->status.cancelled = false;
    req->status.error = int(full_len > delivered ? Code::kTruncate : Code::kOk);
    req->engine = nullptr;
  }
  if (op->token) FreeToken(op);  // an eager receive has none
  PutOp(op);
  if (req) req->MarkDone();
}

void Engine::FailRequest(Op* op, Code code) {
  Request* req = op->req;
  if (!req) return;
  op->req = nullptr;
  req->status.error = int(code);
  req->engine = nullptr;
  req->MarkDone();
}

}  // namespace nicq::p2p
