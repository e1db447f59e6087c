// Which libfabric/errno error codes mean the peer process is gone (its
// connection refused, reset or unreachable, an I/O error on its link):
// the p2p engine and the providers both report those as MPI_ERR_PROC_FAILED.
#pragma once

#include <errno.h>
#include <rdma/fi_errno.h>

namespace nicq {

// `err` is positive (FI_E* / errno).
inline bool IsPeerLossErrno(int err) {
  switch (err) {
    case FI_ECONNREFUSED:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_EHOSTUNREACH:
    case FI_ENOTCONN:
    case FI_ETIMEDOUT:
    case FI_EIO:
    case EPIPE:
    case FI_EADDRNOTAVAIL:
      return true;
    default:
      return false;
  }
}

}  // namespace nicq
