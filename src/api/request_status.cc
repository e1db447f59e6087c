// Request free, status query without completion (MPI_Request_get_status
// and its all/any/some forms) and cancel.
#include <string>

#include "api/api_internal.h"
#include "api/completion_util.h"
#include "api/partitioned.h"
#include "runtime/runtime.h"

using namespace nicq;
using namespace nicq::api::completion;
using api::ApiRequest;
using api::Call;

extern "C" {

int MPI_Request_free(MPI_Request* request) {
  Call c("MPI_Request_free");
  ApiRequest* r;
  if (!c.Init() || !c.NotNull(request, "request") || !RequestArg(c, *request, &r)) return c.Fail();
  if (!r) return c.Fail(Code::kRequest, "request is MPI_REQUEST_NULL");
  UseCommOf(c, *request);
  // MPI 4.1 7.12/7.13: freeing a nonblocking collective request, or an active
  // persistent collective one, is erroneous (peers may still depend on it).
  if (r->req.kind == ReqKind::kColl)
    return c.Fail(
        Code::kRequest,
        "a nonblocking collective request cannot be freed; complete it with a wait or test");
  if (r->req.kind == ReqKind::kPersistentColl && Pending(r))
    return c.Fail(Code::kRequest,
                  "an active persistent collective request cannot be freed; complete it first");
  if (api::IsPartitioned(r) && Pending(r))  // MPI-4.1 4.2: erroneous
    return c.Fail(Code::kRequest,
                  "an active partitioned request cannot be freed; complete it first");
  if (Pending(r) && !r->req.IsDone())
    api::AddOrphan(r);  // finishes in the background; the slot is released then
  else if (Pending(r)) {
    // Done but not yet waited for: complete it (unpacks a receive), then release.
    bool persistent = r->persistent;
    (void)api::CompleteRequest(r, nullptr, MPI_STATUS_IGNORE, false);
    if (persistent) api::FreeRequest(r);
  } else {
    // An engine may refuse (a match in progress): then nothing is released.
    if (r->req.ops && r->req.ops->free) {
      Status st = r->req.ops->free(&r->req);
      if (!st.ok()) return c.Fail(st);
      r->req.ops = nullptr;
    }
    api::FreeRequest(r);
  }
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  Call c("MPI_Request_get_status");
  ApiRequest* r;
  if (!c.Init() || !c.NotNull(flag, "flag") || !RequestArg(c, request, &r)) return c.Fail();
  if (Pending(r) && !r->req.IsDone()) {
    Status st = rt::Progress();
    if (!st.ok()) return c.Fail(st);
  }
  *flag = !Pending(r) || r->req.IsDone();
  if (*flag) return Peek(c, r, status);
  return MPI_SUCCESS;
}

int MPI_Request_get_status_all(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  Call c("MPI_Request_get_status_all");
  if (!ArrayArgs(c, count, reqs) || !c.NotNull(flag, "flag")) return c.Fail();
  Status st = rt::Progress();
  if (!st.ok()) return c.Fail(st);
  if (!AllDone(count, reqs)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  bool error = false;
  for (int i = 0; i < count; ++i) {
    MPI_Status* s = At(statuses, i);
    int code = Peek(c, api::LookupRequest(reqs[i]), s);
    if (s != MPI_STATUS_IGNORE) s->MPI_ERROR = code;
    error |= code != MPI_SUCCESS;
  }
  return error ? InStatus(c, "array_of_statuses") : MPI_SUCCESS;
}

int MPI_Request_get_status_any(int count, MPI_Request reqs[], int* index, int* flag,
                               MPI_Status* status) {
  Call c("MPI_Request_get_status_any");
  if (!ArrayArgs(c, count, reqs) || !c.NotNull(index, "index") || !c.NotNull(flag, "flag"))
    return c.Fail();
  Status st = rt::Progress();
  if (!st.ok()) return c.Fail(st);
  bool any_pending = false;
  for (int i = 0; i < count; ++i) {
    ApiRequest* r = api::LookupRequest(reqs[i]);
    if (!Pending(r)) continue;
    any_pending = true;
    if (!r->req.IsDone()) continue;
    *index = i;
    *flag = 1;
    c.set_comm_handle(r->comm_handle);
    return Peek(c, r, status);
  }
  *index = MPI_UNDEFINED;
  *flag = any_pending ? 0 : 1;
  if (!any_pending) api::EmptyStatus(status);
  return MPI_SUCCESS;
}

int MPI_Request_get_status_some(int incount, MPI_Request reqs[], int* outcount, int indices[],
                                MPI_Status statuses[]) {
  Call c("MPI_Request_get_status_some");
  if (!ArrayArgs(c, incount, reqs) || !c.NotNull(outcount, "outcount") ||
      !c.NotNull(incount ? indices : outcount, "array_of_indices"))
    return c.Fail();
  Status st = rt::Progress();
  if (!st.ok()) return c.Fail(st);
  bool any_pending = false, error = false;
  int n = 0;
  for (int i = 0; i < incount; ++i) {
    ApiRequest* r = api::LookupRequest(reqs[i]);
    if (!Pending(r)) continue;
    any_pending = true;
    if (!r->req.IsDone()) continue;
    MPI_Status* s = At(statuses, n);
    int code = Peek(c, r, s);
    if (s != MPI_STATUS_IGNORE) s->MPI_ERROR = code;
    error |= code != MPI_SUCCESS;
    indices[n++] = i;
  }
  *outcount = any_pending ? n : MPI_UNDEFINED;
  return error ? InStatus(c, "array_of_statuses") : MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request* request) {
  Call c("MPI_Cancel");
  ApiRequest* r;
  if (!c.Init() || !c.NotNull(request, "request") || !RequestArg(c, *request, &r)) return c.Fail();
  if (!r) return c.Fail(Code::kRequest, "request is MPI_REQUEST_NULL");
  c.set_comm_handle(r->comm_handle);
  if (!Pending(r)) return c.Fail(Code::kRequest, "persistent request is not active");
  // Too late: it completes normally; unless its engine refuses any cancel
  // (match and collective requests cannot be cancelled, done or not).
  if (r->req.IsDone() && !(r->req.ops && r->req.ops->cancel)) return MPI_SUCCESS;
  return c.Fail(api::CancelRequest(r));
}

}  // extern "C"
