// User-defined error classes, codes and strings (MPI_Add_error_class ..
// MPI_Remove_error_string). A user class is a number in 96..255 (below are
// MPI's classes, the queue chapter's 70 and 71 and the tool interface's
// 72..89); a user code is
// class | (n << 8) with n above the sequence numbers of recorded errors,
// so MPI_Error_class reads the class the usual way and recorded messages
// never alias a user code.
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "api/api_more.h"

using namespace nicq;
using api::Call;

namespace {

constexpr int kFirstUserClass = 96;
constexpr int kLastUserClass = 255;
constexpr int kFirstCodeNumber = 1 << 21;  // errors.cc's recorded sequences stay below
constexpr int kLastCodeNumber = (MPI_ERR_LASTCODE >> 8) - 1;

struct UserErrors {
  std::mutex mu;
  bool class_used[kLastUserClass + 1] = {};
  std::map<int, int> code_class;       // user code -> its class
  std::map<int, std::string> strings;  // user class or code -> MPI_Add_error_string
  int next_code = kFirstCodeNumber;
};
UserErrors& U() {
  static auto* u = new UserErrors();
  return *u;
}

std::string Str(long long v) {
  return std::to_string(v);
}

bool IsUserClass(int cls) {
  return cls >= kFirstUserClass && cls <= kLastUserClass && U().class_used[cls];
}
bool IsUserCode(int code) {
  return IsUserClass(code) || U().code_class.count(code) != 0;
}
bool IsPredefinedClass(int cls) {
  return (cls >= MPI_SUCCESS && cls <= MPI_ERR_ERRHANDLER) || cls == 70 || cls == 71 ||
         (cls >= MPI_T_ERR_MEMORY && cls <= MPI_T_ERR_NOT_ACCESSIBLE);
}
int CodesOf(int cls) {
  int n = 0;
  for (const auto& [code, c] : U().code_class) n += c == cls;
  return n;
}

}  // namespace

namespace nicq::api {

bool UserErrorString(int code, std::string* out) {
  std::lock_guard<std::mutex> lock(U().mu);
  if (!IsUserCode(code)) return false;
  auto it = U().strings.find(code);
  *out = it == U().strings.end() ? "" : it->second;
  return true;
}

}  // namespace nicq::api

extern "C" {

int MPI_Add_error_class(int* errorclass) {
  Call c("MPI_Add_error_class");
  if (!c.NotNull(errorclass, "errorclass")) return c.Fail();
  std::lock_guard<std::mutex> lock(U().mu);
  int cls = kFirstUserClass;
  while (cls <= kLastUserClass && U().class_used[cls]) ++cls;
  if (cls > kLastUserClass)
    return c.Fail(Code::kNoMem, "all " + Str(kLastUserClass - kFirstUserClass + 1) +
                                    " user error classes are in use");
  U().class_used[cls] = true;
  *errorclass = cls;
  return MPI_SUCCESS;
}

int MPI_Add_error_code(int errorclass, int* errorcode) {
  Call c("MPI_Add_error_code");
  if (!c.NotNull(errorcode, "errorcode")) return c.Fail();
  std::lock_guard<std::mutex> lock(U().mu);
  if (!c.Check(IsPredefinedClass(errorclass) || IsUserClass(errorclass), Code::kArg,
               "invalid error class " + Str(errorclass)))
    return c.Fail();
  int n = U().next_code;
  while (n <= kLastCodeNumber && U().code_class.count(errorclass | (n << 8))) ++n;
  if (n > kLastCodeNumber) return c.Fail(Code::kNoMem, "no user error code is left");
  U().next_code = n + 1;
  const int code = errorclass | (n << 8);
  U().code_class[code] = errorclass;
  *errorcode = code;
  return MPI_SUCCESS;
}

int MPI_Add_error_string(int errorcode, const char* string) {
  Call c("MPI_Add_error_string");
  if (!c.NotNull(string, "string")) return c.Fail();
  const std::size_t len = std::strlen(string);
  std::lock_guard<std::mutex> lock(U().mu);
  if (!c.Check(IsUserCode(errorcode), Code::kArg,
               "error code " + Str(errorcode) +
                   " was not made by MPI_Add_error_class or MPI_Add_error_code") ||
      !c.Check(len < MPI_MAX_ERROR_STRING, Code::kArg,
               "string of " + Str(static_cast<long long>(len)) + " characters (at most " +
                   Str(MPI_MAX_ERROR_STRING - 1) + ")"))
    return c.Fail();
  U().strings[errorcode] = string;
  return MPI_SUCCESS;
}

int MPI_Remove_error_class(int errorclass) {
  Call c("MPI_Remove_error_class");
  std::lock_guard<std::mutex> lock(U().mu);
  if (!c.Check(IsUserClass(errorclass), Code::kArg,
               "error class " + Str(errorclass) + " was not made by MPI_Add_error_class") ||
      !c.Check(CodesOf(errorclass) == 0, Code::kArg,
               "error class " + Str(errorclass) + " still has " + Str(CodesOf(errorclass)) +
                   " error codes (remove them first)"))
    return c.Fail();
  U().class_used[errorclass] = false;
  U().strings.erase(errorclass);
  return MPI_SUCCESS;
}

int MPI_Remove_error_code(int errorcode) {
  Call c("MPI_Remove_error_code");
  std::lock_guard<std::mutex> lock(U().mu);
  if (!c.Check(U().code_class.count(errorcode) != 0, Code::kArg,
               "error code " + Str(errorcode) + " was not made by MPI_Add_error_code") ||
      !c.Check(U().strings.count(errorcode) == 0, Code::kArg,
               "error code " + Str(errorcode) + " still has a string (remove it first)"))
    return c.Fail();
  U().code_class.erase(errorcode);
  return MPI_SUCCESS;
}

int MPI_Remove_error_string(int errorcode) {
  Call c("MPI_Remove_error_string");
  std::lock_guard<std::mutex> lock(U().mu);
  if (!c.Check(U().strings.count(errorcode) != 0, Code::kArg,
               "error code " + Str(errorcode) + " has no string set by MPI_Add_error_string"))
    return c.Fail();
  U().strings.erase(errorcode);
  return MPI_SUCCESS;
}

}  // extern "C"
