// Internal interface of the MPI API layer (src/api/): handle tables, the
// per-call argument checker, error raising, and the API side of requests.
// Everything here is C++ in namespace nicq::api; the C entry points in the
// other files of this folder are thin: check arguments with a Call, look up
// handles, call rt:: / dtype::, and turn a Status into an MPI error code.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "dtype/datatype.h"
#include "dtype/predefined.h"
#include "dtype/slot_table.h"
#include "mpi.h"
#include "runtime/comm.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
namespace nicq::queue {
class Enqueueable;  // queue/enqueueable.h
}  // namespace nicq::queue

namespace nicq::api {

inline int KindOf(int handle) {
  return (static_cast<unsigned>(handle) >> 24) & 0xff;
}
inline int IndexOf(int handle) {
  return handle & 0xffffff;
}

// ---- lifecycle ---------------------------------------------------------------
enum class Phase : int { kBefore, kRunning, kFinalized };
extern std::atomic<Phase> g_phase;  // env.cc
// Inline: every call asks (out of line it was a call per check of an 8-byte send).
inline bool IsInitialized() {  // MPI_Init done and MPI_Finalize not yet
  return g_phase.load(std::memory_order_acquire) == Phase::kRunning;
}
inline bool IsFinalized() {
  return g_phase.load(std::memory_order_acquire) == Phase::kFinalized;
}
// MPI_THREAD_MULTIPLE was provided: request slots may be taken and given
// back by several threads at once, so their flags need atomic exchanges.
// True until MPI_Init_thread knows better.
extern bool g_threads_concurrent;
// "rank 3" (world rank) or "before MPI_Init" for messages.
std::string RankText();

// ---- errors -------------------------------------------------------------------
// Records `message` in the ring of recent messages and returns the MPI error
// code for it: cls | (sequence << 8). MPI_Error_string(code) gives message.
int RecordError(Code cls, const std::string& message);
// Applies the error handler attached to `comm_handle` (MPI_COMM_WORLD's when
// the handle is not a live communicator; print-and-return before MPI_Init).
// Returns the code for ERRORS_RETURN and user handlers; never returns for
// ERRORS_ARE_FATAL / ERRORS_ABORT.
int InvokeErrhandler(int comm_handle, int code);
// Both in one: the usual way to fail a call.
int Raise(int comm_handle, Code cls, const std::string& message);
// A Status from below, given the call's context ("MPI_Comm_dup(rank 0): ...").
int RaiseStatus(int comm_handle, const char* call, const Status& st);
bool ValidErrhandler(int handle);

// ---- communicators and groups ------------------------------------------------
// MPI_COMM_WORLD's and MPI_COMM_SELF's communicators (null outside
// MPI_Init..MPI_Finalize), looked up inline: nearly every call names one.
extern std::atomic<Comm*> g_predefined_comms[2];
Comm* LookupUserComm(int handle);  // the table of created communicators
// nullptr for null/freed/not a comm
inline Comm* LookupComm(int handle) {
  const unsigned predefined = static_cast<unsigned>(handle) - static_cast<unsigned>(MPI_COMM_WORLD);
  if (predefined < 2) return g_predefined_comms[predefined].load(std::memory_order_acquire);
  return LookupUserComm(handle);
}
int RegisterComm(Comm* comm);  // new handle for a communicator from rt::
void UnregisterComm(int handle);
int CommCountInUse();  // communicator handles that exist, the predefined ones included
void RegisterPredefinedComms(Comm* world, Comm* self);
void ResetCommTable();  // at MPI_Finalize

// ---- groups, attributes, communicator creation (group.cc, attr.cc, comm_create.cc)
class Call;
// A group is an ordered list of world ranks. nullptr for null/freed/not a group.
const std::vector<int>* LookupGroup(int handle);
// A valid group handle (MPI_GROUP_EMPTY included); records an error otherwise.
bool GroupArg(Call& c, int handle, const std::vector<int>** out, const char* what = "group");
// A new group handle (MPI_GROUP_EMPTY for an empty list), derived from
// session index `session` (-1: none; MPI_Group_incl and the like pass
// their input's on, so a communicator made from the result knows it).
int NewGroup(Call& c, std::vector<int> world_ranks, int* out, int session = -1);
int GroupSession(int handle);  // -1 when none or not a group
// MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL for two rank lists.
int CompareRankLists(const std::vector<int>& a, const std::vector<int>& b);
// MPI_Comm_compare when either is an intercommunicator (intercomm.cc).
int CompareInter(const Comm* a, const Comm* b);

// Attributes cached on communicators. CopyCommAttrs runs the copy callbacks
// from `parent` onto a new duplicate (MPI_Comm_dup); DeleteCommAttrs runs
// the delete callbacks (MPI_Comm_free, MPI_Finalize for MPI_COMM_SELF). Both
// return MPI_SUCCESS or the code of the callback that failed, raised on c.
int CopyCommAttrs(Call& c, int parent_handle, Comm* parent, int child_handle, Comm* child);
int DeleteCommAttrs(Call& c, int handle, Comm* comm);

// How a communicator came to be: a blocking creation call is collective
// over the new communicator's members, which AdoptComm may then use.
enum class Creation { kBlocking, kNonblocking };
// Registers a communicator rt:: created for c (nullptr -> *out =
// MPI_COMM_NULL); it gets `errhandler`. Frees it when the table is full.
// kBlocking: also makes its node group (coll::MakeNodeGroupAtCreation),
// collective over `child`, so every member must get here.
int AdoptComm(Call& c, int errhandler, Comm* child, int* out, Creation how = Creation::kBlocking);
// Collective over the members only (MPI_Comm_create_group, sessions): a new
// communicator of `world_members` (in that order; this process among them),
// exchanging on `parent`'s runtime context under a tag derived from `tag`.
Status CreateCommFromMembers(Comm* parent, const std::vector<int>& world_members, std::uint32_t tag,
                             Comm** out);

// ---- per-call argument checks ----------------------------------------------
// Each check returns true when the argument is valid; otherwise it records
// the error (class + message naming the call, argument and rank) and the
// entry point returns Fail(). Checks have no side effects, so a failed call
// changes nothing.
class Call {
 public:
  explicit Call(const char* name) : name_(name) {}

  // The valid case of each check is inline (every MPI_Send and MPI_Recv
  // runs them: out of line they were ~300 instructions of an 8-byte send);
  // the *Failed halves, out of line and cold, build the message.
  bool Init() { return IsInitialized() || InitFailed(); }
  bool CommArg(MPI_Comm handle, Comm** out) {
    Comm* c = handle == MPI_COMM_NULL ? nullptr : LookupComm(handle);
    *out = c;  // also on failure: callers' locals are never read uninitialized
    if (!c) [[unlikely]]
      return CommFailed(handle);
    comm_handle_ = handle;
    return true;
  }
  bool CountArg(std::int64_t count, const char* what = "count") {
    return count >= 0 || CountFailed(count, what);
  }
  // A committed datatype (predefined or derived).
  bool TypeArg(MPI_Datatype handle, dtype::Type** out, const char* what = "datatype") {
    dtype::Type* t = dtype::LookupPredefined(handle);
    if (!t && handle != MPI_DATATYPE_NULL) t = dtype::Lookup(handle);
    *out = t;
    if (!t || !t->committed) [[unlikely]]
      return TypeFailed(handle, t, what);
    return true;
  }
  // NULL is MPI_BOTTOM: valid when the type's displacements are absolute
  // addresses (MPI_Get_address), i.e. its data lies above the zero page.
  bool BufferArg(const void* buf, std::int64_t count, const dtype::Type* t,
                 const char* what = "buffer") {
    return buf != nullptr || count == 0 || (t && t->size == 0) || BottomFailed(count, t, what);
  }
  // comm rank (of the remote group on an intercommunicator) or MPI_PROC_NULL
  bool DestArg(int dest, const Comm* comm) {
    return (dest >= 0 && dest < comm->PeerSize()) || dest == MPI_PROC_NULL ||
           RankFailed(dest, comm, "destination");
  }
  // also MPI_ANY_SOURCE
  bool SourceArg(int source, const Comm* comm) {
    return (source >= 0 && source < comm->PeerSize()) || source == MPI_PROC_NULL ||
           source == MPI_ANY_SOURCE || RankFailed(source, comm, "source");
  }
  bool SendTagArg(int tag) { return (tag >= 0 && tag <= rt::kMaxUserTag) || TagFailed(tag, false); }
  // also MPI_ANY_TAG
  bool RecvTagArg(int tag) {
    return (tag >= 0 && tag <= rt::kMaxUserTag) || tag == MPI_ANY_TAG || TagFailed(tag, true);
  }
  bool NotNull(const void* p, const char* what) { return p != nullptr || NullFailed(what); }
  bool Check(bool ok, Code cls, const std::string& message);

  // Raise the recorded error on the call's communicator and return its code.
  int Fail();
  // Raise an error from below (Status) with this call's context.
  int Fail(const Status& st);
  int Fail(Code cls, const std::string& message) {
    (void)Check(false, cls, message);
    return Fail();
  }

  const char* name() const { return name_; }
  // The first recorded error (for raising it through a handler other than a
  // communicator's, e.g. a session's).
  Code error_class() const { return cls_; }
  const std::string& error_message() const { return message_; }
  int comm_handle() const { return comm_handle_; }
  void set_comm_handle(int h) { comm_handle_ = h; }

 private:
  [[gnu::cold]] bool InitFailed();
  [[gnu::cold]] bool CommFailed(MPI_Comm handle);
  [[gnu::cold]] bool CountFailed(std::int64_t count, const char* what);
  [[gnu::cold]] bool TypeFailed(MPI_Datatype handle, const dtype::Type* found, const char* what);
  [[gnu::cold]] bool BottomFailed(std::int64_t count, const dtype::Type* t, const char* what);
  [[gnu::cold]] bool RankFailed(int rank, const Comm* comm, const char* which);
  [[gnu::cold]] bool TagFailed(int tag, bool any_ok);
  [[gnu::cold]] bool NullFailed(const char* what);

  const char* name_;
  int comm_handle_ = MPI_COMM_WORLD;
  Code cls_ = Code::kOk;
  std::string message_;
};

// ---- requests -----------------------------------------------------------------
// The API side of an MPI_Request: the engine's Request plus what the API needs
// at completion (unpacking into a noncontiguous user buffer, persistence).
struct ApiRequest {
  Request req;
  int handle = MPI_REQUEST_NULL;
  int comm_handle = MPI_COMM_NULL;
  bool is_send = false;
  bool persistent = false;
  bool active = false;        // persistent: started and not yet completed
  bool free_pending = false;  // MPI_Request_free on an active request
  const char* call = "";      // the call that created it, for messages
  // Start arguments (kept for MPI_Start).
  const void* user_buf = nullptr;
  std::int64_t count = 0;
  dtype::Type* type = nullptr;  // retained while the request lives
  Comm* held_comm = nullptr;    // retained while the request lives (rt::CommRetain)
  int peer = 0, tag = 0;
  SendMode mode = SendMode::kStandard;
  void* message = nullptr;  // MPI_Imrecv: the matched message (rt::Mrecv)
  bool from_message = false;
  // Contiguous staging buffer for noncontiguous types; reused across starts
  // and across reuse of this slot, so a warm table does not allocate.
  std::vector<char> staging;
  bool staged = false;  // this operation goes through `staging`
  // The matched Enqueueable behind this request, once an enqueue call has
  // checked the rules that hold from MPI_Match until MPI_Request_free
  // (persistent, not generalized, matched); nullptr until then. The enqueue
  // calls then check only what can change between calls. FreeRequest
  // clears it with the slot, so a reused handle is checked afresh.
  queue::Enqueueable* enqueueable = nullptr;
  ApiRequest* next_free = nullptr;  // the taking thread's stock of free slots (requests.cc)
};

// A fresh request slot (reset when it was last given back); nullptr when
// the table is full.
ApiRequest* AllocRequest();
// Keeps `comm` alive until the request is freed: MPI_Comm_free while the
// request is pending must not end the communicator (or its context id)
// under it.
void HoldComm(ApiRequest* r, Comm* comm);
// For engines above point-to-point (collectives, queues, matching): a request
// handle whose Request the engine fills in, setting Request::ops so that the
// generic paths (MPI_Start, MPI_Wait*/Test*, MPI_Request_free, MPI_Cancel)
// call the engine. `call` names the creating MPI function in messages.
// ops->free is called once, when the slot is released (after the final
// wait of a nonblocking request; at MPI_Request_free of a persistent one).
// Returns nullptr when the table is full; *handle is the MPI_Request.
Request* AllocEngineRequest(MPI_Comm comm, const char* call, bool persistent, MPI_Request* handle);
// The table of request slots; null until the first request is allocated.
using RequestTable = dtype::SlotTable<ApiRequest, 8, 4096>;
extern std::atomic<RequestTable*> g_request_table;
// Inline: every MPI_Start, MPI_Wait and enqueue call looks up each of its
// requests (out of line it was a third of an enqueued start's checks).
inline ApiRequest* LookupRequest(MPI_Request handle) {
  if (KindOf(handle) != NICQ_KIND_REQUEST || IndexOf(handle) == 0) return nullptr;
  const RequestTable* t = g_request_table.load(std::memory_order_acquire);
  return t ? t->Get(IndexOf(handle)) : nullptr;
}
// False (MPI_ERR_QUEUE recorded on `c`) while an enqueued start of the request
// is pending on a queue: only MPI_Enqueue_wait / MPI_Queue_fence may complete
// it (chapter 13). `index` >= 0 names the array entry in the message.
// Inline: a point-to-point request (no ops) is never enqueued, and every
// start and completion asks.
bool EnqueuedCheck(Call& c, ApiRequest* r, int index);
inline bool NotEnqueued(Call& c, ApiRequest* r, int index = -1) {
  const RequestOps* ops = r->req.ops;
  if (!ops || !ops->enqueued) [[likely]]
    return true;
  return EnqueuedCheck(c, r, index);
}
void FreeRequest(ApiRequest* r);
int LiveRequests();  // for tests

// Posts the operation described by r's arguments (pack first for sends).
Status PostRequest(ApiRequest* r);
// Completion by the waiter: unpack, fill status, release nonpersistent
// requests (setting *handle to MPI_REQUEST_NULL). Returns the MPI code for the
// request's own error (MPI_SUCCESS, or a raised code for truncation etc.).
int CompleteRequest(ApiRequest* r, MPI_Request* handle, MPI_Status* status, bool raise);
// What a finished point-to-point operation's error message names.
struct P2pCall {
  const char* call;
  int comm_handle;
  bool is_send;
  int peer, tag;
  const dtype::Type* type;
  std::int64_t count;
};
// Fills *status from rs and returns MPI_SUCCESS, or raises (or records)
// rs.error with a message naming the call, peer and tag.
int FinishP2pStatus(const P2pCall& p, const RequestStatus& rs, MPI_Status* status, bool raise);
// MPI_Cancel's dispatch: the owning engine's cancel, or the p2p engine's.
Status CancelRequest(ApiRequest* r);
// Requests released with MPI_Request_free while still active: swept as they finish.
void AddOrphan(ApiRequest* r);
extern std::atomic<int> g_orphan_count;  // orphans not swept yet
void SweepOrphansNow(bool wait_all);
// Inline: every wait asks, and there are hardly ever any.
inline void SweepOrphans(bool wait_all) {
  if (wait_all || g_orphan_count.load(std::memory_order_acquire) != 0) SweepOrphansNow(wait_all);
}

// Requests completed by polling (MPI_Isendrecv, MPI_Buffer_iflush, ...):
// `poll` runs on every progress pass until it returns true, then the
// request is marked done. The request must stay alive until then.
void AddPolledRequest(Request* req, bool (*poll)(Request* req));

// A generalized request's query_fn, filling req->status (MPI_Request_get_status
// and completion call it).
Status GrequestQuery(Request* req);

// Fills an MPI_Status from an engine status (status may be MPI_STATUS_IGNORE).
// Inline: every point-to-point completion fills one.
inline void FillStatus(MPI_Status* status, const RequestStatus& rs) {
  if (!status || status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = rs.source;
  status->MPI_TAG = rs.tag;
  status->nicq_count = static_cast<long long>(rs.bytes);
  status->nicq_cancelled = rs.cancelled;
}
void EmptyStatus(MPI_Status* status);

}  // namespace nicq::api
