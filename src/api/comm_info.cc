// Communicator hints (MPI_Comm_set_info / get_info, the info of
// MPI_Comm_dup_with_info) and the nonblocking duplicates MPI_Comm_idup(_with_info).
//
// nicq acts on no communicator hint, but keeps what the user set so that
// MPI_Comm_get_info returns it and MPI_Comm_dup carries it over.
//
// MPI_Comm_idup is a real nonblocking operation: the call sends the first
// round of the context id agreement (rt::CommAgreement*,
// src/runtime/comm_agreement.cc; on an intercommunicator one over both
// groups and one over the local group) and the request is polled by the
// progress engine from then on, so the process may run other collectives
// and point-to-point on the parent (blocking ones included) before it
// waits, and several idups may be outstanding on one parent. The handle is
// made, the attributes copied and the hints set when the request
// completes in a wait or test.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "api/api_more.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;
using api::Hints;

namespace {

struct HintTable {
  std::mutex mu;
  std::map<const Comm*, Hints> by_comm;
};
HintTable& Table() {
  static auto* t = new HintTable();
  return *t;
}

// What an MPI_Comm_idup request completes with.
struct Idup {
  rt::CommAgreement* agreement = nullptr;  // null once finished
  int errhandler = 0;                      // the parent's at the call
  Comm* parent = nullptr;
  MPI_Comm parent_handle = MPI_COMM_NULL;
  MPI_Comm* newcomm = nullptr;
  Hints hints;  // the info's (idup_with_info) or the parent's at the call
  Status result = Status::Ok();
};

// The new communicator's handle, attributes and hints. This runs inside
// the wait or test that completes the idup, which must not wait for the
// other ranks: the node group is left to the first blocking or persistent
// collective (coll::MakeNodeGroupAtCreation).
Status AdoptChild(Idup* d, Call& c, Comm* child) {
  MPI_Comm h = MPI_COMM_NULL;
  if (api::AdoptComm(c, d->errhandler, child, &h, api::Creation::kNonblocking) != MPI_SUCCESS)
    return Error(c.error_class(), c.error_message());
  // Attributes follow their copy callbacks if the parent is still there.
  if (api::LookupComm(d->parent_handle) == d->parent &&
      api::CopyCommAttrs(c, d->parent_handle, d->parent, h, child) != MPI_SUCCESS) {
    rt::CommFree(child).IgnoreError();
    api::UnregisterComm(h);
    return Error(Code::kOther, "an attribute copy callback failed");
  }
  api::SetCommHints(child, d->hints);
  *d->newcomm = h;
  return Status::Ok();
}

// Run by the wait or test that completes the request (once: a later call
// returns the same result).
Status IdupComplete(Request* req) {
  auto* d = static_cast<Idup*>(req->engine);
  if (!d->agreement) return d->result;
  Call c("MPI_Comm_idup");
  c.set_comm_handle(MPI_COMM_SELF);  // a failure here is reported through the request
  Comm* child = nullptr;
  d->result = rt::CommAgreementFinish(std::exchange(d->agreement, nullptr), &child);
  if (d->result.ok()) d->result = AdoptChild(d, c, child);
  return d->result;
}

// The progress engine's side: true once every member agreed.
bool PollIdup(Request* req) {
  return rt::CommAgreementPoll(static_cast<Idup*>(req->engine)->agreement);
}

Status IdupFree(Request* req) {
  auto* d = static_cast<Idup*>(req->engine);
  if (d->agreement) {
    // Completed but never waited on (MPI_Request_free): the communicator
    // was agreed on by every member, so it is made and let go here.
    Comm* child = nullptr;
    if (rt::CommAgreementFinish(std::exchange(d->agreement, nullptr), &child).ok() && child)
      rt::CommFree(child).IgnoreError();
  }
  delete d;
  req->engine = nullptr;
  return Status::Ok();
}

const RequestOps kIdupOps = {nullptr, IdupFree, nullptr, IdupComplete, nullptr};

int StartIdup(Call& c, MPI_Comm comm, bool with_info, MPI_Info info, MPI_Comm* newcomm,
              MPI_Request* request) {
  Comm* cm;
  Hints hints;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(newcomm, "newcomm") ||
      !c.NotNull(request, "request") || (with_info && !api::InfoPairs(c, info, &hints)))
    return c.Fail();
  auto d = std::make_unique<Idup>();
  d->errhandler = cm->errhandler;
  d->parent = cm;
  d->parent_handle = comm;
  d->newcomm = newcomm;
  d->hints = with_info ? std::move(hints) : api::CommHints(cm);
  MPI_Request h;
  Request* q = api::AllocEngineRequest(comm, c.name(), false, &h);
  if (!q) return c.Fail(Code::kNoMem, "request table is full");
  q->kind = ReqKind::kColl;
  if (Status st = rt::CommAgreementStart(cm, 0, cm->rank, &d->agreement); !st.ok()) {
    api::FreeRequest(api::LookupRequest(h));
    return c.Fail(st);
  }
  q->engine = d.release();
  q->ops = &kIdupOps;
  api::AddPolledRequest(q, PollIdup);
  *request = h;
  return MPI_SUCCESS;
}

}  // namespace

namespace nicq::api {

void SetCommHints(const Comm* comm, Hints hints) {
  std::lock_guard<std::mutex> lock(Table().mu);
  if (hints.empty())
    Table().by_comm.erase(comm);
  else
    Table().by_comm[comm] = std::move(hints);
}

Hints CommHints(const Comm* comm) {
  std::lock_guard<std::mutex> lock(Table().mu);
  auto it = Table().by_comm.find(comm);
  return it == Table().by_comm.end() ? Hints{} : it->second;
}

void DropCommHints(const Comm* comm) {
  std::lock_guard<std::mutex> lock(Table().mu);
  Table().by_comm.erase(comm);
}

bool InfoPairs(Call& c, MPI_Info info, Hints* out) {
  out->clear();
  if (info == MPI_INFO_NULL) return true;
  int n = 0;
  if (PMPI_Info_get_nkeys(info, &n) != MPI_SUCCESS)
    return c.Check(false, Code::kInfo, "invalid info handle " + std::to_string(info));
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    int len = 0, flag = 0;
    if (PMPI_Info_get_nthkey(info, i, key) != MPI_SUCCESS ||
        PMPI_Info_get_string(info, key, &len, nullptr, &flag) != MPI_SUCCESS)
      return c.Check(false, Code::kInfo, "cannot read info handle " + std::to_string(info));
    std::string value(static_cast<std::size_t>(len), '\0');
    if (PMPI_Info_get_string(info, key, &len, value.data(), &flag) != MPI_SUCCESS)
      return c.Check(false, Code::kInfo, "cannot read info handle " + std::to_string(info));
    value.resize(static_cast<std::size_t>(len > 0 ? len - 1 : 0));
    out->emplace_back(key, std::move(value));
  }
  return true;
}

int NewInfoFrom(Call& c, const Hints& pairs, MPI_Info* out) {
  MPI_Info info;
  if (int rc = PMPI_Info_create(&info); rc != MPI_SUCCESS) return rc;
  for (const auto& [k, v] : pairs) {
    if (int rc = PMPI_Info_set(info, k.c_str(), v.c_str()); rc != MPI_SUCCESS) {
      PMPI_Info_free(&info);
      return c.Fail(Code::kInfo, "cannot copy hint '" + k + "'");
    }
  }
  *out = info;
  return MPI_SUCCESS;
}

}  // namespace nicq::api

extern "C" {

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  Call c("MPI_Comm_set_info");
  Comm* cm;
  Hints hints;
  if (!c.Init() || !c.CommArg(comm, &cm) ||
      !c.Check(info != MPI_INFO_NULL, Code::kInfo, "info is MPI_INFO_NULL") ||
      !api::InfoPairs(c, info, &hints))
    return c.Fail();
  // Later hints replace earlier ones with the same key; the others stay.
  Hints all = api::CommHints(cm);
  for (auto& [k, v] : hints) {
    bool replaced = false;
    for (auto& e : all)
      if (e.first == k) e.second = v, replaced = true;
    if (!replaced) all.emplace_back(k, v);
  }
  api::SetCommHints(cm, std::move(all));
  return MPI_SUCCESS;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  Call c("MPI_Comm_get_info");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(info_used, "info_used")) return c.Fail();
  return api::NewInfoFrom(c, api::CommHints(cm), info_used);
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  Call c("MPI_Comm_idup");
  return StartIdup(c, comm, false, MPI_INFO_NULL, newcomm, request);
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  Call c("MPI_Comm_idup_with_info");
  return StartIdup(c, comm, true, info, newcomm, request);
}

}  // extern "C"
