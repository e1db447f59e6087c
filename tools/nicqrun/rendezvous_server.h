// The local bootstrap's server side: nicqrun listens on
// $NICQ_BOOT_DIR/boot.sock and completes each Allgather once every rank has
// contributed (protocol in src/boot/local_wire.h). Single-threaded; driven
// by nicqrun's poll loop.
#pragma once

#include <poll.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nicq::run {

// What the job must do after the server handled an event.
struct RendezvousEvent {
  enum Kind { kNone, kAbort, kFailure } kind = kNone;
  int rank = -1;
  int code = 0;
  std::string message;
};

class RendezvousServer {
 public:
  explicit RendezvousServer(int size);
  ~RendezvousServer();

  // Creates and listens on `socket_path`; returns an error text or "".
  std::string Listen(const std::string& socket_path);

  // Appends the descriptors to watch; HandlePoll consumes them in the same order.
  void AddPollFds(std::vector<pollfd>& fds) const;
  RendezvousEvent HandlePoll(const pollfd* fds, std::size_t count);

  // The rank's process exited: handles what it sent before it went (an
  // abort, its goodbye), which may still wait in the socket when the exit
  // is seen first. Returns such an event, if any.
  RendezvousEvent DrainRank(int rank);
  // The rank's process exited: it will never contribute again. Returns a
  // failure when ranks wait in a collective that now cannot complete.
  RendezvousEvent OnRankExit(int rank, const std::string& how);
  // The rank said hello (it started MPI_Init) and never goodbye (the end
  // of MPI_Finalize): an exit now, whatever its status, leaves its peers
  // without the rank they were promised.
  bool InitializedNotFinalized(int rank) const { return hello_[rank] && !bye_[rank]; }
  // --enable-recovery: a barrier (a collective of no data) completes among
  // the ranks still there, since one that left can owe it nothing; a
  // collective that carries data still cannot complete without every rank.
  void set_recovery(bool on) { recovery_ = on; }

 private:
  struct Conn {
    int fd = -1;
    int rank = -1;  // -1 until kHello
    std::vector<std::uint8_t> in;
  };
  // *drained: the socket had nothing more to read (or closed).
  RendezvousEvent HandleReadable(Conn& c, bool* drained = nullptr);
  RendezvousEvent HandleMessage(Conn& c, const void* header, const std::uint8_t* payload);
  RendezvousEvent TryComplete();
  // Ranks that are gone without contributing to a barrier in flight, under
  // recovery (they count as arrived); 0 otherwise.
  int DepartedFromBarrier() const;
  RendezvousEvent CheckStuck();
  void CloseConn(Conn& c);
  std::string WaitingRanks() const;

  int size_;
  int listen_fd_ = -1;
  std::vector<Conn> conns_;
  std::vector<int> rank_fd_;  // connection of each rank (-1: none)
  std::vector<bool> gone_;    // exited or closed: can never contribute again
  std::vector<std::string> gone_how_;
  std::vector<bool> hello_, bye_;  // per rank: MPI_Init begun, MPI_Finalize done
  // The collective in flight (ranks cannot start the next before it ends).
  bool recovery_ = false;
  std::uint64_t seq_ = 0;
  std::uint64_t len_ = 0;
  int contributed_ = 0;
  std::vector<bool> have_;
  std::vector<std::uint8_t> data_;  // size_ * len_ once the first rank arrives
};

}  // namespace nicq::run
