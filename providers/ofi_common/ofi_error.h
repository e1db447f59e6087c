// Turning libfabric return codes into nicq::Status with a message that names
// the call and its argument (logged once where first detected).
#pragma once

#include <errno.h>
#include <rdma/fi_errno.h>

#include <string>

#include "core/peer_loss.h"
#include "core/status.h"

namespace nicq::ofi {

// ret < 0 is an error; the message reads "<call>(<what>): <fi_strerror>".
inline Status Check(long ret, const char* call, const std::string& what = {}) {
  if (ret >= 0) return Status::Ok();
  const Code code = ret == -FI_EAGAIN   ? Code::kAgain
                    : ret == -FI_ENOMEM ? Code::kNoMem
                    : (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP || ret == -FI_ENODATA)
                        ? Code::kUnsupportedOperation
                        : Code::kIntern;
  std::string msg = call;
  if (!what.empty()) msg += "(" + what + ")";
  msg += ": ";
  msg += fi_strerror(static_cast<int>(-ret));
  return Error(code, std::move(msg));
}

// The class of a failed operation's completion error (a CQ error entry's
// err, positive): what the program should see in MPI_ERROR.
inline Code FailureClass(long err) {
  const int e = static_cast<int>(err < 0 ? -err : err);
  if (e == FI_ETRUNC || e == FI_ETOOSMALL) return Code::kTruncate;
  return IsPeerLossErrno(e) ? Code::kProcFailed : Code::kOther;
}

}  // namespace nicq::ofi
