// Collectives on intercommunicators (MPI 4.1 6.2.2): each is a composition
// of local-group steps (Send/Recv: ranks of the local group, on the local
// group's own collective context) and exchanges with the remote group
// (SendRemote/RecvRemote), all in one schedule, so the blocking,
// nonblocking and persistent forms come from this one builder.
//
// Local rank 0 leads its group. The shapes:
//   barrier, allreduce, allgather, reduce_scatter(_block):
//       local phase to the leader, leaders exchange, local phase from it;
//   bcast: root -> remote leader, then a bcast in the receiving group;
//   reduce: reduce to the leader of the sending group, leader -> root;
//   gather(v), scatter(v), allgatherv, alltoall(v,w): direct messages
//       between the members of the two groups.
// MPI_IN_PLACE is refused by the API checks (it has no meaning here).
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/build_util.h"
#include "coll/coll.h"
#include "dtype/reduce.h"

namespace nicq::coll {
namespace {

struct Ctx {
  Schedule& s;
  Unpacks& u;
  int r, p, q;  // local rank, local size, remote size
};

void BuildInterBarrier(Ctx& c) {
  char* none = c.s.Scratch(1);
  BuildBarrier(c.s, c.r, c.p);
  c.s.EndPhase();
  if (c.r == 0) {
    c.s.SendRemote(none, 0, 0);
    c.s.RecvRemote(none, 0, 0);
    c.s.EndPhase();
  }
  // Released only after the leader heard that the whole remote group entered.
  BuildBcastKnomial(c.s, c.r, c.p, 0, none, 0, 2);
}

void BuildInterBcast(Ctx& c, const Args& a) {
  if (a.root == kProcNullArg) return;
  const std::size_t bytes = std::size_t(a.scount * a.stype->size);
  if (a.root == kRootArg) {
    c.s.SendRemote(In(c.s, a.recvbuf, a.scount, a.stype), bytes, 0);
    return;
  }
  char* b = Out(c.s, c.u, a.recvbuf, a.scount, a.stype, false);
  if (c.r == 0) {
    c.s.RecvRemote(b, bytes, a.root);
    c.s.EndPhase();
  }
  BuildBcastKnomial(c.s, c.r, c.p, 0, b, bytes, 2);
}

// Reductions: `ic` is this rank's contribution; the group's reduction (in
// rank order) lands in scratch at the leader, which it returns.
char* ReduceToLeader(Ctx& c, const Args& a, const void* in, std::int64_t count, const RedType& red,
                     bool commute) {
  char* ic = RedIn(c.s, red, in, count, a.rtype);
  char* acc = c.r == 0 ? c.s.Scratch(std::size_t(count * RedItemBytes(red, a.rtype))) : nullptr;
  BuildReduce(c.s, c.r, c.p, 0, ic, acc, std::size_t(count) * red.per_item, red.esize, commute);
  c.s.EndPhase();
  return acc;
}

void BuildInterReduce(Ctx& c, const Args& a, const RedType& red, bool commute) {
  if (a.root == kProcNullArg) return;
  const std::size_t bytes = std::size_t(a.rcount * RedItemBytes(red, a.rtype));
  if (a.root == kRootArg) {
    c.s.RecvRemote(RedOut(c.s, red, c.u, a.recvbuf, a.rcount, a.rtype, false), bytes, 0);
    return;
  }
  char* acc = ReduceToLeader(c, a, a.sendbuf, a.rcount, red, commute);
  if (c.r == 0) c.s.SendRemote(acc, bytes, a.root);
}

void BuildInterAllreduce(Ctx& c, const Args& a, const RedType& red, bool commute) {
  const std::size_t bytes = std::size_t(a.rcount * RedItemBytes(red, a.rtype));
  char* acc = ReduceToLeader(c, a, a.sendbuf, a.rcount, red, commute);
  char* oc = RedOut(c.s, red, c.u, a.recvbuf, a.rcount, a.rtype, false);
  if (c.r == 0) {
    c.s.SendRemote(acc, bytes, 0);
    c.s.RecvRemote(oc, bytes, 0);
    c.s.EndPhase();
  }
  BuildBcastKnomial(c.s, c.r, c.p, 0, oc, bytes, 2);
}

// The remote group's reduction of `total` items, scattered over the local
// group by `counts` (items per local rank).
void BuildInterReduceScatter(Ctx& c, const Args& a, const RedType& red, bool commute) {
  const bool block = a.kind == Kind::kReduceScatterBlock;
  auto count = [&](int i) -> std::int64_t { return block ? a.rcount : a.rcounts[i]; };
  std::int64_t total = 0;
  for (int i = 0; i < c.p; ++i) total += count(i);
  const std::int64_t isz = RedItemBytes(red, a.rtype);
  char* acc = ReduceToLeader(c, a, a.sendbuf, total, red, commute);
  char* full = nullptr;
  if (c.r == 0) {
    full = c.s.Scratch(std::size_t(total * isz));
    c.s.SendRemote(acc, std::size_t(total * isz), 0);
    c.s.RecvRemote(full, std::size_t(total * isz), 0);
    c.s.EndPhase();
  }
  std::vector<Block>& blk = SendBlocks(c.p);
  std::size_t off = 0;
  for (int i = 0; i < c.p; ++i) {
    const std::size_t b = std::size_t(count(i) * isz);
    blk[i] = Block{full ? full + off : nullptr, b};
    off += b;
  }
  char* oc = RedOut(c.s, red, c.u, a.recvbuf, count(c.r), a.rtype, false);
  BuildScatterv(
      c.s, c.r, c.p, 0, [&](int i) { return blk[i]; }, oc, std::size_t(count(c.r) * isz));
}

void BuildInterGather(Ctx& c, const Args& a) {
  if (a.root == kProcNullArg) return;
  if (a.root != kRootArg) {
    c.s.SendRemote(In(c.s, a.sendbuf, a.scount, a.stype), std::size_t(a.scount * a.stype->size),
                   a.root);
    return;
  }
  const dtype::Type* t = a.rtype;
  for (int i = 0; i < c.q; ++i) {
    const std::int64_t n = a.kind == Kind::kGatherv ? a.rcounts[i] : a.rcount;
    const std::int64_t disp = a.kind == Kind::kGatherv ? a.rdispls[i] : i * a.rcount;
    char* at = static_cast<char*>(a.recvbuf) + disp * t->extent;
    c.s.RecvRemote(Out(c.s, c.u, at, n, t, false), std::size_t(n * t->size), i);
  }
}

void BuildInterScatter(Ctx& c, const Args& a) {
  if (a.root == kProcNullArg) return;
  if (a.root != kRootArg) {
    c.s.RecvRemote(Out(c.s, c.u, a.recvbuf, a.rcount, a.rtype, false),
                   std::size_t(a.rcount * a.rtype->size), a.root);
    return;
  }
  const dtype::Type* t = a.stype;
  for (int i = 0; i < c.q; ++i) {
    const std::int64_t n = a.kind == Kind::kScatterv ? a.scounts[i] : a.scount;
    const std::int64_t disp = a.kind == Kind::kScatterv ? a.sdispls[i] : i * a.scount;
    const char* at = static_cast<const char*>(a.sendbuf) + disp * t->extent;
    c.s.SendRemote(In(c.s, at, n, t), std::size_t(n * t->size), i);
  }
}

// Allgather: gather at the leader, leaders exchange the groups' blocks,
// bcast of the remote blocks.
void BuildInterAllgather(Ctx& c, const Args& a) {
  const std::size_t sbytes = std::size_t(a.scount * a.stype->size);
  const std::size_t rbytes = std::size_t(a.rcount * a.rtype->size);
  const char* ic = In(c.s, a.sendbuf, a.scount, a.stype);
  char* mine = c.r == 0 ? c.s.Scratch(sbytes * std::size_t(c.p)) : nullptr;
  BuildGather(c.s, c.r, c.p, 0, ic, mine, sbytes);
  c.s.EndPhase();
  char* oc = Out(c.s, c.u, a.recvbuf, a.rcount * c.q, a.rtype, false);
  if (c.r == 0) {
    c.s.SendRemote(mine, sbytes * std::size_t(c.p), 0);
    c.s.RecvRemote(oc, rbytes * std::size_t(c.q), 0);
    c.s.EndPhase();
  }
  BuildBcastKnomial(c.s, c.r, c.p, 0, oc, rbytes * std::size_t(c.q), 2);
}

void BuildInterAllgatherv(Ctx& c, const Args& a) {
  const char* ic = In(c.s, a.sendbuf, a.scount, a.stype);
  const std::size_t sbytes = std::size_t(a.scount * a.stype->size);
  for (int k = 0; k < c.q; ++k) {
    const int j = (c.r + k) % c.q;  // spread the first messages over the remote group
    char* at = static_cast<char*>(a.recvbuf) + a.rdispls[j] * a.rtype->extent;
    c.s.SendRemote(ic, sbytes, j);
    c.s.RecvRemote(Out(c.s, c.u, at, a.rcounts[j], a.rtype, false),
                   std::size_t(a.rcounts[j] * a.rtype->size), j);
  }
}

void BuildInterAlltoall(Ctx& c, const Args& a) {
  const bool v = a.kind == Kind::kAlltoallv, w = a.kind == Kind::kAlltoallw;
  for (int k = 0; k < c.q; ++k) {
    const int j = (c.r + k) % c.q;
    const dtype::Type* st = w ? a.stypes[j] : a.stype;
    const dtype::Type* rt = w ? a.rtypes[j] : a.rtype;
    const std::int64_t sc = v || w ? a.scounts[j] : a.scount;
    const std::int64_t rc = v || w ? a.rcounts[j] : a.rcount;
    // alltoallw displacements are in bytes, the others in items.
    const std::int64_t sd = w ? a.sdispls[j] : (v ? a.sdispls[j] : j * a.scount) * st->extent;
    const std::int64_t rd = w ? a.rdispls[j] : (v ? a.rdispls[j] : j * a.rcount) * rt->extent;
    const char* sat = static_cast<const char*>(a.sendbuf) + sd;
    char* rat = static_cast<char*>(a.recvbuf) + rd;
    c.s.SendRemote(In(c.s, sat, sc, st), std::size_t(sc * st->size), j);
    c.s.RecvRemote(Out(c.s, c.u, rat, rc, rt, false), std::size_t(rc * rt->size), j);
  }
}

}  // namespace

Status BuildInter(const Args& a, Schedule* sp) {
  Schedule& s = *sp;
  if (a.sendbuf == kInPlace || a.recvbuf == kInPlace)
    return Error(Code::kBuffer, "MPI_IN_PLACE is not allowed on an intercommunicator");
  if (!a.comm->local_comm)
    return Error(Code::kIntern, "intercommunicator without its local group communicator");
  Unpacks u;
  Ctx c{s, u, a.comm->rank, a.comm->size, a.comm->PeerSize()};
  s.algorithm = "intercomm";
  RedType red;
  bool commute = true;
  if (a.op != 0) {
    const dtype::Op* op = dtype::LookupOp(a.op);
    if (!op) return Error(Code::kOp, "invalid reduction operation");
    NICQ_RETURN_IF_ERROR(ResolveRedType(a.rtype, op, &red));
    s.SetReduce(a.op, red.handle, red.image ? -red.lb : 0);
    commute = op->commute;
  }
  switch (a.kind) {
    case Kind::kBarrier:
      BuildInterBarrier(c);
      break;
    case Kind::kBcast:
      BuildInterBcast(c, a);
      break;
    case Kind::kReduce:
      BuildInterReduce(c, a, red, commute);
      break;
    case Kind::kAllreduce:
      BuildInterAllreduce(c, a, red, commute);
      break;
    case Kind::kReduceScatter:
    case Kind::kReduceScatterBlock:
      BuildInterReduceScatter(c, a, red, commute);
      break;
    case Kind::kGather:
    case Kind::kGatherv:
      BuildInterGather(c, a);
      break;
    case Kind::kScatter:
    case Kind::kScatterv:
      BuildInterScatter(c, a);
      break;
    case Kind::kAllgather:
      BuildInterAllgather(c, a);
      break;
    case Kind::kAllgatherv:
      BuildInterAllgatherv(c, a);
      break;
    case Kind::kAlltoall:
    case Kind::kAlltoallv:
    case Kind::kAlltoallw:
      BuildInterAlltoall(c, a);
      break;
    case Kind::kScan:
    case Kind::kExscan:
      return Error(Code::kComm,
                   std::string(KindName(a.kind)) + " is not defined on an intercommunicator");
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAllgatherv:
    case Kind::kNeighborAlltoall:
    case Kind::kNeighborAlltoallv:
    case Kind::kNeighborAlltoallw:
      // Intercommunicators carry no process topology.
      return Error(Code::kTopology,
                   std::string(KindName(a.kind)) + " needs a communicator with a topology");
  }
  s.EndPhase();
  AddUnpacks(s, u);
  s.EndPhase();
  return Status::Ok();
}

}  // namespace nicq::coll
