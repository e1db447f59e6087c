// nicq::Status — the one status type inside the library.
//
// Sign convention (as UCC): Code::kOk == 0, errors are MPI-like classes kept
// as an internal enum; conversion to MPI error codes happens only in src/api/.
// A Status carries an optional message that names the call and argument,
// built only on the error path (never on the hot path).
#pragma once

#include <string>
#include <utility>

namespace nicq {

// Internal error classes. Values mirror the MPI error classes in mpi.h so the
// API layer can convert with a static_cast, but nothing below src/api/
// includes mpi.h.
enum class Code : int {
  kOk = 0,
  kBuffer = 1,
  kCount = 2,
  kType = 3,
  kTag = 4,
  kComm = 5,
  kRank = 6,
  kRequest = 7,
  kRoot = 8,
  kGroup = 9,
  kOp = 10,
  kTopology = 11,
  kDims = 12,
  kArg = 13,
  kUnknown = 14,
  kTruncate = 15,
  kOther = 16,
  kIntern = 17,
  kInStatus = 18,
  kPending = 19,
  kAssert = 22,  // invalid assertion (one-sided synchronization)
  kDisp = 26,
  kInfo = 28,
  kNoMem = 34,
  kLockType = 38,
  kRmaConflict = 46,
  kRmaSync = 47,  // one-sided call outside or against its synchronization epoch
  kSize = 49,
  kUnsupportedOperation = 52,
  kWin = 53,
  kProcFailed = 54,  // a peer died (MPI_ERR_PROC_FAILED in ULFM terms)
  kRmaRange = 55,    // target access outside the window
  kRmaAttach = 56,
  kRmaShared = 57,
  kRmaFlavor = 58,
  kQueue = 70,   // erroneous queue use (chapter 13)
  kMatch = 71,   // erroneous match use (chapter 13)
  kAgain = 100,  // transient: retry (never escapes to the API)
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  // An empty message allocates nothing: retry paths build kAgain with none.
  Status(Code code, std::string message)
      : code_(code),
        message_(code == Code::kOk || message.empty() ? nullptr
                                                      : new std::string(std::move(message))) {}
  static Status Ok() { return Status(); }

  // An ok Status is a code and a null pointer: constructing, moving and
  // destroying one (every call of the hot path returns one, and wait loops
  // return one per pass) is a few stores, not a std::string's.
  Status(const Status& o)
      : code_(o.code_), message_(o.message_ ? new std::string(*o.message_) : nullptr) {}
  // A moved-from Status keeps its code and loses its message, as a moved
  // std::string member did.
  Status(Status&& o) noexcept : code_(o.code_), message_(o.message_) { o.message_ = nullptr; }
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status& operator=(Status&& o) noexcept {
    if (this != &o) {
      delete message_;
      code_ = o.code_;
      message_ = o.message_;
      o.message_ = nullptr;
    }
    return *this;
  }
  ~Status() { delete message_; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_ ? *message_ : Empty(); }

  // Prefix context ("MPI_Send: ") while the error travels up.
  Status& WithContext(const std::string& ctx) {
    if (!ok()) *Message() = ctx + ": " + *Message();
    return *this;
  }
  void IgnoreError() const {}

 private:
  static const std::string& Empty() {
    static const std::string* empty = new std::string;  // never destroyed: read during exit
    return *empty;
  }
  std::string* Message() {
    if (!message_) message_ = new std::string;
    return message_;
  }

  Code code_ = Code::kOk;
  std::string* message_ = nullptr;  // errors only
};

inline Status Error(Code code, std::string message) {
  return Status(code, std::move(message));
}

}  // namespace nicq

// Return early with the status when it is an error.
#define NICQ_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::nicq::Status nicq_status_ = (expr);        \
    if (!nicq_status_.ok()) return nicq_status_; \
  } while (0)
