// The MPI tool information interface (MPI-4.1 15.3): performance
// variables, their sessions and handles; events and event sources.
//
// The variables are gauges and counters that nicq keeps anyway, read when a
// tool asks, so they cost the library nothing between reads: every one is
// continuous (always running, no start or stop) and read-only (no write, no
// reset). A counter's handle reads what happened since the handle was
// allocated. nicq raises no events and has no event sources.
#include <cstring>
#include <memory>
#include <new>
#include <set>

#include "api/api_internal.h"
#include "api/api_more.h"
#include "api/tool_internal.h"

// A performance variable's handle in a session; `base` is the counter's
// value when the handle was allocated.
struct nicq_T_pvar_handle {
  int index;
  std::uint64_t base;
};

struct nicq_T_pvar_session {
  std::set<MPI_T_pvar_handle> handles;
};

namespace nicq::api::tool {
namespace {

std::uint64_t RequestsInUse() {
  const RequestTable* t = g_request_table.load(std::memory_order_acquire);
  return t ? static_cast<std::uint64_t>(t->LiveCount()) : 0;
}

std::uint64_t CommunicatorsInUse() {
  return static_cast<std::uint64_t>(CommCountInUse());
}

std::uint64_t ErrorsReturned() {
  return RecordedErrorCount();
}

const PvarInfo kPvars[] = {
    {"nicq_requests_in_use",
     "request handles that exist now (pending nonblocking operations, persistent and "
     "generalized requests not yet freed)",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED_LONG_LONG, true, true,
     &RequestsInUse},
    {"nicq_communicators_in_use",
     "communicator handles that exist now, MPI_COMM_WORLD and MPI_COMM_SELF included",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_PVAR_CLASS_LEVEL, MPI_UNSIGNED_LONG_LONG, true, true,
     &CommunicatorsInUse},
    {"nicq_errors_returned",
     "MPI calls of this process that returned an error code (handled or not)",
     MPI_T_VERBOSITY_USER_BASIC, MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, true, true,
     &ErrorsReturned},
};
constexpr int kPvarCount = static_cast<int>(sizeof kPvars / sizeof kPvars[0]);

bool IsCounter(const PvarInfo& v) {
  return v.var_class == MPI_T_PVAR_CLASS_COUNTER;
}

std::set<MPI_T_pvar_session>& Sessions() {
  static auto* live = new std::set<MPI_T_pvar_session>();
  return *live;
}

}  // namespace

int PvarCount() {
  return kPvarCount;
}

const PvarInfo& Pvar(int index) {
  return kPvars[index];
}

void DropSessions() {
  for (MPI_T_pvar_session s : Sessions()) {
    for (MPI_T_pvar_handle h : s->handles) delete h;
    delete s;
  }
  Sessions().clear();
}

}  // namespace nicq::api::tool

namespace {

using namespace nicq;
using api::tool::CopyString;
using api::tool::PvarCount;
using api::tool::Sessions;

// A counter's handle reads from its value at allocation; a level's, from 0.
std::uint64_t HandleBase(const api::tool::PvarInfo& v) {
  return api::tool::IsCounter(v) ? v.read() : 0;
}

// MPI_SUCCESS when `handle` (not MPI_T_PVAR_ALL_HANDLES) belongs to a live
// `session`; else the error class to return.
int CheckHandle(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  if (Sessions().count(session) == 0) return MPI_T_ERR_INVALID_SESSION;
  if (session->handles.count(handle) == 0) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_SUCCESS;
}

// Start, stop, write and reset of one handle or of MPI_T_PVAR_ALL_HANDLES:
// every variable is continuous and read-only, so one handle is refused with
// `refusal` and all handles succeed with nothing to do.
int NothingToChange(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int refusal) {
  if (handle == MPI_T_PVAR_ALL_HANDLES)
    return Sessions().count(session) ? MPI_SUCCESS : MPI_T_ERR_INVALID_SESSION;
  const int rc = CheckHandle(session, handle);
  return rc != MPI_SUCCESS ? rc : refusal;
}

}  // namespace

extern "C" {

int MPI_T_pvar_get_num(int* num_pvar) {
  NICQ_T_ENTER();
  if (!num_pvar) return MPI_T_ERR_INVALID;
  *num_pvar = PvarCount();
  return MPI_SUCCESS;
}

int MPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* readonly, int* continuous, int* atomic) {
  NICQ_T_ENTER();
  if (pvar_index < 0 || pvar_index >= PvarCount()) return MPI_T_ERR_INVALID_INDEX;
  const api::tool::PvarInfo& v = api::tool::Pvar(pvar_index);
  CopyString(v.name, name, name_len);
  CopyString(v.desc, desc, desc_len);
  if (verbosity) *verbosity = v.verbosity;
  if (var_class) *var_class = v.var_class;
  if (datatype) *datatype = v.datatype;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (readonly) *readonly = v.readonly;
  if (continuous) *continuous = v.continuous;
  if (atomic) *atomic = 0;  // no MPI_T_pvar_readreset: read-only
  return MPI_SUCCESS;
}

int MPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  NICQ_T_ENTER();
  if (!name || !pvar_index) return MPI_T_ERR_INVALID;
  for (int i = 0; i < PvarCount(); ++i) {
    const api::tool::PvarInfo& v = api::tool::Pvar(i);
    if (v.var_class == var_class && std::strcmp(v.name, name) == 0) {
      *pvar_index = i;
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}

int MPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  NICQ_T_ENTER();
  if (!session) return MPI_T_ERR_INVALID;
  auto* s = new (std::nothrow) nicq_T_pvar_session();
  if (!s) return MPI_T_ERR_MEMORY;
  Sessions().insert(s);
  *session = s;
  return MPI_SUCCESS;
}

int MPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  NICQ_T_ENTER();
  if (!session) return MPI_T_ERR_INVALID;
  if (Sessions().erase(*session) == 0) return MPI_T_ERR_INVALID_SESSION;
  for (MPI_T_pvar_handle h : (*session)->handles) delete h;
  delete *session;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                            MPI_T_pvar_handle* handle, int* count) {
  (void)obj_handle;  // every variable is MPI_T_BIND_NO_OBJECT
  NICQ_T_ENTER();
  if (Sessions().count(session) == 0) return MPI_T_ERR_INVALID_SESSION;
  if (pvar_index < 0 || pvar_index >= PvarCount()) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_T_ERR_INVALID;
  const api::tool::PvarInfo& v = api::tool::Pvar(pvar_index);
  auto* h = new (std::nothrow) nicq_T_pvar_handle{pvar_index, HandleBase(v)};
  if (!h) return MPI_T_ERR_MEMORY;
  session->handles.insert(h);
  *handle = h;
  *count = 1;
  return MPI_SUCCESS;
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  NICQ_T_ENTER();
  if (!handle) return MPI_T_ERR_INVALID;
  const int rc = CheckHandle(session, *handle);
  if (rc != MPI_SUCCESS) return rc;
  session->handles.erase(*handle);
  delete *handle;
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  NICQ_T_ENTER();
  return NothingToChange(session, handle, MPI_T_ERR_PVAR_NO_STARTSTOP);
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  NICQ_T_ENTER();
  return NothingToChange(session, handle, MPI_T_ERR_PVAR_NO_STARTSTOP);
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  NICQ_T_ENTER();
  const int rc = CheckHandle(session, handle);
  if (rc != MPI_SUCCESS) return rc;
  if (!buf) return MPI_T_ERR_INVALID;
  const api::tool::PvarInfo& v = api::tool::Pvar(handle->index);
  const unsigned long long value = v.read() - handle->base;
  std::memcpy(buf, &value, sizeof value);
  return MPI_SUCCESS;
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
  (void)buf;
  NICQ_T_ENTER();
  if (handle == MPI_T_PVAR_ALL_HANDLES) return MPI_T_ERR_INVALID_HANDLE;
  return NothingToChange(session, handle, MPI_T_ERR_PVAR_NO_WRITE);
}

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  NICQ_T_ENTER();
  return NothingToChange(session, handle, MPI_T_ERR_PVAR_NO_WRITE);
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  (void)buf;
  NICQ_T_ENTER();
  if (handle == MPI_T_PVAR_ALL_HANDLES) return MPI_T_ERR_INVALID_HANDLE;
  return NothingToChange(session, handle, MPI_T_ERR_PVAR_NO_WRITE);
}

// ---- events and their sources: none ----

int MPI_T_event_get_num(int* num_events) {
  NICQ_T_ENTER();
  if (!num_events) return MPI_T_ERR_INVALID;
  *num_events = 0;
  return MPI_SUCCESS;
}

int MPI_T_event_get_info(int event_index, char* name, int* name_len, int* verbosity,
                         MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                         int* num_elements, MPI_T_enum* enumtype, MPI_Info* info, char* desc,
                         int* desc_len, int* bind) {
  (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
  (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
  (void)desc_len, (void)bind;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_INDEX;
}

int MPI_T_event_get_index(const char* name, int* event_index) {
  NICQ_T_ENTER();
  if (!name || !event_index) return MPI_T_ERR_INVALID;
  return MPI_T_ERR_INVALID_NAME;
}

int MPI_T_event_handle_alloc(int event_index, void* obj_handle, MPI_Info info,
                             MPI_T_event_registration* event_registration) {
  (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_INDEX;
}

// No registration or instance can exist: every call on one is refused.
int MPI_T_event_handle_free(MPI_T_event_registration event_registration, void* user_data,
                            MPI_T_event_free_cb_function* free_cb_function) {
  (void)event_registration, (void)user_data, (void)free_cb_function;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info* info_used) {
  (void)event_registration, (void)info_used;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info) {
  (void)event_registration, (void)info;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info info, void* user_data,
                                  MPI_T_event_cb_function* event_cb_function) {
  (void)event_registration, (void)cb_safety, (void)info, (void)user_data, (void)event_cb_function;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info* info_used) {
  (void)event_registration, (void)cb_safety, (void)info_used;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                  MPI_T_cb_safety cb_safety, MPI_Info info) {
  (void)event_registration, (void)cb_safety, (void)info;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                    MPI_T_event_dropped_cb_function* dropped_cb_function) {
  (void)event_registration, (void)dropped_cb_function;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void* buffer) {
  (void)event_instance, (void)element_index, (void)buffer;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_copy(MPI_T_event_instance event_instance, void* buffer) {
  (void)event_instance, (void)buffer;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count* event_timestamp) {
  (void)event_instance, (void)event_timestamp;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_event_get_source(MPI_T_event_instance event_instance, int* source_index) {
  (void)event_instance, (void)source_index;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_source_get_num(int* num_sources) {
  NICQ_T_ENTER();
  if (!num_sources) return MPI_T_ERR_INVALID;
  *num_sources = 0;
  return MPI_SUCCESS;
}

int MPI_T_source_get_info(int source_index, char* name, int* name_len, char* desc, int* desc_len,
                          MPI_T_source_order* ordering, MPI_Count* ticks_per_second,
                          MPI_Count* max_ticks, MPI_Info* info) {
  (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len, (void)ordering;
  (void)ticks_per_second, (void)max_ticks, (void)info;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_INDEX;
}

int MPI_T_source_get_timestamp(int source_index, MPI_Count* timestamp) {
  (void)source_index, (void)timestamp;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_INDEX;
}

}  // extern "C"
