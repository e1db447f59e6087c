// A single-process stand-in for rt:: (world size 1) so the API layer's unit
// tests run without a fabric: messages to self are matched in posting order
// (MPI's non-overtaking rule), synchronous sends complete when matched,
// cancel removes a posted receive. Blocking on something that can never
// happen in one process returns an error instead of hanging.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

#include "coll/hier_node.h"
#include "runtime/async_progress.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::rt {
namespace {

struct Message {
  const Comm* comm;
  int tag;
  std::vector<char> data;
  Request* ssend = nullptr;  // synchronous sender, completed at match
};

struct State {
  bool initialized = false, finalized = false;
  int thread_level = 0;
  Comm world, self;
  std::deque<Message> unexpected;
  std::vector<Request*> posted;  // reserved: matching a posted receive never allocates
  void* bsend_buf = nullptr;
  std::size_t bsend_size = 0;
  std::uint32_t next_context = 8;
};
State& S() {
  static State* s = new State();
  return *s;
}

bool Matches(const Request* recv, const Comm* comm, int tag) {
  return recv->comm == comm && (recv->tag == kAnyTag || recv->tag == tag);
}

void Deliver(Request* recv, const void* data, std::size_t bytes, int tag) {
  std::size_t n = std::min(bytes, recv->bytes);
  if (n) std::memcpy(recv->buf, data, n);
  recv->status.source = 0;
  recv->status.tag = tag;
  recv->status.bytes = n;
  recv->status.error = bytes > recv->bytes ? int(Code::kTruncate) : 0;
  recv->MarkDone();
}

void InitComm(Comm& c, std::uint32_t ctx) {
  c.context_id = ctx;
  c.rank = 0;
  c.size = 1;
  c.world_ranks = {0};
}

}  // namespace

Status Init(int required, int* provided) {
  State& s = S();
  s.initialized = true;
  s.thread_level = required;
  *provided = required;
  InitComm(s.world, 0);
  InitComm(s.self, 4);
  s.posted.reserve(1024);
  return Status::Ok();
}
// No progress thread in the fake runtime.
void StopAsyncProgress() {}
void KickAsyncProgress() {}
bool AsyncProgressRunning() {
  return false;
}
void AddAsyncBusyProbe(AsyncBusyFn) {}
void WakeIdleAsyncProgress() {}
// No offload backend: queues (and partitioned requests on them) are not
// part of these tests.
offload::OffloadBackend* Backend() {
  return nullptr;
}

Status Finalize() {
  S().finalized = true;
  return Status::Ok();
}
bool Initialized() {
  return S().initialized;
}
bool Finalized() {
  return S().finalized;
}
int ThreadLevel() {
  return S().thread_level;
}
int WorldRank() {
  return 0;
}
int WorldSize() {
  return 1;
}
const char* ProviderName() {
  return "fake";
}
void Abort(int code, const char* why) {
  std::fprintf(stderr, "fake runtime: abort(%d): %s\n", code, why);
  std::fflush(stderr);
  _exit(code);
}
// The API layer's inline tag checks use rt::kMaxUserTag: MPI_TAG_UB must
// say the same.
int TagUpperBound() {
  return kMaxUserTag;
}

Comm* World() {
  return &S().world;
}
Comm* Self() {
  return &S().self;
}
Status CommDup(Comm* parent, Comm** out) {
  auto* c = new Comm(*parent);
  c->context_id = S().next_context += nicq::rt::kContextStride;
  c->name.clear();
  *out = c;
  return Status::Ok();
}
Status CommSplit(Comm* parent, int color, int key, Comm** out) {
  if (color < 0) {
    *out = nullptr;
    return Status::Ok();
  }
  return CommDup(parent, out);
}
// A world of one agrees at once: the agreement is the split's result.
struct CommAgreement {
  Comm* child = nullptr;
};
Status CommAgreementStart(Comm* parent, int color, int key, CommAgreement** out) {
  auto* a = new CommAgreement;
  Status st = CommSplit(parent, color, key, &a->child);
  if (!st.ok()) {
    delete a;
    return st;
  }
  *out = a;
  return Status::Ok();
}
bool CommAgreementPoll(CommAgreement*) {
  return true;
}
Status CommAgreementFinish(CommAgreement* a, Comm** out) {
  *out = a->child;
  delete a;
  return Status::Ok();
}
void CommSetSession(Comm* comm, int session) {
  if (comm) comm->session = session;
}
void CommRetain(Comm* comm) {
  if (comm && comm != World() && comm != Self()) comm->refs.n.fetch_add(1);
}
void CommRelease(Comm* comm) {
  if (comm && comm != World() && comm != Self() && comm->refs.n.fetch_sub(1) == 1) delete comm;
}
Status CommFree(Comm* comm) {
  CommRelease(comm);
  return Status::Ok();
}
// A world of one has no two disjoint groups: intercommunicators cannot exist.
Status IntercommCreate(Comm*, int, Comm*, int, int, Code, Comm**) {
  return Error(Code::kComm, "IntercommCreate: a one-process world has no remote group");
}
Status IntercommSplit(Comm*, int, int, Comm**) {
  return Error(Code::kComm, "IntercommSplit: a one-process world has no intercommunicators");
}
Status IntercommMerge(Comm*, bool, Comm**) {
  return Error(Code::kComm, "IntercommMerge: a one-process world has no intercommunicators");
}

Status Isend(const void* buf, std::size_t bytes, int dest, int tag, Comm* comm, SendMode mode,
             Request* req) {
  req->comm = comm;
  req->peer = dest;
  req->tag = tag;
  req->status = RequestStatus{};
  req->status.source = dest;
  req->status.tag = tag;
  if (dest == kProcNull) {
    req->MarkDone();
    return Status::Ok();
  }
  if (dest != 0) return Error(Code::kRank, "fake runtime: only rank 0 exists");
  State& s = S();
  for (auto it = s.posted.begin(); it != s.posted.end(); ++it) {
    if (Matches(*it, comm, tag)) {
      Request* recv = *it;
      s.posted.erase(it);
      Deliver(recv, buf, bytes, tag);
      req->MarkDone();
      return Status::Ok();
    }
  }
  Message m{
      comm, tag,
      std::vector<char>(static_cast<const char*>(buf), static_cast<const char*>(buf) + bytes)};
  bool sync = mode == SendMode::kSynchronous;
  if (sync) m.ssend = req;
  s.unexpected.push_back(std::move(m));
  if (!sync) req->MarkDone();  // buffered in the unexpected queue
  return Status::Ok();
}

Status Irecv(void* buf, std::size_t bytes, int source, int tag, Comm* comm, Request* req) {
  req->comm = comm;
  req->buf = buf;
  req->bytes = bytes;
  req->peer = source;
  req->tag = tag;
  req->status = RequestStatus{};
  if (source == kProcNull) {
    req->status.source = kProcNull;
    req->status.tag = kAnyTag;
    req->MarkDone();
    return Status::Ok();
  }
  State& s = S();
  for (auto it = s.unexpected.begin(); it != s.unexpected.end(); ++it) {
    if (Matches(req, it->comm, it->tag)) {
      Message m = std::move(*it);
      s.unexpected.erase(it);
      Deliver(req, m.data.data(), m.data.size(), m.tag);
      if (m.ssend) m.ssend->MarkDone();
      return Status::Ok();
    }
  }
  s.posted.push_back(req);
  return Status::Ok();
}

Status Start(Request* req) {
  req->active = true;
  if (req->kind == ReqKind::kPersistentSend)
    return Isend(req->buf, req->bytes, req->peer, req->tag, req->comm, req->mode, req);
  return Irecv(req->buf, req->bytes, req->peer, req->tag, req->comm, req);
}

Status StartPersistent(Request* req) {
  return Start(req);
}

// The fake runtime keeps no state the fresh forms could skip.
Status IsendFresh(const void* buf, std::size_t bytes, int dest, int tag, Comm* comm, SendMode mode,
                  Request* req) {
  return Isend(buf, bytes, dest, tag, comm, mode, req);
}
Status IrecvFresh(void* buf, std::size_t bytes, int source, int tag, Comm* comm, Request* req) {
  return Irecv(buf, bytes, source, tag, comm, req);
}

Status Iprobe(int source, int tag, Comm* comm, bool* flag, RequestStatus* status) {
  *flag = false;
  if (source == kProcNull) {
    *flag = true;
    status->source = kProcNull;
    status->tag = kAnyTag;
    status->bytes = 0;
    return Status::Ok();
  }
  for (const Message& m : S().unexpected) {
    if (m.comm == comm && (tag == kAnyTag || tag == m.tag)) {
      *flag = true;
      status->source = 0;
      status->tag = m.tag;
      status->bytes = m.data.size();
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status Probe(int source, int tag, Comm* comm, RequestStatus* status) {
  bool flag = false;
  NICQ_RETURN_IF_ERROR(Iprobe(source, tag, comm, &flag, status));
  if (!flag) return Error(Code::kOther, "fake runtime: probe would block forever");
  return Status::Ok();
}

Status Cancel(Request* req) {
  State& s = S();
  for (auto it = s.posted.begin(); it != s.posted.end(); ++it) {
    if (*it == req) {
      s.posted.erase(it);
      req->status.cancelled = true;
      req->MarkDone();
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Status BufferAttach(void* buf, std::size_t size) {
  if (S().bsend_buf) return Error(Code::kBuffer, "a buffer is already attached");
  S().bsend_buf = buf;
  S().bsend_size = size;
  return Status::Ok();
}
Status BufferDetach(void** buf, std::size_t* size) {
  *buf = S().bsend_buf;
  *size = S().bsend_size;
  S().bsend_buf = nullptr;
  S().bsend_size = 0;
  return Status::Ok();
}

Status Improbe(int source, int tag, Comm* comm, bool* flag, RequestStatus* status, void** msg) {
  *flag = false;
  *msg = nullptr;
  if (source == kProcNull) return Iprobe(source, tag, comm, flag, status);
  State& s = S();
  for (auto it = s.unexpected.begin(); it != s.unexpected.end(); ++it) {
    if (it->comm == comm && (tag == kAnyTag || tag == it->tag)) {
      *flag = true;
      status->source = 0;
      status->tag = it->tag;
      status->bytes = it->data.size();
      *msg = new Message(std::move(*it));
      s.unexpected.erase(it);
      return Status::Ok();
    }
  }
  return Status::Ok();
}
Status Mprobe(int source, int tag, Comm* comm, RequestStatus* status, void** msg) {
  bool flag = false;
  NICQ_RETURN_IF_ERROR(Improbe(source, tag, comm, &flag, status, msg));
  if (!flag) return Error(Code::kOther, "fake runtime: probe would block forever");
  return Status::Ok();
}
Status Mrecv(void* msg, void* buf, std::size_t bytes, Comm* comm, Request* req) {
  req->comm = comm;
  req->buf = buf;
  req->bytes = bytes;
  req->status = RequestStatus{};
  if (!msg) {
    req->status.source = kProcNull;
    req->status.tag = kAnyTag;
    req->MarkDone();
    return Status::Ok();
  }
  auto* m = static_cast<Message*>(msg);
  Deliver(req, m->data.data(), m->data.size(), m->tag);
  if (m->ssend) m->ssend->MarkDone();
  delete m;
  return Status::Ok();
}

// One process never has a buffered message in flight: buffers only attach.
Status BufferAttachTo(BufferOwner owner, void* buf, std::size_t size) {
  if (owner.kind == BufferOwner::kProcess) return BufferAttach(buf, size);
  return Status::Ok();
}
Status BufferDetachFrom(BufferOwner owner, void** buf, std::size_t* size) {
  if (owner.kind == BufferOwner::kProcess) return BufferDetach(buf, size);
  *buf = nullptr;
  *size = 0;
  return Status::Ok();
}
Status BufferFlush(BufferOwner) {
  return Status::Ok();
}
bool BufferIdle(BufferOwner) {
  return true;
}
Status DropCommBuffer(std::uint32_t) {
  return Status::Ok();
}

Status Progress(bool* progressed) {
  if (progressed) *progressed = false;
  return Status::Ok();
}

Status ProgressWait(Backoff& backoff) {
  // Nothing completes by waiting in one process: report instead of hanging.
  if (++backoff.polls > 1000) return Error(Code::kOther, "fake runtime: wait would block forever");
  return Status::Ok();
}

}  // namespace nicq::rt

namespace nicq::coll {

// One process never spans nodes: no communicator has a node group.
Status MakeNodeGroupAtCreation(Comm*) {
  return Status::Ok();
}

}  // namespace nicq::coll
