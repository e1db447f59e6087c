// The MPI tool information interface (MPI-4.1 15.3): initialisation,
// control variables and categories.
//
// Control variables are nicq's NICQ_* environment variables
// (core/config.def), under their own names: a tool sees what this process
// runs with (the environment's value, else the default). nicq reads them
// when a layer starts, so none can be changed through MPI_T: their scope is
// MPI_T_SCOPE_READONLY and MPI_T_cvar_write answers
// MPI_T_ERR_CVAR_SET_NEVER. Integers and switches are MPI_INT (clamped to
// its range), the others MPI_CHAR strings of at most kStringChars.
//
// One category, "nicq", holds every control and performance variable.
#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <set>
#include <string>

#include "api/tool_internal.h"
#include "core/config.h"

namespace nicq::api::tool {
namespace {

constexpr int kStringChars = 1024;  // a string control variable's buffer, null included
constexpr const char* kCategoryName = "nicq";
constexpr const char* kCategoryDesc =
    "nicq's environment variables (read-only) and performance variables";

int init_count = 0;

bool IsString(const config::VarInfo& v) {
  return std::strcmp(v.type, "String") == 0;
}

// The variables a user sets first (docs/user-guide.md); the launcher's own
// are for nicq's developers; the rest tune.
int VerbosityOf(const config::VarInfo& v) {
  static const char* const kUser[] = {"NICQ_PROVIDER",   "NICQ_OFFLOAD", "NICQ_PROGRESS_THREAD",
                                      "NICQ_QUEUE_EXEC", "NICQ_LOG",     "NICQ_SHM"};
  for (const char* name : kUser)
    if (std::strcmp(v.name, name) == 0) return MPI_T_VERBOSITY_USER_BASIC;
  if (std::strncmp(v.help, "set by nicqrun", 14) == 0) return MPI_T_VERBOSITY_MPIDEV_BASIC;
  return MPI_T_VERBOSITY_TUNER_BASIC;
}

int CvarCount() {
  return static_cast<int>(config::AllVars().size());
}

}  // namespace

std::mutex& Lock() {
  static auto* mu = new std::mutex();
  return *mu;
}

bool Initialized() {
  return init_count > 0;
}

void CopyString(const char* text, char* buf, int* len) {
  if (!len) return;
  const int need = static_cast<int>(std::strlen(text)) + 1;
  if (!buf || *len <= 0) {
    *len = need;
    return;
  }
  const int n = std::min(need, *len) - 1;
  std::memcpy(buf, text, static_cast<std::size_t>(n));
  buf[n] = '\0';
  *len = n + 1;
}

}  // namespace nicq::api::tool

// A control variable's handle: the variable's index. The set of live
// handles tells a freed or foreign pointer apart.
struct nicq_T_cvar_handle {
  int index;
};

namespace {

using namespace nicq;
using api::tool::CopyString;
using api::tool::CvarCount;

std::set<MPI_T_cvar_handle>& CvarHandles() {
  static auto* live = new std::set<MPI_T_cvar_handle>();
  return *live;
}

bool ValidCvar(int index) {
  return index >= 0 && index < CvarCount();
}

}  // namespace

extern "C" {

int MPI_T_init_thread(int required, int* provided) {
  std::lock_guard<std::mutex> lock(api::tool::Lock());
  if (!provided) return MPI_T_ERR_INVALID;
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE) return MPI_T_ERR_INVALID;
  ++api::tool::init_count;
  *provided = required;  // every MPI_T call takes one lock: any level holds
  return MPI_SUCCESS;
}

int MPI_T_finalize(void) {
  NICQ_T_ENTER();
  if (--api::tool::init_count == 0) {
    for (MPI_T_cvar_handle h : CvarHandles()) delete h;
    CvarHandles().clear();
    api::tool::DropSessions();
  }
  return MPI_SUCCESS;
}

int MPI_T_cvar_get_num(int* num_cvar) {
  NICQ_T_ENTER();
  if (!num_cvar) return MPI_T_ERR_INVALID;
  *num_cvar = CvarCount();
  return MPI_SUCCESS;
}

int MPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* scope) {
  NICQ_T_ENTER();
  if (!ValidCvar(cvar_index)) return MPI_T_ERR_INVALID_INDEX;
  const config::VarInfo& v = config::AllVars()[static_cast<std::size_t>(cvar_index)];
  CopyString(v.name, name, name_len);
  CopyString(v.help, desc, desc_len);
  if (verbosity) *verbosity = api::tool::VerbosityOf(v);
  if (datatype) *datatype = api::tool::IsString(v) ? MPI_CHAR : MPI_INT;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (scope) *scope = MPI_T_SCOPE_READONLY;
  return MPI_SUCCESS;
}

int MPI_T_cvar_get_index(const char* name, int* cvar_index) {
  NICQ_T_ENTER();
  if (!name || !cvar_index) return MPI_T_ERR_INVALID;
  const auto& vars = config::AllVars();
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (std::strcmp(vars[i].name, name) == 0) {
      *cvar_index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  return MPI_T_ERR_INVALID_NAME;
}

int MPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle,
                            int* count) {
  (void)obj_handle;  // every variable is MPI_T_BIND_NO_OBJECT
  NICQ_T_ENTER();
  if (!ValidCvar(cvar_index)) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_T_ERR_INVALID;
  auto* h = new (std::nothrow) nicq_T_cvar_handle{cvar_index};
  if (!h) return MPI_T_ERR_MEMORY;
  CvarHandles().insert(h);
  const config::VarInfo& v = config::AllVars()[static_cast<std::size_t>(cvar_index)];
  *count = api::tool::IsString(v) ? api::tool::kStringChars : 1;
  *handle = h;
  return MPI_SUCCESS;
}

int MPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  NICQ_T_ENTER();
  if (!handle) return MPI_T_ERR_INVALID;
  if (CvarHandles().erase(*handle) == 0) return MPI_T_ERR_INVALID_HANDLE;
  delete *handle;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  NICQ_T_ENTER();
  if (CvarHandles().count(handle) == 0) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_T_ERR_INVALID;
  const config::VarInfo& v = config::AllVars()[static_cast<std::size_t>(handle->index)];
  if (api::tool::IsString(v)) {
    int len = api::tool::kStringChars;
    CopyString(config::GetString(v.name).c_str(), static_cast<char*>(buf), &len);
  } else {
    const std::int64_t value = config::GetInt(v.name);
    const int clamped = static_cast<int>(std::clamp<std::int64_t>(value, INT_MIN, INT_MAX));
    std::memcpy(buf, &clamped, sizeof clamped);
  }
  return MPI_SUCCESS;
}

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  (void)buf;
  NICQ_T_ENTER();
  if (CvarHandles().count(handle) == 0) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_T_ERR_CVAR_SET_NEVER;  // MPI_T_SCOPE_READONLY: see the file comment
}

// Enumerations: no variable has one.
int MPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  (void)enumtype, (void)num, (void)name, (void)name_len;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int* value, char* name, int* name_len) {
  (void)enumtype, (void)indx, (void)value, (void)name, (void)name_len;
  NICQ_T_ENTER();
  return MPI_T_ERR_INVALID_HANDLE;
}

// ---- categories: the one "nicq" category ----

int MPI_T_category_get_num(int* num_cat) {
  NICQ_T_ENTER();
  if (!num_cat) return MPI_T_ERR_INVALID;
  *num_cat = 1;
  return MPI_SUCCESS;
}

int MPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                            int* num_cvars, int* num_pvars, int* num_categories) {
  NICQ_T_ENTER();
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  CopyString(api::tool::kCategoryName, name, name_len);
  CopyString(api::tool::kCategoryDesc, desc, desc_len);
  if (num_cvars) *num_cvars = CvarCount();
  if (num_pvars) *num_pvars = api::tool::PvarCount();
  if (num_categories) *num_categories = 0;
  return MPI_SUCCESS;
}

int MPI_T_category_get_index(const char* name, int* cat_index) {
  NICQ_T_ENTER();
  if (!name || !cat_index) return MPI_T_ERR_INVALID;
  if (std::strcmp(name, api::tool::kCategoryName) != 0) return MPI_T_ERR_INVALID_NAME;
  *cat_index = 0;
  return MPI_SUCCESS;
}

int MPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  NICQ_T_ENTER();
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_T_ERR_INVALID;
  for (int i = 0; i < std::min(len, CvarCount()); ++i) indices[i] = i;
  return MPI_SUCCESS;
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  NICQ_T_ENTER();
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_T_ERR_INVALID;
  for (int i = 0; i < std::min(len, api::tool::PvarCount()); ++i) indices[i] = i;
  return MPI_SUCCESS;
}

int MPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  (void)indices;
  NICQ_T_ENTER();
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;  // no subcategories
}

int MPI_T_category_get_num_events(int cat_index, int* num_events) {
  NICQ_T_ENTER();
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (!num_events) return MPI_T_ERR_INVALID;
  *num_events = 0;
  return MPI_SUCCESS;
}

int MPI_T_category_get_events(int cat_index, int len, int indices[]) {
  (void)indices;
  NICQ_T_ENTER();
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;
}

// The categories never change while the process runs.
int MPI_T_category_changed(int* update_number) {
  NICQ_T_ENTER();
  if (!update_number) return MPI_T_ERR_INVALID;
  *update_number = 0;
  return MPI_SUCCESS;
}

}  // extern "C"
