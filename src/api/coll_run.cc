// Argument checks and form dispatch for the collective entry points.
#include <string>

#include "api/coll_c_api.h"
#include "dtype/reduce.h"

namespace nicq::coll::capi {

using api::Call;

bool Begin(Call& c, Kind k, MPI_Comm comm, Form f, MPI_Request* request, Args* a) {
  Comm* cm = nullptr;
  if (!c.Init() || !c.CommArg(comm, &cm)) return false;
  if (f != Form::kBlocking && !c.NotNull(request, "request")) return false;
  if (cm->inter && (k == Kind::kScan || k == Kind::kExscan))
    return c.Check(false, Code::kComm,
                   std::string(KindName(k)) + " is not defined on an intercommunicator");
  a->kind = k;
  a->comm = cm;
  return true;
}

// Every check below builds its message only when it fails: a blocking
// 8-byte allreduce spent a third of its instructions on strings here.
bool Data(Call& c, const void* buf, int count, MPI_Datatype dt, const dtype::Type** t,
          const char* what, bool in_place_ok) {
  if (!c.CountArg(count, what)) return false;
  dtype::Type* ty = dt == MPI_DATATYPE_NULL ? nullptr : dtype::Lookup(dt);
  if (ty == nullptr || !ty->committed) [[unlikely]] {
    const std::string tname = std::string(what) + " datatype";
    if (!c.TypeArg(dt, &ty, tname.c_str())) return false;
  }
  *t = ty;
  if (buf == MPI_IN_PLACE) {
    if (in_place_ok) return true;
    return c.Check(false, Code::kBuffer,
                   std::string("MPI_IN_PLACE is not allowed for the ") + what + " buffer here");
  }
  return c.BufferArg(buf, count, ty, what);
}

bool Root(Call& c, int root, Args* a) {
  a->root = root;
  if (root >= 0 && root < a->comm->size) [[likely]]
    return true;
  return c.Check(false, Code::kRoot,
                 "invalid root " + std::to_string(root) + " (communicator size " +
                     std::to_string(a->comm->size) + ")");
}

bool OpArg(Call& c, MPI_Op op, const dtype::Type* t, Args* a) {
  a->op = op;
  if (!dtype::LookupOp(op))
    return c.Check(false, Code::kOp, "invalid reduction operation " + std::to_string(op));
  if (dtype::OpAppliesTo(op, t->handle)) [[likely]]
    return true;
  return c.Check(
      false, Code::kOp,
      std::string(dtype::OpName(op)) + " is not defined on " + dtype::TypeName(t->handle));
}

bool Counts(Call& c, const int* counts, int n, const char* what, bool nonneg) {
  if (!c.NotNull(counts, what)) return false;
  if (!nonneg) return true;
  for (int i = 0; i < n; ++i)
    if (counts[i] < 0)
      return c.Check(false, Code::kCount,
                     std::string(what) + "[" + std::to_string(i) + "] is negative (" +
                         std::to_string(counts[i]) + ")");
  return true;
}

namespace {

// The "nicq_algorithm" info key of the _init calls.
void ReadAlgorithm(MPI_Info info, Args* a) {
  if (info == MPI_INFO_NULL) return;
  char value[64];
  int len = sizeof value, flag = 0;
  if (PMPI_Info_get_string(info, "nicq_algorithm", &len, value, &flag) == MPI_SUCCESS && flag)
    a->algo = value;
}

}  // namespace

int Run(Call& c, Args& a, Form f, MPI_Info info, MPI_Request* request) {
  if (a.comm->inter && (a.sendbuf == MPI_IN_PLACE || a.recvbuf == MPI_IN_PLACE))
    return c.Fail(Code::kBuffer, "MPI_IN_PLACE is not allowed on an intercommunicator");
  if (f == Form::kBlocking) return c.Fail(RunBlocking(a));
  MPI_Request handle = MPI_REQUEST_NULL;
  Request* q = api::AllocEngineRequest(c.comm_handle(), c.name(), f == Form::kPersistent, &handle);
  if (!q) return c.Fail(Code::kNoMem, "request table is full");
  Status st;
  if (f == Form::kNonblocking) {
    st = StartNonblocking(a, q);
  } else {
    ReadAlgorithm(info, &a);
    st = InitPersistent(a, q);
  }
  if (!st.ok()) {
    q->ops = nullptr;
    api::FreeRequest(api::LookupRequest(handle));
    return c.Fail(st);
  }
  *request = handle;
  return MPI_SUCCESS;
}

}  // namespace nicq::coll::capi
