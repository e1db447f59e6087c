// MPI_Info: ordered (key, value) string pairs. Keys keep insertion order so
// MPI_Info_get_nthkey is stable; setting an existing key replaces its value.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "api/api_internal.h"
#include "dtype/slot_table.h"

namespace nicq::api {
namespace {

struct Info {
  std::vector<std::pair<std::string, std::string>> entries;
};
constexpr int kFirstUserInfo = 2;  // 1 = MPI_INFO_ENV

dtype::SlotTable<Info, 8, 64>& Infos() {
  static auto* table = new dtype::SlotTable<Info, 8, 64>(kFirstUserInfo);
  return *table;
}
Info& EnvInfo() {
  static Info* env = new Info();
  return *env;
}

Info* LookupInfo(MPI_Info h) {
  if (KindOf(h) != NICQ_KIND_INFO) return nullptr;
  if (h == MPI_INFO_ENV) return &EnvInfo();
  if (IndexOf(h) < kFirstUserInfo) return nullptr;
  return Infos().Get(IndexOf(h));
}

bool InfoArg(Call& c, MPI_Info h, Info** out) {
  if (h == MPI_INFO_NULL) return c.Check(false, Code::kInfo, "info is MPI_INFO_NULL");
  *out = LookupInfo(h);
  return c.Check(*out != nullptr, Code::kInfo, "invalid info handle " + std::to_string(h));
}

bool KeyArg(Call& c, const char* key) {
  if (!c.NotNull(key, "key")) return false;
  std::size_t n = std::strlen(key);
  return c.Check(n > 0 && n <= MPI_MAX_INFO_KEY, Code::kInfo,
                 "info key of length " + std::to_string(n) + " (must be 1.." +
                     std::to_string(MPI_MAX_INFO_KEY) + ")");
}

std::string* Find(Info* info, const char* key) {
  for (auto& e : info->entries)
    if (e.first == key) return &e.second;
  return nullptr;
}

int NewInfo(Call& c, MPI_Info* out, Info** info) {
  int index = Infos().Alloc();
  if (index < 0) return c.Fail(Code::kNoMem, "info table is full");
  *info = Infos().Get(index);
  (*info)->entries.clear();
  *out = NICQ_HANDLE(NICQ_KIND_INFO, index);
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace nicq::api

using namespace nicq;
using api::Call;

extern "C" {

int MPI_Info_create(MPI_Info* info) {
  Call c("MPI_Info_create");
  if (!c.NotNull(info, "info")) return c.Fail();
  api::Info* in;
  return api::NewInfo(c, info, &in);
}

int MPI_Info_set(MPI_Info info, const char* key, const char* value) {
  Call c("MPI_Info_set");
  api::Info* in;
  if (!api::InfoArg(c, info, &in) || !api::KeyArg(c, key) || !c.NotNull(value, "value"))
    return c.Fail();
  std::size_t vlen = std::strlen(value);
  if (vlen > MPI_MAX_INFO_VAL)
    return c.Fail(Code::kInfo, "info value of length " + std::to_string(vlen) + " exceeds " +
                                   std::to_string(MPI_MAX_INFO_VAL));
  if (info == MPI_INFO_ENV) return c.Fail(Code::kInfo, "MPI_INFO_ENV is read-only");
  if (std::string* v = api::Find(in, key))
    *v = value;
  else
    in->entries.emplace_back(key, value);
  return MPI_SUCCESS;
}

int MPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  Call c("MPI_Info_get");
  api::Info* in;
  if (!api::InfoArg(c, info, &in) || !api::KeyArg(c, key) || !c.NotNull(flag, "flag") ||
      !c.Check(valuelen >= 0, Code::kArg, "negative valuelen " + std::to_string(valuelen)) ||
      !c.NotNull(value, "value"))
    return c.Fail();
  const std::string* v = api::Find(in, key);
  *flag = v != nullptr;
  if (v) {
    std::size_t n = std::min<std::size_t>(v->size(), static_cast<std::size_t>(valuelen));
    std::memcpy(value, v->data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  Call c("MPI_Info_get_valuelen");
  api::Info* in;
  if (!api::InfoArg(c, info, &in) || !api::KeyArg(c, key) || !c.NotNull(flag, "flag") ||
      !c.NotNull(valuelen, "valuelen"))
    return c.Fail();
  const std::string* v = api::Find(in, key);
  *flag = v != nullptr;
  if (v) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}

int MPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  Call c("MPI_Info_get_string");
  api::Info* in;
  if (!api::InfoArg(c, info, &in) || !api::KeyArg(c, key) || !c.NotNull(flag, "flag") ||
      !c.NotNull(buflen, "buflen"))
    return c.Fail();
  const std::string* v = api::Find(in, key);
  *flag = v != nullptr;
  if (!v) return MPI_SUCCESS;
  int need = static_cast<int>(v->size()) + 1;
  if (*buflen > 0 && value) {
    std::size_t n = std::min<std::size_t>(v->size(), static_cast<std::size_t>(*buflen - 1));
    std::memcpy(value, v->data(), n);
    value[n] = '\0';
  }
  *buflen = need;
  return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  Call c("MPI_Info_get_nkeys");
  api::Info* in;
  if (!api::InfoArg(c, info, &in) || !c.NotNull(nkeys, "nkeys")) return c.Fail();
  *nkeys = static_cast<int>(in->entries.size());
  return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  Call c("MPI_Info_get_nthkey");
  api::Info* in;
  if (!api::InfoArg(c, info, &in) || !c.NotNull(key, "key")) return c.Fail();
  int nkeys = static_cast<int>(in->entries.size());
  if (n < 0 || n >= nkeys)
    return c.Fail(Code::kArg, "key index " + std::to_string(n) + " out of range (info has " +
                                  std::to_string(nkeys) + " keys)");
  const std::string& k = in->entries[n].first;
  std::memcpy(key, k.c_str(), k.size() + 1);
  return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char* key) {
  Call c("MPI_Info_delete");
  api::Info* in;
  if (!api::InfoArg(c, info, &in) || !api::KeyArg(c, key)) return c.Fail();
  for (auto it = in->entries.begin(); it != in->entries.end(); ++it) {
    if (it->first == key) {
      in->entries.erase(it);
      return MPI_SUCCESS;
    }
  }
  return c.Fail(Code(MPI_ERR_INFO_NOKEY),
                std::string("key \"") + key + "\" is not in the info object");
}

int MPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  Call c("MPI_Info_dup");
  api::Info* in;
  if (!api::InfoArg(c, info, &in) || !c.NotNull(newinfo, "newinfo")) return c.Fail();
  api::Info* out;
  MPI_Info h;
  if (int rc = api::NewInfo(c, &h, &out)) return rc;
  out->entries = in->entries;
  *newinfo = h;
  return MPI_SUCCESS;
}

int MPI_Info_free(MPI_Info* info) {
  Call c("MPI_Info_free");
  api::Info* in;
  if (!c.NotNull(info, "info") || !api::InfoArg(c, *info, &in)) return c.Fail();
  if (*info == MPI_INFO_ENV) return c.Fail(Code::kInfo, "MPI_INFO_ENV cannot be freed");
  in->entries.clear();
  api::Infos().Free(api::IndexOf(*info));
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"
