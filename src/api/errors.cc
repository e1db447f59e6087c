// Error codes, messages and error handlers.
//
// A returned error code is class | (sequence << 8); the message recorded for
// it sits in a small ring indexed by sequence, so MPI_Error_string can give
// back the exact text ("MPI_Send(rank 3): invalid destination rank 7 ...")
// for recent errors, and the class text for old or foreign codes.
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "api/api_more.h"
#include "dtype/slot_table.h"
#include "runtime/runtime.h"

namespace nicq::api {
namespace {

constexpr int kRingSize = 64;
constexpr unsigned kSeqLimit = 1u << 21;  // keeps codes <= MPI_ERR_LASTCODE

struct Entry {
  unsigned seq = 0;
  std::string message;
};

struct ErrorRing {
  std::mutex mu;
  unsigned next = 1;
  std::uint64_t recorded = 0;  // every error ever recorded (MPI_T's nicq_errors_returned)
  Entry entries[kRingSize];
};
ErrorRing& Ring() {
  static ErrorRing* ring = new ErrorRing();
  return *ring;
}

struct UserErrhandler {
  MPI_Comm_errhandler_function* fn = nullptr;
  MPI_Session_errhandler_function* session_fn = nullptr;  // MPI_Session_create_errhandler
  MPI_Win_errhandler_function* win_fn = nullptr;          // MPI_Win_create_errhandler
  MPI_File_errhandler_function* file_fn = nullptr;        // MPI_File_create_errhandler
};
constexpr int kFirstUserErrhandler = 16;
dtype::SlotTable<UserErrhandler, 6, 16>& Errhandlers() {
  static auto* table = new dtype::SlotTable<UserErrhandler, 6, 16>(kFirstUserErrhandler);
  return *table;
}

const char* ClassText(int cls) {
  switch (cls) {
    case MPI_SUCCESS:
      return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER:
      return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG:
      return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM:
      return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST:
      return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT:
      return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP:
      return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP:
      return "MPI_ERR_OP: invalid reduction operation";
    case MPI_ERR_TOPOLOGY:
      return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS:
      return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG: invalid argument";
    case MPI_ERR_UNKNOWN:
      return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE:
      return "MPI_ERR_TRUNCATE: message truncated";
    case MPI_ERR_OTHER:
      return "MPI_ERR_OTHER: other error";
    case MPI_ERR_INTERN:
      return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_IN_STATUS:
      return "MPI_ERR_IN_STATUS: error code is in status";
    case MPI_ERR_PENDING:
      return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_INFO:
      return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_INFO_KEY:
      return "MPI_ERR_INFO_KEY: invalid info key";
    case MPI_ERR_INFO_NOKEY:
      return "MPI_ERR_INFO_NOKEY: key not in info object";
    case MPI_ERR_INFO_VALUE:
      return "MPI_ERR_INFO_VALUE: invalid info value";
    case MPI_ERR_NO_MEM:
      return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_KEYVAL:
      return "MPI_ERR_KEYVAL: invalid attribute key";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "MPI_ERR_UNSUPPORTED_OPERATION: not supported";
    case MPI_ERR_PROC_FAILED:
      return "MPI_ERR_PROC_FAILED: a peer process failed";
    case 70:  // MPI_ERR_QUEUE (nicq/mpi_queue.h)
      return "MPI_ERR_QUEUE: erroneous use of a queue or of an enqueued request";
    case 71:  // MPI_ERR_MATCH (nicq/mpi_queue.h)
      return "MPI_ERR_MATCH: erroneous match of a persistent request";
    case MPI_ERR_ERRHANDLER:
      return "MPI_ERR_ERRHANDLER: invalid error handler";
    case MPI_ERR_SESSION:
      return "MPI_ERR_SESSION: invalid session";
    case MPI_ERR_VALUE_TOO_LARGE:
      return "MPI_ERR_VALUE_TOO_LARGE: value too large";
    case MPI_T_ERR_MEMORY:
      return "MPI_T_ERR_MEMORY: out of memory (tool interface)";
    case MPI_T_ERR_NOT_INITIALIZED:
      return "MPI_T_ERR_NOT_INITIALIZED: the tool interface is not initialized";
    case MPI_T_ERR_CANNOT_INIT:
      return "MPI_T_ERR_CANNOT_INIT: the tool interface cannot be initialized";
    case MPI_T_ERR_INVALID_INDEX:
      return "MPI_T_ERR_INVALID_INDEX: invalid tool variable, category, event or source index";
    case MPI_T_ERR_INVALID_ITEM:
      return "MPI_T_ERR_INVALID_ITEM: invalid enumeration item index";
    case MPI_T_ERR_INVALID_HANDLE:
      return "MPI_T_ERR_INVALID_HANDLE: invalid tool handle";
    case MPI_T_ERR_OUT_OF_HANDLES:
      return "MPI_T_ERR_OUT_OF_HANDLES: no more tool handles";
    case MPI_T_ERR_OUT_OF_SESSIONS:
      return "MPI_T_ERR_OUT_OF_SESSIONS: no more performance variable sessions";
    case MPI_T_ERR_INVALID_SESSION:
      return "MPI_T_ERR_INVALID_SESSION: invalid performance variable session";
    case MPI_T_ERR_CVAR_SET_NOT_NOW:
      return "MPI_T_ERR_CVAR_SET_NOT_NOW: the control variable cannot be set now";
    case MPI_T_ERR_CVAR_SET_NEVER:
      return "MPI_T_ERR_CVAR_SET_NEVER: the control variable is read-only";
    case MPI_T_ERR_PVAR_NO_STARTSTOP:
      return "MPI_T_ERR_PVAR_NO_STARTSTOP: the performance variable cannot be started or stopped";
    case MPI_T_ERR_PVAR_NO_WRITE:
      return "MPI_T_ERR_PVAR_NO_WRITE: the performance variable cannot be written or reset";
    case MPI_T_ERR_PVAR_NO_ATOMIC:
      return "MPI_T_ERR_PVAR_NO_ATOMIC: the performance variable cannot be read and reset at once";
    case MPI_T_ERR_INVALID_NAME:
      return "MPI_T_ERR_INVALID_NAME: no tool variable, category or event has this name";
    case MPI_T_ERR_INVALID:
      return "MPI_T_ERR_INVALID: invalid use of the tool interface";
    case MPI_T_ERR_NOT_SUPPORTED:
      return "MPI_T_ERR_NOT_SUPPORTED: not supported by the tool interface";
    case MPI_T_ERR_NOT_ACCESSIBLE:
      return "MPI_T_ERR_NOT_ACCESSIBLE: not accessible through the tool interface now";
    default:
      return cls > 0 && cls < 256 ? "MPI error class without a description" : "invalid error code";
  }
}

[[noreturn]] void AbortJob(int code, const std::string& message) {
  std::fprintf(stderr, "nicq: fatal error: %s\n", message.c_str());
  std::fflush(stderr);
  int cls = code & 0xff;
  if (rt::Initialized() && !rt::Finalized()) rt::Abort(cls ? cls : 1, message.c_str());
  std::_Exit(cls ? cls : 1);
}

}  // namespace

int RecordError(Code cls, const std::string& message) {
  ErrorRing& ring = Ring();
  std::lock_guard<std::mutex> lock(ring.mu);
  ++ring.recorded;
  unsigned seq = ring.next;
  ring.next = ring.next + 1 >= kSeqLimit ? 1 : ring.next + 1;
  Entry& e = ring.entries[seq % kRingSize];
  e.seq = seq;
  e.message = message;
  return static_cast<int>(cls) | static_cast<int>(seq << 8);
}

std::uint64_t RecordedErrorCount() {
  ErrorRing& ring = Ring();
  std::lock_guard<std::mutex> lock(ring.mu);
  return ring.recorded;
}

// The message recorded for code, or its class's text.
std::string MessageFor(int code) {
  if (code == MPI_SUCCESS) return ClassText(0);
  if (std::string user; UserErrorString(code, &user)) return user;
  unsigned seq = static_cast<unsigned>(code) >> 8;
  if (seq > 0 && code > 0) {
    ErrorRing& ring = Ring();
    std::lock_guard<std::mutex> lock(ring.mu);
    const Entry& e = ring.entries[seq % kRingSize];
    if (e.seq == seq) return e.message;
  }
  return ClassText(code > 0 ? code & 0xff : -1);
}

bool ValidErrhandler(int h) {
  if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT) return true;
  return KindOf(h) == NICQ_KIND_ERRHANDLER && Errhandlers().Get(IndexOf(h)) != nullptr;
}

bool IsSessionErrhandler(int h) {
  if (KindOf(h) != NICQ_KIND_ERRHANDLER) return false;
  UserErrhandler* u = Errhandlers().Get(IndexOf(h));
  return u && u->session_fn;
}

void CallSessionErrhandler(int errhandler, MPI_Session session, int code) {
  UserErrhandler* u = Errhandlers().Get(IndexOf(errhandler));
  if (!u || !u->session_fn) return;
  MPI_Session s = session;
  u->session_fn(&s, &code);
}

int NewSessionErrhandler(Call& c, MPI_Session_errhandler_function* fn, MPI_Errhandler* out) {
  int index = Errhandlers().Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "error handler table is full");
  *Errhandlers().Get(index) = UserErrhandler{nullptr, fn};
  *out = NICQ_HANDLE(NICQ_KIND_ERRHANDLER, index);
  return MPI_SUCCESS;
}

bool IsWinErrhandler(int h) {
  if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT) return true;
  if (KindOf(h) != NICQ_KIND_ERRHANDLER) return false;
  UserErrhandler* u = Errhandlers().Get(IndexOf(h));
  return u && u->win_fn;
}

int NewWinErrhandler(Call& c, MPI_Win_errhandler_function* fn, MPI_Errhandler* out) {
  int index = Errhandlers().Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "error handler table is full");
  UserErrhandler u;
  u.win_fn = fn;
  *Errhandlers().Get(index) = u;
  *out = NICQ_HANDLE(NICQ_KIND_ERRHANDLER, index);
  return MPI_SUCCESS;
}

int InvokeWinErrhandler(int win_handle, int errhandler, int code) {
  if (!IsInitialized()) return InvokeErrhandler(MPI_COMM_WORLD, code);
  const int eh = errhandler ? errhandler : MPI_ERRORS_ARE_FATAL;
  if (eh == MPI_ERRORS_RETURN) return code;
  if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT) AbortJob(code, MessageFor(code));
  if (UserErrhandler* u = Errhandlers().Get(IndexOf(eh)); u && u->win_fn) {
    int c = code;
    MPI_Win w = win_handle;
    u->win_fn(&w, &c);
  }
  return code;
}

bool IsFileErrhandler(int h) {
  if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT) return true;
  if (KindOf(h) != NICQ_KIND_ERRHANDLER) return false;
  UserErrhandler* u = Errhandlers().Get(IndexOf(h));
  return u && u->file_fn;
}

int NewFileErrhandler(Call& c, MPI_File_errhandler_function* fn, MPI_Errhandler* out) {
  int index = Errhandlers().Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "error handler table is full");
  UserErrhandler u;
  u.file_fn = fn;
  *Errhandlers().Get(index) = u;
  *out = NICQ_HANDLE(NICQ_KIND_ERRHANDLER, index);
  return MPI_SUCCESS;
}

int InvokeFileErrhandler(int file_handle, int errhandler, int code) {
  if (!IsInitialized()) return InvokeErrhandler(MPI_COMM_WORLD, code);
  const int eh = errhandler ? errhandler : MPI_ERRORS_RETURN;
  if (eh == MPI_ERRORS_RETURN) return code;
  if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT) AbortJob(code, MessageFor(code));
  if (UserErrhandler* u = Errhandlers().Get(IndexOf(eh)); u && u->file_fn) {
    int c = code;
    MPI_File f = file_handle;
    u->file_fn(&f, &c);
  }
  return code;
}

int InvokeErrhandler(int comm_handle, int code) {
  if (!IsInitialized()) {
    // No job to abort before MPI_Init / after MPI_Finalize: report and return.
    std::fprintf(stderr, "nicq: %s\n", MessageFor(code).c_str());
    return code;
  }
  Comm* comm = LookupComm(comm_handle);
  if (!comm) {
    comm_handle = MPI_COMM_WORLD;
    comm = LookupComm(comm_handle);
  }
  int eh = comm && comm->errhandler ? comm->errhandler : MPI_ERRORS_ARE_FATAL;
  if (eh == MPI_ERRORS_RETURN) return code;
  if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT) AbortJob(code, MessageFor(code));
  if (UserErrhandler* u = Errhandlers().Get(IndexOf(eh)); u && u->fn) {
    int c = code;
    MPI_Comm h = comm_handle;
    u->fn(&h, &c);
  }
  return code;
}

int Raise(int comm_handle, Code cls, const std::string& message) {
  return InvokeErrhandler(comm_handle, RecordError(cls, message));
}

int RaiseStatus(int comm_handle, const char* call, const Status& st) {
  std::string msg = std::string(call) + "(" + RankText() + "): " + st.message();
  return Raise(comm_handle, st.code() == Code::kAgain ? Code::kOther : st.code(), msg);
}

}  // namespace nicq::api

using namespace nicq;

extern "C" {

int MPI_Error_class(int errorcode, int* errorclass) {
  if (!errorclass)
    return api::Raise(MPI_COMM_WORLD, Code::kArg,
                      "MPI_Error_class(" + api::RankText() + "): errorclass is NULL");
  if (errorcode < 0 || errorcode > MPI_ERR_LASTCODE)
    return api::Raise(MPI_COMM_WORLD, Code::kArg,
                      "MPI_Error_class(" + api::RankText() + "): invalid error code " +
                          std::to_string(errorcode));
  *errorclass = errorcode & 0xff;
  return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (!string || !resultlen)
    return api::Raise(MPI_COMM_WORLD, Code::kArg,
                      "MPI_Error_string(" + api::RankText() + "): string or resultlen is NULL");
  std::string msg = api::MessageFor(errorcode);
  std::size_t n = std::min<std::size_t>(msg.size(), MPI_MAX_ERROR_STRING - 1);
  std::memcpy(string, msg.data(), n);
  string[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn, MPI_Errhandler* errhandler) {
  api::Call c("MPI_Comm_create_errhandler");
  if (!c.NotNull(reinterpret_cast<const void*>(fn), "function") ||
      !c.NotNull(errhandler, "errhandler"))
    return c.Fail();
  int index = api::Errhandlers().Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "error handler table is full");
  *api::Errhandlers().Get(index) = api::UserErrhandler{fn, nullptr, nullptr};
  *errhandler = NICQ_HANDLE(NICQ_KIND_ERRHANDLER, index);
  return MPI_SUCCESS;
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  api::Call c("MPI_Comm_set_errhandler");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return c.Fail();
  if (!api::ValidErrhandler(errhandler))
    return c.Fail(Code::kArg, "invalid errhandler " + std::to_string(errhandler));
  cm->errhandler = errhandler;
  return MPI_SUCCESS;
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  api::Call c("MPI_Comm_get_errhandler");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm) || !c.NotNull(errhandler, "errhandler")) return c.Fail();
  *errhandler = cm->errhandler ? cm->errhandler : MPI_ERRORS_ARE_FATAL;
  return MPI_SUCCESS;
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  api::Call c("MPI_Comm_call_errhandler");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return c.Fail();
  api::InvokeErrhandler(comm, errorcode);
  return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  api::Call c("MPI_Errhandler_free");
  if (!c.NotNull(errhandler, "errhandler")) return c.Fail();
  if (!api::ValidErrhandler(*errhandler))
    return c.Fail(Code::kArg, "invalid errhandler " + std::to_string(*errhandler));
  // A communicator may still use the handler after this call, so user
  // handlers stay in their slot (they are tiny); only the caller's handle
  // is invalidated.
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"
