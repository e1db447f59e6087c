// Collective algorithms as Schedule builders. All work on contiguous bytes
// (the caller packs noncontiguous types first) and on comm ranks r of p.
// Reductions count elements of the schedule's reduce type (esize bytes).
//
// Ordering rule for non-commutative ops: every combine keeps rank order
// (lower ranks' contribution on the left), so builders that cannot keep it
// (ring, Rabenseifner) are only chosen for commutative ops.
#pragma once

#include <algorithm>
#include <cstddef>

#include "coll/schedule.h"

namespace nicq::coll {

// Block i of n equal-ish parts of `total` items: the first total%n parts
// get one item more. Closed forms so builders need no arrays.
inline std::size_t PartCount(std::size_t total, int n, int i) {
  return total / n + (static_cast<std::size_t>(i) < total % n ? 1 : 0);
}
inline bool IsPof2(int p) {
  return p > 0 && (p & (p - 1)) == 0;
}
inline std::size_t PartStart(std::size_t total, int n, int i) {
  return (total / n) * i + std::min<std::size_t>(i, total % n);
}

void BuildBarrier(Schedule& s, int r, int p);
// radix 2 = binomial.
void BuildBcastKnomial(Schedule& s, int r, int p, int root, void* buf, std::size_t bytes,
                       int radix);
void BuildBcastScatterAllgather(Schedule& s, int r, int p, int root, void* buf, std::size_t bytes);

// `in` holds this rank's contribution (may equal `out`); `out` is written
// at the root only (may be null elsewhere).
void BuildReduce(Schedule& s, int r, int p, int root, const void* in, void* out, std::size_t elems,
                 std::size_t esize, bool commute);
void BuildAllreduceRecursiveDoubling(Schedule& s, int r, int p, const void* in, void* out,
                                     std::size_t elems, std::size_t esize, bool commute);
void BuildAllreduceRabenseifner(Schedule& s, int r, int p, const void* in, void* out,
                                std::size_t elems, std::size_t esize);
void BuildAllreduceRing(Schedule& s, int r, int p, const void* in, void* out, std::size_t elems,
                        std::size_t esize);
void BuildScan(Schedule& s, int r, int p, const void* in, void* out, std::size_t elems,
               std::size_t esize, bool commute, bool exclusive);

// Gather/scatter of `bytes` per rank. in == nullptr at the root: in place.
void BuildGather(Schedule& s, int r, int p, int root, const void* in, void* out, std::size_t bytes);
void BuildScatter(Schedule& s, int r, int p, int root, const void* in, void* out,
                  std::size_t bytes);

// Per-rank blocks: a Blocks function gives block i's address and size.
struct Block {
  char* ptr;
  std::size_t bytes;
};

// Linear gatherv/scatterv: rblk(i) is rank i's block at the root.
template <class RecvBlocks>
void BuildGatherv(Schedule& s, int r, int p, int root, const void* in, std::size_t in_bytes,
                  RecvBlocks rblk) {
  if (r != root) {
    s.Send(in, in_bytes, root);
    s.EndPhase();
    return;
  }
  if (in) s.Copy(rblk(r).ptr, in, rblk(r).bytes);
  for (int i = 0; i < p; ++i)
    if (i != r) s.Recv(rblk(i).ptr, rblk(i).bytes, i);
  s.EndPhase();
}

template <class SendBlocks>
void BuildScatterv(Schedule& s, int r, int p, int root, SendBlocks sblk, void* out,
                   std::size_t out_bytes) {
  if (r != root) {
    s.Recv(out, out_bytes, root);
    s.EndPhase();
    return;
  }
  if (out) s.Copy(out, sblk(r).ptr, sblk(r).bytes);
  for (int i = 0; i < p; ++i)
    if (i != r) s.Send(sblk(i).ptr, sblk(i).bytes, i);
  s.EndPhase();
}

// Ring allgather over blocks already in place (this rank's block filled):
// p-1 rounds, each passing the block received last round to the right.
template <class Blocks>
void BuildAllgatherRing(Schedule& s, int r, int p, Blocks blk) {
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int k = 0; k < p - 1; ++k) {
    const Block out = blk((r - k + p) % p), in = blk((r - k - 1 + p) % p);
    s.Send(out.ptr, out.bytes, right);
    s.Recv(in.ptr, in.bytes, left);
    s.EndPhase();
  }
}

// Recursive doubling allgather of equal blocks (p a power of two): round
// k exchanges the 2^k blocks each side has gathered so far.
void BuildAllgatherRecursiveDoubling(Schedule& s, int r, int p, char* out, std::size_t bytes);
// Bruck allgather: ceil(log2 p) rounds for any p (small blocks).
void BuildAllgatherBruck(Schedule& s, int r, int p, const void* in, char* out, std::size_t bytes);

// Pairwise exchange: round i sends to r+i and receives from r-i, so every
// round pairs each rank with exactly one sender and one receiver.
template <class SendBlocks, class RecvBlocks>
void BuildAlltoallPairwise(Schedule& s, int r, int p, SendBlocks sblk, RecvBlocks rblk) {
  s.Copy(rblk(r).ptr, sblk(r).ptr, std::min(sblk(r).bytes, rblk(r).bytes));
  for (int i = 1; i < p; ++i) {
    const int to = (r + i) % p, from = (r - i + p) % p;
    s.Send(sblk(to).ptr, sblk(to).bytes, to);
    s.Recv(rblk(from).ptr, rblk(from).bytes, from);
    s.EndPhase();
  }
  s.EndPhase();
}

}  // namespace nicq::coll
