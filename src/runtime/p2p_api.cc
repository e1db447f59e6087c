// rt:: point-to-point entry points: argument checks, comm -> world rank
// translation, then the engine.
#include <string>

#include "runtime/runtime.h"
#include "runtime/runtime_state.h"
#include "transport/tag.h"

namespace nicq::rt {

using detail::EngineLock;
using detail::S;

namespace {

void CompleteProcNull(Request* req) {
  req->status.source = kProcNull;
  req->status.tag = kAnyTag;
  req->status.bytes = 0;
  req->MarkDone();
}

// A Comm built by another layer may lack the world -> comm rank map that
// status.source needs; build it the first time the runtime sees the comm.
void EnsureRankMap(Comm* comm) {
  if (comm->rt_map_checked) return;
  comm->rt_map_checked = true;
  bool identity = comm->size == WorldSize();
  for (int r = 0; r < comm->size && identity; ++r) identity = comm->world_ranks[r] == r;
  if (identity || !comm->world_to_rank.empty()) return;
  comm->world_to_rank.assign(WorldSize(), -1);
  for (int r = 0; r < comm->size; ++r) comm->world_to_rank[comm->world_ranks[r]] = r;
}

Status CheckComm(const char* call, Comm* comm) {
  if (!S().initialized) return Error(Code::kOther, std::string(call) + ": runtime not initialized");
  if (!comm) return Error(Code::kComm, std::string(call) + ": null communicator");
  if (int(comm->world_ranks.size()) != comm->size)
    return Error(Code::kComm, std::string(call) + ": communicator has " +
                                  std::to_string(comm->world_ranks.size()) +
                                  " world ranks for size " + std::to_string(comm->size));
  EnsureRankMap(comm);
  return Status::Ok();
}

Status CheckRank(const char* call, const char* arg, int r, const Comm* comm, bool any_ok) {
  if (r >= 0 && r < comm->PeerSize()) return Status::Ok();
  if (r == kProcNull || (any_ok && r == kAnySource)) return Status::Ok();
  return Error(Code::kRank, std::string(call) + ": " + arg + " " + std::to_string(r) +
                                " is not a rank of a " +
                                (comm->inter ? "remote group" : "communicator") + " of size " +
                                std::to_string(comm->PeerSize()));
}

Status CheckTag(const char* call, int tag, bool any_ok) {
  if ((tag >= 0 && tag <= TagUpperBound()) || (any_ok && tag == kAnyTag)) return Status::Ok();
  return Error(Code::kTag, std::string(call) + ": tag " + std::to_string(tag) + " outside [0, " +
                               std::to_string(TagUpperBound()) + "]");
}

// Isend/Irecv: the checks above in one inline test for the valid case (an
// 8-byte MPI_Send ran ~150 instructions of out-of-line checks and empty
// Status returns before reaching the engine); CheckArgs builds the message.
inline bool ArgsValid(const detail::State& s, const Comm* comm, int rank, int tag, bool recv) {
  return s.initialized && comm && comm->rt_map_checked &&
         ((rank >= 0 && rank < comm->PeerSize()) || rank == kProcNull ||
          (recv && rank == kAnySource)) &&
         ((tag >= 0 && tag <= transport::kMaxUserTag) || (recv && tag == kAnyTag));
}

[[gnu::cold, gnu::noinline]] Status CheckArgs(const char* call, const char* arg, Comm* comm,
                                              int rank, int tag, bool recv) {
  NICQ_RETURN_IF_ERROR(CheckComm(call, comm));
  NICQ_RETURN_IF_ERROR(CheckRank(call, arg, rank, comm, recv));
  return CheckTag(call, tag, recv);
}

// EngineLock for the message-rate path: the runtime state is looked up once
// per call (S() is an out-of-line call; the lock and the checks asked for it
// three times per message).
class StateLock {
 public:
  explicit StateLock(detail::State& s) : s_(s), locked_(s.locking.load(std::memory_order_relaxed)) {
    if (locked_) s_.mu.lock();
  }
  ~StateLock() {
    if (locked_) s_.mu.unlock();
  }
  StateLock(const StateLock&) = delete;
  StateLock& operator=(const StateLock&) = delete;

 private:
  detail::State& s_;
  bool locked_;
};

}  // namespace

Status Isend(const void* buf, std::size_t bytes, int dest, int tag, Comm* comm, SendMode mode,
             Request* req) {
  detail::State& s = S();
  if (!ArgsValid(s, comm, dest, tag, false)) [[unlikely]]
    NICQ_RETURN_IF_ERROR(CheckArgs("Isend", "dest", comm, dest, tag, false));
  req->MakeFresh();
  if (dest == kProcNull) {
    CompleteProcNull(req);
    return Status::Ok();
  }
  StateLock lock(s);
  return s.engine.Isend(buf, bytes, comm->PeerWorld(dest), comm->context_id, tag, mode, req);
}

Status Irecv(void* buf, std::size_t bytes, int source, int tag, Comm* comm, Request* req) {
  detail::State& s = S();
  if (!ArgsValid(s, comm, source, tag, true)) [[unlikely]]
    NICQ_RETURN_IF_ERROR(CheckArgs("Irecv", "source", comm, source, tag, true));
  req->MakeFresh();
  req->buf = buf;
  req->bytes = bytes;
  if (source == kProcNull) {
    CompleteProcNull(req);
    return Status::Ok();
  }
  const int src_world = source == kAnySource ? -1 : comm->PeerWorld(source);
  StateLock lock(s);
  return s.engine.Irecv(buf, bytes, src_world, comm->context_id, tag, comm, req);
}

// Without the lock object and the reset, the engine call is the last thing
// done: a tail call, with no registers of this frame to keep.
Status IsendFresh(const void* buf, std::size_t bytes, int dest, int tag, Comm* comm, SendMode mode,
                  Request* req) {
  detail::State& s = S();
  if (!s.initialized || !comm->rt_map_checked || s.locking.load(std::memory_order_relaxed) ||
      dest == kProcNull) [[unlikely]]
    return Isend(buf, bytes, dest, tag, comm, mode, req);
  return s.engine.Isend(buf, bytes, comm->PeerWorld(dest), comm->context_id, tag, mode, req);
}

Status IrecvFresh(void* buf, std::size_t bytes, int source, int tag, Comm* comm, Request* req) {
  detail::State& s = S();
  if (!s.initialized || !comm->rt_map_checked || s.locking.load(std::memory_order_relaxed) ||
      source == kProcNull) [[unlikely]]
    return Irecv(buf, bytes, source, tag, comm, req);
  const int src_world = source == kAnySource ? -1 : comm->PeerWorld(source);
  return s.engine.Irecv(buf, bytes, src_world, comm->context_id, tag, comm, req);
}

Status Iprobe(int source, int tag, Comm* comm, bool* flag, RequestStatus* status) {
  NICQ_RETURN_IF_ERROR(CheckComm("Iprobe", comm));
  NICQ_RETURN_IF_ERROR(CheckRank("Iprobe", "source", source, comm, true));
  NICQ_RETURN_IF_ERROR(CheckTag("Iprobe", tag, true));
  if (source == kProcNull) {
    *flag = true;
    *status = RequestStatus{};
    status->source = kProcNull;
    status->tag = kAnyTag;
    return Status::Ok();
  }
  const int src_world = source == kAnySource ? -1 : comm->PeerWorld(source);
  EngineLock lock;
  S().engine.Poll();
  RequestStatus st;
  *flag = S().engine.Iprobe(src_world, comm->context_id, tag, comm, &st);
  if (*flag && status) *status = st;
  if (!*flag && src_world >= 0 && S().engine.peer_dead(src_world))
    return Error(Code::kProcFailed,
                 "Iprobe: source rank " + std::to_string(source) + " has failed");
  return Status::Ok();
}

Status Probe(int source, int tag, Comm* comm, RequestStatus* status) {
  Backoff b;
  for (;;) {
    bool flag = false;
    NICQ_RETURN_IF_ERROR(Iprobe(source, tag, comm, &flag, status));
    if (flag) return Status::Ok();
    NICQ_RETURN_IF_ERROR(ProgressWait(b).WithContext("Probe"));
  }
}

Status Cancel(Request* req) {
  if (!req) return Error(Code::kRequest, "Cancel: null request");
  EngineLock lock;
  return S().engine.Cancel(req);
}

Status Start(Request* req) {
  if (!req) return Error(Code::kRequest, "Start: null request");
  if (req->active && !req->IsDone())
    return Error(Code::kRequest, "Start: persistent request is already active");
  Status s;
  if (req->kind == ReqKind::kPersistentSend)
    s = Isend(req->buf, req->bytes, req->peer, req->tag, req->comm, req->mode, req);
  else if (req->kind == ReqKind::kPersistentRecv)
    s = Irecv(req->buf, req->bytes, req->peer, req->tag, req->comm, req);
  else
    return Error(Code::kRequest, "Start: not a persistent point-to-point request");
  if (s.ok()) req->active = true;
  return s;
}

Status StartPersistent(Request* req) {
  detail::State& s = S();
  Comm* comm = req->comm;
  const bool recv = req->kind == ReqKind::kPersistentRecv;
  const int peer = req->peer, tag = req->tag;
  if (!ArgsValid(s, comm, peer, tag, recv)) [[unlikely]] {
    NICQ_RETURN_IF_ERROR(
        CheckArgs(recv ? "Irecv" : "Isend", recv ? "source" : "dest", comm, peer, tag, recv));
  }
  if (req->active && !req->IsDone()) [[unlikely]]
    return Error(Code::kRequest, "Start: persistent request is already active");
  req->MakeFresh();
  req->active = true;
  if (peer == kProcNull) {
    CompleteProcNull(req);
    return Status::Ok();
  }
  Status st;
  {
    StateLock lock(s);
    if (recv)
      st = s.engine.Irecv(req->buf, req->bytes, peer == kAnySource ? -1 : comm->PeerWorld(peer),
                          comm->context_id, tag, comm, req);
    else
      st = s.engine.Isend(req->buf, req->bytes, comm->PeerWorld(peer), comm->context_id, tag,
                          req->mode, req);
  }
  if (!st.ok()) [[unlikely]]
    req->active = false;
  return st;
}

Status Improbe(int source, int tag, Comm* comm, bool* flag, RequestStatus* status, void** msg) {
  NICQ_RETURN_IF_ERROR(CheckComm("Improbe", comm));
  NICQ_RETURN_IF_ERROR(CheckRank("Improbe", "source", source, comm, true));
  NICQ_RETURN_IF_ERROR(CheckTag("Improbe", tag, true));
  *msg = nullptr;
  RequestStatus st;
  if (source == kProcNull) {
    *flag = true;
    st.source = kProcNull;
    st.tag = kAnyTag;
    if (status) *status = st;
    return Status::Ok();
  }
  const int src_world = source == kAnySource ? -1 : comm->WorldRank(source);
  EngineLock lock;
  S().engine.Poll();
  p2p::Unexpected* u = S().engine.Improbe(src_world, comm->context_id, tag, comm, &st);
  *flag = u != nullptr;
  *msg = u;
  if (u && status) *status = st;
  if (!u && src_world >= 0 && S().engine.peer_dead(src_world))
    return Error(Code::kProcFailed,
                 "Improbe: source rank " + std::to_string(source) + " has failed");
  return Status::Ok();
}

Status Mprobe(int source, int tag, Comm* comm, RequestStatus* status, void** msg) {
  Backoff b;
  for (;;) {
    bool flag = false;
    NICQ_RETURN_IF_ERROR(Improbe(source, tag, comm, &flag, status, msg));
    if (flag) return Status::Ok();
    NICQ_RETURN_IF_ERROR(ProgressWait(b).WithContext("Mprobe"));
  }
}

Status Mrecv(void* msg, void* buf, std::size_t bytes, Comm* comm, Request* req) {
  req->MakeFresh();
  req->buf = buf;
  req->bytes = bytes;
  if (!msg) {
    CompleteProcNull(req);
    return Status::Ok();
  }
  EnsureRankMap(comm);
  EngineLock lock;
  return S().engine.Mrecv(static_cast<p2p::Unexpected*>(msg), buf, bytes, comm, req);
}

namespace {

p2p::BsendBuffer* BufferOf(BufferOwner owner, bool create) {
  auto& e = S().engine;
  switch (owner.kind) {
    case BufferOwner::kProcess:
      return &e.bsend();
    case BufferOwner::kComm:
      return e.OwnedBuffer(owner.id, create);
    case BufferOwner::kSession:
      return e.OwnedBuffer(p2p::Engine::kSessionKey | owner.id, create);
  }
  return nullptr;
}

}  // namespace

Status BufferAttachTo(BufferOwner owner, void* buf, std::size_t size) {
  EngineLock lock;
  p2p::BsendBuffer* b = BufferOf(owner, true);
  if (b->attached()) return Error(Code::kBuffer, "a buffer is already attached");
  if (buf == kBufferAutomatic) {
    b->AttachAutomatic(buf);
    return Status::Ok();
  }
  if (!buf && size) return Error(Code::kBuffer, "null buffer");
  b->Attach(buf, size);
  return Status::Ok();
}

Status BufferFlush(BufferOwner owner) {
  // MPI: every message in the buffer has been sent when this returns.
  Backoff bo;
  while (!BufferIdle(owner)) NICQ_RETURN_IF_ERROR(ProgressWait(bo).WithContext("buffer flush"));
  return Status::Ok();
}

bool BufferIdle(BufferOwner owner) {
  EngineLock lock;
  p2p::BsendBuffer* b = BufferOf(owner, false);
  return !b || b->blocks_in_use() == 0;
}

Status BufferDetachFrom(BufferOwner owner, void** buf, std::size_t* size) {
  NICQ_RETURN_IF_ERROR(BufferFlush(owner));
  EngineLock lock;
  p2p::BsendBuffer* b = BufferOf(owner, false);
  if (!b || !b->attached()) return Error(Code::kBuffer, "no buffer is attached");
  b->Detach(buf, size);
  return Status::Ok();
}

Status DropCommBuffer(std::uint32_t context_id) {
  const BufferOwner owner{BufferOwner::kComm, context_id};
  if (!S().initialized) return Status::Ok();
  NICQ_RETURN_IF_ERROR(BufferFlush(owner));
  EngineLock lock;
  p2p::BsendBuffer* b = BufferOf(owner, false);
  if (b && b->attached()) {
    void* buf = nullptr;
    std::size_t size = 0;
    b->Detach(&buf, &size);
  }
  return Status::Ok();
}

void CommSetSession(Comm* comm, int session) {
  if (!comm || comm->session == session) return;
  comm->session = session;
  EngineLock lock;
  S().engine.SetContextSession(comm->context_id, session);
}

Status BufferAttach(void* buf, std::size_t size) {
  return BufferAttachTo(BufferOwner{}, buf, size);
}

Status BufferDetach(void** buf, std::size_t* size) {
  {
    EngineLock lock;
    if (!S().engine.bsend().attached()) {  // MPI_Buffer_detach of nothing: NULL, 0
      *buf = nullptr;
      *size = 0;
      return Status::Ok();
    }
  }
  return BufferDetachFrom(BufferOwner{}, buf, size);
}

}  // namespace nicq::rt
