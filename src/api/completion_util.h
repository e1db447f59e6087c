// Argument checks and status reads shared by the completion calls
// (completion.cc: wait and test; request_status.cc: free, status query and
// cancel).
#pragma once

#include "api/api_internal.h"

namespace nicq::api::completion {

// Looks up one handle: *r = nullptr for MPI_REQUEST_NULL. False (error
// recorded) for a handle that is not a live request.
bool RequestArg(Call& c, MPI_Request h, ApiRequest** r, int index = -1);
// Whether a request has an operation to report: not MPI_REQUEST_NULL
// (null), and not an inactive persistent request.
inline bool Pending(const ApiRequest* r) {
  return r && (!r->persistent || r->active);
}
// Whether every pending request of reqs (already checked) is done.
bool AllDone(int count, const MPI_Request reqs[]);
// Checks count and every handle; `found` (may be null) receives the
// looked-up request of each handle.
bool ArrayArgs(Call& c, int count, MPI_Request reqs[], ApiRequest** found = nullptr);
// The most handles a completion call's common case takes (an osu_bw window
// is 64): its looked-up requests live in a stack array of this size.
inline constexpr int kFastCount = 256;
// The common case of the completion calls' arguments, inline and without a
// Call (whose checks and message cost more than the whole of Open MPI's
// MPI_Waitall of four requests): MPI running, 0 <= count <= kFastCount,
// and every handle MPI_REQUEST_NULL or a live request of no other engine
// (point-to-point, persistent or not). Then found[i] is reqs[i]'s request
// (nullptr for MPI_REQUEST_NULL), each handle looked up once, the table
// pointer read once. False for anything else (an error, a collective or
// generalized request): the
// caller takes its checked path, which raises every error as before and
// changes nothing that this one read.
inline bool FastArrayArgs(int count, const MPI_Request reqs[], ApiRequest** found) {
  if (!IsInitialized() || static_cast<unsigned>(count) > kFastCount || !reqs) [[unlikely]]
    return false;
  const RequestTable* t = g_request_table.load(std::memory_order_acquire);
  if (!t) [[unlikely]]
    return false;
  // One comparison tests the kind and that the index is within the table.
  static_assert(RequestTable::kCapacity == 1 << 20, "a request handle's index has 20 bits");
  for (int i = 0; i < count; ++i) {
    const auto h = static_cast<unsigned>(reqs[i]);
    if (h >> 20 != NICQ_KIND_REQUEST << 4) [[unlikely]]
      return false;
    if ((h & 0xfffff) == 0) {  // MPI_REQUEST_NULL
      found[i] = nullptr;
      continue;
    }
    ApiRequest* r = t->Get(static_cast<int>(h & 0xfffff));
    if (!r || r->req.ops) [[unlikely]]
      return false;
    found[i] = r;
  }
  return true;
}
// The i-th status, or MPI_STATUS_IGNORE under MPI_STATUSES_IGNORE.
inline MPI_Status* At(MPI_Status* statuses, int i) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}
// api::CompleteRequest with its common case inline: a nonpersistent
// point-to-point request of a contiguous type that succeeded reports its
// status and frees its slot.
inline int CompleteFast(ApiRequest* r, MPI_Request* handle, MPI_Status* status, bool raise) {
  const Request& q = r->req;
  if (!q.ops && !r->staged && !r->persistent && q.status.error == 0) [[likely]] {
    api::FillStatus(status, q.status);
    api::FreeRequest(r);
    if (handle) *handle = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
  }
  return api::CompleteRequest(r, handle, status, raise);
}
// One polling step of a blocking wait; false with the error raised.
bool Step(Call& c, rt::Backoff& b, int* rc);
// Completes every done, pending request in reqs; returns how many. Errors
// go into per-request statuses (MPI_ERR_IN_STATUS handling); `indices`
// (Waitsome/Testsome) packs them.
int CompleteDone(int count, MPI_Request reqs[], MPI_Status* statuses, int* indices, bool* error);
// The Call of an error found after the arguments passed (a failed progress
// step, MPI_ERR_IN_STATUS): made only then, with the state the checks left
// on a call that passed them (its name, MPI_COMM_WORLD's handler).
[[gnu::cold]] int FailAfterChecks(const char* name, const Status& st);
[[gnu::cold]] int InStatusAfterChecks(const char* name, const char* what);
// Raises MPI_ERR_IN_STATUS, naming the array that holds the codes.
int InStatus(Call& c, const char* what);
// Raises on the request's communicator (MPI: errors of a completion call
// belong to the request's communicator).
void UseCommOf(Call& c, MPI_Request h);
// The status of a request that is done (or inactive), leaving the request
// as it is: returns the request's own error code (recorded, not raised).
int Peek(Call& c, ApiRequest* r, MPI_Status* status);

}  // namespace nicq::api::completion
