// Completion: wait/test in their single and all forms (the any and some
// forms: completion_any.cc; request free, status query and cancel:
// request_status.cc). Null handles and
// inactive persistent requests count as already complete with an empty
// status; blocking forms loop on rt::ProgressWait so they spin briefly, then
// yield, then block.
#include <string>

#include "api/api_internal.h"
#include "api/completion_util.h"
#include "runtime/runtime.h"

using namespace nicq;
using namespace nicq::api::completion;
using api::ApiRequest;
using api::Call;

namespace nicq::api::completion {

// Looks up one handle: *r = nullptr for MPI_REQUEST_NULL. False (error
// recorded) for a handle that is not a live request.
bool RequestArg(Call& c, MPI_Request h, ApiRequest** r, int index) {
  *r = nullptr;
  if (h == MPI_REQUEST_NULL) return true;
  *r = api::LookupRequest(h);
  if (*r) return api::NotEnqueued(c, *r, index);
  std::string where = index < 0 ? "" : " at array_of_requests[" + std::to_string(index) + "]";
  return c.Check(false, Code::kRequest, "invalid request handle " + std::to_string(h) + where);
}

bool AllDone(int count, const MPI_Request reqs[]) {
  for (int i = 0; i < count; ++i) {
    const ApiRequest* r = api::LookupRequest(reqs[i]);
    if (Pending(r) && !r->req.IsDone()) return false;
  }
  return true;
}

// `found` (may be null): receives the looked-up request of each handle.
bool ArrayArgs(Call& c, int count, MPI_Request reqs[], ApiRequest** found) {
  if (!c.Init() || !c.CountArg(count) || !c.NotNull(count ? reqs : &count, "array_of_requests"))
    return false;
  for (int i = 0; i < count; ++i) {
    // A live point-to-point request (no other engine's ops: never
    // enqueued) is the common case; RequestArg does the rest.
    ApiRequest* r = api::LookupRequest(reqs[i]);
    if (!r || r->req.ops) [[unlikely]] {
      if (!RequestArg(c, reqs[i], &r, i)) return false;
    }
    if (found) found[i] = r;
  }
  return true;
}

int InStatus(Call& c, const char* what) {
  return c.Fail(Code::kInStatus, std::string("one or more requests failed (") + what +
                                     " hold each request's error code)");
}

// Raises on the request's communicator (MPI: errors of a completion call
// belong to the request's communicator).
void UseCommOf(Call& c, MPI_Request h) {
  if (ApiRequest* r = api::LookupRequest(h)) c.set_comm_handle(r->comm_handle);
}

// The status of a request that is done (or inactive), leaving the request
// as it is: returns the request's own error code (recorded, not raised).
int Peek(Call& c, ApiRequest* r, MPI_Status* status) {
  if (!Pending(r)) {
    api::EmptyStatus(status);
    return MPI_SUCCESS;
  }
  Request& q = r->req;
  if (q.kind == ReqKind::kGeneralized) {
    Status st = api::GrequestQuery(&q);
    api::FillStatus(status, q.status);
    if (!st.ok()) return c.Fail(st);
    return MPI_SUCCESS;
  }
  // The data must be in the user's buffer once the request is seen done;
  // unpacking again at the final wait rewrites the same bytes.
  if (!r->is_send && r->staged && !q.status.cancelled)
    dtype::Unpack(*r->type, r->staging.data(), static_cast<std::int64_t>(q.status.bytes), r->count,
                  const_cast<void*>(r->user_buf));
  if (q.ops) {  // another engine's request: its status is final only at completion
    api::FillStatus(status, q.status);
    return MPI_SUCCESS;
  }
  return api::FinishP2pStatus(
      api::P2pCall{r->call, r->comm_handle, r->is_send, r->peer, r->tag, r->type, r->count},
      q.status, status, /*raise=*/false);
}

// One polling step of a blocking wait; false with the error raised.
bool Step(Call& c, rt::Backoff& b, int* rc) {
  Status st = rt::ProgressWait(b);
  if (st.ok()) return true;
  *rc = c.Fail(st);
  return false;
}

// Completes every done, pending request in reqs; returns how many. Errors
// go into per-request statuses (MPI_ERR_IN_STATUS handling).
int CompleteDone(int count, MPI_Request reqs[], MPI_Status* statuses, int* indices, bool* error) {
  int n = 0;
  for (int i = 0; i < count; ++i) {
    ApiRequest* r = api::LookupRequest(reqs[i]);
    if (!Pending(r) || !r->req.IsDone()) continue;
    MPI_Status* s = indices ? At(statuses, n) : At(statuses, i);
    int code = api::CompleteRequest(r, &reqs[i], s, /*raise=*/false);
    if (s != MPI_STATUS_IGNORE) s->MPI_ERROR = code;
    if (code != MPI_SUCCESS) *error = true;
    if (indices) indices[n] = i;
    ++n;
  }
  return n;
}

// The Call of an error found after the arguments passed (a failed progress
// step, MPI_ERR_IN_STATUS): made only then, with the state the checks left
// on a call that passed them (its name, MPI_COMM_WORLD's handler).
[[gnu::cold, gnu::noinline]] int FailAfterChecks(const char* name, const Status& st) {
  Call c(name);
  return c.Fail(st);
}
[[gnu::cold, gnu::noinline]] int InStatusAfterChecks(const char* name, const char* what) {
  Call c(name);
  return InStatus(c, what);
}

}  // namespace nicq::api::completion

namespace {

// MPI_Waitall over at most kWaitallBatch requests (an osu_bw window): each
// handle is looked up once (by FastArrayArgs or ArrayArgs), and the requests are completed
// in array order behind a cursor that stops at the first one not done: a
// pass that finds nothing new costs one check, not a scan of the window
// (the old loop made three table lookups per request per pass, about a
// third of a receiver's per-message instructions). Completing a done
// request later than it could have been is invisible: Waitall reports
// nothing before every request is done. A failed progress step first
// completes every request already done, as the full scan did.
constexpr int kWaitallBatch = kFastCount;

int WaitallBatch(int count, MPI_Request reqs[], MPI_Status* statuses, ApiRequest** found) {
  bool error = false;
  // Finishes entry i when it is ready (called once per entry): completes a
  // done request, reports an empty status for an inactive entry
  // (MPI_REQUEST_NULL, a persistent request not started); false when its
  // request is not done yet.
  auto finish = [&](int i) {
    ApiRequest* r = found[i];
    MPI_Status* s = At(statuses, i);
    if (!Pending(r)) {
      api::EmptyStatus(s);
      return true;
    }
    if (!r->req.IsDone()) return false;
    const int code = CompleteFast(r, &reqs[i], s, /*raise=*/false);
    if (s != MPI_STATUS_IGNORE) s->MPI_ERROR = code;
    if (code != MPI_SUCCESS) error = true;
    return true;
  };
  rt::Backoff b;
  int next = 0;  // every entry before it is finished
  for (;;) {
    while (next < count && finish(next)) ++next;
    if (next == count) break;
    Status st = rt::ProgressWait(b);
    if (!st.ok()) [[unlikely]] {
      for (int i = next; i < count; ++i) (void)finish(i);
      return FailAfterChecks("MPI_Waitall", st);
    }
  }
  return error ? InStatusAfterChecks("MPI_Waitall", "array_of_statuses") : MPI_SUCCESS;
}

// MPI_Test's failed progress step, raised on the request's communicator.
[[gnu::cold, gnu::noinline]] int TestFailed(ApiRequest* r, const Status& st) {
  Call c("MPI_Test");
  c.set_comm_handle(r->comm_handle);
  return c.Fail(st);
}

}  // namespace

extern "C" {

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  Call c("MPI_Wait");
  ApiRequest* r;
  if (!c.Init() || !c.NotNull(request, "request") || !RequestArg(c, *request, &r)) return c.Fail();
  api::SweepOrphans(false);
  if (!Pending(r)) {
    api::EmptyStatus(status);
    return MPI_SUCCESS;
  }
  c.set_comm_handle(r->comm_handle);
  if (!r->req.IsDone()) {
    rt::Backoff b;
    int rc = MPI_SUCCESS;
    while (!r->req.IsDone())
      if (!Step(c, b, &rc)) return rc;
  }
  return CompleteFast(r, request, status, true);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  ApiRequest* fast;
  if (request && flag && FastArrayArgs(1, request, &fast)) [[likely]] {
    if (Pending(fast) && !fast->req.IsDone()) {
      Status st = rt::Progress();
      if (!st.ok()) [[unlikely]]
        return TestFailed(fast, st);
      if (!fast->req.IsDone()) {
        *flag = 0;
        return MPI_SUCCESS;
      }
    }
    *flag = 1;
    if (!Pending(fast)) {
      api::EmptyStatus(status);
      return MPI_SUCCESS;
    }
    return CompleteFast(fast, request, status, /*raise=*/true);
  }
  Call c("MPI_Test");
  ApiRequest* r;
  if (!c.Init() || !c.NotNull(request, "request") || !c.NotNull(flag, "flag") ||
      !RequestArg(c, *request, &r))
    return c.Fail();
  if (!Pending(r)) {
    *flag = 1;
    api::EmptyStatus(status);
    return MPI_SUCCESS;
  }
  c.set_comm_handle(r->comm_handle);
  if (!r->req.IsDone()) {
    Status st = rt::Progress();
    if (!st.ok()) return c.Fail(st);
  }
  *flag = r->req.IsDone();
  if (!*flag) return MPI_SUCCESS;
  return api::CompleteRequest(r, request, status, true);
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  ApiRequest* found[kWaitallBatch];
  // Sweeping frees only requests whose handles MPI_Request_free already
  // took from the user: none of `found`.
  if (FastArrayArgs(count, reqs, found)) [[likely]] {
    api::SweepOrphans(false);
    return WaitallBatch(count, reqs, statuses, found);
  }
  Call c("MPI_Waitall");
  const bool batch = count <= kWaitallBatch;
  if (!ArrayArgs(c, count, reqs, batch ? found : nullptr)) return c.Fail();
  api::SweepOrphans(false);
  if (batch) return WaitallBatch(count, reqs, statuses, found);
  // Inactive entries report an empty status.
  for (int i = 0; i < count; ++i)
    if (!Pending(api::LookupRequest(reqs[i]))) {
      api::EmptyStatus(At(statuses, i));
    }
  bool error = false;
  rt::Backoff b;
  int rc = MPI_SUCCESS;
  for (;;) {
    CompleteDone(count, reqs, statuses, nullptr, &error);
    bool left = false;
    for (int i = 0; i < count && !left; ++i) left = Pending(api::LookupRequest(reqs[i]));
    if (!left) break;
    if (!Step(c, b, &rc)) return rc;
  }
  return error ? InStatus(c, "array_of_statuses") : MPI_SUCCESS;
}

int MPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  ApiRequest* found[kFastCount];
  if (flag && FastArrayArgs(count, reqs, found)) [[likely]] {
    // All or nothing, as below; requests already done need no progress
    // step to report it (nor does Open MPI's).
    auto all_done = [&] {
      for (int i = 0; i < count; ++i)
        if (Pending(found[i]) && !found[i]->req.IsDone()) return false;
      return true;
    };
    // A call with no active request at all (count 0, every entry null or
    // inactive) is a program asking for progress: it makes one pass, as
    // every other MPI call does (enqueued chains and passive-target epochs
    // advance in any call).
    auto none_active = [&] {
      for (int i = 0; i < count; ++i)
        if (Pending(found[i])) return false;
      return true;
    };
    if (!all_done() || none_active()) {
      Status st = rt::Progress();
      if (!st.ok()) [[unlikely]]
        return FailAfterChecks("MPI_Testall", st);
      if (!all_done()) {
        *flag = 0;
        return MPI_SUCCESS;
      }
    }
    bool error = false;
    for (int i = 0; i < count; ++i) {
      MPI_Status* s = At(statuses, i);
      if (!Pending(found[i])) {
        api::EmptyStatus(s);
        continue;
      }
      const int code = CompleteFast(found[i], &reqs[i], s, /*raise=*/false);
      if (s != MPI_STATUS_IGNORE) s->MPI_ERROR = code;
      if (code != MPI_SUCCESS) error = true;
    }
    *flag = 1;
    return error ? InStatusAfterChecks("MPI_Testall", "array_of_statuses") : MPI_SUCCESS;
  }
  Call c("MPI_Testall");
  if (!ArrayArgs(c, count, reqs) || !c.NotNull(flag, "flag")) return c.Fail();
  Status st = rt::Progress();
  if (!st.ok()) return c.Fail(st);
  // All or nothing: complete only when every pending request is done.
  if (!AllDone(count, reqs)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  for (int i = 0; i < count; ++i)
    if (!Pending(api::LookupRequest(reqs[i]))) api::EmptyStatus(At(statuses, i));
  bool error = false;
  CompleteDone(count, reqs, statuses, nullptr, &error);
  *flag = 1;
  return error ? InStatus(c, "array_of_statuses") : MPI_SUCCESS;
}

}  // extern "C"
