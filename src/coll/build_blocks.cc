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

bool IsPof2(int p) {
  return (p & (p - 1)) == 0;
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
      for (int i = 0; i < p; ++i) {
        const std::int64_t disp = (v ? a.rdispls[i] : i * a.rcount) * a.rtype->extent;
        rb[i] = RecvView(s, u, a.recvbuf, disp, v ? a.rcounts[i] : a.rcount, a.rtype,
                         in_place && i == r);
      }
      if (!in_place) {
        Block in = SendView(s, a.sendbuf, 0, a.scount, a.stype);
        s.Copy(rb[r].ptr, in.ptr, std::min(in.bytes, rb[r].bytes));
      }
      s.EndPhase();
      if (!v && algo == "recursive_doubling" && IsPof2(p) && a.rtype->IsContiguous())
        BuildAllgatherRecursiveDoubling(s, r, p, static_cast<char*>(a.recvbuf), rb[0].bytes);
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
        // The send data is the receive buffer as it is now: snapshot it.
        std::int64_t span = 0;
        for (int i = 0; i < p; ++i) span = std::max(span, rdisp(i) + rcount(i) * rtype(i)->extent);
        char* copy = s.Scratch(std::size_t(span));
        s.Copy(copy, a.recvbuf, std::size_t(span));
        sbase = copy;
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
