#include "rendezvous_server.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "boot/fd_io.h"
#include "boot/local_wire.h"

namespace nicq::run {

using boot::WireHeader;
using boot::WireOp;

RendezvousServer::RendezvousServer(int size)
    : size_(size),
      rank_fd_(size, -1),
      gone_(size, false),
      gone_how_(size),
      hello_(size, false),
      bye_(size, false),
      have_(size, false) {}

RendezvousServer::~RendezvousServer() {
  for (Conn& c : conns_) CloseConn(c);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::string RendezvousServer::Listen(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return "socket path too long: " + path;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return std::string("socket(): ") + strerror(errno);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0)
    return "bind(" + path + "): " + strerror(errno);
  if (::listen(listen_fd_, 4096) < 0) return std::string("listen(): ") + strerror(errno);
  return "";
}

void RendezvousServer::AddPollFds(std::vector<pollfd>& fds) const {
  fds.push_back({listen_fd_, POLLIN, 0});
  for (const Conn& c : conns_) fds.push_back({c.fd, POLLIN, 0});
}

void RendezvousServer::CloseConn(Conn& c) {
  if (c.fd < 0) return;
  if (c.rank >= 0 && rank_fd_[c.rank] == c.fd) rank_fd_[c.rank] = -1;
  ::close(c.fd);
  c.fd = -1;
}

RendezvousEvent RendezvousServer::HandlePoll(const pollfd* fds, std::size_t count) {
  RendezvousEvent ev;
  // fds[0] is the listener, then one per connection in conns_ order.
  for (std::size_t i = 1; i < count && i - 1 < conns_.size(); ++i) {
    if (!fds[i].revents) continue;
    ev = HandleReadable(conns_[i - 1]);
    if (ev.kind != RendezvousEvent::kNone) return ev;
  }
  std::erase_if(conns_, [](const Conn& c) { return c.fd < 0; });
  if (count > 0 && (fds[0].revents & POLLIN)) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) conns_.push_back(Conn{fd, -1, {}});
  }
  return ev;
}

RendezvousEvent RendezvousServer::HandleReadable(Conn& c, bool* drained) {
  std::uint8_t buf[65536];
  ssize_t n;
  do {
    n = ::recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (drained) *drained = n <= 0;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {};
  if (n <= 0) {
    // A rank that closes without kBye is about to exit; its exit status
    // (seen by waitpid) explains the failure better than the EOF would.
    CloseConn(c);
    return {};
  }
  c.in.insert(c.in.end(), buf, buf + n);
  std::size_t off = 0;
  RendezvousEvent ev;
  while (c.in.size() - off >= sizeof(WireHeader)) {
    WireHeader h;
    std::memcpy(&h, c.in.data() + off, sizeof(h));
    if (h.magic != boot::kWireMagic || h.len > boot::kMaxContribution) {
      ev = {RendezvousEvent::kFailure, c.rank, 1,
            "a process sent a malformed bootstrap message (not a nicq rank of this job?)"};
      CloseConn(c);
      return ev;
    }
    if (c.in.size() - off < sizeof(h) + h.len) break;
    ev = HandleMessage(c, &h, c.in.data() + off + sizeof(h));
    off += sizeof(h) + h.len;
    if (ev.kind != RendezvousEvent::kNone || c.fd < 0) break;
  }
  c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(off));
  return ev;
}

RendezvousEvent RendezvousServer::HandleMessage(Conn& c, const void* header,
                                                const std::uint8_t* payload) {
  const WireHeader& h = *static_cast<const WireHeader*>(header);
  const std::string who = "rank " + std::to_string(h.rank);
  if (h.op == WireOp::kHello) {
    if (h.rank < 0 || h.rank >= size_ || rank_fd_[h.rank] >= 0 || gone_[h.rank])
      return {RendezvousEvent::kFailure, h.rank, 1,
              "bootstrap hello from " + who + " which is out of range or already connected"};
    c.rank = h.rank;
    rank_fd_[h.rank] = c.fd;
    hello_[h.rank] = true;
    return {};
  }
  if (c.rank < 0 || h.rank != c.rank)
    return {RendezvousEvent::kFailure, h.rank, 1, "bootstrap message before hello from " + who};
  switch (h.op) {
    case WireOp::kAbort:
      return {RendezvousEvent::kAbort, c.rank, h.code,
              std::string(reinterpret_cast<const char*>(payload), h.len)};
    case WireOp::kBye:
      bye_[c.rank] = true;
      gone_[c.rank] = true;
      gone_how_[c.rank] = "finalized its bootstrap";
      CloseConn(c);
      return CheckStuck();
    case WireOp::kAllgather:
      break;
    default:
      return {RendezvousEvent::kFailure, c.rank, 1, "unknown bootstrap request from " + who};
  }
  if (h.seq != seq_)
    return {RendezvousEvent::kFailure, c.rank, 1,
            who + " entered bootstrap collective #" + std::to_string(h.seq) +
                " while the job is in #" + std::to_string(seq_) +
                " (every rank must call Allgather/Barrier in the same order)"};
  if (have_[c.rank])
    return {RendezvousEvent::kFailure, c.rank, 1,
            who + " contributed twice to collective #" + std::to_string(seq_)};
  if (contributed_ == 0) {
    len_ = h.len;
    data_.assign(len_ * static_cast<std::uint64_t>(size_), 0);
  } else if (h.len != len_) {
    return {RendezvousEvent::kFailure, c.rank, 1,
            who + " contributed " + std::to_string(h.len) + " bytes to bootstrap collective #" +
                std::to_string(seq_) + ", others " + std::to_string(len_)};
  }
  if (h.len > 0) std::memcpy(data_.data() + h.len * h.rank, payload, h.len);
  have_[c.rank] = true;
  ++contributed_;
  RendezvousEvent ev = TryComplete();
  if (ev.kind != RendezvousEvent::kNone) return ev;
  return CheckStuck();
}

int RendezvousServer::DepartedFromBarrier() const {
  if (!recovery_ || len_ != 0 || contributed_ == 0) return 0;
  int departed = 0;
  for (int r = 0; r < size_; ++r) departed += gone_[r] && !have_[r];
  return departed;
}

RendezvousEvent RendezvousServer::TryComplete() {
  if (contributed_ + DepartedFromBarrier() < size_) return {};
  WireHeader rep{boot::kWireMagic, WireOp::kAllgatherDone, -1, 0, seq_, data_.size()};
  for (int r = 0; r < size_; ++r) {
    // Every rank is blocked in recv() for this reply, so blocking sends
    // cannot stall nicqrun for long; a rank that died meanwhile just fails.
    int fd = rank_fd_[r];
    if (fd < 0) continue;
    if (boot::SendAll(fd, &rep, sizeof(rep))) (void)boot::SendAll(fd, data_.data(), data_.size());
  }
  ++seq_;
  contributed_ = 0;
  std::fill(have_.begin(), have_.end(), false);
  data_.clear();
  data_.shrink_to_fit();
  return {};
}

std::string RendezvousServer::WaitingRanks() const {
  std::string s;
  for (int r = 0; r < size_; ++r)
    if (have_[r]) s += (s.empty() ? "" : " ") + std::to_string(r);
  return s;
}

RendezvousEvent RendezvousServer::CheckStuck() {
  if (contributed_ == 0) return {};
  if (DepartedFromBarrier() > 0) return TryComplete();
  for (int r = 0; r < size_; ++r) {
    if (have_[r] || !gone_[r]) continue;
    return {RendezvousEvent::kFailure, r, 1,
            "bootstrap collective #" + std::to_string(seq_) + " cannot complete: rank " +
                std::to_string(r) + " " + gone_how_[r] +
                " without joining it; ranks waiting: " + WaitingRanks()};
  }
  return {};
}

RendezvousEvent RendezvousServer::DrainRank(int rank) {
  // Its connection may not even be accepted yet (hello sent, then exit).
  pollfd lp{listen_fd_, POLLIN, 0};
  while (::poll(&lp, 1, 0) == 1 && (lp.revents & POLLIN)) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) break;
    conns_.push_back(Conn{fd, -1, {}});
  }
  for (std::size_t i = 0; i < conns_.size(); ++i) {
    Conn& c = conns_[i];
    if (c.rank != rank && c.rank != -1) continue;
    // The process is gone, so what it wrote is all in the socket: a
    // bounded number of reads empties it.
    bool drained = false;
    for (int i = 0; i < 1024 && c.fd >= 0 && !drained; ++i) {
      RendezvousEvent ev = HandleReadable(c, &drained);
      if (ev.kind != RendezvousEvent::kNone) return ev;
    }
  }
  return {};
}

RendezvousEvent RendezvousServer::OnRankExit(int rank, const std::string& how) {
  if (!gone_[rank]) {
    gone_[rank] = true;
    gone_how_[rank] = how;
  }
  return CheckStuck();
}

}  // namespace nicq::run
