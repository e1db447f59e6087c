// From an Args descriptor to a Schedule: resolve MPI_IN_PLACE, pack
// noncontiguous datatypes into scratch (unpack at the end), pick the
// algorithm, and call the builder. Everything here runs at init
// (persistent) or per call (nonblocking) before the schedule is launched.
#include <string>
#include <vector>

#include "coll/algo_hier.h"
#include "coll/algorithms.h"
#include "coll/build_util.h"
#include "coll/coll.h"
#include "coll/select.h"
#include "dtype/reduce.h"

namespace nicq::coll {

Status ResolveRedType(const dtype::Type* t, const dtype::Op* op, RedType* out) {
  RedType& r = *out;
  if (t->predefined) {
    r.handle = t->handle;
    r.esize = t->extent ? std::size_t(t->extent) : 1;  // pair types: struct layout
    return Status::Ok();
  }
  // Pair types (MPI_DOUBLE_INT, ...) are padded C structs that the MINLOC
  // and MAXLOC kernels walk at their extent: packed pairs would be read
  // misaligned, so derived types of pairs reduce in place like user ops.
  if (op->predefined && !dtype::IsPairIndex(t->unit)) {
    r.handle = (dtype::kKindDatatype << 24) | t->unit;
    r.esize = std::size_t(dtype::BasicSize(t->unit));
    r.per_item = std::size_t(t->size) / r.esize;
    return Status::Ok();
  }
  for (const dtype::Block& b : t->blocks)
    if (b.offset < t->lb || b.offset + b.length > t->lb + t->extent)
      return Error(Code::kType,
                   "a user-defined op on a datatype whose data lies outside its extent "
                   "[lb, lb+extent) is not supported");
  r.handle = t->handle;
  r.esize = t->extent > 0 ? std::size_t(t->extent) : 1;
  r.image = true;
  r.lb = t->lb;
  return Status::Ok();
}

// The user's buffer seen as an image: the buffer itself when the type is
// one dense run starting at its lower bound 0.
static bool IsPredefinedPair(const dtype::Type* t) {
  return dtype::IsPairIndex(t->handle & 0xffffff);
}

static bool ImageIsBuffer(const dtype::Type* t) {
  return t->IsContiguous() && t->lb == 0;
}

// A view of `count` items at buf the reduction can read.
char* RedIn(Schedule& s, const RedType& red, const void* buf, std::int64_t count,
            const dtype::Type* t) {
  if (t->predefined) return const_cast<char*>(static_cast<const char*>(buf));
  if (!red.image) return In(s, buf, count, t);
  if (ImageIsBuffer(t) || count == 0) return const_cast<char*>(static_cast<const char*>(buf));
  char* image = s.Scratch(std::size_t(count) * red.esize);
  s.CopyTyped(t, static_cast<const char*>(buf), count, image - red.lb);
  return image;
}
// A view of `count` items the reduction writes, copied into buf at the end
// (pack_first: the buffer also holds input, i.e. in place).
char* RedOut(Schedule& s, const RedType& red, Unpacks& u, void* buf, std::int64_t count,
             const dtype::Type* t, bool pack_first) {
  if (t->predefined && !IsPredefinedPair(t)) return static_cast<char*>(buf);
  // A predefined pair type's struct padding is not part of its type map:
  // its result goes through an image too (lower bound 0, one extent per
  // item), so only the value and index reach buf.
  if (!red.image && !t->predefined) return Out(s, u, buf, count, t, pack_first);
  if (ImageIsBuffer(t) || count == 0) return static_cast<char*>(buf);
  char* image = s.Scratch(std::size_t(count) * red.esize);
  if (pack_first) s.CopyTyped(t, buf, count, image - red.lb);
  u.list.push_back({t, image - red.lb, count, buf, true});
  return image;
}
// Bytes of one item as the reduction lays it out.
std::int64_t RedItemBytes(const RedType& red, const dtype::Type* t) {
  if (red.image) return std::int64_t(red.esize);
  return t->predefined ? t->extent : t->size;
}

void AddUnpacks(Schedule& s, const Unpacks& u) {
  for (const auto& x : u.list) {
    if (x.typed)
      s.CopyTyped(x.t, x.from, x.count, x.to);
    else
      s.Unpack(x.t, x.from, x.count, x.to);
  }
}

Status Build(const Args& a, Schedule* sp) {
  if (a.comm->inter) return BuildInter(a, sp);
  Schedule& s = *sp;
  const int r = a.comm->rank, p = a.comm->size;
  const bool in_place = a.sendbuf == kInPlace;
  Unpacks u;
  s.algorithm = PickAlgorithm(a);
  const std::string algo = s.algorithm;
  RedType red;
  bool commute = true;
  if (a.op != 0) {
    const dtype::Type* t = a.rtype ? a.rtype : a.stype;
    const dtype::Op* op = dtype::LookupOp(a.op);
    if (!op) return Error(Code::kOp, "invalid reduction operation");
    NICQ_RETURN_IF_ERROR(ResolveRedType(t, op, &red));
    s.SetReduce(a.op, red.handle, red.image ? -red.lb : 0);
    commute = op->commute;
  }
  std::vector<Block>& sblk = SendBlocks(p);

  switch (a.kind) {
    case Kind::kBarrier:
      if (algo == "hierarchical") {
        NodeGroups g;
        GroupByNode(a.comm, -1, &g);
        BuildBarrierHierarchical(s, g);
      } else {
        BuildBarrier(s, r, p);
      }
      break;
    case Kind::kBcast: {
      const dtype::Type* t = a.stype;
      char* b = Out(s, u, a.recvbuf, a.scount, t, r == a.root);
      if (r == a.root) u.list.clear();  // the root's buffer is only read
      const std::size_t bytes = std::size_t(a.scount * t->size);
      if (algo == "hierarchical") {
        NodeGroups g;
        GroupByNode(a.comm, a.root, &g);
        BuildBcastHierarchical(s, g, b, bytes);
      } else if (algo == "scatter_allgather")
        BuildBcastScatterAllgather(s, r, p, a.root, b, bytes);
      else
        BuildBcastKnomial(s, r, p, a.root, b, bytes, algo == "knomial" ? 4 : 2);
      break;
    }
    case Kind::kReduce:
    case Kind::kAllreduce:
    case Kind::kScan:
    case Kind::kExscan: {
      const dtype::Type* t = a.rtype;
      const void* in = in_place ? a.recvbuf : a.sendbuf;
      char* ic = RedIn(s, red, in, a.rcount, t);
      const bool has_out = a.kind != Kind::kReduce || r == a.root;
      char* oc = has_out ? RedOut(s, red, u, a.recvbuf, a.rcount, t, false) : nullptr;
      const std::size_t n = std::size_t(a.rcount) * red.per_item;
      if (a.kind == Kind::kReduce)
        BuildReduce(s, r, p, a.root, ic, oc, n, red.esize, commute);
      else if (a.kind == Kind::kScan || a.kind == Kind::kExscan)
        BuildScan(s, r, p, ic, oc, n, red.esize, commute, a.kind == Kind::kExscan);
      else if (algo == "hierarchical") {
        NodeGroups g;
        GroupByNode(a.comm, -1, &g);
        BuildAllreduceHierarchical(s, g, ic, oc, n, red.esize);
      } else if (algo == "ring")
        BuildAllreduceRing(s, r, p, ic, oc, n, red.esize);
      else if (algo == "rabenseifner")
        BuildAllreduceRabenseifner(s, r, p, ic, oc, n, red.esize);
      else
        BuildAllreduceRecursiveDoubling(s, r, p, ic, oc, n, red.esize, commute);
      break;
    }
    case Kind::kReduceScatter:
    case Kind::kReduceScatterBlock: {
      // Reduce to rank 0 in rank order, then scatter: correct for every op.
      const dtype::Type* t = a.rtype;
      std::int64_t total = 0;
      for (int i = 0; i < p; ++i)
        total += a.kind == Kind::kReduceScatterBlock ? a.rcount : a.rcounts[i];
      const std::int64_t mine = a.kind == Kind::kReduceScatterBlock ? a.rcount : a.rcounts[r];
      char* ic = RedIn(s, red, in_place ? a.recvbuf : a.sendbuf, total, t);
      const std::int64_t isz = RedItemBytes(red, t);
      char* full = r == 0 ? s.Scratch(std::size_t(total * isz)) : nullptr;
      BuildReduce(s, r, p, 0, ic, full, std::size_t(total) * red.per_item, red.esize, commute);
      s.EndPhase();
      char* oc = RedOut(s, red, u, a.recvbuf, mine, t, false);
      std::size_t off = 0;
      for (int i = 0; i < p; ++i) {
        const std::size_t b =
            std::size_t((a.kind == Kind::kReduceScatterBlock ? a.rcount : a.rcounts[i]) * isz);
        sblk[i] = Block{full ? full + off : nullptr, b};
        off += b;
      }
      BuildScatterv(
          s, r, p, 0, [&](int i) { return sblk[i]; }, oc, std::size_t(mine * isz));
      break;
    }
    case Kind::kGather:
    case Kind::kScatter: {
      const bool g = a.kind == Kind::kGather;
      const bool root = r == a.root;
      // Per-rank bytes from the side every rank has (send for gather).
      const std::size_t bytes =
          g ? (root && in_place ? std::size_t(a.rcount * a.rtype->size)
                                : std::size_t(a.scount * a.stype->size))
            : (root && a.recvbuf == kInPlace ? std::size_t(a.scount * a.stype->size)
                                             : std::size_t(a.rcount * a.rtype->size));
      if (g) {
        const char* ic = root && in_place ? nullptr : In(s, a.sendbuf, a.scount, a.stype);
        char* oc = root ? Out(s, u, a.recvbuf, a.rcount * p, a.rtype, in_place) : nullptr;
        BuildGather(s, r, p, a.root, ic, oc, bytes);
      } else {
        const char* ic = root ? In(s, a.sendbuf, a.scount * p, a.stype) : nullptr;
        const bool out_in_place = root && a.recvbuf == kInPlace;
        char* oc = out_in_place ? nullptr : Out(s, u, a.recvbuf, a.rcount, a.rtype, false);
        BuildScatter(s, r, p, a.root, ic, oc, bytes);
      }
      break;
    }
    case Kind::kGatherv:
    case Kind::kScatterv:
    case Kind::kAllgather:
    case Kind::kAllgatherv:
    case Kind::kAlltoall:
    case Kind::kAlltoallv:
    case Kind::kAlltoallw:
      BuildBlockCollective(a, s, algo, u);
      break;
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAllgatherv:
    case Kind::kNeighborAlltoall:
    case Kind::kNeighborAlltoallv:
    case Kind::kNeighborAlltoallw:
      BuildNeighborCollective(a, s, u);
      break;
  }
  s.EndPhase();
  AddUnpacks(s, u);
  s.EndPhase();
  return Status::Ok();
}

}  // namespace nicq::coll
