// MPI_Probe, MPI_Iprobe, MPI_Start and MPI_Startall: the point-to-point
// calls that post no new message of their own. Every call validates all
// arguments before any side effect, so under MPI_ERRORS_RETURN a failed call
// (a bad entry of MPI_Startall's array too) starts nothing.
#include <string>

#include "api/api_internal.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::ApiRequest;
using api::Call;

extern "C" {

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
