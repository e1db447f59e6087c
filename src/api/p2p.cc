// Point-to-point entry points: blocking, nonblocking and persistent sends and
// receives in all four modes (probes and starts: p2p_start.cc).
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
// exported, so calls to it stay calls). The slot comes reset: nonpersistent,
// inactive, no type or communicator held.
static inline ApiRequest* FillP2pSlot(const char* name, int comm_handle, bool is_send,
                                      SendMode mode, const void* buf, std::int64_t count,
                                      Comm* comm, dtype::Type* type, int peer, int tag,
                                      bool persistent) {
  ApiRequest* r = api::AllocRequest();
  if (!r) [[unlikely]]
    return nullptr;
  r->call = name;
  r->comm_handle = comm_handle;
  r->req.comm = comm;
  HoldCommOf(r, comm_handle, comm);
  r->is_send = is_send;
  if (persistent) r->persistent = true;
  r->user_buf = buf;
  r->count = count;
  r->type = type;
  RetainType(type);
  r->peer = peer;
  r->tag = tag;
  r->mode = mode;
  return r;
}

// A request filled with the operation's arguments (not posted yet).
ApiRequest* PrepareP2p(Call& c, bool is_send, SendMode mode, const void* buf, std::int64_t count,
                       const P2pArgs& a, int peer, int tag, bool persistent) {
  return FillP2pSlot(c.name(), c.comm_handle(), is_send, mode, buf, count, a.comm, a.type, peer,
                     tag, persistent);
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
struct BlockingSlot {
  Request req;
  bool abandoned = false;
};
// Reached through a constant-initialized initial-exec pointer: one load
// from the thread pointer, where a thread_local of the default model in a
// shared library costs a __tls_get_addr call at each use, the wait loop's
// tests included.
[[gnu::tls_model("initial-exec")]] static thread_local BlockingSlot* t_blocking = nullptr;

[[gnu::noinline]] static BlockingSlot* MakeBlockingSlot() {
  static thread_local BlockingSlot slot;
  t_blocking = &slot;
  return &slot;
}

// Blocking send or receive of a contiguous type: straight to the engine,
// with no request handle (the table's alloc, retain, reset and free were
// about half the host instructions of an 8-byte MPI_Send). `name` and
// `comm_handle` are what an error names and where it is raised.
static int BlockingDirect(BlockingSlot& slot, const char* name, int comm_handle, bool is_send,
                          SendMode mode, const void* buf, std::int64_t count, Comm* comm,
                          const dtype::Type* type, int peer, int tag, MPI_Status* status) {
  Request& q = slot.req;
  const std::size_t bytes = static_cast<std::size_t>(count * type->size);
  Status st = is_send ? rt::IsendFresh(buf, bytes, peer, tag, comm, mode, &q)
                      : rt::IrecvFresh(const_cast<void*>(buf), bytes, peer, tag, comm, &q);
  if (!st.ok()) [[unlikely]] {
    q.MakeFresh();
    return RaiseStatus(comm_handle, name, st);
  }
  if (!q.IsDone()) {
    rt::Backoff backoff;
    do {
      st = rt::ProgressWait(backoff);
      if (!st.ok()) [[unlikely]] {
        if (!q.IsDone())
          slot.abandoned = true;
        else
          q.MakeFresh();
        return RaiseStatus(comm_handle, name, st);
      }
    } while (!q.IsDone());
  }
  const RequestStatus done = q.status;
  q.MakeFresh();
  if (done.error == 0) [[likely]] {
    api::FillStatus(status, done);
    return MPI_SUCCESS;
  }
  return api::FinishP2pStatus(api::P2pCall{name, comm_handle, is_send, peer, tag, type, count},
                              done, status, /*raise=*/true);
}

// This thread's blocking slot, or nullptr once it was abandoned.
static inline BlockingSlot* UsableBlockingSlot() {
  BlockingSlot* slot = t_blocking;
  if (!slot) [[unlikely]]
    slot = MakeBlockingSlot();
  return slot->abandoned ? nullptr : slot;
}

// Blocking send or receive through a table request (no allocation once warm).
static int Blocking(Call& c, bool is_send, SendMode mode, const void* buf, std::int64_t count,
                    const P2pArgs& a, int peer, int tag, MPI_Status* status) {
  if (a.type->IsContiguous())
    if (BlockingSlot* slot = UsableBlockingSlot())
      return BlockingDirect(*slot, c.name(), c.comm_handle(), is_send, mode, buf, count, a.comm,
                            a.type, peer, tag, status);
  ApiRequest* r = PrepareP2p(c, is_send, mode, buf, count, a, peer, tag, false);
  if (!r) return c.Fail(Code::kNoMem, "request table is full");
  Status st = api::PostRequest(r);
  if (!st.ok()) {
    api::FreeRequest(r);
    return c.Fail(st);
  }
  return WaitP2p(c, r, status);
}

[[gnu::cold, gnu::noinline]] static int NoRequestSlot(const char* name, int comm_handle) {
  Call c(name);
  c.set_comm_handle(comm_handle);
  return c.Fail(Code::kNoMem, "request table is full");
}

// MPI_Isend/MPI_Irecv of a contiguous type: the prepared slot goes to the
// engine at once. PostRequest's persistent, staged and matched-message
// cases are not needed, and rt::Isend/Irecv set what they own.
[[gnu::always_inline]] static inline int NonblockingDirect(const char* name, int comm_handle,
                                                           bool is_send, SendMode mode,
                                                           const void* buf, std::int64_t count,
                                                           Comm* comm, dtype::Type* type, int peer,
                                                           int tag, MPI_Request* request) {
  ApiRequest* r = FillP2pSlot(name, comm_handle, is_send, mode, buf, count, comm, type, peer, tag,
                              /*persistent=*/false);
  if (!r) [[unlikely]]
    return NoRequestSlot(name, comm_handle);
  Request& q = r->req;
  q.api_data = r;
  const std::size_t bytes = static_cast<std::size_t>(count * type->size);
  Status st = is_send ? rt::IsendFresh(buf, bytes, peer, tag, comm, mode, &q)
                      : rt::IrecvFresh(const_cast<void*>(buf), bytes, peer, tag, comm, &q);
  if (!st.ok()) [[unlikely]] {
    api::FreeRequest(r);
    return RaiseStatus(comm_handle, name, st);
  }
  *request = r->handle;
  return MPI_SUCCESS;
}

static int Nonblocking(Call& c, bool is_send, SendMode mode, const void* buf, std::int64_t count,
                       const P2pArgs& a, int peer, int tag, MPI_Request* request, bool persistent) {
  if (!persistent && a.type->IsContiguous())
    return NonblockingDirect(c.name(), c.comm_handle(), is_send, mode, buf, count, a.comm, a.type,
                             peer, tag, request);
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

// The common case of a point-to-point call, recognized with a few
// compares: MPI is running, the communicator is MPI_COMM_WORLD or
// MPI_COMM_SELF, the datatype a predefined contiguous one, the count in
// [0, 2^31), the buffer not NULL (or the count 0), the rank one of the
// communicator's (or MPI_ANY_SOURCE for a receive) and the tag in
// [0, MPI_TAG_UB] (or MPI_ANY_TAG for a receive). Then every check of
// CheckSend/CheckRecv holds, and nothing is retained. Anything else, every
// error included, goes through the full checks, which name the argument.
struct FastArgs {
  Comm* comm;
  dtype::Type* type;
};
[[gnu::always_inline]] static inline bool FastP2pArgs(const void* buf, std::int64_t count,
                                                      MPI_Datatype dt, int peer, int tag,
                                                      MPI_Comm comm, bool recv, FastArgs* a) {
  const unsigned which = static_cast<unsigned>(comm) - static_cast<unsigned>(MPI_COMM_WORLD);
  if (which >= 2 || !IsInitialized()) return false;
  Comm* cm = g_predefined_comms[which].load(std::memory_order_acquire);
  dtype::Type* t = dtype::LookupPredefined(dt);
  if (!cm || !t || !t->IsContiguous()) return false;
  if (static_cast<std::uint64_t>(count) >> 31 != 0 || (!buf && count != 0)) return false;
  if (static_cast<unsigned>(peer) >= static_cast<unsigned>(cm->size) &&
      !(recv && peer == MPI_ANY_SOURCE))
    return false;
  if (static_cast<unsigned>(tag) > static_cast<unsigned>(rt::kMaxUserTag) &&
      !(recv && tag == MPI_ANY_TAG))
    return false;
  a->comm = cm;
  a->type = t;
  return true;
}

[[gnu::noinline]] static int SendChecked(const char* name, SendMode mode, const void* buf,
                                         std::int64_t count, MPI_Datatype dt, int dest, int tag,
                                         MPI_Comm comm) {
  Call c(name);
  P2pArgs a;
  if (!CheckSend(c, buf, count, dt, dest, tag, comm, &a)) return c.Fail();
  return Blocking(c, true, mode, buf, count, a, dest, tag, MPI_STATUS_IGNORE);
}
[[gnu::always_inline]] static inline int SendEntry(const char* name, SendMode mode, const void* buf,
                                                   std::int64_t count, MPI_Datatype dt, int dest,
                                                   int tag, MPI_Comm comm) {
  FastArgs a;
  if (FastP2pArgs(buf, count, dt, dest, tag, comm, false, &a)) [[likely]]
    if (BlockingSlot* slot = UsableBlockingSlot()) [[likely]]
      return BlockingDirect(*slot, name, comm, true, mode, buf, count, a.comm, a.type, dest, tag,
                            MPI_STATUS_IGNORE);
  return SendChecked(name, mode, buf, count, dt, dest, tag, comm);
}
int SendCall(const char* name, SendMode mode, const void* buf, std::int64_t count, MPI_Datatype dt,
             int dest, int tag, MPI_Comm comm) {
  return SendEntry(name, mode, buf, count, dt, dest, tag, comm);
}

[[gnu::noinline]] static int IsendChecked(const char* name, SendMode mode, bool persistent,
                                          const void* buf, std::int64_t count, MPI_Datatype dt,
                                          int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  Call c(name);
  P2pArgs a;
  if (!CheckSend(c, buf, count, dt, dest, tag, comm, &a) || !c.NotNull(request, "request"))
    return c.Fail();
  return Nonblocking(c, true, mode, buf, count, a, dest, tag, request, persistent);
}
[[gnu::always_inline]] static inline int IsendEntry(const char* name, SendMode mode,
                                                    bool persistent, const void* buf,
                                                    std::int64_t count, MPI_Datatype dt, int dest,
                                                    int tag, MPI_Comm comm, MPI_Request* request) {
  FastArgs a;
  if (!persistent && request && FastP2pArgs(buf, count, dt, dest, tag, comm, false, &a)) [[likely]]
    return NonblockingDirect(name, comm, true, mode, buf, count, a.comm, a.type, dest, tag,
                             request);
  return IsendChecked(name, mode, persistent, buf, count, dt, dest, tag, comm, request);
}
int IsendCall(const char* name, SendMode mode, bool persistent, const void* buf, std::int64_t count,
              MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
  return IsendEntry(name, mode, persistent, buf, count, dt, dest, tag, comm, request);
}

[[gnu::noinline]] static int RecvChecked(const char* name, void* buf, std::int64_t count,
                                         MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                                         MPI_Status* status) {
  Call c(name);
  P2pArgs a;
  if (!CheckRecv(c, buf, count, dt, source, tag, comm, &a)) return c.Fail();
  return Blocking(c, false, SendMode::kStandard, buf, count, a, source, tag, status);
}
[[gnu::always_inline]] static inline int RecvEntry(const char* name, void* buf, std::int64_t count,
                                                   MPI_Datatype dt, int source, int tag,
                                                   MPI_Comm comm, MPI_Status* status) {
  FastArgs a;
  if (FastP2pArgs(buf, count, dt, source, tag, comm, true, &a)) [[likely]]
    if (BlockingSlot* slot = UsableBlockingSlot()) [[likely]]
      return BlockingDirect(*slot, name, comm, false, SendMode::kStandard, buf, count, a.comm,
                            a.type, source, tag, status);
  return RecvChecked(name, buf, count, dt, source, tag, comm, status);
}
int RecvCall(const char* name, void* buf, std::int64_t count, MPI_Datatype dt, int source, int tag,
             MPI_Comm comm, MPI_Status* status) {
  return RecvEntry(name, buf, count, dt, source, tag, comm, status);
}

[[gnu::noinline]] static int IrecvChecked(const char* name, bool persistent, void* buf,
                                          std::int64_t count, MPI_Datatype dt, int source, int tag,
                                          MPI_Comm comm, MPI_Request* request) {
  Call c(name);
  P2pArgs a;
  if (!CheckRecv(c, buf, count, dt, source, tag, comm, &a) || !c.NotNull(request, "request"))
    return c.Fail();
  return Nonblocking(c, false, SendMode::kStandard, buf, count, a, source, tag, request,
                     persistent);
}
[[gnu::always_inline]] static inline int IrecvEntry(const char* name, bool persistent, void* buf,
                                                    std::int64_t count, MPI_Datatype dt, int source,
                                                    int tag, MPI_Comm comm, MPI_Request* request) {
  FastArgs a;
  if (!persistent && request && FastP2pArgs(buf, count, dt, source, tag, comm, true, &a)) [[likely]]
    return NonblockingDirect(name, comm, false, SendMode::kStandard, buf, count, a.comm, a.type,
                             source, tag, request);
  return IrecvChecked(name, persistent, buf, count, dt, source, tag, comm, request);
}
int IrecvCall(const char* name, bool persistent, void* buf, std::int64_t count, MPI_Datatype dt,
              int source, int tag, MPI_Comm comm, MPI_Request* request) {
  return IrecvEntry(name, persistent, buf, count, dt, source, tag, comm, request);
}

}  // namespace nicq::api

extern "C" {

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return api::SendEntry("MPI_Send", SendMode::kStandard, buf, count, datatype, dest, tag, comm);
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
  return api::IsendEntry("MPI_Isend", SendMode::kStandard, false, buf, count, datatype, dest, tag,
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
  return api::RecvEntry("MPI_Recv", buf, count, datatype, source, tag, comm, status);
}
int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  return api::IrecvEntry("MPI_Irecv", false, buf, count, datatype, source, tag, comm, request);
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Request* request) {
  return api::IrecvCall("MPI_Recv_init", true, buf, count, datatype, source, tag, comm, request);
}

}  // extern "C"
