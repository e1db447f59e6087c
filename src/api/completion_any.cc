// Completion, the any and some forms: MPI_Waitany, MPI_Testany,
// MPI_Waitsome, MPI_Testsome (the single and all forms: completion.cc).
// Their common case (completion_util.h, FastArrayArgs) loops over the
// looked-up requests; the checked path looks each handle up per pass.
#include "api/api_internal.h"
#include "api/completion_util.h"
#include "runtime/runtime.h"

using namespace nicq;
using namespace nicq::api::completion;
using api::ApiRequest;
using api::Call;

namespace {

// MPI_Waitany and MPI_Testany over looked-up requests (AnyImpl's loop
// without a lookup per handle per pass).
int AnyFound(int count, MPI_Request reqs[], ApiRequest** found, int* index, int* flag,
             MPI_Status* status, bool block, const char* name) {
  rt::Backoff b;
  for (bool progressed = false;; progressed = true) {
    bool any_pending = false;
    for (int i = 0; i < count; ++i) {
      ApiRequest* r = found[i];
      if (!Pending(r)) continue;
      any_pending = true;
      if (!r->req.IsDone()) continue;
      *index = i;
      if (flag) *flag = 1;
      return CompleteFast(r, &reqs[i], status, /*raise=*/true);
    }
    if (!any_pending) {
      *index = MPI_UNDEFINED;
      if (flag) *flag = 1;
      api::EmptyStatus(status);
      return MPI_SUCCESS;
    }
    if (!block && progressed) {
      *flag = 0;
      *index = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    Status st = block ? rt::ProgressWait(b) : rt::Progress();
    if (!st.ok()) [[unlikely]]
      return FailAfterChecks(name, st);
  }
}

// MPI_Waitsome and MPI_Testsome over looked-up requests (SomeImpl's loop
// without a lookup per handle per pass).
int SomeFound(int incount, MPI_Request reqs[], ApiRequest** found, int* outcount, int indices[],
              MPI_Status statuses[], bool block, const char* name) {
  rt::Backoff b;
  for (bool progressed = false;; progressed = true) {
    bool any_pending = false;
    for (int i = 0; i < incount && !any_pending; ++i) any_pending = Pending(found[i]);
    if (!any_pending) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    bool error = false;
    int n = 0;
    for (int i = 0; i < incount; ++i) {
      ApiRequest* r = found[i];
      if (!Pending(r) || !r->req.IsDone()) continue;
      MPI_Status* s = At(statuses, n);
      const int code = CompleteFast(r, &reqs[i], s, /*raise=*/false);
      if (s != MPI_STATUS_IGNORE) s->MPI_ERROR = code;
      if (code != MPI_SUCCESS) error = true;
      indices[n++] = i;
    }
    if (n > 0 || (!block && progressed)) {
      *outcount = n;
      return error ? InStatusAfterChecks(name, "array_of_statuses") : MPI_SUCCESS;
    }
    Status st = block ? rt::ProgressWait(b) : rt::Progress();
    if (!st.ok()) [[unlikely]]
      return FailAfterChecks(name, st);
  }
}

}  // namespace

extern "C" {

// Shared by Waitany (blocking) and Testany.
static int AnyImpl(Call& c, int count, MPI_Request reqs[], int* index, int* flag,
                   MPI_Status* status, bool block) {
  rt::Backoff b;
  int rc = MPI_SUCCESS;
  for (;;) {
    bool any_pending = false;
    for (int i = 0; i < count; ++i) {
      ApiRequest* r = api::LookupRequest(reqs[i]);
      if (!Pending(r)) continue;
      any_pending = true;
      if (!r->req.IsDone()) continue;
      *index = i;
      if (flag) *flag = 1;
      c.set_comm_handle(r->comm_handle);
      return api::CompleteRequest(r, &reqs[i], status, true);
    }
    if (!any_pending) {
      *index = MPI_UNDEFINED;
      if (flag) *flag = 1;
      api::EmptyStatus(status);
      return MPI_SUCCESS;
    }
    if (!block) {
      Status st = rt::Progress();
      if (!st.ok()) return c.Fail(st);
      if (flag) *flag = 0;
      *index = MPI_UNDEFINED;
      // Second pass: anything that progress just completed.
      for (int i = 0; i < count; ++i) {
        ApiRequest* r = api::LookupRequest(reqs[i]);
        if (!Pending(r) || !r->req.IsDone()) continue;
        *index = i;
        *flag = 1;
        c.set_comm_handle(r->comm_handle);
        return api::CompleteRequest(r, &reqs[i], status, true);
      }
      return MPI_SUCCESS;
    }
    if (!Step(c, b, &rc)) return rc;
  }
}

int MPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  ApiRequest* found[kFastCount];
  if (index && FastArrayArgs(count, reqs, found)) [[likely]] {
    api::SweepOrphans(false);
    return AnyFound(count, reqs, found, index, nullptr, status, true, "MPI_Waitany");
  }
  Call c("MPI_Waitany");
  if (!ArrayArgs(c, count, reqs) || !c.NotNull(index, "index")) return c.Fail();
  api::SweepOrphans(false);
  return AnyImpl(c, count, reqs, index, nullptr, status, true);
}

int MPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  ApiRequest* found[kFastCount];
  if (index && flag && FastArrayArgs(count, reqs, found)) [[likely]]
    return AnyFound(count, reqs, found, index, flag, status, false, "MPI_Testany");
  Call c("MPI_Testany");
  if (!ArrayArgs(c, count, reqs) || !c.NotNull(index, "index") || !c.NotNull(flag, "flag"))
    return c.Fail();
  return AnyImpl(c, count, reqs, index, flag, status, false);
}

static int SomeImpl(Call& c, int incount, MPI_Request reqs[], int* outcount, int indices[],
                    MPI_Status statuses[], bool block) {
  rt::Backoff b;
  int rc = MPI_SUCCESS;
  bool progressed = false;
  for (;;) {
    bool any_pending = false;
    for (int i = 0; i < incount && !any_pending; ++i)
      any_pending = Pending(api::LookupRequest(reqs[i]));
    if (!any_pending) {
      *outcount = MPI_UNDEFINED;
      return MPI_SUCCESS;
    }
    bool error = false;
    int n = CompleteDone(incount, reqs, statuses, indices, &error);
    if (n > 0 || (!block && progressed)) {
      *outcount = n;
      return error ? InStatus(c, "array_of_statuses") : MPI_SUCCESS;
    }
    if (!block) {
      Status st = rt::Progress();
      if (!st.ok()) return c.Fail(st);
      progressed = true;
      continue;
    }
    if (!Step(c, b, &rc)) return rc;
  }
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  ApiRequest* found[kFastCount];
  if (outcount && (indices || !incount) && FastArrayArgs(incount, reqs, found)) [[likely]] {
    api::SweepOrphans(false);
    return SomeFound(incount, reqs, found, outcount, indices, statuses, true, "MPI_Waitsome");
  }
  Call c("MPI_Waitsome");
  if (!ArrayArgs(c, incount, reqs) || !c.NotNull(outcount, "outcount") ||
      !c.NotNull(incount ? indices : outcount, "array_of_indices"))
    return c.Fail();
  api::SweepOrphans(false);
  return SomeImpl(c, incount, reqs, outcount, indices, statuses, true);
}

int MPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                 MPI_Status statuses[]) {
  ApiRequest* found[kFastCount];
  if (outcount && (indices || !incount) && FastArrayArgs(incount, reqs, found)) [[likely]]
    return SomeFound(incount, reqs, found, outcount, indices, statuses, false, "MPI_Testsome");
  Call c("MPI_Testsome");
  if (!ArrayArgs(c, incount, reqs) || !c.NotNull(outcount, "outcount") ||
      !c.NotNull(incount ? indices : outcount, "array_of_indices"))
    return c.Fail();
  return SomeImpl(c, incount, reqs, outcount, indices, statuses, false);
}

}  // extern "C"
