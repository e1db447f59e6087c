// Strict parsing of integer environment variables set by launchers: a
// malformed value is an error naming the variable, never a silent 0.
#pragma once

#include <cstdlib>
#include <string>

#include "core/status.h"

namespace nicq::boot {

inline Status EnvInt(const char* name, long lo, long hi, int& out) {
  const char* text = std::getenv(name);
  if (!text || !*text) return Error(Code::kArg, std::string("bootstrap: ") + name + " is not set");
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v < lo || v > hi)
    return Error(Code::kArg, std::string("bootstrap: ") + name + "=" + text +
                                 " is not an integer in [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "]");
  out = static_cast<int>(v);
  return Status::Ok();
}

}  // namespace nicq::boot
