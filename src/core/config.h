// Typed access to the NICQ_* environment variables declared in config.def.
// Values are read once (first use) and cached; reading is thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nicq::config {

struct VarInfo {
  const char* name;
  const char* type;           // "String", "Int" or "Bool"
  const char* default_value;  // as text
  const char* help;
};

// All declared variables, in declaration order (for `nicq_info -e`).
const std::vector<VarInfo>& AllVars();


std::string GetString(const char* name);  // declared name; aborts on unknown
std::int64_t GetInt(const char* name);
bool IsSet(const char* name);  // the user set it in the environment

}  // namespace nicq::config
