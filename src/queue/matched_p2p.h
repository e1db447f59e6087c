// MatchedP2p: a persistent send or receive after MPI_Match, run as
// triggered ops on the offload backend (DESIGN.md, last paragraph of "the
// life of a persistent allreduce").
//
// Match exchange (rt:: point-to-point on the communicator's runtime context,
// comm.h "+3", with the user's tag, so MPI's matching and ordering rules
// decide which send pairs with which receive, ANY_SOURCE/ANY_TAG included):
//   sender   -> receiver  offer  {bytes, mode, sender's gate counter}
//   receiver -> sender    reply  {receive buffer address + key, arrival
//                                 counter, receive capacity, error}
// After it, per epoch n:
//   receiver start: remote counter add +1 on the sender's gate ("ready")
//   sender start:   local counter add +1 on its gate
//   sender:         put(send buf -> receive buf) at gate >= 2n; the landing
//                   bumps the receiver's arrival counter (its done counter)
//   receiver:       at arrival >= n, a remote counter add +1 on the sender's
//                   done counter (the acknowledgement).
// The sender completes on the acknowledgement rather than on its put's local
// completion: sockets' chained completion counters (deferred work on the
// slot counter) were seen not to fire for one of two back-to-back puts to a
// peer, while target-side triggers on remote counters are reliable; and an
// acknowledged send also satisfies the synchronous mode by construction.
// The receive buffer is never written before its receive started (the put
// needs the ready token), synchronous sends complete only after the receiver
// started (same reason), and ready sends keep their meaning trivially.
// Zero-byte messages replace the put by a remote counter add.
//
// MPI_PROC_NULL peers match at once; their epochs complete when started.
//
// Host-engine epochs (same-node peers of a process whose queues are
// host-sequenced, queue.h): no NIC and no thread fires the ops there, so an
// epoch is simply the point-to-point engine's send or receive, as
// MPI_Start of an unmatched persistent request would post it, over nicq's
// shared-memory transport (its futex wakes a sleeping waiter; its split
// copy moves large messages), instead of a tagged op on the offload
// backend's libfabric endpoint. The sender proposes it in the offer, the
// receiver accepts in the reply (both must be host-sequenced and see each
// other on the shm transport). The messages travel on the reply shadow
// (context + 2) tagged with the receiver's done counter id, and replies
// there are tagged with the sender's done counter id: on one process those
// ids are distinct counters, so no reply can match an epoch's receive nor
// the other way round, whatever user tags the pairs carry.
//
// Resident epochs (backends that withdraw unfired ops, NICQ_RESIDENT_PLANS=1,
// the same rule as offload/trigger_plan.h): the ops of epochs n..n+W-1 are
// posted ahead of their starts, so a start is one counter add on the
// request's start target (the sender's gate on the put protocol, else a
// per-request start counter on which the ready tokens, resp. the eager
// send/recv, hang at threshold n), or, when a queue's gate is not reached
// yet, the one counter op that links the queue's counter to it. The window
// is refilled where the host sees epochs retire (EpochRetired, MPI_Wait/
// Test); freeing the request frees its counters, which withdraws the
// unfired epochs. Elsewhere (cxi) every start posts its epoch as before.
#pragma once

#include <atomic>
#include <cstdint>

#include "offload/algorithms/persistent_p2p.h"
#include "queue/enqueueable.h"
#include "runtime/comm.h"
#include "runtime/request.h"

namespace nicq::queue {

// Wire frames of the match exchange (fixed size, little-endian host words).
struct MatchOffer {
  std::uint64_t magic = 0;
  std::uint64_t bytes = 0;
  std::uint32_t gate = 0;
  std::uint32_t mode = 0;
  std::uint32_t done = 0;   // sender's done counter: the receiver acknowledges into it
  std::uint32_t eager = 0;  // 1: epochs are tagged send/recv (BuildEagerEpochOps)
  std::uint32_t flags = 0;  // kOffer* below
  std::uint32_t pad = 0;
};
// The reply is tagged with the offer's `done` (else with the user's tag).
inline constexpr std::uint32_t kOfferReplyById = 1;
// The sender proposes host-engine epochs (reply.host_engine accepts).
inline constexpr std::uint32_t kOfferHostEngine = 2;
struct MatchReply {
  std::uint64_t magic = 0;
  std::uint64_t error = 0;  // nicq::Code; nonzero: the match failed on both sides
  std::uint64_t remote_addr = 0;
  std::uint64_t key = 0;
  std::uint64_t capacity = 0;
  std::uint32_t arrival = 0;
  std::uint32_t host_engine = 0;  // 1: host-engine epochs accepted
};

struct P2pArgs {
  bool is_send = false;
  SendMode mode = SendMode::kStandard;
  Comm* comm = nullptr;
  void* buf = nullptr;
  std::size_t bytes = 0;
  int peer = -1;  // comm rank, MPI_ANY_SOURCE (-2) or MPI_PROC_NULL (-1)
  int tag = 0;
};

class MatchedP2p final : public Enqueueable {
 public:
  explicit MatchedP2p(const P2pArgs& a) : a_(a) {}
  ~MatchedP2p() override;

  Status BeginMatch() override;
  Status PollMatch(bool* done) override;
  bool IsMatched() const override { return state_ == State::kMatched; }

  Status StartGated(offload::CounterId gate, std::uint64_t threshold) override;
  Status BuildStart(offload::CounterId gate, std::uint64_t threshold, offload::TriggeredOp* ops,
                    std::size_t* count, offload::CounterId* host_add) override;
  Status CommitStart(offload::CounterId host_add) override;
  void EpochRetired() override {
    if (resident_) (void)Refill();
  }
  // Arms resident epochs up to the window (not the hot path; errors show
  // again at the start that needs the epoch).
  Status Refill();
  std::uint64_t epochs_armed() const { return armed_upto_; }
  offload::CounterId DoneCounter() const override { return done_; }
  std::uint64_t DoneTarget() const override { return epochs_; }
  std::uint64_t EpochsStarted() const override { return epochs_; }
  bool EpochDone(bool* failed) const override;
  bool host_engine() const { return host_engine_; }
  // Host-engine epochs as a host-sequenced queue's pass runs them
  // (qslot.host_engine; no ops to build, no virtual call): the next epoch's
  // send or receive goes to the point-to-point engine, kAgain while the
  // previous epoch still runs. An engine error ends the epoch at once, in
  // error, for its wait to report (and is returned).
  Status StartHostEpoch() {
    if (!epoch_req_.IsDone()) [[unlikely]]
      return Status(Code::kAgain, {});
    ++epochs_;
    return StartOnEngine();
  }
  // Whether the current epoch of a host-engine request still runs.
  bool HostEpochRuns() const { return !epoch_req_.IsDone(); }
  // The flag HostEpochRuns reads (false while it runs), for a loop that
  // watches one epoch.
  const std::atomic<bool>& HostEpochDoneFlag() const { return epoch_req_.done; }
  // The same, as the retiring pass reads it (no flag through memory).
  EpochState HostEpochState() const {
    if (!epoch_req_.IsDone()) return EpochState::kRuns;
    return epoch_req_.status.error != 0 ? EpochState::kFailed : EpochState::kDone;
  }
  // EpochDone of a host-engine request.
  bool HostEpochDone(bool* failed) const {
    if (!epoch_req_.IsDone()) return false;
    *failed = epoch_req_.status.error != 0;
    return true;
  }
  void GetStatus(RequestStatus* out) const override;
  Status Release() override;

  std::string DebugString() const override;
  std::string OperationText() const override;
  bool PeerGone(int* rank) const override;
  void Nudge();
  const P2pArgs& args() const { return a_; }

 private:
  enum class State : std::uint8_t { kIdle, kOffered, kAwaitOffer, kReplying, kMatched, kFailed };
  Status AllocCounters();
  Status PollSender(bool* done);
  Status PollReceiver(bool* done);
  // The wire as the match resolved it (set once matched: starts read it).
  void ResolveWire();
  void DumpPlan() const;
  // Resident epochs: the ops of epoch k, gated on the start target only.
  std::size_t ResidentEpochOps(std::uint64_t k, offload::TriggeredOp* ops) const;
  Status ArmEpoch(std::uint64_t k);
  // The counter a start bumps once its epoch is resident.
  offload::CounterId StartTarget() const { return a_.is_send ? gate_ : start_; }

  P2pArgs a_;
  State state_ = State::kIdle;
  Status failure_;
  Comm* match_comm_ = nullptr;  // shadow of a_.comm on the runtime context (offers)
  Comm* reply_comm_ = nullptr;  // shadow of a_.comm on the internal context (replies)
  Request send_req_, recv_req_;
  MatchOffer offer_;
  MatchReply reply_;

  // Resolved by the match.
  int peer_world_ = -1;
  int source_ = -1;  // receiver: the matched sender's comm rank
  int tag_ = 0;      // receiver: the matched tag
  std::size_t matched_bytes_ = 0;
  offload::CounterId gate_ = offload::kNoCounter;   // sender: ready tokens + starts
  offload::CounterId done_ = offload::kNoCounter;   // sender: put completions; receiver: arrivals
  offload::CounterId start_ = offload::kNoCounter;  // resident receiver: its starts
  offload::CounterId peer_gate_ = offload::kNoCounter;     // receiver: the sender's gate
  offload::CounterId peer_done_ = offload::kNoCounter;     // receiver: the sender's done
  offload::CounterId peer_arrival_ = offload::kNoCounter;  // sender: receiver's arrival counter
  std::uint64_t remote_addr_ = 0, remote_key_ = 0;
  bool eager_ = false;        // the sender chose the eager protocol (offer.eager)
  bool host_engine_ = false;  // epochs run on the p2p engine (above); set once matched
  // Whether this side may propose / accept host-engine epochs with `world`.
  bool HostEngineFits(int world) const;
  // Host-engine epochs: the current epoch's send or receive, and where it
  // goes (reply_comm_, peer comm rank, tag: the receiver's done counter id).
  Request epoch_req_;
  int epoch_peer_ = -1, epoch_tag_ = 0;
  Status StartOnEngine();
  void SetHostEngine();
  offload::MemRegion region_{};
  bool registered_ = false;

  offload::P2pWire wire_;
  std::uint64_t eager_tag_ = 0;                   // eager: kEagerTag | the receiver's done counter
  offload::TriggeredOp start_ops_[kMaxStartOps];  // StartGated's descriptors

  std::uint64_t epochs_ = 0;
  bool resident_ = false;         // epochs armed ahead of the starts (decided at AllocCounters)
  std::size_t window_ = 0;        // resident epochs armed beyond the started ones
  std::uint64_t armed_upto_ = 0;  // resident: epochs 1..armed_upto_ are posted
  static constexpr int kRing = QueueSlot::kRing;
};

// Ops installed on matched point-to-point requests (Request::ops).
extern const RequestOps kMatchedP2pOps;

// Matched requests alive with host-engine epochs: their completions come
// from the p2p engine, so the queues poll it (rt::Progress) and wait in it.
// Inline: every enqueued wait of a host-sequenced queue asks.
namespace detail {
extern std::atomic<int> g_host_engine_requests;
}  // namespace detail
inline bool HostEngineEpochsInUse() {
  return detail::g_host_engine_requests.load(std::memory_order_relaxed) > 0;
}

// Registry of matched requests (for NudgeMatched).
void TrackMatched(MatchedP2p* m, bool add);
void NudgeMatched();

// The shadow communicator carrying match traffic for `comm`.
Comm* MatchComm(Comm* comm, bool reply);

}  // namespace nicq::queue
