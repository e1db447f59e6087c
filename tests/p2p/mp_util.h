// Helpers for the multi-process p2p tests written against rt::.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/runtime.h"

namespace nicq::test {

#define MP_CHECK(cond, ...)                                                                  \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "[rank %d] CHECK failed at %s:%d: %s: ", ::nicq::rt::WorldRank(), \
                   __FILE__, __LINE__, #cond);                                               \
      std::fprintf(stderr, __VA_ARGS__);                                                     \
      std::fprintf(stderr, "\n");                                                            \
      std::fflush(stderr);                                                                   \
      std::_Exit(3);                                                                         \
    }                                                                                        \
  } while (0)

#define MP_OK(expr)                                                                      \
  do {                                                                                   \
    ::nicq::Status s_ = (expr);                                                          \
    MP_CHECK(s_.ok(), "%s -> code %d: %s", #expr, int(s_.code()), s_.message().c_str()); \
  } while (0)

// Deterministic content for (src, dst, message index, byte offset).
inline std::uint8_t PatternByte(int src, int dst, int idx, std::size_t off) {
  return std::uint8_t((off * 131u) ^ (off >> 11) ^ (src * 37u) ^ (dst * 101u) ^ (idx * 7u));
}
inline void Fill(std::vector<std::uint8_t>& b, int src, int dst, int idx) {
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = PatternByte(src, dst, idx, i);
}
// Index of the first wrong byte, or -1.
inline long long FirstBad(const std::uint8_t* b, std::size_t n, int src, int dst, int idx) {
  for (std::size_t i = 0; i < n; ++i)
    if (b[i] != PatternByte(src, dst, idx, i)) return (long long)i;
  return -1;
}

inline void Send(const void* buf, std::size_t n, int dest, int tag, Comm* c,
                 SendMode m = SendMode::kStandard) {
  Request r;
  MP_OK(rt::Isend(buf, n, dest, tag, c, m, &r));
  MP_OK(rt::Wait(&r));
  MP_CHECK(r.status.error == 0, "send error %d", r.status.error);
}
inline RequestStatus Recv(void* buf, std::size_t n, int src, int tag, Comm* c) {
  Request r;
  MP_OK(rt::Irecv(buf, n, src, tag, c, &r));
  MP_OK(rt::Wait(&r));
  return r.status;
}
// Barrier over World through p2p (the tests avoid the collective layers).
inline void Barrier(Comm* c) {
  const int n = c->size, me = c->rank;
  std::uint8_t t = 0;
  // Dissemination barrier: log2(n) rounds.
  for (int d = 1; d < n; d <<= 1) {
    Request s, r;
    std::uint8_t in = 0;
    MP_OK(rt::Irecv(&in, 1, (me - d + n) % n, 30000 + d, c, &r));
    MP_OK(rt::Isend(&t, 1, (me + d) % n, 30000 + d, c, SendMode::kStandard, &s));
    MP_OK(rt::Wait(&s));
    MP_OK(rt::Wait(&r));
  }
}

}  // namespace nicq::test
