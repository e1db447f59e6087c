// The tagged point-to-point engine.
//
// Every message is one libfabric tagged send whose tag is the header (see
// transport/tag.h). The receiver keeps a ring of wildcard bounce receives
// posted and matches in software against its posted-receive list, in MPI
// order: per-source sequence numbers restore send order, the posted list and
// the unexpected list are FIFOs, and the first match wins. Eager payloads are
// copied out of the bounce buffer; larger messages are fetched with an RMA
// read from the sender's registered buffer (rendezvous), after which the
// receiver sends kFin. Synchronous eager sends are answered with kAck when
// they match.
//
// The engine is not thread-safe; the runtime serializes calls (a lock under
// MPI_THREAD_MULTIPLE only).
#pragma once

#include <rdma/fi_eq.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "p2p/bsend_buffer.h"
#include "p2p/op.h"
#include "runtime/comm.h"
#include "runtime/request.h"
#include "transport/fabric.h"
#include "transport/intrusive_list.h"
#include "transport/post_queue.h"

namespace nicq::p2p {

// Whether a provider error code means the peer is gone (a dead or
// unreachable process), not a fault of this one (engine_completion.cc).
bool IsPeerLossError(int err);

class Engine {
 public:
  Status Init(transport::Fabric* fabric, int my_world);
  // Cancels the bounce receives and drops all engine state.
  void Shutdown();

  // Ranks are world ranks here; src_world < 0 is any source, tag < 0 any tag.
  // `comm` (may be null) only translates status.source into a comm rank.
  Status Isend(const void* buf, std::size_t len, int dest_world, std::uint32_t ctx, int tag,
               SendMode mode, Request* req);
  Status Irecv(void* buf, std::size_t len, int src_world, std::uint32_t ctx, int tag,
               const Comm* comm, Request* req);
  bool Iprobe(int src_world, std::uint32_t ctx, int tag, const Comm* comm, RequestStatus* st);
  // A receive still on the posted list is withdrawn at once. A send that
  // waits for its receiver (synchronous eager, rendezvous) asks the receiver
  // with kCancel to drop the message if it is still unmatched; the answer
  // completes the send cancelled or lets it finish normally.
  Status Cancel(Request* req);

  // Matched probe: takes the first matching message off the unexpected list
  // (no later receive or probe sees it) and returns it, or nullptr.
  Unexpected* Improbe(int src_world, std::uint32_t ctx, int tag, const Comm* comm,
                      RequestStatus* st);
  // Receives a message taken by Improbe into `buf` (like Irecv after a match).
  Status Mrecv(Unexpected* msg, void* buf, std::size_t len, const Comm* comm, Request* req);

  BsendBuffer& bsend() { return bsend_; }
  // The buffer of a communicator (key: context id) or session (key: index
  // | kSessionKey); created detached on first use when `create`.
  static constexpr std::uint64_t kSessionKey = std::uint64_t{1} << 32;
  BsendBuffer* OwnedBuffer(std::uint64_t key, bool create);
  // The session a communicator's context derives from (-1: none), whose
  // buffer its buffered sends use when the communicator has none.
  void SetContextSession(std::uint32_t ctx, int session);

  // One non-blocking pass: retry queued posts, read the completion queue.
  // Returns how many events were handled.
  int Poll();
  // Large same-node receives whose first part the sender wrote, and those
  // whose offer the receiver took back (tests and tools read these).
  std::uint64_t split_by_sender() const { return split_by_sender_; }
  std::uint64_t split_kept() const { return split_kept_; }
  // Like Poll but sleeps up to timeout_ms in fi_cq_sread when nothing is
  // ready; with the shm transport, in short futex waits on our inbox.
  int BlockingPoll(int timeout_ms);
  // Whether BlockingPoll can sleep until something arrives (a CQ wait
  // object, or the shm transport's futex) rather than only poll.
  bool can_block() const;

  // Dead-peer handling: fails every operation that depends on `world`.
  void FailPeer(int world, const char* why);
  // Whether a peer this process can see by pid (PeerInfo::pid_visible) has
  // exited (no such process, or a zombie).
  bool LocalPeerGone(int world_rank) const;
  // Cross-memory copy of a matched kRts into op's buffer, split with the
  // sender when the message is large; 0 or an errno.
  int CrossMemoryCopy(Op* op, std::uint64_t addr, std::uint32_t token);
  // kill(pid, 0) for every peer visible by pid; returns true if one died.
  bool CheckLocalPeers();
  // The failed world ranks for an error message ("world rank 3", "world
  // ranks 1, 3"); empty when none failed.
  std::string DeadPeers() const;
  // One line of queue depths for "why is this wait stuck" logs.
  std::string DescribeState() const;
  bool any_dead() const { return any_dead_; }
  bool peer_dead(int world) const { return dead_[world]; }
  std::size_t eager_limit() const { return eager_limit_; }
  // Sends (incl. detached bsends) whose provider work is not finished.
  std::size_t sends_in_flight() const { return sends_in_flight_; }

 private:
  Op* NewOp(Op::Kind kind);
  void PutOp(Op* op);
  std::uint32_t AllocToken(Op* op);
  void FreeToken(Op* op);

  // posting
  Status TryPost(Op* op);
  void OnPostError(Op* op, const Status& s);
  void SubmitTx(Op* op);
  void SubmitRx(Op* op);
  void SendCtrl(transport::Proto proto, int peer, std::uint32_t token, std::uint32_t word = 0);
  void OnCancelAsked(int src, std::uint64_t data);
  void OnCancelReply(std::uint64_t data);

  // completions
  int HandleEntries(const fi_cq_tagged_entry* e, int n);
  void HandleCqError();
  void OnSendDone(Op* op);
  void MaybeFinishSend(Op* op);
  void OnReadDone(Op* op);
  void OnArrival(const std::uint8_t* buf, std::size_t len, std::uint64_t tag, std::uint64_t data);
  void Dispatch(std::uint64_t tag, std::uint64_t data, const std::uint8_t* payload,
                std::size_t len);
  // Dispatches the messages from `src` held back for a gap that is now filled.
  void DispatchHeldBack(int src);
  void Deliver(Op* op, std::uint64_t tag, std::uint64_t data, const std::uint8_t* payload,
               std::size_t len);
  void StartRead(Op* op, const transport::RndvHeader& hdr, std::uint32_t token);
  void StartPush(Op* op, std::uint32_t receiver_token);
  void OnChunk(const std::uint8_t* buf, std::size_t len, std::uint64_t tag, std::uint64_t data);
  std::size_t chunk_size() const;
  void CompleteRecv(Op* op, std::size_t delivered, std::size_t full_len);
  // A receive matched by an eager (or synchronous eager) message already
  // here: copy, acknowledge, status, done.
  void CompleteEagerNow(Request* req, const Comm* comm, const Unexpected* u);
  void FailRequest(Op* op, Code code);
  Unexpected* Stash(std::uint64_t tag, std::uint64_t data, const std::uint8_t* payload,
                    std::size_t len);

  bool TryInject(const void* buf, std::size_t len, int dest, std::uint32_t ctx, int tag);
  // Isend past its same-node one-frame case: injects, ops, rendezvous.
  [[gnu::noinline]] Status IsendGeneral(const void* buf, std::size_t len, int dest,
                                        std::uint32_t ctx, int tag, SendMode mode, Request* req);

  // shm transport (same-node peers): sends and control messages go into the
  // peer's ring instead of the endpoint. A post that got into the ring
  // completes at the next Poll (FinishRingPosts; returns how many).
  Status RingPost(Op* op);
  int FinishRingPosts();
  int DrainRings();
  transport::ShmTransport* shm_ = nullptr;
  bool shm_only_ = false;      // every peer is on the shm transport
  bool push_forced_ = false;   // NICQ_RNDV=push: push even where a read would work
  std::size_t split_min_ = 0;  // NICQ_SHM_SPLIT_MIN: cross-memory copies split from here (0: never)
  std::uint64_t split_by_sender_ = 0;
  std::uint64_t split_kept_ = 0;
  unsigned quiet_cq_polls_ = 0;   // shm_only_: the CQ is read on every 16th poll only
  unsigned idle_sleeps_ = 0;      // BlockingPoll sleeps in a row that found nothing
  Op* ring_done_head_ = nullptr;  // posted into a ring, completion not yet run (via Op::next)
  Op* ring_done_tail_ = nullptr;

  transport::Fabric* fab_ = nullptr;
  int me_ = 0;
  // Payload bytes (after the wire header) a send may inject; 0: never.
  static constexpr std::size_t kInjectMax = 256;
  std::size_t inject_max_ = 0;
  std::size_t eager_limit_ = 16384;
  std::size_t read_chunk_ = 8u << 20;
  bool push_rndv_ = false;  // large messages pushed in chunks instead of RMA-read

  Pool<Op> ops_;
  // Unexpected entries in two size classes so that a reused entry never
  // has to grow its buffer: small ones hold <= kSmallPayload bytes, large
  // ones get a full bounce's worth once.
  static constexpr std::size_t kSmallPayload = 256;
  static constexpr int kWarmUnexpected = 64;
  Pool<Unexpected> unexp_small_, unexp_large_;
  Unexpected* GetUnexpected(std::size_t len);
  void PutUnexpected(Unexpected* u);
  std::vector<Op*> bounces_;
  // Bounces consumed and not posted again yet: reposting is taken off the
  // path from an arrival to its receive's completion and done by the next
  // poll that finds nothing (a waiter's idle time) or once kRepostBatch
  // are waiting (reserved at init: never allocates).
  static constexpr std::size_t kRepostBatch = 16;
  std::vector<Op*> repost_;
  void RepostBounces();
  std::vector<std::unique_ptr<std::uint8_t[]>> bounce_mem_;
  transport::PostQueue<Op, &Op::next_post> tx_queue_;
  transport::PostQueue<Op, &Op::next_post> rx_queue_;
  transport::IntrusiveList<Op> posted_;
  transport::IntrusiveList<Unexpected> unexpected_;

  std::vector<Op*> tokens_;  // token -> op awaiting a peer's kAck/kFin (0 unused)
  std::vector<std::uint32_t> free_tokens_;
  std::vector<std::uint32_t> send_seq_;                             // per destination
  std::vector<std::uint32_t> recv_seq_;                             // next expected, per source
  std::vector<std::map<std::uint32_t, Unexpected*>> out_of_order_;  // rare: provider reordered

  std::vector<bool> dead_;
  bool any_dead_ = false;
  std::size_t sends_in_flight_ = 0;
  BsendBuffer bsend_;
  // Buffers attached to communicators and sessions; entries never move (a
  // send in flight points at its buffer) and are kept once created.
  std::vector<std::pair<std::uint64_t, std::unique_ptr<BsendBuffer>>> owned_bsend_;
  std::vector<std::pair<std::uint32_t, int>> ctx_session_;  // context id -> session index
  // MPI-4.1: the communicator's buffer, else its session's, else the process's.
  BsendBuffer* BufferForContext(std::uint32_t ctx);
};

}  // namespace nicq::p2p
