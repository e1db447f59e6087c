// Generalized requests (MPI_Grequest_start, MPI_Grequest_complete): a
// request whose operation the application runs itself. Its callbacks are
// called as MPI 4.1 section 13.2 says: query_fn fills the status when a
// wait or test completes the request (and on MPI_Request_get_status),
// free_fn follows it (or runs when a request freed with MPI_Request_free
// completes), cancel_fn runs on MPI_Cancel with whether it has completed.
#include <string>

#include "api/api_internal.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

namespace {

struct Grequest {
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extra = nullptr;
  bool freed = false;  // free_fn has run
};

Grequest* Of(Request* req) {
  return static_cast<Grequest*>(req->engine);
}

// A nonzero code from a callback, as a Status naming the callback.
Status CallbackStatus(int code, const char* which) {
  if (code == MPI_SUCCESS) return Status::Ok();
  int cls = MPI_ERR_OTHER;
  if (PMPI_Error_class(code, &cls) != MPI_SUCCESS) cls = MPI_ERR_OTHER;
  return Error(static_cast<Code>(cls),
               std::string(which) + " returned error code " + std::to_string(code));
}

Status RunFree(Grequest* g) {
  if (g->freed) return Status::Ok();
  g->freed = true;
  return CallbackStatus(g->free ? g->free(g->extra) : MPI_SUCCESS, "free_fn");
}

Status Complete(Request* req) {
  Status st = api::GrequestQuery(req);
  Status fr = RunFree(Of(req));
  return st.ok() ? fr : st;
}

Status Free(Request* req) {
  Grequest* g = Of(req);
  if (!g) return Status::Ok();
  Status st = RunFree(g);
  delete g;
  req->engine = nullptr;
  return st;
}

Status Cancel(Request* req) {
  Grequest* g = Of(req);
  const int complete = req->IsDone() ? 1 : 0;
  return CallbackStatus(g->cancel ? g->cancel(g->extra, complete) : MPI_SUCCESS, "cancel_fn");
}

const RequestOps kGrequestOps = {nullptr, Free, Cancel, Complete, nullptr};

}  // namespace

namespace nicq::api {

Status GrequestQuery(Request* req) {
  Grequest* g = Of(req);
  MPI_Status s;
  EmptyStatus(&s);
  s.MPI_SOURCE = MPI_UNDEFINED;
  s.MPI_TAG = MPI_UNDEFINED;
  Status st = CallbackStatus(g->query ? g->query(g->extra, &s) : MPI_SUCCESS, "query_fn");
  req->status.source = s.MPI_SOURCE;
  req->status.tag = s.MPI_TAG;
  req->status.bytes = static_cast<std::size_t>(s.nicq_count < 0 ? 0 : s.nicq_count);
  req->status.cancelled = s.nicq_cancelled != 0;
  return st;
}

}  // namespace nicq::api

extern "C" {

int MPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                       MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                       MPI_Request* request) {
  Call c("MPI_Grequest_start");
  if (!c.Init() || !c.NotNull(request, "request")) return c.Fail();
  MPI_Request h = MPI_REQUEST_NULL;
  Request* req = api::AllocEngineRequest(MPI_COMM_WORLD, c.name(), false, &h);
  if (!req) return c.Fail(Code::kNoMem, "request table is full");
  req->kind = ReqKind::kGeneralized;
  req->engine = new Grequest{query_fn, free_fn, cancel_fn, extra_state, false};
  req->ops = &kGrequestOps;
  *request = h;
  return MPI_SUCCESS;
}

int MPI_Grequest_complete(MPI_Request request) {
  Call c("MPI_Grequest_complete");
  if (!c.Init()) return c.Fail();
  api::ApiRequest* r = api::LookupRequest(request);
  if (!r || r->req.kind != ReqKind::kGeneralized)
    return c.Fail(Code::kRequest,
                  "request " + std::to_string(request) + " is not a generalized request");
  c.set_comm_handle(r->comm_handle);
  if (r->req.IsDone()) return c.Fail(Code::kRequest, "generalized request is already complete");
  r->req.MarkDone();
  return MPI_SUCCESS;
}

}  // extern "C"
