// Sessions (MPI-4 chapter 11.3): nicq offers the two process sets every
// MPI has, "mpi://WORLD" and "mpi://SELF", and builds communicators from
// their groups. A session started before MPI_Init starts the runtime (as
// MPI_Init_thread would); the last such session to finish finalizes it.
// The runtime starts once per process, so a program that mixes sessions
// with the world model must call MPI_Init before MPI_Session_init.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api/api_more.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

namespace {

constexpr int kMaxSessions = 64;
constexpr const char* kPsetNames[] = {"mpi://WORLD", "mpi://SELF"};
constexpr int kNumPsets = 2;

struct SessionTable {
  std::mutex mu;
  bool live[kMaxSessions + 1] = {};  // index 0 is MPI_SESSION_NULL
  int errhandler[kMaxSessions + 1] = {};
  int count = 0;
  bool started_runtime = false;  // the first session ran MPI_Init_thread
};
SessionTable& Sessions() {
  static auto* t = new SessionTable();
  return *t;
}

std::string Str(long long v) {
  return std::to_string(v);
}

// Raises `code` through a session's error handler: fatal ones end the job,
// a user handler made by MPI_Session_create_errhandler is called.
int RaiseOnSession(int errhandler, MPI_Session session, int code) {
  if (errhandler == MPI_ERRORS_ARE_FATAL || errhandler == MPI_ERRORS_ABORT) {
    std::fprintf(stderr, "nicq: fatal error: %s\n", api::MessageFor(code).c_str());
    PMPI_Abort(MPI_COMM_WORLD, code & 0xff);
  }
  if (api::IsSessionErrhandler(errhandler)) api::CallSessionErrhandler(errhandler, session, code);
  return code;
}

// Errors of session calls go to the session's error handler (the one given
// to MPI_Session_init or set since); calls on an invalid session use
// MPI_COMM_WORLD's.
int FailOn(Call& c, int errhandler, MPI_Session session = MPI_SESSION_NULL) {
  if (errhandler == MPI_ERRHANDLER_NULL) return c.Fail();
  return RaiseOnSession(errhandler, session, api::RecordError(c.error_class(), c.error_message()));
}

int HandlerOf(MPI_Session h) {
  int index = api::IndexOf(h);
  std::lock_guard<std::mutex> lock(Sessions().mu);
  bool live = api::KindOf(h) == NICQ_KIND_SESSION && index > 0 && index <= kMaxSessions &&
              Sessions().live[index];
  return live ? Sessions().errhandler[index] : MPI_ERRHANDLER_NULL;
}

bool SessionArg(Call& c, MPI_Session h) {
  int index = api::IndexOf(h);
  std::lock_guard<std::mutex> lock(Sessions().mu);
  bool ok = api::KindOf(h) == NICQ_KIND_SESSION && index > 0 && index <= kMaxSessions &&
            Sessions().live[index];
  return c.Check(ok, Code(MPI_ERR_SESSION),
                 h == MPI_SESSION_NULL ? "session is MPI_SESSION_NULL"
                                       : "invalid or finalized session " + Str(h));
}

// The thread level a session asks for in its info ("thread_level").
int RequestedThreadLevel(MPI_Info info) {
  if (info == MPI_INFO_NULL) return MPI_THREAD_SINGLE;
  char value[64];
  int flag = 0;
  if (PMPI_Info_get(info, "thread_level", sizeof value - 1, value, &flag) != MPI_SUCCESS || !flag)
    return MPI_THREAD_SINGLE;
  const std::string v = value;
  if (v == "MPI_THREAD_MULTIPLE") return MPI_THREAD_MULTIPLE;
  if (v == "MPI_THREAD_SERIALIZED") return MPI_THREAD_SERIALIZED;
  if (v == "MPI_THREAD_FUNNELED") return MPI_THREAD_FUNNELED;
  return MPI_THREAD_SINGLE;
}

// FNV-1a: every member derives the same exchange tag from the string tag.
std::uint32_t TagOf(const char* s) {
  std::uint32_t h = 2166136261u;
  for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 16777619u;
  return h;
}

}  // namespace

extern "C" {

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  Call c("MPI_Session_init");
  if (!c.NotNull(session, "session") ||
      !c.Check(api::ValidErrhandler(errhandler), Code::kArg,
               "invalid errhandler " + Str(errhandler)) ||
      !c.Check(!api::IsFinalized(), Code(MPI_ERR_SESSION),
               "the runtime was finalized and cannot start again"))
    return FailOn(c, api::ValidErrhandler(errhandler) ? errhandler : MPI_ERRHANDLER_NULL);
  std::lock_guard<std::mutex> lock(Sessions().mu);
  int index = 1;
  while (index <= kMaxSessions && Sessions().live[index]) ++index;
  if (index > kMaxSessions) {
    (void)c.Check(false, Code::kNoMem, "more than " + Str(kMaxSessions) + " sessions are open");
    return FailOn(c, errhandler);
  }
  if (!api::IsInitialized()) {
    int provided;
    if (int rc = PMPI_Init_thread(nullptr, nullptr, RequestedThreadLevel(info), &provided);
        rc != MPI_SUCCESS)
      return rc;
    Sessions().started_runtime = true;
  }
  Sessions().live[index] = true;
  Sessions().errhandler[index] = errhandler;
  ++Sessions().count;
  *session = NICQ_HANDLE(NICQ_KIND_SESSION, index);
  return MPI_SUCCESS;
}

int MPI_Session_finalize(MPI_Session* session) {
  Call c("MPI_Session_finalize");
  if (!c.NotNull(session, "session") || !SessionArg(c, *session))
    return FailOn(c, session ? HandlerOf(*session) : MPI_ERRHANDLER_NULL);
  bool finalize = false;
  {
    std::lock_guard<std::mutex> lock(Sessions().mu);
    Sessions().live[api::IndexOf(*session)] = false;
    finalize = --Sessions().count == 0 && Sessions().started_runtime;
    if (finalize) Sessions().started_runtime = false;
  }
  *session = MPI_SESSION_NULL;
  return finalize ? PMPI_Finalize() : MPI_SUCCESS;
}

int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int* npset_names) {
  Call c("MPI_Session_get_num_psets");
  if (!SessionArg(c, session) || !c.NotNull(npset_names, "npset_names"))
    return FailOn(c, HandlerOf(session), session);
  *npset_names = kNumPsets;
  return MPI_SUCCESS;
}

// *pset_len == 0 asks for the length (with the terminating NUL); otherwise
// at most *pset_len characters are written, NUL included.
int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int* pset_len,
                             char* pset_name) {
  Call c("MPI_Session_get_nth_pset");
  if (!SessionArg(c, session) || !c.NotNull(pset_len, "pset_len") ||
      !c.Check(n >= 0 && n < kNumPsets, Code::kArg,
               "n = " + Str(n) + " is not a process set index (0.." + Str(kNumPsets - 1) + ")"))
    return FailOn(c, HandlerOf(session), session);
  const char* name = kPsetNames[n];
  int len = static_cast<int>(std::strlen(name)) + 1;
  if (*pset_len == 0) {
    *pset_len = len;
    return MPI_SUCCESS;
  }
  if (!c.NotNull(pset_name, "pset_name")) return FailOn(c, HandlerOf(session), session);
  int copy = std::min(len, *pset_len);
  std::memcpy(pset_name, name, copy - 1);
  pset_name[copy - 1] = '\0';
  *pset_len = len;
  return MPI_SUCCESS;
}

int MPI_Group_from_session_pset(MPI_Session session, const char* pset_name, MPI_Group* newgroup) {
  Call c("MPI_Group_from_session_pset");
  if (!SessionArg(c, session) || !c.NotNull(pset_name, "pset_name") ||
      !c.NotNull(newgroup, "newgroup"))
    return FailOn(c, HandlerOf(session), session);
  std::vector<int> ranks;
  if (!std::strcmp(pset_name, "mpi://WORLD")) {
    for (int r = 0; r < rt::WorldSize(); ++r) ranks.push_back(r);
  } else if (!std::strcmp(pset_name, "mpi://SELF")) {
    ranks.push_back(rt::WorldRank());
  } else {
    (void)c.Check(false, Code::kArg,
                  std::string("unknown process set '") + pset_name +
                      "' (nicq has mpi://WORLD and mpi://SELF)");
    return FailOn(c, HandlerOf(session), session);
  }
  return api::NewGroup(c, std::move(ranks), newgroup, api::IndexOf(session));
}

int MPI_Session_create_errhandler(MPI_Session_errhandler_function* session_errhandler_fn,
                                  MPI_Errhandler* errhandler) {
  Call c("MPI_Session_create_errhandler");
  if (!c.NotNull(reinterpret_cast<const void*>(session_errhandler_fn), "session_errhandler_fn") ||
      !c.NotNull(errhandler, "errhandler"))
    return c.Fail();
  return api::NewSessionErrhandler(c, session_errhandler_fn, errhandler);
}

int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
  Call c("MPI_Session_set_errhandler");
  if (!SessionArg(c, session) || !c.Check(api::ValidErrhandler(errhandler), Code::kArg,
                                          "invalid errhandler " + Str(errhandler)))
    return FailOn(c, HandlerOf(session), session);
  std::lock_guard<std::mutex> lock(Sessions().mu);
  Sessions().errhandler[api::IndexOf(session)] = errhandler;
  return MPI_SUCCESS;
}

int MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler* errhandler) {
  Call c("MPI_Session_get_errhandler");
  if (!SessionArg(c, session) || !c.NotNull(errhandler, "errhandler"))
    return FailOn(c, HandlerOf(session), session);
  *errhandler = HandlerOf(session);
  return MPI_SUCCESS;
}

int MPI_Session_call_errhandler(MPI_Session session, int errorcode) {
  Call c("MPI_Session_call_errhandler");
  if (!SessionArg(c, session)) return FailOn(c, HandlerOf(session), session);
  RaiseOnSession(HandlerOf(session), session, errorcode);
  return MPI_SUCCESS;
}

// The thread support level the session runs at (MPI's "thread_level" key).
int MPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  Call c("MPI_Session_get_info");
  if (!SessionArg(c, session) || !c.NotNull(info_used, "info_used"))
    return FailOn(c, HandlerOf(session), session);
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  constexpr const char* kLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                     "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
  return api::NewInfoFrom(c, {{"thread_level", kLevels[level & 3]}}, info_used);
}

// "mpi_size": the number of processes in the set.
int MPI_Session_get_pset_info(MPI_Session session, const char* pset_name, MPI_Info* info) {
  Call c("MPI_Session_get_pset_info");
  if (!SessionArg(c, session) || !c.NotNull(pset_name, "pset_name") || !c.NotNull(info, "info"))
    return FailOn(c, HandlerOf(session), session);
  int size = 0;
  if (!std::strcmp(pset_name, "mpi://WORLD")) {
    size = rt::WorldSize();
  } else if (!std::strcmp(pset_name, "mpi://SELF")) {
    size = 1;
  } else {
    (void)c.Check(false, Code::kArg,
                  std::string("unknown process set '") + pset_name +
                      "' (nicq has mpi://WORLD and mpi://SELF)");
    return FailOn(c, HandlerOf(session), session);
  }
  return api::NewInfoFrom(c, {{"mpi_size", Str(size)}}, info);
}

// Collective over the group's members, told apart by the string tag.
int MPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info,
                               MPI_Errhandler errhandler, MPI_Comm* newcomm) {
  Call c("MPI_Comm_create_from_group");
  const std::vector<int>* g;
  if (!c.Init() || !api::GroupArg(c, group, &g) || !c.NotNull(stringtag, "stringtag") ||
      !c.NotNull(newcomm, "newcomm") ||
      !c.Check(api::ValidErrhandler(errhandler), Code::kArg,
               "invalid errhandler " + Str(errhandler)) ||
      !c.Check(std::find(g->begin(), g->end(), rt::WorldRank()) != g->end(), Code::kGroup,
               "this process is not a member of the group"))
    return c.Fail();
  Comm* child = nullptr;
  Status st = api::CreateCommFromMembers(rt::World(), *g, TagOf(stringtag), &child);
  if (!st.ok()) return c.Fail(st);
  // Its buffered sends fall back on the session's buffer (MPI-4.1 3.6).
  rt::CommSetSession(child, api::GroupSession(group));
  return api::AdoptComm(c, errhandler, child, newcomm);
}

}  // extern "C"
