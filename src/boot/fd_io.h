// Whole-buffer reads and writes on blocking file descriptors, retried on
// EINTR. Shared by the local bootstrap client and nicqrun.
#pragma once

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>

namespace nicq::boot {

// Returns true when all `len` bytes were written. MSG_NOSIGNAL on sockets so
// that a vanished peer is an error return, not a SIGPIPE that kills the rank.
inline bool SendAll(int fd, const void* buf, std::size_t len) {
  const char* p = static_cast<const char*>(buf);
  while (len > 0) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<std::size_t>(n);
  }
  return true;
}

// Returns the bytes read: `len` on success, less on EOF or error (errno set
// on error, 0 on EOF).
inline std::size_t RecvAll(int fd, void* buf, std::size_t len) {
  char* p = static_cast<char*>(buf);
  std::size_t got = 0;
  while (got < len) {
    ssize_t n = ::recv(fd, p + got, len - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = 0;
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  return got;
}

}  // namespace nicq::boot
