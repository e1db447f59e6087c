#include "core/config.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nicq::config {
namespace {
#define NICQ_STR2(x) #x
#define NICQ_STR(x) NICQ_STR2(x)
}  // namespace

const std::vector<VarInfo>& AllVars() {
  static const std::vector<VarInfo> vars = {
#define NICQ_VAR(name, type, def, help) VarInfo{#name, #type, NICQ_STR(def), help},
#include "core/config.def"
#undef NICQ_VAR
  };
  return vars;
}

static const VarInfo& Find(const char* name) {
  for (const auto& v : AllVars())
    if (std::strcmp(v.name, name) == 0) return v;
  std::fprintf(stderr, "nicq: internal error: undeclared config variable %s\n", name);
  std::abort();
}

static std::string Unquote(const char* s) {
  std::string v(s);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

bool IsSet(const char* name) {
  (void)Find(name);
  return std::getenv(name) != nullptr;
}

std::string GetString(const char* name) {
  const VarInfo& v = Find(name);
  if (const char* e = std::getenv(name)) return e;
  return Unquote(v.default_value);
}

std::int64_t GetInt(const char* name) {
  const VarInfo& v = Find(name);
  const char* e = std::getenv(name);
  std::string text = e ? e : Unquote(v.default_value);
  if (text == "true" || text == "yes" || text == "on") return 1;
  if (text == "false" || text == "no" || text == "off") return 0;
  char* end = nullptr;
  long long val = std::strtoll(text.c_str(), &end, 0);
  if (end == text.c_str() || *end != '\0') {
    std::fprintf(stderr, "nicq: warning: %s=%s is not a number; using default %s\n", name,
                 text.c_str(), v.default_value);
    return std::strtoll(Unquote(v.default_value).c_str(), nullptr, 0);
  }
  return val;
}

}  // namespace nicq::config
