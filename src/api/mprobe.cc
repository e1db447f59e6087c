// Matched probe (MPI_Mprobe, MPI_Improbe) and matched receive (MPI_Mrecv,
// MPI_Imrecv). A probe that matches takes the message out of matching:
// no later receive or probe sees it, only a receive through its
// MPI_Message handle. A probe of MPI_PROC_NULL returns MPI_MESSAGE_NO_PROC,
// whose receive completes at once with the MPI_PROC_NULL status.
#include <string>

#include "api/api_internal.h"
#include "api/p2p_calls.h"
#include "dtype/slot_table.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::ApiRequest;
using api::Call;

namespace {

// A matched, not yet received message: the engine's record of it and the
// communicator it was probed on.
struct MessageSlot {
  void* msg = nullptr;
  Comm* comm = nullptr;
  MPI_Comm comm_handle = MPI_COMM_NULL;
};

constexpr int kFirstMessageIndex = 2;  // 1 is MPI_MESSAGE_NO_PROC
using MessageTable = dtype::SlotTable<MessageSlot, 8, 1024>;
MessageTable& Messages() {
  static auto* table = new MessageTable(kFirstMessageIndex);
  return *table;
}

bool ProbeArgs(Call& c, int source, int tag, MPI_Comm comm, Comm** cm, MPI_Message* message) {
  return c.Init() && c.CommArg(comm, cm) && c.SourceArg(source, *cm) && c.RecvTagArg(tag) &&
         c.NotNull(message, "message");
}

// A handle for what rt::Improbe matched (nullptr: the MPI_PROC_NULL message).
int NewMessage(Call& c, void* msg, Comm* cm, MPI_Comm comm, MPI_Message* out) {
  if (!msg) {
    *out = MPI_MESSAGE_NO_PROC;
    return MPI_SUCCESS;
  }
  int index = Messages().Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "too many matched messages not yet received");
  MessageSlot* s = Messages().Get(index);
  s->msg = msg;
  s->comm = cm;
  s->comm_handle = comm;
  *out = NICQ_HANDLE(NICQ_KIND_MESSAGE, index);
  return MPI_SUCCESS;
}

}  // namespace

namespace nicq::api {

int MrecvCall(const char* name, void* buf, std::int64_t count, MPI_Datatype dt,
              MPI_Message* message, MPI_Status* status, bool nonblocking, MPI_Request* request) {
  Call c(name);
  if (!c.Init() || !c.NotNull(message, "message") ||
      (nonblocking && !c.NotNull(request, "request")))
    return c.Fail();
  const MPI_Message h = *message;
  MessageSlot* slot = nullptr;
  if (h != MPI_MESSAGE_NO_PROC) {
    if (KindOf(h) == NICQ_KIND_MESSAGE && IndexOf(h) >= kFirstMessageIndex)
      slot = Messages().Get(IndexOf(h));
    if (!slot)
      return c.Fail(Code::kRequest, h == MPI_MESSAGE_NULL
                                        ? std::string("message is MPI_MESSAGE_NULL")
                                        : "invalid message handle " + std::to_string(h));
  }
  // The checks of a receive from any source on the message's communicator.
  P2pArgs a;
  const MPI_Comm comm = slot ? slot->comm_handle : MPI_COMM_WORLD;
  if (!CheckRecv(c, buf, count, dt, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &a)) return c.Fail();
  ApiRequest* r = PrepareP2p(c, false, SendMode::kStandard, buf, count, a,
                             slot ? MPI_ANY_SOURCE : MPI_PROC_NULL, MPI_ANY_TAG, false);
  if (!r) return c.Fail(Code::kNoMem, "request table is full");
  r->from_message = true;
  r->message = slot ? slot->msg : nullptr;
  if (slot) {
    r->req.comm = slot->comm;
    Messages().Free(IndexOf(h));
  }
  *message = MPI_MESSAGE_NULL;
  Status st = PostRequest(r);
  if (!st.ok()) {
    FreeRequest(r);
    return c.Fail(st);
  }
  if (!nonblocking) return WaitP2p(c, r, status);
  *request = r->handle;
  return MPI_SUCCESS;
}

}  // namespace nicq::api

extern "C" {

int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                MPI_Status* status) {
  Call c("MPI_Improbe");
  Comm* cm;
  if (!ProbeArgs(c, source, tag, comm, &cm, message) || !c.NotNull(flag, "flag")) return c.Fail();
  RequestStatus rs;
  bool found = false;
  void* msg = nullptr;
  Status st = rt::Improbe(source, tag, cm, &found, &rs, &msg);
  if (!st.ok()) return c.Fail(st);
  *flag = found;
  if (!found) return MPI_SUCCESS;
  api::FillStatus(status, rs);
  return NewMessage(c, msg, cm, comm, message);
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  Call c("MPI_Mprobe");
  Comm* cm;
  if (!ProbeArgs(c, source, tag, comm, &cm, message)) return c.Fail();
  RequestStatus rs;
  void* msg = nullptr;
  Status st = rt::Mprobe(source, tag, cm, &rs, &msg);
  if (!st.ok()) return c.Fail(st);
  api::FillStatus(status, rs);
  return NewMessage(c, msg, cm, comm, message);
}

int MPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
              MPI_Status* status) {
  return api::MrecvCall("MPI_Mrecv", buf, count, datatype, message, status, false, nullptr);
}
int MPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Request* request) {
  return api::MrecvCall("MPI_Imrecv", buf, count, datatype, message, MPI_STATUS_IGNORE, true,
                        request);
}
int MPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                MPI_Status* status) {
  return api::MrecvCall("MPI_Mrecv_c", buf, count, datatype, message, status, false, nullptr);
}
int MPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                 MPI_Request* request) {
  return api::MrecvCall("MPI_Imrecv_c", buf, count, datatype, message, MPI_STATUS_IGNORE, true,
                        request);
}

}  // extern "C"
