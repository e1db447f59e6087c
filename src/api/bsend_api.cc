// Buffered-mode buffers: the process's (MPI_Buffer_*), and MPI-4.1's per
// communicator (MPI_Comm_*_buffer) and per session (MPI_Session_*_buffer)
// ones, with their flush and nonblocking flush. MPI_BUFFER_AUTOMATIC lets
// nicq allocate room for each buffered message itself.
#include <climits>
#include <string>

#include "api/api_internal.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

namespace {

bool SizeArg(Call& c, void* buffer, std::int64_t size) {
  if (buffer == MPI_BUFFER_AUTOMATIC) return true;
  return c.Check(size >= 0, Code::kArg, "negative size " + std::to_string(size)) &&
         c.Check(buffer != nullptr || size == 0, Code::kBuffer, "buffer is NULL");
}

// The owner of a communicator's buffer; false (error recorded) for a bad comm.
bool CommOwner(Call& c, MPI_Comm comm, rt::BufferOwner* owner) {
  Comm* cm;
  if (!c.CommArg(comm, &cm)) return false;
  *owner = rt::BufferOwner{rt::BufferOwner::kComm, cm->context_id};
  return true;
}

// Sessions are checked by handle kind; their errors go to MPI_COMM_WORLD's
// handler here.
bool SessionOwner(Call& c, MPI_Session session, rt::BufferOwner* owner) {
  if (api::KindOf(session) != NICQ_KIND_SESSION || api::IndexOf(session) == 0)
    return c.Check(false, static_cast<Code>(MPI_ERR_SESSION),
                   session == MPI_SESSION_NULL ? std::string("session is MPI_SESSION_NULL")
                                               : "invalid session " + std::to_string(session));
  *owner =
      rt::BufferOwner{rt::BufferOwner::kSession, static_cast<std::uint32_t>(api::IndexOf(session))};
  return true;
}

int Attach(Call& c, rt::BufferOwner owner, void* buffer, std::int64_t size) {
  if (!SizeArg(c, buffer, size)) return c.Fail();
  if (buffer == MPI_BUFFER_AUTOMATIC) buffer = rt::kBufferAutomatic;
  return c.Fail(rt::BufferAttachTo(owner, buffer, static_cast<std::size_t>(size)));
}

// `size` is an int* or MPI_Count* (is_count).
int Detach(Call& c, rt::BufferOwner owner, void* buffer_addr, void* size, bool is_count) {
  if (!c.NotNull(buffer_addr, "buffer_addr") || !c.NotNull(size, "size")) return c.Fail();
  void* buf = nullptr;
  std::size_t n = 0;
  Status st = owner.kind == rt::BufferOwner::kProcess ? rt::BufferDetach(&buf, &n)
                                                      : rt::BufferDetachFrom(owner, &buf, &n);
  if (!st.ok()) return c.Fail(st);
  *static_cast<void**>(buffer_addr) = buf == rt::kBufferAutomatic ? MPI_BUFFER_AUTOMATIC : buf;
  if (is_count)
    *static_cast<MPI_Count*>(size) = static_cast<MPI_Count>(n);
  else
    *static_cast<int*>(size) = n > INT_MAX ? MPI_UNDEFINED : static_cast<int>(n);
  return MPI_SUCCESS;
}

bool FlushDone(Request* req) {
  rt::BufferOwner owner{static_cast<rt::BufferOwner::Kind>(req->engine_word[0]),
                        static_cast<std::uint32_t>(req->engine_word[1])};
  return rt::BufferIdle(owner);
}

// A request that completes once every message of the buffer has been sent.
int Iflush(Call& c, rt::BufferOwner owner, MPI_Request* request) {
  if (!c.NotNull(request, "request")) return c.Fail();
  MPI_Request h = MPI_REQUEST_NULL;
  Request* req = api::AllocEngineRequest(c.comm_handle(), c.name(), false, &h);
  if (!req) return c.Fail(Code::kNoMem, "request table is full");
  req->engine_word[0] = owner.kind;
  req->engine_word[1] = owner.id;
  if (FlushDone(req))
    req->MarkDone();
  else
    api::AddPolledRequest(req, FlushDone);
  *request = h;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Buffer_attach(void* buffer, int size) {
  Call c("MPI_Buffer_attach");
  if (!c.Init()) return c.Fail();
  return Attach(c, rt::BufferOwner{}, buffer, size);
}
int MPI_Buffer_attach_c(void* buffer, MPI_Count size) {
  Call c("MPI_Buffer_attach_c");
  if (!c.Init()) return c.Fail();
  return Attach(c, rt::BufferOwner{}, buffer, size);
}
int MPI_Buffer_detach(void* buffer_addr, int* size) {
  Call c("MPI_Buffer_detach");
  if (!c.Init()) return c.Fail();
  return Detach(c, rt::BufferOwner{}, buffer_addr, size, false);
}
int MPI_Buffer_detach_c(void* buffer_addr, MPI_Count* size) {
  Call c("MPI_Buffer_detach_c");
  if (!c.Init()) return c.Fail();
  return Detach(c, rt::BufferOwner{}, buffer_addr, size, true);
}
int MPI_Buffer_flush(void) {
  Call c("MPI_Buffer_flush");
  if (!c.Init()) return c.Fail();
  return c.Fail(rt::BufferFlush(rt::BufferOwner{}));
}
int MPI_Buffer_iflush(MPI_Request* request) {
  Call c("MPI_Buffer_iflush");
  if (!c.Init()) return c.Fail();
  return Iflush(c, rt::BufferOwner{}, request);
}

int MPI_Comm_attach_buffer(MPI_Comm comm, void* buffer, int size) {
  Call c("MPI_Comm_attach_buffer");
  rt::BufferOwner o;
  if (!c.Init() || !CommOwner(c, comm, &o)) return c.Fail();
  return Attach(c, o, buffer, size);
}
int MPI_Comm_attach_buffer_c(MPI_Comm comm, void* buffer, MPI_Count size) {
  Call c("MPI_Comm_attach_buffer_c");
  rt::BufferOwner o;
  if (!c.Init() || !CommOwner(c, comm, &o)) return c.Fail();
  return Attach(c, o, buffer, size);
}
int MPI_Comm_detach_buffer(MPI_Comm comm, void* buffer_addr, int* size) {
  Call c("MPI_Comm_detach_buffer");
  rt::BufferOwner o;
  if (!c.Init() || !CommOwner(c, comm, &o)) return c.Fail();
  return Detach(c, o, buffer_addr, size, false);
}
int MPI_Comm_detach_buffer_c(MPI_Comm comm, void* buffer_addr, MPI_Count* size) {
  Call c("MPI_Comm_detach_buffer_c");
  rt::BufferOwner o;
  if (!c.Init() || !CommOwner(c, comm, &o)) return c.Fail();
  return Detach(c, o, buffer_addr, size, true);
}
int MPI_Comm_flush_buffer(MPI_Comm comm) {
  Call c("MPI_Comm_flush_buffer");
  rt::BufferOwner o;
  if (!c.Init() || !CommOwner(c, comm, &o)) return c.Fail();
  return c.Fail(rt::BufferFlush(o));
}
int MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request* request) {
  Call c("MPI_Comm_iflush_buffer");
  rt::BufferOwner o;
  if (!c.Init() || !CommOwner(c, comm, &o)) return c.Fail();
  return Iflush(c, o, request);
}

int MPI_Session_attach_buffer(MPI_Session session, void* buffer, int size) {
  Call c("MPI_Session_attach_buffer");
  rt::BufferOwner o;
  if (!c.Init() || !SessionOwner(c, session, &o)) return c.Fail();
  return Attach(c, o, buffer, size);
}
int MPI_Session_attach_buffer_c(MPI_Session session, void* buffer, MPI_Count size) {
  Call c("MPI_Session_attach_buffer_c");
  rt::BufferOwner o;
  if (!c.Init() || !SessionOwner(c, session, &o)) return c.Fail();
  return Attach(c, o, buffer, size);
}
int MPI_Session_detach_buffer(MPI_Session session, void* buffer_addr, int* size) {
  Call c("MPI_Session_detach_buffer");
  rt::BufferOwner o;
  if (!c.Init() || !SessionOwner(c, session, &o)) return c.Fail();
  return Detach(c, o, buffer_addr, size, false);
}
int MPI_Session_detach_buffer_c(MPI_Session session, void* buffer_addr, MPI_Count* size) {
  Call c("MPI_Session_detach_buffer_c");
  rt::BufferOwner o;
  if (!c.Init() || !SessionOwner(c, session, &o)) return c.Fail();
  return Detach(c, o, buffer_addr, size, true);
}
int MPI_Session_flush_buffer(MPI_Session session) {
  Call c("MPI_Session_flush_buffer");
  rt::BufferOwner o;
  if (!c.Init() || !SessionOwner(c, session, &o)) return c.Fail();
  return c.Fail(rt::BufferFlush(o));
}
int MPI_Session_iflush_buffer(MPI_Session session, MPI_Request* request) {
  Call c("MPI_Session_iflush_buffer");
  rt::BufferOwner o;
  if (!c.Init() || !SessionOwner(c, session, &o)) return c.Fail();
  return Iflush(c, o, request);
}

}  // extern "C"
