// MPI_Sendrecv and MPI_Sendrecv_replace, and their nonblocking MPI-4 forms
// MPI_Isendrecv and MPI_Isendrecv_replace: a receive and a send posted
// together. The nonblocking forms return one request made of both halves; it
// is done when both are (a polled request) and reports the receive's status.
// Under MPI_PROC_NULL each half completes at once, so the pair does too
// (source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0).
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "api/p2p_calls.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::ApiRequest;
using api::Call;

namespace {

// The two halves of a nonblocking MPI_Isendrecv: complete when both are.
struct SendrecvPair {
  ApiRequest* send = nullptr;
  ApiRequest* recv = nullptr;
  std::vector<char> staged_out;  // MPI_Isendrecv_replace: the outgoing copy
};

// Done with both halves; the receive's status is then the pair's (what
// MPI_Request_get_status reports before the final wait).
bool PairDone(Request* req) {
  auto* p = static_cast<SendrecvPair*>(req->engine);
  if (!p->send->req.IsDone() || !p->recv->req.IsDone()) return false;
  req->status = p->recv->req.status;
  return true;
}

// The receive's status is the pair's; a failed send reports its error there.
Status PairComplete(Request* req) {
  auto* p = static_cast<SendrecvPair*>(req->engine);
  MPI_Status st;
  int rc_recv = api::CompleteRequest(p->recv, nullptr, &st, /*raise=*/false);
  p->recv = nullptr;
  int rc_send = api::CompleteRequest(p->send, nullptr, MPI_STATUS_IGNORE, /*raise=*/false);
  p->send = nullptr;
  req->status.source = st.MPI_SOURCE;
  req->status.tag = st.MPI_TAG;
  req->status.bytes = static_cast<std::size_t>(st.nicq_count);
  req->status.cancelled = st.nicq_cancelled != 0;
  int code = rc_recv != MPI_SUCCESS ? rc_recv : rc_send;
  if (code == MPI_SUCCESS) return Status::Ok();
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0, cls = 0;
  PMPI_Error_string(code, msg, &len);
  PMPI_Error_class(code, &cls);
  // The halves' messages name the call already ("MPI_Isendrecv(rank 0): ..."):
  // keep what follows the call's own prefix.
  std::string text(msg, static_cast<std::size_t>(len));
  if (auto at = text.find("): "); at != std::string::npos) text = text.substr(at + 3);
  return Error(static_cast<Code>(cls), text);
}

Status PairFree(Request* req) {
  auto* p = static_cast<SendrecvPair*>(req->engine);
  if (!p) return Status::Ok();
  // Released without its final wait (MPI_Request_free): the pair is done
  // (its slot is released only then), so the halves are completed (a
  // receive unpacks) and released here. This may run inside the orphan
  // sweep, so it must not add orphans itself.
  for (ApiRequest* half : {p->recv, p->send}) {
    if (!half) continue;
    if (half->req.IsDone())
      (void)api::CompleteRequest(half, nullptr, MPI_STATUS_IGNORE, /*raise=*/false);
    else
      api::AddOrphan(half);  // not reached: a pair is done only when both are
  }
  delete p;
  req->engine = nullptr;
  return Status::Ok();
}

// Both halves are cancelled as each alone would be; the pair reports the
// receive's cancelled flag.
Status PairCancel(Request* req) {
  auto* p = static_cast<SendrecvPair*>(req->engine);
  if (!p || !p->recv) return Status::Ok();  // completed already
  Status st = api::CancelRequest(p->recv);
  Status ss = api::CancelRequest(p->send);
  return st.ok() ? ss : st;
}

const RequestOps kPairOps = {nullptr, PairFree, PairCancel, PairComplete, nullptr};

// Posts the receive, then the send. Blocking (request == nullptr): waits
// for both. Otherwise *request is a pair request that completes with both;
// `staged_out` (replace) moves into it, since the send reads from it.
int SendrecvPosted(Call& c, const void* sendbuf, std::int64_t sendcount, const api::P2pArgs& s,
                   int dest, int sendtag, void* recvbuf, std::int64_t recvcount,
                   const api::P2pArgs& r, int source, int recvtag, MPI_Status* status,
                   MPI_Request* request, std::vector<char>* staged_out) {
  SendrecvPair* pair = nullptr;
  Request* outer = nullptr;
  MPI_Request outer_handle = MPI_REQUEST_NULL;
  if (request) {
    outer = api::AllocEngineRequest(c.comm_handle(), c.name(), false, &outer_handle);
    if (!outer) return c.Fail(Code::kNoMem, "request table is full");
    pair = new SendrecvPair;
    if (staged_out) {
      pair->staged_out.swap(*staged_out);
      sendbuf = pair->staged_out.data();
    }
  }
  ApiRequest* rq =
      api::PrepareP2p(c, false, SendMode::kStandard, recvbuf, recvcount, r, source, recvtag, false);
  ApiRequest* sq =
      api::PrepareP2p(c, true, SendMode::kStandard, sendbuf, sendcount, s, dest, sendtag, false);
  Status st = rq && sq ? api::PostRequest(rq) : Error(Code::kNoMem, "request table is full");
  if (!st.ok()) {
    if (rq) api::FreeRequest(rq);
    if (sq) api::FreeRequest(sq);
    if (outer) api::FreeRequest(api::LookupRequest(outer_handle));
    delete pair;
    return c.Fail(st);
  }
  st = api::PostRequest(sq);
  if (!st.ok()) {
    // The receive is posted: let it finish in the background.
    api::FreeRequest(sq);
    api::AddOrphan(rq);
    if (outer) api::FreeRequest(api::LookupRequest(outer_handle));
    delete pair;
    return c.Fail(st);
  }
  if (!request) {
    int rc_send = api::WaitP2p(c, sq, MPI_STATUS_IGNORE);
    int rc_recv = api::WaitP2p(c, rq, status);
    return rc_recv != MPI_SUCCESS ? rc_recv : rc_send;
  }
  pair->send = sq;
  pair->recv = rq;
  outer->kind = ReqKind::kSend;
  outer->engine = pair;
  outer->ops = &kPairOps;
  if (PairDone(outer))  // MPI_PROC_NULL, or both already finished
    outer->MarkDone();
  else
    api::AddPolledRequest(outer, PairDone);
  *request = outer_handle;
  return MPI_SUCCESS;
}

}  // namespace

namespace nicq::api {

int SendrecvCall(const char* name, const void* sendbuf, std::int64_t sendcount,
                 MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 std::int64_t recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status, bool nonblocking, MPI_Request* request) {
  Call c(name);
  api::P2pArgs s, r;
  if (!api::CheckSend(c, sendbuf, sendcount, sendtype, dest, sendtag, comm, &s) ||
      !api::CheckRecv(c, recvbuf, recvcount, recvtype, source, recvtag, comm, &r) ||
      (nonblocking && !c.NotNull(request, "request")))
    return c.Fail();
  if (api::Overlap(*s.type, sendbuf, sendcount, *r.type, recvbuf, recvcount))
    return c.Fail(Code::kBuffer,
                  "send and receive buffers overlap (use MPI_Sendrecv_replace to reuse a buffer)");
  return SendrecvPosted(c, sendbuf, sendcount, s, dest, sendtag, recvbuf, recvcount, r, source,
                        recvtag, status, nonblocking ? request : nullptr, nullptr);
}

int SendrecvReplaceCall(const char* name, void* buf, std::int64_t count, MPI_Datatype dt, int dest,
                        int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status* status,
                        bool nonblocking, MPI_Request* request) {
  Call c(name);
  api::P2pArgs a;
  if (!api::CheckSend(c, buf, count, dt, dest, sendtag, comm, &a) ||
      !api::CheckRecv(c, buf, count, dt, source, recvtag, comm, &a) ||
      (nonblocking && !c.NotNull(request, "request")))
    return c.Fail();
  // Stage the outgoing data so the receive may overwrite buf right away.
  std::vector<char> out(static_cast<std::size_t>(count * a.type->size));
  if (!out.empty()) dtype::Pack(*a.type, buf, count, out.data());
  api::P2pArgs bytes{a.comm, dtype::Lookup(MPI_BYTE)};
  const std::int64_t n = static_cast<std::int64_t>(out.size());
  return SendrecvPosted(c, out.data(), n, bytes, dest, sendtag, buf, count, a, source, recvtag,
                        status, nonblocking ? request : nullptr, &out);
}

}  // namespace nicq::api

extern "C" {

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  return api::SendrecvCall("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, status, false, nullptr);
}
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  return api::SendrecvReplaceCall("MPI_Sendrecv_replace", buf, count, datatype, dest, sendtag,
                                  source, recvtag, comm, status, false, nullptr);
}
int MPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request* request) {
  return api::SendrecvCall("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, MPI_STATUS_IGNORE, true,
                           request);
}
int MPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  return api::SendrecvReplaceCall("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag,
                                  source, recvtag, comm, MPI_STATUS_IGNORE, true, request);
}

}  // extern "C"
