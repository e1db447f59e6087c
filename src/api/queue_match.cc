// C entry points of chapter 13.2: MPI_Match, MPI_Imatch, MPI_Matchall,
// MPI_Imatchall, MPI_Is_matched. Checks every request before touching any,
// so an erroneous call changes nothing.
#include <string>
#include <vector>

#include "api/api_internal.h"
#include "api/partitioned.h"
#include "queue/match_engine.h"
#include "queue/matched_p2p.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

using nicq::Code;
using nicq::Status;
using nicq::api::ApiRequest;
using nicq::api::Call;
namespace queue = nicq::queue;
namespace rt = nicq::rt;

namespace {

std::string At(int i) {
  return i < 0 ? std::string("request") : "array_of_requests[" + std::to_string(i) + "]";
}

// Valid, inactive, persistent (p2p or collective) and not matched yet.
bool MatchableArg(Call& c, MPI_Request h, int i, ApiRequest** out) {
  ApiRequest* r = h == MPI_REQUEST_NULL ? nullptr : nicq::api::LookupRequest(h);
  *out = r;
  if (!c.Check(r != nullptr, Code::kRequest,
               "invalid request handle " + std::to_string(h) + " (" + At(i) + ")"))
    return false;
  c.set_comm_handle(r->comm_handle);
  const nicq::ReqKind kind = r->req.kind;
  if (!c.Check(kind != nicq::ReqKind::kGeneralized, Code::kRequest,
               At(i) + " is a generalized request; only persistent requests can be matched"))
    return false;
  const bool coll = kind == nicq::ReqKind::kPersistentColl;
  if (!c.Check(coll || r->persistent, Code::kRequest,
               At(i) + " is not a persistent request; only persistent requests can be matched"))
    return false;
  if (!c.Check(!r->active && !r->req.active, Code::kRequest, At(i) + " is active")) return false;
  if (!c.Check(!nicq::api::IsPartitioned(r), Code::kMatch,
               At(i) + " is a partitioned request, matched from its initialisation"))
    return false;
  if (!c.Check(!r->req.comm || !r->req.comm->inter, Code::kComm,
               At(i) + " is on an intercommunicator; matched and queued operations need an "
                       "intracommunicator (start it with MPI_Start instead)"))
    return false;
  if (coll) {
    queue::Enqueueable* e = queue::EnqueueableOf(&r->req);
    if (!c.Check(e != nullptr, Code::kMatch,
                 At(i) + ": this persistent collective cannot be matched (its engine exposes no "
                         "enqueueable plan)"))
      return false;
    if (!c.Check(!e->IsMatched(), Code::kMatch, At(i) + " is already matched")) return false;
    // Caught here, not by BeginMatch, so that the requests before it are
    // not begun by a call that fails.
    const char* by = queue::MatchInProgress(e);
    return c.Check(by == nullptr, Code::kMatch,
                   At(i) + " is being matched (" + std::string(by ? by : "") + " not complete)");
  }
  if (!c.Check(r->req.ops == nullptr, Code::kMatch,
               At(i) + " is already matched (a match lasts until MPI_Request_free)"))
    return false;
  return c.Check(r->type && r->type->IsContiguous(), Code::kType,
                 At(i) +
                     ": matched requests need a contiguous datatype (the NIC writes the "
                     "receive buffer directly)");
}

// The request returned by MPI_Imatch/MPI_Imatchall: nonpersistent, not
// cancellable (13.2); its completion reports the match's first failure.
nicq::Status MatchRequestComplete(nicq::Request* req) {
  return queue::TakeMatchResult(req);
}
nicq::Status MatchRequestFree(nicq::Request* req) {
  (void)queue::TakeMatchResult(req);
  return Status::Ok();
}
nicq::Status MatchRequestCancel(nicq::Request*) {
  return nicq::Error(Code::kRequest,
                     "the request of MPI_Imatch/MPI_Imatchall cannot be cancelled (13.2); "
                     "complete it with a wait or test");
}
const nicq::RequestOps kMatchRequestOps = {nullptr, &MatchRequestFree, &MatchRequestCancel,
                                           &MatchRequestComplete, nullptr};

// Installs the matched engine (p2p) and posts the request's match exchange.
Status Begin(ApiRequest* r, queue::Enqueueable** out) {
  if (r->req.kind == nicq::ReqKind::kPersistentColl) {
    *out = queue::EnqueueableOf(&r->req);
    return (*out)->BeginMatch();
  }
  queue::P2pArgs a;
  a.is_send = r->is_send;
  a.mode = r->mode;
  a.comm = r->req.comm;
  a.buf = const_cast<void*>(r->user_buf);
  a.bytes = std::size_t(r->count * r->type->size);
  a.peer = r->peer;
  a.tag = r->tag;
  auto* m = new queue::MatchedP2p(a);
  m->qslot.owner_handle = r->handle;
  Status st = m->BeginMatch();
  if (!st.ok()) {
    delete m;
    return st;
  }
  r->req.kind = r->is_send ? nicq::ReqKind::kPersistentSend : nicq::ReqKind::kPersistentRecv;
  r->req.persistent = true;
  r->req.engine = m;
  r->req.ops = &queue::kMatchedP2pOps;
  *out = m;
  return Status::Ok();
}

// Checks all, then begins all. A request that fails to begin has nothing
// posted; the ones begun before it (their peers may already hold their
// offers) finish matching in the background, so that neither they nor their
// peers are left half-matched, and the error says so.
int Prepare(Call& c, int count, MPI_Request reqs[], std::vector<queue::Enqueueable*>* es) {
  if (!c.Init() || !c.CountArg(count) || !c.NotNull(count ? reqs : &count, "array_of_requests"))
    return c.Fail();
  std::vector<ApiRequest*> rs(std::size_t(count), nullptr);
  for (int i = 0; i < count; ++i) {
    if (!MatchableArg(c, reqs[i], i, &rs[i])) return c.Fail();
    for (int j = 0; j < i; ++j)
      if (!c.Check(rs[j] != rs[i], Code::kRequest,
                   At(i) + " repeats " + At(j) + " (a request is matched once)"))
        return c.Fail();
  }
  Status st = rt::EnsureOffloadContext();
  if (!st.ok()) return c.Fail(st);
  queue::EnsureProgressHook();
  for (int i = 0; i < count; ++i) {
    queue::Enqueueable* e = nullptr;
    st = Begin(rs[std::size_t(i)], &e);
    if (!st.ok()) {
      const std::string name = c.name();
      std::string msg = (name == "MPI_Match"    ? "request"
                         : name == "MPI_Imatch" ? "tomatch"
                                                : At(i)) +
                        ": " + st.message();
      if (i > 0) {
        msg += "; " + (i == 1 ? At(0) : "array_of_requests[0.." + std::to_string(i - 1) + "]") +
               " went on matching (MPI_Is_matched tells when done), the rest are unchanged";
        (void)queue::MatchBegin(std::move(*es), nullptr, c.name());
        es->clear();
      }
      return c.Fail(Status(st.code(), msg));
    }
    es->push_back(e);
  }
  return MPI_SUCCESS;
}

int Blocking(const char* name, int count, MPI_Request reqs[]) {
  Call c(name);
  std::vector<queue::Enqueueable*> es;
  int rc = Prepare(c, count, reqs, &es);
  if (rc != MPI_SUCCESS) return rc;
  return c.Fail(queue::MatchAll(es, name));
}

int Nonblocking(const char* name, int count, MPI_Request reqs[], MPI_Request* out) {
  Call c(name);
  if (!c.NotNull(out, "matchrequest")) return c.Fail();
  ApiRequest* m = nicq::api::AllocRequest();
  if (!m) return c.Fail(Code::kNoMem, "request table is full");
  std::vector<queue::Enqueueable*> es;
  int rc = Prepare(c, count, reqs, &es);
  if (rc != MPI_SUCCESS) {
    nicq::api::FreeRequest(m);
    return rc;
  }
  m->req.kind = nicq::ReqKind::kMatch;
  m->comm_handle = c.comm_handle();
  m->call = name;
  m->persistent = false;
  m->is_send = false;
  m->type = nullptr;
  m->req.ops = &kMatchRequestOps;
  (void)queue::MatchBegin(std::move(es), &m->req, name);
  queue::PollMatches();
  *out = m->handle;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Match(MPI_Request* request) {
  Call c("MPI_Match");
  if (!c.NotNull(request, "request")) return c.Fail();
  return Blocking("MPI_Match", 1, request);
}

int MPI_Matchall(int count, MPI_Request array_of_requests[]) {
  return Blocking("MPI_Matchall", count, array_of_requests);
}

int MPI_Imatch(MPI_Request* tomatch, MPI_Request* matchrequest) {
  Call c("MPI_Imatch");
  if (!c.NotNull(tomatch, "tomatch")) return c.Fail();
  return Nonblocking("MPI_Imatch", 1, tomatch, matchrequest);
}

int MPI_Imatchall(int count, MPI_Request array_of_requests[], MPI_Request* request) {
  return Nonblocking("MPI_Imatchall", count, array_of_requests, request);
}

int MPI_Is_matched(MPI_Request request, int* flag) {
  Call c("MPI_Is_matched");
  if (!c.Init() || !c.NotNull(flag, "flag")) return c.Fail();
  ApiRequest* r = request == MPI_REQUEST_NULL ? nullptr : nicq::api::LookupRequest(request);
  if (!c.Check(r != nullptr, Code::kRequest, "invalid request handle " + std::to_string(request)))
    return c.Fail();
  c.set_comm_handle(r->comm_handle);
  if (!c.Check(r->persistent || r->req.kind == nicq::ReqKind::kPersistentColl, Code::kRequest,
               "request is not a persistent request"))
    return c.Fail();
  if (nicq::api::IsPartitioned(r)) {  // matched from its initialisation
    *flag = 1;
    return MPI_SUCCESS;
  }
  // A local call may still drive progress: pending MPI_Imatch exchanges
  // advance here even before rt::Progress runs the queue's hook.
  queue::QueueProgress();
  (void)nicq::rt::Progress();
  queue::Enqueueable* e = queue::EnqueueableOf(&r->req);
  *flag = e != nullptr && e->IsMatched();
  return MPI_SUCCESS;
}

}  // extern "C"
