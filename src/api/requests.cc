// The request table and the API half of a request's life: taking a slot,
// posting (pack first for noncontiguous sends), completion in the waiter
// (unpack, status, release). Requests freed while active are in
// orphan_requests.cc, requests completed by polling in polled_requests.cc.
//
// Hot path (MPI_Start / nonblocking post / completion): a slot comes from
// the thread's RequestStock (request_stock.h) and the staging buffer of a
// noncontiguous type is reused, so a warm table makes no allocation and no
// syscall. These stay in one file so that the stock's take and give-back
// inline into AllocRequest, FreeRequest and CompleteRequest.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "api/request_stock.h"
#include "dtype/slot_table.h"
#include "runtime/runtime.h"

namespace nicq::api {

std::atomic<RequestTable*> g_request_table{nullptr};

namespace {

RequestTable& Table() {
  static auto* table = [] {
    auto* t = new RequestTable(1);
    g_request_table.store(t, std::memory_order_release);
    return t;
  }();
  return *table;
}

// The stock's first use on a thread constructs it (and registers its
// destructor, which gives the thread's slots back at exit).
[[gnu::noinline]] RequestStock* MakeThreadStock();
// Constant-initialized and initial-exec: reading it is one load from the
// thread pointer, where the default model for a shared library costs a
// __tls_get_addr call on every take and give-back. The library's whole
// thread-local block then lives in static TLS, which a dlopen of it must
// find room for (docs/mpi-api.md, "Handles").
[[gnu::tls_model("initial-exec")]] thread_local RequestStock* t_stock = nullptr;

RequestStock* MakeThreadStock() {
  thread_local RequestStock stock(Table());
  t_stock = &stock;
  return &stock;
}

inline RequestStock& ThreadStock() {
  RequestStock* s = t_stock;
  if (!s) [[unlikely]]
    s = MakeThreadStock();
  return *s;
}

void ResetEngineRequest(Request& q) {
  // The slot may last have served another kind of request (a nonblocking
  // collective, a persistent one, a match request): point-to-point never
  // sets kind or ops, so a stale one made MPI_Request_free refuse an
  // MPI_Irecv as "a nonblocking collective" and routed a reused
  // MPI_Send_init into the collective paths (MPI_Match, enqueue checks).
  q.kind = ReqKind::kSend;
  q.ops = nullptr;
  q.done.store(false, std::memory_order_relaxed);
  q.status = RequestStatus{};
  q.active = false;
  q.persistent = false;
  q.api_data = nullptr;
  q.engine = nullptr;
  for (auto& w : q.engine_word) w = 0;
}

// A freed request keeps its staging buffer for reuse up to this size.
constexpr std::size_t kKeptStaging = std::size_t{16} << 20;

// Grows the staging buffer only when a larger message needs it.
char* Staging(ApiRequest* r, std::size_t bytes) {
  if (r->staging.size() < bytes) r->staging.resize(bytes);
  return r->staging.data();
}

}  // namespace

ApiRequest* AllocRequest() {
  return ThreadStock().Take();
}

Request* AllocEngineRequest(MPI_Comm comm, const char* call, bool persistent, MPI_Request* handle) {
  ApiRequest* r = AllocRequest();
  if (!r) return nullptr;
  r->call = call;
  r->comm_handle = comm;
  r->req.comm = LookupComm(comm);
  HoldComm(r, r->req.comm);
  r->persistent = persistent;
  r->req.persistent = persistent;
  r->is_send = false;
  r->type = nullptr;
  r->count = 0;
  r->staged = false;
  *handle = r->handle;
  return &r->req;
}

void HoldComm(ApiRequest* r, Comm* comm) {
  rt::CommRetain(comm);
  rt::CommRelease(r->held_comm);
  r->held_comm = comm;
}

bool EnqueuedCheck(Call& c, ApiRequest* r, int index) {
  const RequestOps* ops = r->req.ops;
  if (!ops || !ops->enqueued || !ops->enqueued(&r->req)) return true;
  std::string where = index < 0 ? "" : " at array_of_requests[" + std::to_string(index) + "]";
  return c.Check(false, Code::kQueue,
                 "request" + where +
                     " has a pending enqueued start; complete it with MPI_Enqueue_wait and "
                     "MPI_Queue_fence first");
}

// What only some requests hold when they are freed: another engine's
// state, a derived type, a communicator other than world and self, a huge
// staging buffer. Out of line, so that FreeRequest's common case (every
// point-to-point completion) needs no stack frame.
[[gnu::noinline]] static void ReleaseHeld(ApiRequest* r) {
  if (r->req.ops) {
    if (r->req.ops->free) r->req.ops->free(&r->req).IgnoreError();
    r->req.ops = nullptr;
  }
  // Predefined types and the world and self communicators are not counted:
  // no call for them (every point-to-point completion comes here).
  if (r->type && !r->type->predefined) dtype::Release(r->type);
  r->type = nullptr;
  // Keep a staging buffer for reuse unless it is huge.
  if (r->staging.capacity() > kKeptStaging) std::vector<char>().swap(r->staging);
  if (r->held_comm) {
    rt::CommRelease(r->held_comm);
    r->held_comm = nullptr;
  }
}

void FreeRequest(ApiRequest* r) {
  if (r->req.ops || (r->type && !r->type->predefined) || r->held_comm ||
      r->staging.capacity() > kKeptStaging) [[unlikely]]
    ReleaseHeld(r);
  r->type = nullptr;
  r->persistent = r->active = r->free_pending = r->staged = r->from_message = false;
  r->enqueueable = nullptr;  // its engine is gone; a reuse of the slot is checked afresh
  r->message = nullptr;
  r->user_buf = nullptr;
  r->req.comm = nullptr;
  ResetEngineRequest(r->req);
  if (!RequestTable::ReleaseObject(r, g_threads_concurrent)) [[unlikely]]
    return;  // not live: a double free changes nothing
  ThreadStock().Give(r);
}

int LiveRequests() {
  return Table().LiveCount();
}

Status PostRequest(ApiRequest* r) {
  Request& q = r->req;
  if (q.ops) {
    // Another engine's persistent request: it re-arms its own state.
    if (!q.ops->start) return Error(Code::kRequest, "this request cannot be started");
    r->staged = false;  // the engine moves the data itself
    Status st = q.ops->start(&q);
    if (st.ok()) r->active = true;
    return st;
  }
  Comm* comm = q.comm;
  if (!r->type) return Error(Code::kRequest, "request has no operation to start");
  const dtype::Type& t = *r->type;
  std::size_t bytes = static_cast<std::size_t>(r->count * t.size);
  r->staged = !t.IsContiguous() && bytes > 0;
  void* buf = const_cast<void*>(r->user_buf);
  if (r->staged) {
    buf = Staging(r, bytes);
    if (r->is_send) dtype::Pack(t, r->user_buf, r->count, buf);
  }
  if (r->persistent) {
    // The engine re-posts from the arguments kept in the request (and may
    // later run it as a matched, triggered operation). Only what this
    // request's last start and completion changed is set again: the slot
    // was reset when it was allocated, nothing but a start of its own
    // writes the other engine fields (an engine that takes the request
    // over sets ops and starts it above), and rt::StartPersistent resets
    // done, status and the engine's link.
    q.kind = r->is_send ? ReqKind::kPersistentSend : ReqKind::kPersistentRecv;
    q.persistent = true;
    q.active = false;
    q.mode = r->mode;
    q.api_data = r;
    q.buf = buf;
    q.bytes = bytes;
    q.peer = r->peer;
    q.tag = r->tag;
    Status st = rt::StartPersistent(&q);
    if (st.ok()) r->active = true;
    return st;
  }
  // A nonpersistent request is posted once, right after PrepareP2p took
  // its slot, which FreeRequest reset: no reset here.
  q.comm = comm;
  q.api_data = r;
  if (r->is_send) return rt::Isend(buf, bytes, r->peer, r->tag, comm, r->mode, &q);
  if (r->from_message) return rt::Mrecv(r->message, buf, bytes, comm, &q);
  return rt::Irecv(buf, bytes, r->peer, r->tag, comm, &q);
}

void EmptyStatus(MPI_Status* status) {
  if (!status || status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->nicq_count = 0;
  status->nicq_cancelled = 0;
}

int FinishP2pStatus(const P2pCall& p, const RequestStatus& rs, MPI_Status* status, bool raise) {
  FillStatus(status, rs);
  if (rs.error == 0) return MPI_SUCCESS;
  std::string msg = std::string(p.call) + "(" + RankText() + "): ";
  if (rs.error == static_cast<int>(Code::kTruncate) && p.type) {
    msg += "message from rank " + std::to_string(rs.source) + " tag " + std::to_string(rs.tag) +
           " is longer than the receive buffer (" + std::to_string(p.count * p.type->size) +
           " bytes: count " + std::to_string(p.count) + " of " + dtype::TypeName(p.type->handle) +
           ")";
  } else {
    msg += std::string(p.is_send ? "send to" : "receive from") + " rank " + std::to_string(p.peer) +
           " tag " + std::to_string(p.tag) + " failed";
  }
  const Code cls = static_cast<Code>(rs.error);
  return raise ? Raise(p.comm_handle, cls, msg) : RecordError(cls, msg);
}

int CompleteRequest(ApiRequest* r, MPI_Request* handle, MPI_Status* status, bool raise) {
  // The common case first: a point-to-point operation of a contiguous type
  // that succeeded has only its status to report.
  if (!r->req.ops && !r->staged && r->req.status.error == 0) [[likely]] {
    FillStatus(status, r->req.status);
    if (r->persistent) {
      r->active = false;
      r->req.active = false;
    } else {
      FreeRequest(r);
      if (handle) *handle = MPI_REQUEST_NULL;
    }
    return MPI_SUCCESS;
  }
  if (r->req.ops && r->req.ops->complete) {
    Status st = r->req.ops->complete(&r->req);
    if (!st.ok()) {
      if (r->persistent) r->active = false;
      std::string msg = std::string(r->call) + "(" + RankText() + "): " + st.message();
      int code = raise ? Raise(r->comm_handle, st.code(), msg) : RecordError(st.code(), msg);
      if (!r->persistent) {
        FreeRequest(r);
        if (handle) *handle = MPI_REQUEST_NULL;
      }
      return code;
    }
  }
  const RequestStatus rs = r->req.status;
  if (!r->is_send && r->staged && !rs.cancelled)
    dtype::Unpack(*r->type, r->staging.data(), static_cast<std::int64_t>(rs.bytes), r->count,
                  const_cast<void*>(r->user_buf));
  const int code = FinishP2pStatus(
      P2pCall{r->call, r->comm_handle, r->is_send, r->peer, r->tag, r->type, r->count}, rs, status,
      raise);
  if (r->persistent) {
    r->active = false;
    if (!r->req.ops) r->req.active = false;  // engines with ops do this in complete()
  } else {
    FreeRequest(r);
    if (handle) *handle = MPI_REQUEST_NULL;
  }
  return code;
}

Status CancelRequest(ApiRequest* r) {
  if (!r->req.ops) return rt::Cancel(&r->req);
  if (!r->req.ops->cancel) return Error(Code::kRequest, "this request cannot be cancelled");
  return r->req.ops->cancel(&r->req);
}

}  // namespace nicq::api
