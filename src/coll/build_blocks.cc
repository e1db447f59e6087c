// Builders for the collectives made of per-rank blocks: gatherv, scatterv,
// allgather(v) and alltoall(v,w). Each block gets a contiguous view (the
// user's memory, or scratch packed/unpacked around the algorithm), so the
// algorithms only see (pointer, bytes) pairs.
#include <algorithm>

#include "coll/build_util.h"

namespace nicq::coll {
namespace {

thread_local std::vector<Block> t_sblk, t_rblk;

Block SendView(Schedule& s, const void* base, std::int64_t disp, std::int64_t count,
               const dtype::Type* t) {
  const char* b = static_cast<const char*>(base) + disp;
  return Block{In(s, b, count, t), std::size_t(count * t->size)};
}
Block RecvView(Schedule& s, Unpacks& u, void* base, std::int64_t disp, std::int64_t count,
               const dtype::Type* t, bool pack_first) {
  char* b = static_cast<char*>(base) + disp;
  return Block{Out(s, u, b, count, t, pack_first), std::size_t(count * t->size)};
}

// The bytes, relative to the buffer's address, that `count` items of t
// read or write: from the lowest data offset of the first item to the end of
// the highest of the last (a negative lower bound puts data below 0).
struct ByteRange {
  std::int64_t lo = 0, hi = 0;
};
ByteRange TouchedBytes(const dtype::Type& t, std::int64_t count) {
  ByteRange r;
  if (t.blocks.empty() || count == 0) return r;
  r.lo = t.blocks[0].offset;
  r.hi = t.blocks[0].offset + t.blocks[0].length;
  for (const dtype::Block& b : t.blocks) {
    r.lo = std::min(r.lo, b.offset);
    r.hi = std::max(r.hi, b.offset + b.length);
  }
  const std::int64_t last = (count - 1) * t.extent;
  r.lo += std::min<std::int64_t>(0, last);
  r.hi += std::max<std::int64_t>(0, last);
  return r;
}

}  // namespace

std::vector<Block>& SendBlocks(int p) {
  t_sblk.resize(p);
  return t_sblk;
}
std::vector<Block>& RecvBlocks(int p) {
  t_rblk.resize(p);
  return t_rblk;
}

void BuildBlockCollective(const Args& a, Schedule& s, const std::string& algo, Unpacks& u) {
  const int r = a.comm->rank, p = a.comm->size;
  const bool in_place = a.sendbuf == kInPlace;
  std::vector<Block>& sb = SendBlocks(p);
  std::vector<Block>& rb = RecvBlocks(p);
  auto sblk = [&](int i) { return sb[i]; };
  auto rblk = [&](int i) { return rb[i]; };
  switch (a.kind) {
    case Kind::kGatherv: {
      const bool root = r == a.root;
      if (root)
        for (int i = 0; i < p; ++i)
          rb[i] = RecvView(s, u, a.recvbuf, a.rdispls[i] * a.rtype->extent, a.rcounts[i], a.rtype,
                           in_place && i == r);
      Block in{nullptr, 0};
      if (!(root && in_place)) in = SendView(s, a.sendbuf, 0, a.scount, a.stype);
      BuildGatherv(s, r, p, a.root, in.ptr, in.bytes, rblk);
      break;
    }
    case Kind::kScatterv: {
      const bool root = r == a.root;
      if (root)
        for (int i = 0; i < p; ++i)
          sb[i] = SendView(s, a.sendbuf, a.sdispls[i] * a.stype->extent, a.scounts[i], a.stype);
      Block out{nullptr, 0};
      if (!(root && a.recvbuf == kInPlace))
        out = RecvView(s, u, a.recvbuf, 0, a.rcount, a.rtype, false);
      BuildScatterv(s, r, p, a.root, sblk, out.ptr, out.bytes);
      break;
    }
    case Kind::kAllgather:
    case Kind::kAllgatherv: {
      const bool v = a.kind == Kind::kAllgatherv;
      if (v) {
        for (int i = 0; i < p; ++i)
          rb[i] = RecvView(s, u, a.recvbuf, a.rdispls[i] * a.rtype->extent, a.rcounts[i], a.rtype,
                           in_place && i == r);
      } else {
        // One view of all p blocks, packed back to back: recursive doubling
        // moves runs of adjacent blocks, and it must be chosen on every rank
        // alike, whatever layout this rank's receive type has (peers may
        // receive the same signature with another type).
        const std::size_t bytes = std::size_t(a.rcount * a.rtype->size);
        char* all = Out(s, u, a.recvbuf, a.rcount * p, a.rtype, in_place);
        for (int i = 0; i < p; ++i) rb[i] = Block{all + std::size_t(i) * bytes, bytes};
      }
      if (!in_place) {
        Block in = SendView(s, a.sendbuf, 0, a.scount, a.stype);
        s.Copy(rb[r].ptr, in.ptr, std::min(in.bytes, rb[r].bytes));
      }
      s.EndPhase();
      if (!v && algo == "recursive_doubling" && IsPof2(p))
        BuildAllgatherRecursiveDoubling(s, r, p, rb[0].ptr, rb[0].bytes);
      else
        BuildAllgatherRing(s, r, p, rblk);
      break;
    }
    case Kind::kAlltoall:
    case Kind::kAlltoallv:
    case Kind::kAlltoallw: {
      const bool v = a.kind == Kind::kAlltoallv, w = a.kind == Kind::kAlltoallw;
      auto rtype = [&](int i) { return w ? a.rtypes[i] : a.rtype; };
      auto rcount = [&](int i) -> std::int64_t { return v || w ? a.rcounts[i] : a.rcount; };
      auto rdisp = [&](int i) -> std::int64_t {
        return w ? a.rdispls[i] : (v ? a.rdispls[i] : i * a.rcount) * a.rtype->extent;
      };
      const void* sbase = a.sendbuf;
      if (in_place) {
        // The send data is the receive buffer as it is now: snapshot the
        // bytes its blocks touch, which lie below the buffer's address when
        // a type's data sits at negative offsets.
        std::int64_t lo = 0, hi = 0;
        for (int i = 0; i < p; ++i) {
          if (rcount(i) == 0) continue;
          const ByteRange b = TouchedBytes(*rtype(i), rcount(i));
          lo = std::min(lo, rdisp(i) + b.lo);
          hi = std::max(hi, rdisp(i) + b.hi);
        }
        char* copy = s.Scratch(std::size_t(hi - lo));
        s.Copy(copy, static_cast<char*>(a.recvbuf) + lo, std::size_t(hi - lo));
        sbase = copy - lo;
      }
      for (int i = 0; i < p; ++i) {
        if (in_place) {
          sb[i] = SendView(s, sbase, rdisp(i), rcount(i), rtype(i));
        } else {
          const dtype::Type* st = w ? a.stypes[i] : a.stype;
          const std::int64_t sc = v || w ? a.scounts[i] : a.scount;
          const std::int64_t sd = w ? a.sdispls[i] : (v ? a.sdispls[i] : i * a.scount) * st->extent;
          sb[i] = SendView(s, sbase, sd, sc, st);
        }
        rb[i] = RecvView(s, u, a.recvbuf, rdisp(i), rcount(i), rtype(i), false);
      }
      BuildAlltoallPairwise(s, r, p, sblk, rblk);
      break;
    }
    default:
      break;
  }
}

}  // namespace nicq::coll
