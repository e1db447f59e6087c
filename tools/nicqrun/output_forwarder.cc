#include "output_forwarder.h"

#include <errno.h>
#include <unistd.h>

#include <string>

namespace nicq::run {

// A line longer than this is forwarded in pieces rather than held forever.
static constexpr std::size_t kMaxHeld = 64 * 1024;

OutputForwarder::OutputForwarder(int rank, int src_fd, int dst_fd, bool tag)
    : rank_(rank), src_fd_(src_fd), dst_fd_(dst_fd), tag_(tag) {}

OutputForwarder::~OutputForwarder() {
  Close();
}

void OutputForwarder::Emit(const char* data, std::size_t len) {
  std::string out;
  if (tag_) out = "[" + std::to_string(rank_) + "] ";
  out.append(data, len);
  const char* p = out.data();
  std::size_t left = out.size();
  while (left > 0) {
    ssize_t n = ::write(dst_fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // our own output is gone (EPIPE): drop, keep the job running
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

void OutputForwarder::FlushLines(bool final) {
  std::size_t start = 0;
  for (;;) {
    std::size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    Emit(pending_.data() + start, nl + 1 - start);
    start = nl + 1;
  }
  pending_.erase(0, start);
  if (!pending_.empty() && (final || pending_.size() > kMaxHeld)) {
    if (tag_) pending_.push_back('\n');  // keep the next tagged line on its own line
    Emit(pending_.data(), pending_.size());
    pending_.clear();
  }
}

void OutputForwarder::OnReadable() {
  if (src_fd_ < 0) return;
  char buf[16384];
  ssize_t n;
  do {
    n = ::read(src_fd_, buf, sizeof(buf));
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    pending_.append(buf, static_cast<std::size_t>(n));
    FlushLines(false);
    return;
  }
  if (n < 0 && errno == EAGAIN) return;
  Close();
}

void OutputForwarder::Close() {
  if (src_fd_ < 0) return;
  FlushLines(true);
  ::close(src_fd_);
  src_fd_ = -1;
}

}  // namespace nicq::run
