// The match exchange of persistent send/recv (offer/reply over rt::
// point-to-point, see matched_p2p.h), the shadow communicators that carry
// it, and the RequestOps that let matched requests be used with
// MPI_Start/MPI_Wait outside any queue.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "queue/match_engine.h"
#include "queue/matched_p2p.h"
#include "queue/queue.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::queue {
namespace {

constexpr std::uint64_t kOfferMagic = 0x6e69637130666672ull;  // "nicq0ffr"
constexpr std::uint64_t kReplyMagic = 0x6e69637172706c79ull;  // "nicqrply"
// comm.h: context_id+2 is the internal context, unused by the runtime.
constexpr std::uint32_t kMatchReplyContextOffset = 2;

struct Shadows {
  std::mutex mu;
  std::map<Comm*, std::unique_ptr<Comm>> map;        // offers
  std::map<Comm*, std::unique_ptr<Comm>> reply_map;  // replies
};
Shadows& ShadowTable() {
  static auto* s = new Shadows();
  return *s;
}

struct Live {
  std::mutex mu;
  std::vector<MatchedP2p*> list;
};
Live& LiveTable() {
  static auto* l = new Live();
  return *l;
}

}  // namespace

void TrackMatched(MatchedP2p* m, bool add) {
  Live& l = LiveTable();
  std::lock_guard<std::mutex> lock(l.mu);
  if (add) {
    l.list.push_back(m);
  } else {
    for (auto& p : l.list)
      if (p == m) {
        p = l.list.back();
        l.list.pop_back();
        break;
      }
  }
}

// sockets stops scanning a counter's trigger list at a fire that got
// EAGAIN until the counter changes again; adding 0 to every counter a
// matched request triggers on makes it rescan (stall path only).
void NudgeMatched() {
  Live& l = LiveTable();
  std::unique_lock<std::mutex> lock(l.mu, std::try_to_lock);
  if (!lock.owns_lock()) return;
  for (MatchedP2p* m : l.list) m->Nudge();
}

// Match traffic never meets user receives (MPI_ANY_TAG included): offers go
// on the communicator's runtime context (+3, whose other traffic only happens
// during communicator creation) and replies on its internal context (+2).
// Offers and replies must differ in context: a rank whose send and receive
// requests both match with one peer and tag has a reply receive and an offer
// receive posted side by side, and the peer's offer would otherwise land in
// whichever was posted first (MPI_Matchall({send, recv}) failed that way).
Comm* MatchComm(Comm* comm, bool reply) {
  Shadows& s = ShadowTable();
  std::lock_guard<std::mutex> lock(s.mu);
  auto& slot = (reply ? s.reply_map : s.map)[comm];
  const std::uint32_t ctx =
      comm->context_id + (reply ? kMatchReplyContextOffset : rt::kRuntimeContextOffset);
  if (!slot || slot->context_id != ctx || slot->world_ranks != comm->world_ranks) {
    slot = std::make_unique<Comm>(*comm);
    slot->context_id = ctx;
    slot->api_data = nullptr;
  }
  return slot.get();
}

Status MatchedP2p::BeginMatch() {
  if (state_ != State::kIdle) return Error(Code::kMatch, "request is already matched or matching");
  NICQ_RETURN_IF_ERROR(AllocCounters());
  TrackMatched(this, true);
  if (a_.peer == -1) {  // MPI_PROC_NULL matches trivially
    ResolveWire();
    state_ = State::kMatched;
    return Status::Ok();
  }
  match_comm_ = MatchComm(a_.comm, false);
  reply_comm_ = MatchComm(a_.comm, true);
  if (a_.is_send) {
    peer_world_ = a_.comm->WorldRank(a_.peer);
    offer_.magic = kOfferMagic;
    offer_.bytes = a_.bytes;
    offer_.gate = gate_;
    offer_.done = done_;
    offer_.mode = std::uint32_t(a_.mode);
    // Without native triggers nothing is gained by the put protocol's
    // rendezvous, and it costs two extra hops per epoch; a synchronous send
    // keeps it (its completion must show that the receive started).
    eager_ = !rt::Backend()->Caps().native_triggers && a_.mode != SendMode::kSynchronous;
    offer_.eager = eager_ ? 1 : 0;
    // The reply tagged with our done counter id where it fits a tag (see
    // matched_p2p.h, "Host-engine epochs"), so it can never match an
    // epoch's receive on the same context.
    const bool by_id = done_ <= offload::CounterId(rt::TagUpperBound());
    offer_.flags = by_id ? kOfferReplyById : 0;
    if (by_id && HostEngineFits(peer_world_)) offer_.flags |= kOfferHostEngine;
    // The reply receive first, so it is posted before the reply can arrive.
    NICQ_RETURN_IF_ERROR(rt::Irecv(&reply_, sizeof reply_, a_.peer, by_id ? int(done_) : a_.tag,
                                   reply_comm_, &recv_req_));
    Status st = rt::Isend(&offer_, sizeof offer_, a_.peer, a_.tag, match_comm_, SendMode::kStandard,
                          &send_req_);
    if (!st.ok()) {
      // No offer went out, so no reply can come: withdraw the reply receive
      // before the caller deletes this object (the engine holds recv_req_).
      (void)rt::Cancel(&recv_req_);
      rt::Backoff b;
      while (!recv_req_.IsDone() && rt::ProgressWait(b).ok()) {
      }
      return st;
    }
    state_ = State::kOffered;
  } else {
    if (a_.bytes > 0) {
      NICQ_RETURN_IF_ERROR(rt::Backend()->RegisterMemory(a_.buf, a_.bytes, done_, &region_));
      registered_ = true;
    }
    NICQ_RETURN_IF_ERROR(
        rt::Irecv(&offer_, sizeof offer_, a_.peer, a_.tag, match_comm_, &recv_req_));
    state_ = State::kAwaitOffer;
  }
  return Status::Ok();
}

Status MatchedP2p::PollMatch(bool* done) {
  *done = false;
  switch (state_) {
    case State::kMatched:
      *done = true;
      return Status::Ok();
    case State::kFailed:
      return failure_;
    case State::kIdle:
      return Error(Code::kIntern, "PollMatch before BeginMatch");
    default:
      break;
  }
  Status st = a_.is_send ? PollSender(done) : PollReceiver(done);
  if (!st.ok()) {
    state_ = State::kFailed;
    failure_ = st;
  }
  return st;
}

Status MatchedP2p::PollSender(bool* done) {
  if (!send_req_.IsDone() || !recv_req_.IsDone()) return Status::Ok();
  if (send_req_.status.error || recv_req_.status.error)
    return Error(Code(send_req_.status.error ? send_req_.status.error : recv_req_.status.error),
                 "match exchange with rank " + std::to_string(a_.peer) + " failed");
  if (reply_.magic != kReplyMagic)
    return Error(Code::kIntern,
                 "match exchange: malformed reply from rank " + std::to_string(a_.peer));
  if (reply_.error != 0)
    return Error(Code(reply_.error), "the matching receive at rank " + std::to_string(a_.peer) +
                                         " (capacity " + std::to_string(reply_.capacity) +
                                         " bytes) refused the " + std::to_string(a_.bytes) +
                                         "-byte send (tag " + std::to_string(a_.tag) + ")");
  remote_addr_ = reply_.remote_addr;
  remote_key_ = reply_.key;
  peer_arrival_ = reply_.arrival;
  if ((offer_.flags & kOfferHostEngine) && reply_.host_engine == 1) {
    epoch_peer_ = a_.peer;
    epoch_tag_ = int(peer_arrival_);  // the receiver's done counter id
    SetHostEngine();
  }
  ResolveWire();
  state_ = State::kMatched;
  *done = true;
  return Status::Ok();
}

Status MatchedP2p::PollReceiver(bool* done) {
  if (state_ == State::kAwaitOffer) {
    if (!recv_req_.IsDone()) return Status::Ok();
    if (recv_req_.status.error)
      return Error(Code(recv_req_.status.error), "match exchange: receiving the offer failed");
    if (offer_.magic != kOfferMagic) return Error(Code::kIntern, "match exchange: malformed offer");
    source_ = recv_req_.status.source;
    tag_ = recv_req_.status.tag;
    peer_world_ = a_.comm->WorldRank(source_);
    matched_bytes_ = offer_.bytes;
    peer_gate_ = offer_.gate;
    peer_done_ = offer_.done;
    eager_ = offer_.eager != 0;
    reply_ = MatchReply{};
    reply_.magic = kReplyMagic;
    reply_.capacity = a_.bytes;
    reply_.arrival = done_;
    reply_.remote_addr = region_.remote_addr;
    reply_.key = region_.key;
    if (offer_.bytes > a_.bytes) reply_.error = std::uint64_t(Code::kTruncate);
    if ((offer_.flags & kOfferHostEngine) && reply_.error == 0 && HostEngineFits(peer_world_) &&
        done_ <= offload::CounterId(rt::TagUpperBound())) {
      reply_.host_engine = 1;
      epoch_peer_ = source_;
      epoch_tag_ = int(done_);
      SetHostEngine();
      // Epochs run on the p2p engine: nothing will write into the region,
      // and a registered region keeps the backend polling its CQ.
      if (registered_) {
        NICQ_RETURN_IF_ERROR(rt::Backend()->DeregisterMemory(&region_));
        registered_ = false;
      }
    }
    const int reply_tag = (offer_.flags & kOfferReplyById) ? int(offer_.done) : tag_;
    NICQ_RETURN_IF_ERROR(rt::Isend(&reply_, sizeof reply_, source_, reply_tag, reply_comm_,
                                   SendMode::kStandard, &send_req_));
    state_ = State::kReplying;
  }
  if (!send_req_.IsDone()) return Status::Ok();
  if (send_req_.status.error)
    return Error(Code(send_req_.status.error), "match exchange: sending the reply failed");
  if (reply_.error != 0)
    return Error(Code::kTruncate,
                 "the matched send from rank " + std::to_string(source_) + " (tag " +
                     std::to_string(tag_) + ") has " + std::to_string(matched_bytes_) +
                     " bytes, more than the receive buffer's " + std::to_string(a_.bytes));
  ResolveWire();
  state_ = State::kMatched;
  *done = true;
  return Status::Ok();
}

// ---- MPI_Start / MPI_Wait on matched requests outside queues ----------------

namespace {

Status OpsStart(Request* req) {
  auto* m = static_cast<MatchedP2p*>(req->engine);
  if (m->qslot.queue != nullptr)
    return Error(Code::kQueue, "the request has an enqueued start pending");
  req->done.store(false, std::memory_order_relaxed);
  Status st = m->StartGated(offload::kNoCounter, 0);
  rt::Backoff b;
  while (!st.ok() && st.code() == Code::kAgain) {  // backend slots full: let ops drain
    rt::Backend()->Progress();
    NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
    st = m->StartGated(offload::kNoCounter, 0);
  }
  NICQ_RETURN_IF_ERROR(st);
  req->active = true;
  WatchHostStarted(req, m);
  return Status::Ok();
}

Status OpsFree(Request* req) {
  auto* m = static_cast<MatchedP2p*>(req->engine);
  if (m->qslot.queue != nullptr)
    return Error(Code::kQueue, "the request has an enqueued start pending");
  // Its match exchange still has receives posted in the p2p engine and the
  // match list still polls it: freeing it now would leave both with a
  // deleted object (and its peer without an answer).
  if (const char* call = MatchInProgress(m))
    return Error(Code::kRequest, "request " + std::to_string(m->qslot.owner_handle) +
                                     " cannot be freed: matching in progress (" + call +
                                     " not complete); wait for the match request first");
  Status st = m->Release();
  delete m;
  req->engine = nullptr;
  req->ops = nullptr;
  return st;
}

Status OpsComplete(Request* req) {
  auto* m = static_cast<MatchedP2p*>(req->engine);
  m->GetStatus(&req->status);
  req->active = false;
  // The host saw the epoch done: re-arm the resident window so that the
  // next MPI_Start is one counter add (a failure shows again at that start).
  (void)m->Refill();
  return Status::Ok();
}

bool OpsEnqueued(Request* req) {
  return HasPendingEnqueuedStart(req);
}

}  // namespace

const RequestOps kMatchedP2pOps = {&OpsStart, &OpsFree, nullptr, &OpsComplete, &OpsEnqueued};

}  // namespace nicq::queue
