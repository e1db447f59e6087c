#include "boot/local_bootstrap.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "boot/env_util.h"
#include "boot/fd_io.h"
#include "boot/local_wire.h"
#include "core/log.h"

namespace nicq {

using boot::WireHeader;
using boot::WireOp;

LocalBootstrap::LocalBootstrap(int rank, int size, int local_rank, int local_size, int fd)
    : rank_(rank), size_(size), local_rank_(local_rank), local_size_(local_size), fd_(fd) {}

LocalBootstrap::~LocalBootstrap() {
  if (fd_ >= 0) ::close(fd_);
}

static Status ConnectUnix(const std::string& path, int& fd_out) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path))
    return Error(Code::kArg, "LocalBootstrap: NICQ_BOOT_DIR socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return Error(Code::kOther, std::string("LocalBootstrap: socket(): ") + strerror(errno));
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) {
    Status st = Error(Code::kOther, "LocalBootstrap: connect(" + path + "): " + strerror(errno) +
                                        " (is nicqrun still running?)");
    ::close(fd);
    return st;
  }
  fd_out = fd;
  return Status::Ok();
}

Status LocalBootstrap::Create(std::unique_ptr<Bootstrap>& out) {
  int rank = 0, size = 0, local_rank = 0, local_size = 0;
  NICQ_RETURN_IF_ERROR(boot::EnvInt("NICQ_SIZE", 1, 1 << 20, size));
  NICQ_RETURN_IF_ERROR(boot::EnvInt("NICQ_RANK", 0, size - 1, rank));
  // Older launch scripts may omit the local pair: nicqrun is one node, so
  // the local view equals the global one.
  if (std::getenv("NICQ_LOCAL_SIZE")) {
    NICQ_RETURN_IF_ERROR(boot::EnvInt("NICQ_LOCAL_SIZE", 1, size, local_size));
    NICQ_RETURN_IF_ERROR(boot::EnvInt("NICQ_LOCAL_RANK", 0, local_size - 1, local_rank));
  } else {
    local_size = size;
    local_rank = rank;
  }
  const char* dir = std::getenv("NICQ_BOOT_DIR");
  if (!dir || !*dir)
    return Error(Code::kArg,
                 "LocalBootstrap: NICQ_RANK is set but NICQ_BOOT_DIR is not "
                 "(start the job with nicqrun)");
  int fd = -1;
  NICQ_RETURN_IF_ERROR(ConnectUnix(std::string(dir) + "/" + boot::kSocketName, fd));
  WireHeader hello{boot::kWireMagic, WireOp::kHello, rank, 0, 0, 0};
  if (!boot::SendAll(fd, &hello, sizeof(hello))) {
    ::close(fd);
    return Error(Code::kOther,
                 std::string("LocalBootstrap: sending hello to nicqrun: ") + strerror(errno));
  }
  out.reset(new LocalBootstrap(rank, size, local_rank, local_size, fd));
  NICQ_LOG(kDebug, kBoot, "local bootstrap: rank %d of %d via %s", rank, size, dir);
  return Status::Ok();
}

Status LocalBootstrap::Allgather(const void* mine, std::size_t len,
                                 std::vector<std::uint8_t>& all) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return Error(Code::kOther, "LocalBootstrap::Allgather: called after Finalize");
  if (len > boot::kMaxContribution)
    return Error(Code::kArg, "LocalBootstrap::Allgather: len " + std::to_string(len) +
                                 " exceeds the bootstrap limit");
  const std::uint64_t seq = seq_++;
  WireHeader req{boot::kWireMagic, WireOp::kAllgather, rank_, 0, seq, len};
  if (!boot::SendAll(fd_, &req, sizeof(req)) || (len > 0 && !boot::SendAll(fd_, mine, len)))
    return Error(Code::kProcFailed, "LocalBootstrap::Allgather: lost connection to nicqrun: " +
                                        std::string(strerror(errno)));
  WireHeader rep{};
  if (boot::RecvAll(fd_, &rep, sizeof(rep)) != sizeof(rep) || rep.magic != boot::kWireMagic)
    return Error(Code::kProcFailed,
                 "LocalBootstrap::Allgather: nicqrun closed the connection (job being killed?)");
  std::vector<std::uint8_t> payload(rep.len);
  if (rep.len > 0 && boot::RecvAll(fd_, payload.data(), rep.len) != rep.len)
    return Error(Code::kProcFailed, "LocalBootstrap::Allgather: short reply from nicqrun");
  if (rep.op == WireOp::kError)
    return Error(Code::kOther,
                 "LocalBootstrap::Allgather: " + std::string(payload.begin(), payload.end()));
  if (rep.op != WireOp::kAllgatherDone || rep.seq != seq ||
      rep.len != static_cast<std::uint64_t>(len) * size_)
    return Error(Code::kIntern, "LocalBootstrap::Allgather: unexpected reply from nicqrun (seq " +
                                    std::to_string(rep.seq) + ", want " + std::to_string(seq) +
                                    ")");
  all = std::move(payload);
  return Status::Ok();
}

Status LocalBootstrap::Barrier() {
  std::vector<std::uint8_t> none;
  return Allgather(nullptr, 0, none).WithContext("LocalBootstrap::Barrier");
}

void LocalBootstrap::Abort(int code, const std::string& why) {
  // nicqrun prints `why` with our rank and kills every rank, us included;
  // exiting ourselves covers the case where nicqrun is already gone.
  if (fd_ >= 0) {
    WireHeader msg{boot::kWireMagic, WireOp::kAbort, rank_, code, 0, why.size()};
    if (boot::SendAll(fd_, &msg, sizeof(msg))) (void)boot::SendAll(fd_, why.data(), why.size());
  } else {
    std::fprintf(stderr, "nicq[%d]: abort (code %d): %s\n", rank_, code, why.c_str());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code != 0 ? code : 1);
}

Status LocalBootstrap::Finalize() {
  std::lock_guard<std::mutex> lock(mu_);
  if (fd_ < 0) return Status::Ok();
  WireHeader bye{boot::kWireMagic, WireOp::kBye, rank_, 0, seq_, 0};
  bool sent = boot::SendAll(fd_, &bye, sizeof(bye));
  ::close(fd_);
  fd_ = -1;
  if (!sent) return Error(Code::kOther, "LocalBootstrap::Finalize: nicqrun is gone");
  return Status::Ok();
}

}  // namespace nicq
