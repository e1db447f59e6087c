// Barrier, broadcast, gather and scatter builders (no reductions).
#include <algorithm>

#include "coll/algorithms.h"

namespace nicq::coll {
namespace {
char g_zero;  // a valid address for zero-byte messages
}

void BuildBarrier(Schedule& s, int r, int p) {
  // Dissemination: after round k every rank has heard, transitively, from
  // 2^(k+1) ranks; ceil(log2 p) rounds for any p.
  for (int k = 1; k < p; k <<= 1) {
    s.Send(&g_zero, 0, (r + k) % p);
    s.Recv(&g_zero, 0, (r - k + p) % p);
    s.EndPhase();
  }
}

void BuildBcastKnomial(Schedule& s, int r, int p, int root, void* buf, std::size_t bytes,
                       int radix) {
  const int v = (r - root + p) % p;
  auto real = [&](int vr) { return (vr + root) % p; };
  // The parent is found at the first level where v is not a multiple of
  // radix*mask; the children sit below that level.
  int mask = 1;
  while (mask < p) {
    if (v % (radix * mask) != 0) {
      s.Recv(buf, bytes, real(v - v % (radix * mask)));
      s.EndPhase();
      break;
    }
    mask *= radix;
  }
  for (mask /= radix; mask > 0; mask /= radix)
    for (int j = 1; j < radix; ++j) {
      const int child = v + j * mask;
      if (child < p) s.Send(buf, bytes, real(child));
    }
  s.EndPhase();
}

void BuildBcastScatterAllgather(Schedule& s, int r, int p, int root, void* buf, std::size_t bytes) {
  // Van de Geijn: binomial scatter of p chunks, then a ring allgather, so
  // every link carries ~2x the message instead of log2(p)x.
  char* b = static_cast<char*>(buf);
  const int v = (r - root + p) % p;
  auto real = [&](int vr) { return (vr + root) % p; };
  // Bytes of chunks [from, to) (vrank order).
  auto range = [&](int from, int to, std::size_t* off) {
    *off = PartStart(bytes, p, from);
    return PartStart(bytes, p, std::min(to, p)) - *off;
  };
  std::size_t off;
  int mask = 1;
  while (mask < p) {
    if (v & mask) {
      std::size_t n = range(v, v + mask, &off);
      s.Recv(b + off, n, real(v - mask));
      s.EndPhase();
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int child = v + mask;
    if (child >= p) continue;
    std::size_t n = range(child, child + mask, &off);
    s.Send(b + off, n, real(child));
  }
  s.EndPhase();
  // Ring allgather of the chunks in vrank space; real neighbours are r +- 1
  // because rotating by root preserves adjacency.
  for (int k = 0; k < p - 1; ++k) {
    std::size_t so, ro;
    const std::size_t sn = range((v - k + p) % p, (v - k + p) % p + 1, &so);
    const std::size_t rn = range((v - k - 1 + p) % p, (v - k - 1 + p) % p + 1, &ro);
    s.Send(b + so, sn, real((v + 1) % p));
    s.Recv(b + ro, rn, real((v - 1 + p) % p));
    s.EndPhase();
  }
}

void BuildGather(Schedule& s, int r, int p, int root, const void* in, void* out,
                 std::size_t bytes) {
  // Binomial in vrank space: vrank v collects blocks [v, v + subtree) in a
  // contiguous buffer and sends them up in one message.
  const int v = (r - root + p) % p;
  auto real = [&](int vr) { return (vr + root) % p; };
  char* o = static_cast<char*>(out);
  const bool is_root = r == root;
  char* tmp = is_root && root == 0 ? o : s.Scratch(bytes * (is_root ? p : p - v));
  if (is_root) {
    s.Copy(tmp, in ? in : o + std::size_t(root) * bytes, bytes);
  } else {
    s.Copy(tmp, in, bytes);
  }
  int mask = 1;
  int held = 1;
  for (; mask < p; mask <<= 1) {
    if (v & mask) break;
    const int child = v + mask;
    if (child < p) {
      const int n = std::min(mask, p - child);
      s.Recv(tmp + std::size_t(mask) * bytes, std::size_t(n) * bytes, real(child));
      held += n;
    }
  }
  s.EndPhase();
  if (!is_root) {
    s.Send(tmp, std::size_t(held) * bytes, real(v - mask));
    s.EndPhase();
    return;
  }
  if (tmp != o) {
    // vrank block i belongs to rank (i + root) % p.
    s.Copy(o + std::size_t(root) * bytes, tmp, std::size_t(p - root) * bytes);
    s.Copy(o, tmp + std::size_t(p - root) * bytes, std::size_t(root) * bytes);
    s.EndPhase();
  }
}

void BuildScatter(Schedule& s, int r, int p, int root, const void* in, void* out,
                  std::size_t bytes) {
  const int v = (r - root + p) % p;
  auto real = [&](int vr) { return (vr + root) % p; };
  const bool is_root = r == root;
  const char* src = static_cast<const char*>(in);
  char* tmp;
  int mask = 1;
  if (is_root) {
    if (root == 0) {
      tmp = const_cast<char*>(src);
    } else {
      tmp = s.Scratch(bytes * p);
      s.Copy(tmp, src + std::size_t(root) * bytes, std::size_t(p - root) * bytes);
      s.Copy(tmp + std::size_t(p - root) * bytes, src, std::size_t(root) * bytes);
    }
    while (mask < p) mask <<= 1;
  } else {
    while (!(v & mask)) mask <<= 1;
    const int n = std::min(mask, p - v);
    tmp = s.Scratch(bytes * n);
    s.Recv(tmp, std::size_t(n) * bytes, real(v - mask));
    s.EndPhase();
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int child = v + mask;
    if (child >= p) continue;
    const int n = std::min(mask, p - child);
    s.Send(tmp + std::size_t(mask) * bytes, std::size_t(n) * bytes, real(child));
  }
  if (out) s.Copy(out, tmp, bytes);
  s.EndPhase();
}

void BuildAllgatherRecursiveDoubling(Schedule& s, int r, int p, char* out, std::size_t bytes) {
  for (int mask = 1; mask < p; mask <<= 1) {
    const int partner = r ^ mask;
    const int mine = r & ~(mask - 1), theirs = partner & ~(mask - 1);
    s.Send(out + std::size_t(mine) * bytes, std::size_t(mask) * bytes, partner);
    s.Recv(out + std::size_t(theirs) * bytes, std::size_t(mask) * bytes, partner);
    s.EndPhase();
  }
}

void BuildAllgatherBruck(Schedule& s, int r, int p, const void* in, char* out, std::size_t bytes) {
  // ceil(log2 p) rounds for any p: round k sends everything gathered so far
  // (blocks r .. r+2^k-1) to r - 2^k; a final rotation puts blocks in rank order.
  char* tmp = s.Scratch(bytes * p);
  s.Copy(tmp, in, bytes);
  for (int dist = 1; dist < p; dist <<= 1) {
    const std::size_t n = std::size_t(std::min(dist, p - dist)) * bytes;
    s.Send(tmp, n, (r - dist + p) % p);
    s.Recv(tmp + std::size_t(dist) * bytes, n, (r + dist) % p);
    s.EndPhase();
  }
  s.Copy(out + std::size_t(r) * bytes, tmp, std::size_t(p - r) * bytes);
  s.Copy(out, tmp + std::size_t(p - r) * bytes, std::size_t(r) * bytes);
  s.EndPhase();
}

}  // namespace nicq::coll
