// One-sided communication calls: put, get, the accumulates, their
// request-based (R*) and large-count (_c) forms. Arguments are checked here;
// epoch, rank and range checks that need the window's state are rma::'s.
// Errors go to the window's error handler.
#include <string>

#include "api/win_internal.h"
#include "dtype/reduce.h"

using namespace nicq;
using api::Call;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

struct Args {
  rma::Window* w = nullptr;
  dtype::Type* ot = nullptr;  // origin
  dtype::Type* rt = nullptr;  // result
  dtype::Type* tt = nullptr;  // target
};

// The messages are built only on failure: these checks run on every
// operation, whose direct path takes well under a microsecond.
bool CheckTarget(Call& c, const Args& a, int target_rank, MPI_Aint disp, MPI_Count target_count,
                 MPI_Datatype target_type, dtype::Type** tt) {
  if (!c.CountArg(target_count, "target_count") || !c.TypeArg(target_type, tt, "target_datatype"))
    return false;
  if (!((target_rank >= 0 && target_rank < a.w->size) || target_rank == MPI_PROC_NULL))
    return c.Check(
        false, Code::kRank,
        "invalid target rank " + Str(target_rank) + " (window of " + Str(a.w->size) + " ranks)");
  if (!(disp >= 0 || a.w->flavor == rma::Flavor::kDynamic))
    return c.Check(false, Code::kDisp, "negative target_disp " + Str(disp));
  return true;
}

bool CheckOp(Call& c, MPI_Op op, MPI_Datatype type, const char* what) {
  const dtype::Op* o = op == MPI_OP_NULL ? nullptr : dtype::LookupOp(op);
  if (!o || !o->predefined)
    return c.Check(false, Code::kOp,
                   "op must be a predefined operation (or MPI_REPLACE / MPI_NO_OP)");
  if (!dtype::OpAppliesTo(op, type))
    return c.Check(false, Code::kOp,
                   std::string(dtype::OpName(op)) + " does not apply to the " + what);
  return true;
}

const RequestOps kResultOps = {nullptr, rma::ResultRelease, nullptr, rma::ResultComplete, nullptr};

// The R* forms: a request that completes with the operation locally.
Request* NewRequest(Call& c, MPI_Request* request) {
  if (!c.NotNull(request, "request")) return nullptr;
  Request* req = api::AllocEngineRequest(MPI_COMM_SELF, c.name(), false, request);
  if (!c.Check(req != nullptr, Code::kNoMem, "request table is full")) return nullptr;
  req->ops = &kResultOps;
  return req;
}

int Finish(Call& c, rma::Window* w, const Status& st, Request* req, MPI_Request* request) {
  if (!req) return api::WinFail(c, w, st);
  if (!st.ok()) {
    req->engine = nullptr;
    api::FreeRequest(api::LookupRequest(*request));
    *request = MPI_REQUEST_NULL;
    return api::WinFail(c, w, st);
  }
  if (!req->IsDone()) api::AddPolledRequest(req, rma::ResultArrived);
  return MPI_SUCCESS;
}

int PutOrAcc(const char* name, bool acc, const void* origin, MPI_Count oc, MPI_Datatype otype,
             int target_rank, MPI_Aint disp, MPI_Count tc, MPI_Datatype ttype, MPI_Op op,
             MPI_Win win, MPI_Request* request) {
  Call c(name);
  Args a;
  if (!c.Init() || !api::WinArg(c, win, &a.w) || !c.CountArg(oc, "origin_count") ||
      !c.TypeArg(otype, &a.ot, "origin_datatype") ||
      !CheckTarget(c, a, target_rank, disp, tc, ttype, &a.tt) ||
      (acc &&
       (!CheckOp(c, op, ttype, "target datatype") || !CheckOp(c, op, otype, "origin datatype"))))
    return api::WinFail(c, a.w);
  Request* req = nullptr;
  if (request && !(req = NewRequest(c, request))) return api::WinFail(c, a.w);
  const rma::Target t{target_rank, disp, a.tt, tc};
  Status st = acc ? rma::Accumulate(a.w, origin, a.ot, oc, t, op, req)
                  : rma::Put(a.w, origin, a.ot, oc, t, req);
  return Finish(c, a.w, st, req, request);
}

int GetOrGetAcc(const char* name, bool acc, const void* origin, MPI_Count oc, MPI_Datatype otype,
                void* result, MPI_Count rc, MPI_Datatype rtype, int target_rank, MPI_Aint disp,
                MPI_Count tc, MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  Call c(name);
  Args a;
  if (!c.Init() || !api::WinArg(c, win, &a.w) || !c.CountArg(rc, "result_count") ||
      !c.TypeArg(rtype, &a.rt, "result_datatype") ||
      !CheckTarget(c, a, target_rank, disp, tc, ttype, &a.tt) ||
      (acc && (!CheckOp(c, op, ttype, "target datatype") ||
               (op != MPI_NO_OP &&
                (!c.CountArg(oc, "origin_count") || !c.TypeArg(otype, &a.ot, "origin_datatype"))))))
    return api::WinFail(c, a.w);
  Request* req = nullptr;
  if (request && !(req = NewRequest(c, request))) return api::WinFail(c, a.w);
  const rma::Target t{target_rank, disp, a.tt, tc};
  Status st = acc ? rma::GetAccumulate(a.w, origin, a.ot, oc, result, a.rt, rc, t, op, req)
                  : rma::Get(a.w, result, a.rt, rc, t, req);
  return Finish(c, a.w, st, req, request);
}

// The same-node fast path (rma::FastCopy, rma::FastAtomic) for calls
// whose sides all have one predefined type and count. Anything else, and
// every error, takes the general path, which checks in the standard's order.
const dtype::Type* FastType(MPI_Win win, rma::Window** w, MPI_Datatype type) {
  if (!api::IsInitialized()) return nullptr;
  *w = api::LookupWin(win);
  if (!*w || !(*w)->direct) return nullptr;
  const dtype::Type* t = dtype::Lookup(type);
  return t && t->predefined ? t : nullptr;
}

bool TryFastCopy(bool put, const void* origin, MPI_Count oc, MPI_Datatype otype, int target_rank,
                 MPI_Aint disp, MPI_Count tc, MPI_Datatype ttype, MPI_Win win) {
  rma::Window* w = nullptr;
  const dtype::Type* t = otype == ttype && oc == tc ? FastType(win, &w, ttype) : nullptr;
  return t && rma::FastCopy(w, put, const_cast<void*>(origin), t, tc, target_rank, disp);
}

bool TryFastAtomic(const void* origin, const void* compare, void* result, MPI_Datatype type,
                   MPI_Count count, int target_rank, MPI_Aint disp, MPI_Op op, MPI_Win win) {
  rma::Window* w = nullptr;
  const dtype::Type* t = FastType(win, &w, type);
  return t && rma::FastAtomic(w, origin, compare, result, t, count, target_rank, disp, op);
}

}  // namespace

extern "C" {

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
            int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
            MPI_Win win) {
  if (TryFastCopy(true, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win))
    return MPI_SUCCESS;
  return PutOrAcc("MPI_Put", false, origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, MPI_OP_NULL, win, nullptr);
}
int MPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  return PutOrAcc("MPI_Put_c", false, origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, MPI_OP_NULL, win, nullptr);
}
int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win, MPI_Request* request) {
  return PutOrAcc("MPI_Rput", false, origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, MPI_OP_NULL, win, request);
}
int MPI_Rput_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return PutOrAcc("MPI_Rput_c", false, origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, MPI_OP_NULL, win, request);
}

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  if (origin_datatype == target_datatype && origin_count == target_count &&
      TryFastAtomic(origin_addr, nullptr, nullptr, target_datatype, target_count, target_rank,
                    target_disp, op, win))
    return MPI_SUCCESS;
  return PutOrAcc("MPI_Accumulate", true, origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, op, win, nullptr);
}
int MPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  return PutOrAcc("MPI_Accumulate_c", true, origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, op, win, nullptr);
}
int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return PutOrAcc("MPI_Raccumulate", true, origin_addr, origin_count, origin_datatype, target_rank,
                  target_disp, target_count, target_datatype, op, win, request);
}
int MPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  return PutOrAcc("MPI_Raccumulate_c", true, origin_addr, origin_count, origin_datatype,
                  target_rank, target_disp, target_count, target_datatype, op, win, request);
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  if (TryFastCopy(false, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win))
    return MPI_SUCCESS;
  return GetOrGetAcc("MPI_Get", false, nullptr, 0, MPI_DATATYPE_NULL, origin_addr, origin_count,
                     origin_datatype, target_rank, target_disp, target_count, target_datatype,
                     MPI_OP_NULL, win, nullptr);
}
int MPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win) {
  return GetOrGetAcc("MPI_Get_c", false, nullptr, 0, MPI_DATATYPE_NULL, origin_addr, origin_count,
                     origin_datatype, target_rank, target_disp, target_count, target_datatype,
                     MPI_OP_NULL, win, nullptr);
}
int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
             MPI_Request* request) {
  return GetOrGetAcc("MPI_Rget", false, nullptr, 0, MPI_DATATYPE_NULL, origin_addr, origin_count,
                     origin_datatype, target_rank, target_disp, target_count, target_datatype,
                     MPI_OP_NULL, win, request);
}
int MPI_Rget_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  return GetOrGetAcc("MPI_Rget_c", false, nullptr, 0, MPI_DATATYPE_NULL, origin_addr, origin_count,
                     origin_datatype, target_rank, target_disp, target_count, target_datatype,
                     MPI_OP_NULL, win, request);
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                       void* result_addr, int result_count, MPI_Datatype result_datatype,
                       int target_rank, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  if (result_datatype == target_datatype && result_count == target_count &&
      (op == MPI_NO_OP || (origin_datatype == target_datatype && origin_count == target_count)) &&
      TryFastAtomic(op == MPI_NO_OP ? nullptr : origin_addr, nullptr, result_addr, target_datatype,
                    target_count, target_rank, target_disp, op, win))
    return MPI_SUCCESS;
  return GetOrGetAcc("MPI_Get_accumulate", true, origin_addr, origin_count, origin_datatype,
                     result_addr, result_count, result_datatype, target_rank, target_disp,
                     target_count, target_datatype, op, win, nullptr);
}
int MPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                         MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win) {
  return GetOrGetAcc("MPI_Get_accumulate_c", true, origin_addr, origin_count, origin_datatype,
                     result_addr, result_count, result_datatype, target_rank, target_disp,
                     target_count, target_datatype, op, win, nullptr);
}
int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                        MPI_Request* request) {
  return GetOrGetAcc("MPI_Rget_accumulate", true, origin_addr, origin_count, origin_datatype,
                     result_addr, result_count, result_datatype, target_rank, target_disp,
                     target_count, target_datatype, op, win, request);
}
int MPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win, MPI_Request* request) {
  return GetOrGetAcc("MPI_Rget_accumulate_c", true, origin_addr, origin_count, origin_datatype,
                     result_addr, result_count, result_datatype, target_rank, target_disp,
                     target_count, target_datatype, op, win, request);
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  if (TryFastAtomic(op == MPI_NO_OP ? nullptr : origin_addr, nullptr, result_addr, datatype, 1,
                    target_rank, target_disp, op, win))
    return MPI_SUCCESS;
  return GetOrGetAcc("MPI_Fetch_and_op", true, origin_addr, 1, datatype, result_addr, 1, datatype,
                     target_rank, target_disp, 1, datatype, op, win, nullptr);
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Win win) {
  if (origin_addr && compare_addr && result_addr &&
      TryFastAtomic(origin_addr, compare_addr, result_addr, datatype, 1, target_rank, target_disp,
                    MPI_REPLACE, win))
    return MPI_SUCCESS;
  Call c("MPI_Compare_and_swap");
  Args a;
  if (!c.Init() || !api::WinArg(c, win, &a.w) || !c.TypeArg(datatype, &a.tt, "datatype") ||
      (!a.tt->predefined && !c.Check(false, Code::kType, "datatype must be a predefined type")) ||
      !CheckTarget(c, a, target_rank, target_disp, 1, datatype, &a.tt) ||
      !c.NotNull(origin_addr, "origin_addr") || !c.NotNull(compare_addr, "compare_addr") ||
      !c.NotNull(result_addr, "result_addr"))
    return api::WinFail(c, a.w);
  return api::WinFail(c, a.w,
                      rma::CompareAndSwap(a.w, origin_addr, compare_addr, result_addr, a.tt,
                                          target_rank, target_disp));
}

}  // extern "C"
