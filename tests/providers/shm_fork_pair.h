// Two forked processes wired up as two ranks of the shm trigger backend,
// for the tests of providers/shm_native.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "providers/shm_native/shm_backend.h"

namespace nicq::shmtrig {

// Two pipes between a parent (rank 0) and its forked child (rank 1).
struct Channel {
  int to_peer = -1;
  int from_peer = -1;
  void Send(const void* p, std::size_t n) const {
    const char* c = static_cast<const char*>(p);
    while (n) {
      const ssize_t w = write(to_peer, c, n);
      if (w <= 0) _exit(90);
      c += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  void Recv(void* p, std::size_t n) const {
    char* c = static_cast<char*>(p);
    while (n) {
      const ssize_t r = read(from_peer, c, n);
      if (r <= 0) _exit(91);
      c += r;
      n -= static_cast<std::size_t>(r);
    }
  }
};

// Forks; each process opens its backend and the two wire up through the
// pipes as the runtime does through its bootstrap. Returns the child's pid
// in the parent, 0 in the child.
inline pid_t ForkPair(std::unique_ptr<ShmTriggerBackend>* b, Channel* ch) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) return -1;
  const bool child = pid == 0;
  ch->to_peer = child ? up[1] : down[1];
  ch->from_peer = child ? down[0] : up[0];
  close(child ? up[0] : down[0]);
  close(child ? down[1] : up[1]);
  if (!ShmTriggerBackend::Open(ShmOptions{}, b).ok()) _exit(92);
  std::vector<std::uint8_t> mine, theirs;
  if (!(*b)->LocalAddress(mine).ok()) _exit(93);
  const std::uint64_t len = mine.size();
  ch->Send(&len, sizeof len);
  ch->Send(mine.data(), mine.size());
  std::uint64_t their_len = 0;
  ch->Recv(&their_len, sizeof their_len);
  theirs.resize(their_len);
  ch->Recv(theirs.data(), theirs.size());
  std::vector<std::vector<std::uint8_t>> table =
      child ? std::vector{theirs, mine} : std::vector{mine, theirs};
  const Status st = (*b)->SetPeers(table);
  if (!st.ok()) {
    if (child) _exit(94);
    ADD_FAILURE() << st.message();
  }
  return pid;
}

inline int ChildExit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace nicq::shmtrig
