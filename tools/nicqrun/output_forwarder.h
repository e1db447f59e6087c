// Forwards one rank's stdout or stderr pipe to nicqrun's own, a whole line
// at a time so that lines of different ranks never interleave mid-line, with
// an optional "[rank] " prefix (--tag-output).
#pragma once

#include <string>

namespace nicq::run {

class OutputForwarder {
 public:
  OutputForwarder(int rank, int src_fd, int dst_fd, bool tag);
  ~OutputForwarder();
  OutputForwarder(const OutputForwarder&) = delete;
  OutputForwarder& operator=(const OutputForwarder&) = delete;

  int fd() const { return src_fd_; }
  bool open() const { return src_fd_ >= 0; }
  // Reads what is available (call when poll() says readable); on EOF flushes
  // the partial last line and closes the pipe.
  void OnReadable();
  // Gives up on the pipe (e.g. a grandchild keeps it open after the job).
  void Close();

 private:
  void Emit(const char* data, std::size_t len);
  void FlushLines(bool final);

  int rank_, src_fd_, dst_fd_;
  bool tag_;
  std::string pending_;
};

}  // namespace nicq::run
