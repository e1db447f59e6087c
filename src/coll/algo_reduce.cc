// Reduction builders: reduce, three allreduce algorithms, scan/exscan.
//
// Reduce steps compute inout = in op inout. Where a partner's data belongs
// on the right of ours (higher ranks) and the op does not commute, the
// result lands in the receive buffer and is copied back (one extra copy,
// only for non-commutative ops).
#include <algorithm>

#include "coll/algorithms.h"

namespace nicq::coll {
namespace {

// acc = acc op tmp (tmp holds higher ranks' data).
void CombineRight(Schedule& s, char* acc, char* tmp, std::size_t elems, std::size_t esize,
                  bool commute) {
  if (commute) {
    s.Reduce(tmp, acc, elems);
  } else {
    s.Reduce(acc, tmp, elems);
    s.Copy(acc, tmp, elems * esize);
  }
}

int Pof2Below(int p) {
  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  return pof2;
}

// Non-powers of two: the first 2*rem ranks pair up (even sends to odd),
// leaving pof2 participants; returns this rank's new rank or -1.
int Fold(Schedule& s, int r, int p, char* acc, char* tmp, std::size_t elems, std::size_t esize) {
  const int rem = p - Pof2Below(p);
  if (r >= 2 * rem) return r - rem;
  if (r % 2 == 0) {
    s.Send(acc, elems * esize, r + 1);
    s.EndPhase();
    return -1;
  }
  s.Recv(tmp, elems * esize, r - 1);
  s.EndPhase();
  s.Reduce(tmp, acc, elems);  // lower rank on the left: x[r-1] op x[r]
  return r / 2;
}

void Unfold(Schedule& s, int r, int p, char* acc, std::size_t bytes) {
  const int rem = p - Pof2Below(p);
  if (r >= 2 * rem) return;
  if (r % 2) {
    s.Send(acc, bytes, r - 1);
  } else {
    s.Recv(acc, bytes, r + 1);
  }
  s.EndPhase();
}

int RealOf(int newrank, int rem) {
  return newrank < rem ? newrank * 2 + 1 : newrank + rem;
}

}  // namespace

void BuildReduce(Schedule& s, int r, int p, int root, const void* in, void* out, std::size_t elems,
                 std::size_t esize, bool commute) {
  const std::size_t bytes = elems * esize;
  // Commutative ops use a binomial tree rooted at root (vranks); others a
  // tree over real ranks toward 0 (subtrees are rank intervals, so combines
  // keep rank order) plus one hop to the root.
  const int base = commute ? root : 0;
  const int v = (r - base + p) % p;
  auto real = [&](int vr) { return (vr + base) % p; };
  char* acc = (r == root && v == 0) ? static_cast<char*>(out) : s.Scratch(bytes);
  s.Copy(acc, in, bytes);
  char* tmp = p > 1 ? s.Scratch(bytes) : nullptr;
  int mask = 1;
  for (; mask < p; mask <<= 1) {
    if (v & mask) break;
    if (v + mask >= p) continue;
    s.Recv(tmp, bytes, real(v + mask));
    s.EndPhase();
    CombineRight(s, acc, tmp, elems, esize, commute);
  }
  if (v != 0) {
    s.Send(acc, bytes, real(v - mask));
  }
  s.EndPhase();
  if (real(0) != root) {
    if (v == 0) s.Send(acc, bytes, root);
    if (r == root) s.Recv(out, bytes, real(0));
    s.EndPhase();
  }
}

void BuildAllreduceRecursiveDoubling(Schedule& s, int r, int p, const void* in, void* out,
                                     std::size_t elems, std::size_t esize, bool commute) {
  const std::size_t bytes = elems * esize;
  char* acc = static_cast<char*>(out);
  s.Copy(acc, in, bytes);
  if (p == 1) return s.EndPhase();
  char* tmp = s.Scratch(bytes);
  const int pof2 = Pof2Below(p), rem = p - pof2;
  const int newrank = Fold(s, r, p, acc, tmp, elems, esize);
  if (newrank >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int dst = RealOf(newrank ^ mask, rem);
      s.Send(acc, bytes, dst);
      s.Recv(tmp, bytes, dst);
      s.EndPhase();
      if (dst < r) {
        s.Reduce(tmp, acc, elems);
      } else {
        CombineRight(s, acc, tmp, elems, esize, commute);
      }
    }
  }
  s.EndPhase();
  Unfold(s, r, p, acc, bytes);
}

void BuildAllreduceRabenseifner(Schedule& s, int r, int p, const void* in, void* out,
                                std::size_t elems, std::size_t esize) {
  // Reduce-scatter by recursive halving, then allgather by recursive
  // doubling (MPICH's allreduce_intra_reduce_scatter_allgather); commutative
  // ops only. Part i of pof2 parts: PartCount/PartStart.
  const std::size_t bytes = elems * esize;
  char* acc = static_cast<char*>(out);
  s.Copy(acc, in, bytes);
  if (p == 1) return s.EndPhase();
  char* tmp = s.Scratch(bytes);
  const int pof2 = Pof2Below(p), rem = p - pof2;
  const int newrank = Fold(s, r, p, acc, tmp, elems, esize);
  if (newrank >= 0) {
    auto off = [&](int i) { return PartStart(elems, pof2, i) * esize; };
    auto cnt = [&](int a, int b) { return PartStart(elems, pof2, b) - PartStart(elems, pof2, a); };
    int send_idx = 0, recv_idx = 0, last_idx = pof2, mask = 1;
    for (; mask < pof2;) {
      const int newdst = newrank ^ mask, dst = RealOf(newdst, rem);
      std::size_t send_cnt, recv_cnt;
      if (newrank < newdst) {
        send_idx = recv_idx + pof2 / (mask * 2);
        send_cnt = cnt(send_idx, last_idx);
        recv_cnt = cnt(recv_idx, send_idx);
      } else {
        recv_idx = send_idx + pof2 / (mask * 2);
        send_cnt = cnt(send_idx, recv_idx);
        recv_cnt = cnt(recv_idx, last_idx);
      }
      s.Send(acc + off(send_idx), send_cnt * esize, dst);
      s.Recv(tmp + off(recv_idx), recv_cnt * esize, dst);
      s.EndPhase();
      s.Reduce(tmp + off(recv_idx), acc + off(recv_idx), recv_cnt);
      send_idx = recv_idx;
      mask <<= 1;
      if (mask < pof2) last_idx = recv_idx + pof2 / mask;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
      const int newdst = newrank ^ mask, dst = RealOf(newdst, rem);
      std::size_t send_cnt, recv_cnt;
      if (newrank < newdst) {
        if (mask != pof2 / 2) last_idx = last_idx + pof2 / (mask * 2);
        recv_idx = send_idx + pof2 / (mask * 2);
        send_cnt = cnt(send_idx, recv_idx);
        recv_cnt = cnt(recv_idx, last_idx);
      } else {
        recv_idx = send_idx - pof2 / (mask * 2);
        send_cnt = cnt(send_idx, last_idx);
        recv_cnt = cnt(recv_idx, send_idx);
      }
      s.Send(acc + off(send_idx), send_cnt * esize, dst);
      s.Recv(acc + off(recv_idx), recv_cnt * esize, dst);
      s.EndPhase();
      if (newrank > newdst) send_idx = recv_idx;
    }
  }
  s.EndPhase();
  Unfold(s, r, p, acc, bytes);
}

void BuildAllreduceRing(Schedule& s, int r, int p, const void* in, void* out, std::size_t elems,
                        std::size_t esize) {
  // Reduce-scatter around the ring (p-1 rounds), then allgather (p-1
  // rounds); every rank sends 2(p-1)/p of the vector. Commutative only.
  char* acc = static_cast<char*>(out);
  s.Copy(acc, in, elems * esize);
  if (p == 1) return s.EndPhase();
  char* tmp = s.Scratch(PartCount(elems, p, 0) * esize);
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  auto off = [&](int i) { return acc + PartStart(elems, p, i) * esize; };
  for (int k = 0; k < p - 1; ++k) {
    const int sc = (r - k + p) % p, rc = (r - k - 1 + p) % p;
    s.Send(off(sc), PartCount(elems, p, sc) * esize, right);
    s.Recv(tmp, PartCount(elems, p, rc) * esize, left);
    s.EndPhase();
    s.Reduce(tmp, off(rc), PartCount(elems, p, rc));
  }
  for (int k = 0; k < p - 1; ++k) {
    const int sc = (r + 1 - k + p) % p, rc = (r - k + p) % p;
    s.Send(off(sc), PartCount(elems, p, sc) * esize, right);
    s.Recv(off(rc), PartCount(elems, p, rc) * esize, left);
    s.EndPhase();
  }
}

void BuildScan(Schedule& s, int r, int p, const void* in, void* out, std::size_t elems,
               std::size_t esize, bool commute, bool exclusive) {
  // Recursive doubling (MPICH scan): `partial` reduces the whole group
  // exchanged so far, `out` only the ranks below (exclusive) or up to r.
  const std::size_t bytes = elems * esize;
  char* o = static_cast<char*>(out);
  char* partial = s.Scratch(bytes);
  char* tmp = s.Scratch(bytes);
  s.Copy(partial, in, bytes);
  if (!exclusive) s.Copy(o, in, bytes);
  bool have = !exclusive;  // out holds something yet
  for (int mask = 1; mask < p; mask <<= 1) {
    const int dst = r ^ mask;
    if (dst >= p) continue;
    s.Send(partial, bytes, dst);
    s.Recv(tmp, bytes, dst);
    s.EndPhase();
    if (r > dst) {
      // tmp covers lower ranks: it goes on the left of both.
      s.Reduce(tmp, partial, elems);
      if (have) {
        s.Reduce(tmp, o, elems);
      } else {
        s.Copy(o, tmp, bytes);
        have = true;
      }
    } else {
      CombineRight(s, partial, tmp, elems, esize, commute);
    }
  }
  s.EndPhase();
}

}  // namespace nicq::coll
