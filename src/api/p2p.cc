// Point-to-point entry points: blocking, nonblocking and persistent sends and
// receives in all four modes, sendrecv, probe, buffered-mode buffers, start.
// Every call validates all arguments before any side effect, so under
// MPI_ERRORS_RETURN a failed call changes nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "api/p2p_calls.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::ApiRequest;
using api::Call;

namespace nicq::api {

// count items of t must fit in a size_t of bytes (large-count calls).
[[gnu::cold, gnu::noinline]] static bool BytesFitSlow(Call& c, std::int64_t count,
                                                      const dtype::Type* t) {
  return t->size == 0 || count <= INT64_MAX / t->size ||
         c.Check(false, Code::kCount,
                 "count " + std::to_string(count) + " of a " + std::to_string(t->size) +
                     "-byte type overflows");
}
// An int count of a type under 2^32 bytes cannot overflow: two compares
// instead of a 64-bit division on every call.
static inline bool BytesFit(Call& c, std::int64_t count, const dtype::Type* t) {
  return (count >> 31 == 0 && t->size >= 0 && t->size >> 32 == 0) || BytesFitSlow(c, count, t);
}

bool CheckSend(Call& c, const void* buf, std::int64_t count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm, P2pArgs* a) {
  return c.Init() && c.CommArg(comm, &a->comm) && c.CountArg(count) && c.TypeArg(dt, &a->type) &&
         BytesFit(c, count, a->type) && c.BufferArg(buf, count, a->type) &&
         c.DestArg(dest, a->comm) && c.SendTagArg(tag);
}

bool CheckRecv(Call& c, const void* buf, std::int64_t count, MPI_Datatype dt, int source, int tag,
               MPI_Comm comm, P2pArgs* a) {
  return c.Init() && c.CommArg(comm, &a->comm) && c.CountArg(count) && c.TypeArg(dt, &a->type) &&
         BytesFit(c, count, a->type) && c.BufferArg(buf, count, a->type) &&
         c.SourceArg(source, a->comm) && c.RecvTagArg(tag);
}

// MPI_COMM_WORLD and MPI_COMM_SELF live until MPI_Finalize: a request on
// them need not hold a reference (rt::CommRetain ignores them anyway).
static inline void HoldCommOf(ApiRequest* r, int comm_handle, Comm* comm) {
  if (comm_handle != MPI_COMM_WORLD && comm_handle != MPI_COMM_SELF) HoldComm(r, comm);
}
static inline void RetainType(dtype::Type* t) {
  if (!t->predefined) dtype::Retain(t);
}

// PrepareP2p's body, inline for MPI_Isend/MPI_Irecv (PrepareP2p is
// exported, so calls to it stay calls).
static inline ApiRequest* FillP2pSlot(Call& c, bool is_send, SendMode mode, const void* buf,
                                      std::int64_t count, const P2pArgs& a, int peer, int tag,
                                      bool persistent) {
  ApiRequest* r = api::AllocRequest();
  if (!r) return nullptr;
  r->call = c.name();
  r->comm_handle = c.comm_handle();
  r->req.comm = a.comm;
  HoldCommOf(r, c.comm_handle(), a.comm);
  r->is_send = is_send;
  r->persistent = persistent;
  r->active = false;
  r->user_buf = buf;
  r->count = count;
  r->type = a.type;
  RetainType(a.type);
  r->peer = peer;
  r->tag = tag;
  r->mode = mode;
  return r;
}

// A request filled with the operation's arguments (not posted yet).
ApiRequest* PrepareP2p(Call& c, bool is_send, SendMode mode, const void* buf, std::int64_t count,
                       const P2pArgs& a, int peer, int tag, bool persistent) {
  return FillP2pSlot(c, is_send, mode, buf, count, a, peer, tag, persistent);
}

// Waits for one request and completes it (status may be MPI_STATUS_IGNORE).
int WaitP2p(Call& c, ApiRequest* r, MPI_Status* status) {
  rt::Backoff backoff;
  while (!r->req.IsDone()) {
    Status st = rt::ProgressWait(backoff);
    if (!st.ok()) return c.Fail(st);
  }
  return api::CompleteRequest(r, nullptr, status, /*raise=*/true);
}

// The engine request of this thread's blocking calls. A wait that fails
// (a dead peer) while the engine still holds the request abandons it: the
// thread then takes the table path below for good.
// One thread_local object: each access from a shared library is a
// __tls_get_addr call.
struct BlockingSlot {
  Request req;
  bool abandoned = false;
};
static thread_local BlockingSlot t_blocking;

// Blocking send or receive of a contiguous type: straight to the engine,
// with no request handle (the table's alloc, retain, reset and free were
// about half the host instructions of an 8-byte MPI_Send).
static int BlockingDirect(BlockingSlot& slot, Call& c, bool is_send, SendMode mode, const void* buf,
                          std::int64_t count, const P2pArgs& a, int peer, int tag,
                          MPI_Status* status) {
  Request& q = slot.req;
  const std::size_t bytes = static_cast<std::size_t>(count * a.type->size);
  Status st = is_send ? rt::Isend(buf, bytes, peer, tag, a.comm, mode, &q)
                      : rt::Irecv(const_cast<void*>(buf), bytes, peer, tag, a.comm, &q);
  if (!st.ok()) return c.Fail(st);
  rt::Backoff backoff;
  while (!q.IsDone()) {
    st = rt::ProgressWait(backoff);
    if (!st.ok()) {
      if (!q.IsDone()) slot.abandoned = true;
      return c.Fail(st);
    }
  }
  if (q.status.error == 0) [[likely]] {
    api::FillStatus(status, q.status);
    return MPI_SUCCESS;
  }
  return api::FinishP2pStatus(
      api::P2pCall{c.name(), c.comm_handle(), is_send, peer, tag, a.type, count}, q.status, status,
      /*raise=*/true);
}

// Blocking send or receive through a table request (no allocation once warm).
static int Blocking(Call& c, bool is_send, SendMode mode, const void* buf, std::int64_t count,
                    const P2pArgs& a, int peer, int tag, MPI_Status* status) {
  BlockingSlot& slot = t_blocking;
  if (a.type->IsContiguous() && !slot.abandoned)
    return BlockingDirect(slot, c, is_send, mode, buf, count, a, peer, tag, status);
  ApiRequest* r = PrepareP2p(c, is_send, mode, buf, count, a, peer, tag, false);
  if (!r) return c.Fail(Code::kNoMem, "request table is full");
  Status st = api::PostRequest(r);
  if (!st.ok()) {
    api::FreeRequest(r);
    return c.Fail(st);
  }
  return WaitP2p(c, r, status);
}

// MPI_Isend/MPI_Irecv of a contiguous type: the prepared slot goes to the
// engine at once. PostRequest's second reset of the engine request and its
// persistent, staged and matched-message cases are not needed:
// AllocRequest reset the slot, and rt::Isend/Irecv reset what they own.
static int NonblockingDirect(Call& c, bool is_send, SendMode mode, const void* buf,
                             std::int64_t count, const P2pArgs& a, int peer, int tag,
                             MPI_Request* request) {
  ApiRequest* r = FillP2pSlot(c, is_send, mode, buf, count, a, peer, tag, /*persistent=*/false);
  if (!r) [[unlikely]]
    return c.Fail(Code::kNoMem, "request table is full");
  Request& q = r->req;
  q.api_data = r;
  const std::size_t bytes = static_cast<std::size_t>(count * a.type->size);
  Status st = is_send ? rt::Isend(buf, bytes, peer, tag, a.comm, mode, &q)
                      : rt::Irecv(const_cast<void*>(buf), bytes, peer, tag, a.comm, &q);
  if (!st.ok()) [[unlikely]] {
    api::FreeRequest(r);
    return c.Fail(st);
  }
  *request = r->handle;
  return MPI_SUCCESS;
}

static int Nonblocking(Call& c, bool is_send, SendMode mode, const void* buf, std::int64_t count,
                       const P2pArgs& a, int peer, int tag, MPI_Request* request, bool persistent) {
  if (!persistent && a.type->IsContiguous())
    return NonblockingDirect(c, is_send, mode, buf, count, a, peer, tag, request);
  ApiRequest* r = PrepareP2p(c, is_send, mode, buf, count, a, peer, tag, persistent);
  if (!r) return c.Fail(Code::kNoMem, "request table is full");
  if (!persistent) {
    Status st = api::PostRequest(r);
    if (!st.ok()) {
      api::FreeRequest(r);
      return c.Fail(st);
    }
  } else if (!a.type->IsContiguous()) {
    // Persistent: size the staging buffer now so MPI_Start never allocates.
    r->staging.resize(static_cast<std::size_t>(count * a.type->size));
  }
  *request = r->handle;
  return MPI_SUCCESS;
}

bool Overlap(const dtype::Type& t1, const void* b1, std::int64_t n1, const dtype::Type& t2,
             const void* b2, std::int64_t n2) {
  std::uintptr_t lo1, hi1, lo2, hi2;
  dtype::Span(t1, b1, n1, &lo1, &hi1);
  dtype::Span(t2, b2, n2, &lo2, &hi2);
  return lo1 < hi1 && lo2 < hi2 && lo1 < hi2 && lo2 < hi1;
}

int SendCall(const char* name, SendMode mode, const void* buf, std::int64_t count, MPI_Datatype dt,
             int dest, int tag, MPI_Comm comm) {
  Call c(name);
  P2pArgs a;
  if (!CheckSend(c, buf, count, dt, dest, tag, comm, &a)) return c.Fail();
  return Blocking(c, true, mode, buf, count, a, dest, tag, MPI_STATUS_IGNORE);
}

int IsendCall(const char* name, SendMode mode, bool persistent, const void* buf, std::int64_t count,
              MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  Call c(name);
  P2pArgs a;
  if (!CheckSend(c, buf, count, dt, dest, tag, comm, &a) || !c.NotNull(request, "request"))
    return c.Fail();
  return Nonblocking(c, true, mode, buf, count, a, dest, tag, request, persistent);
}

int RecvCall(const char* name, void* buf, std::int64_t count, MPI_Datatype dt, int source, int tag,
             MPI_Comm comm, MPI_Status* status) {
  Call c(name);
  P2pArgs a;
  if (!CheckRecv(c, buf, count, dt, source, tag, comm, &a)) return c.Fail();
  return Blocking(c, false, SendMode::kStandard, buf, count, a, source, tag, status);
}

int IrecvCall(const char* name, bool persistent, void* buf, std::int64_t count, MPI_Datatype dt,
              int source, int tag, MPI_Comm comm, MPI_Request* request) {
  Call c(name);
  P2pArgs a;
  if (!CheckRecv(c, buf, count, dt, source, tag, comm, &a) || !c.NotNull(request, "request"))
    return c.Fail();
  return Nonblocking(c, false, SendMode::kStandard, buf, count, a, source, tag, request,
                     persistent);
}

}  // namespace nicq::api

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return api::SendCall("MPI_Send", SendMode::kStandard, buf, count, datatype, dest, tag, comm);
}
int MPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return api::SendCall("MPI_Bsend", SendMode::kBuffered, buf, count, datatype, dest, tag, comm);
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return api::SendCall("MPI_Ssend", SendMode::kSynchronous, buf, count, datatype, dest, tag, comm);
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return api::SendCall("MPI_Rsend", SendMode::kReady, buf, count, datatype, dest, tag, comm);
}

int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return api::IsendCall("MPI_Isend", SendMode::kStandard, false, buf, count, datatype, dest, tag,
                        comm, request);
}
int MPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return api::IsendCall("MPI_Ibsend", SendMode::kBuffered, false, buf, count, datatype, dest, tag,
                        comm, request);
}
int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return api::IsendCall("MPI_Issend", SendMode::kSynchronous, false, buf, count, datatype, dest,
                        tag, comm, request);
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  return api::IsendCall("MPI_Irsend", SendMode::kReady, false, buf, count, datatype, dest, tag,
                        comm, request);
}

int MPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Send_init", SendMode::kStandard, true, buf, count, datatype, dest, tag,
                        comm, request);
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Bsend_init", SendMode::kBuffered, true, buf, count, datatype, dest,
                        tag, comm, request);
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Ssend_init", SendMode::kSynchronous, true, buf, count, datatype, dest,
                        tag, comm, request);
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  return api::IsendCall("MPI_Rsend_init", SendMode::kReady, true, buf, count, datatype, dest, tag,
                        comm, request);
}

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  return api::RecvCall("MPI_Recv", buf, count, datatype, source, tag, comm, status);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return api::IrecvCall("MPI_Irecv", false, buf, count, datatype, source, tag, comm, request);
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return api::IrecvCall("MPI_Recv_init", true, buf, count, datatype, source, tag, comm, request);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Call c("MPI_Probe");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.SourceArg(source, cm) || !c.RecvTagArg(tag))
    return c.Fail();
  RequestStatus rs;
  Status st = rt::Probe(source, tag, cm, &rs);
  if (!st.ok()) return c.Fail(st);
  api::FillStatus(status, rs);
  return MPI_SUCCESS;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  Call c("MPI_Iprobe");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.SourceArg(source, cm) || !c.RecvTagArg(tag) ||
      !c.NotNull(flag, "flag"))
    return c.Fail();
  RequestStatus rs;
  bool found = false;
  Status st = rt::Iprobe(source, tag, cm, &found, &rs);
  if (!st.ok()) return c.Fail(st);
  *flag = found;
  if (found) api::FillStatus(status, rs);
  return MPI_SUCCESS;
}

int MPI_Start(MPI_Request* request) {
  Call c("MPI_Start");
  if (!c.Init() || !c.NotNull(request, "request")) return c.Fail();
  ApiRequest* r = api::LookupRequest(*request);
  if (!r) return c.Fail(Code::kRequest, "invalid request handle " + std::to_string(*request));
  c.set_comm_handle(r->comm_handle);
  if (!api::NotEnqueued(c, r)) return c.Fail();
  if (!r->persistent) return c.Fail(Code::kRequest, "request is not persistent");
  if (r->active) return c.Fail(Code::kRequest, "persistent request is already active");
  return c.Fail(api::PostRequest(r));
}

int MPI_Startall(int count, MPI_Request array_of_requests[]) {
  Call c("MPI_Startall");
  if (!c.Init() || !c.CountArg(count) ||
      !c.NotNull(count ? array_of_requests : &count, "array_of_requests"))
    return c.Fail();
  // Validate every entry first: an erroneous call starts none of them. The
  // requests found are kept for the second pass (arrays up to kKept long).
  constexpr int kKept = 64;
  ApiRequest* kept[kKept];
  for (int i = 0; i < count; ++i) {
    ApiRequest* r = api::LookupRequest(array_of_requests[i]);
    if (i < kKept) kept[i] = r;
    if (r && !api::NotEnqueued(c, r, i)) return c.Fail();
    if (r && r->persistent && !r->active) continue;
    std::string at = "array_of_requests[" + std::to_string(i) + "]";
    if (!r) return c.Fail(Code::kRequest, "invalid request handle at " + at);
    c.set_comm_handle(r->comm_handle);
    return c.Fail(Code::kRequest,
                  at + (r->persistent ? " is already active" : " is not persistent"));
  }
  for (int i = 0; i < count; ++i) {
    ApiRequest* r = i < kKept ? kept[i] : api::LookupRequest(array_of_requests[i]);
    Status st = api::PostRequest(r);
    if (!st.ok()) {
      c.set_comm_handle(r->comm_handle);
      return c.Fail(st);
    }
  }
  return MPI_SUCCESS;
}

}  // extern "C"
