#include "coll/offload_dense.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "coll/exchange_plan.h"
#include "coll/offload_agree.h"
#include "dtype/datatype.h"
#include "runtime/offload_context.h"

namespace nicq::coll {
namespace {

// This rank's edges, by comm rank. An edge with bytes < 0 does not exist;
// one with 0 bytes exists and moves nothing (a zero count of a v form).
struct SendEdge {
  TypedBlock block;  // base null: the plan's one-byte scratch (barrier)
  std::int64_t bytes = -1;
};
struct RecvEdge {
  TypedBlock block;  // type null: a barrier's byte
  std::int64_t bytes = -1;
  std::int64_t landing = 0;  // bytes from the start of the exposed buffer
};
struct Layout {
  std::vector<SendEdge> send;  // per destination
  std::vector<RecvEdge> recv;  // per source
  bool unpack = false;         // the blocks land in plan scratch (ReceiveOffsets)
};

std::string TypeReason(const dtype::Type* t, const char* which) {
  return t == nullptr ? std::string("no ") + which + " datatype" : "";
}

// Fills this rank's edges from the kind, root and buffers; returns why the
// plan cannot take them ("" when it can). Displacements are the types'
// extents apart (bytes for alltoallw), sizes the types' sizes.
std::string DenseLayout(const Args& a, Layout* l) {
  const int p = a.comm->size, me = a.comm->rank;
  const bool root = me == a.root;
  const bool send_in_place = a.sendbuf == kInPlace;
  const bool recv_in_place = a.recvbuf == kInPlace;
  l->send.assign(p, SendEdge{});
  l->recv.assign(p, RecvEdge{});
  auto send = [&](int r, const void* base, std::int64_t displ, const dtype::Type* t,
                  std::int64_t count) {
    const TypedBlock b{static_cast<const char*>(base), t, count, displ};
    l->send[r] = SendEdge{b, b.Bytes()};
  };
  auto recv = [&](int j, std::int64_t displ, const dtype::Type* t, std::int64_t count) {
    const TypedBlock b{static_cast<const char*>(a.recvbuf), t, count, displ};
    l->recv[j] = RecvEdge{b, b.Bytes()};
  };
  const dtype::Type* st = a.stype;
  const dtype::Type* rt = a.rtype;
  std::string why;
  switch (a.kind) {
    case Kind::kBarrier:
      for (int r = 0; r < p; ++r) {
        if (r == me) continue;
        l->send[r] = SendEdge{TypedBlock{}, 1};
        l->recv[r] = RecvEdge{TypedBlock{nullptr, nullptr, 0, r}, 1};
      }
      return "";
    case Kind::kBcast: {
      if (!(why = TypeReason(st, "buffer")).empty()) return why;
      for (int r = 0; r < p; ++r) {
        if (r == a.root) continue;
        if (root) send(r, a.sendbuf, 0, st, a.scount);
        if (r == me) recv(a.root, 0, st, a.scount);
      }
      return "";
    }
    case Kind::kGather:
    case Kind::kGatherv: {
      const bool v = a.kind == Kind::kGatherv;
      if (root) {
        if (!(why = TypeReason(rt, "receive")).empty()) return why;
        for (int j = 0; j < p; ++j) {
          if (j == me && send_in_place) continue;  // the root's own block stays
          recv(j, (v ? std::int64_t(a.rdispls[j]) : j * a.rcount) * rt->extent, rt,
               v ? a.rcounts[j] : a.rcount);
        }
      }
      if (!(root && send_in_place)) {
        if (!(why = TypeReason(st, "send")).empty()) return why;
        send(a.root, a.sendbuf, 0, st, a.scount);
      }
      return "";
    }
    case Kind::kScatter:
    case Kind::kScatterv: {
      const bool v = a.kind == Kind::kScatterv;
      if (root) {
        if (!(why = TypeReason(st, "send")).empty()) return why;
        for (int r = 0; r < p; ++r) {
          if (r == me && recv_in_place) continue;  // the root's own block stays
          send(r, a.sendbuf, (v ? std::int64_t(a.sdispls[r]) : r * a.scount) * st->extent, st,
               v ? a.scounts[r] : a.scount);
        }
      }
      if (!(root && recv_in_place)) {
        if (!(why = TypeReason(rt, "receive")).empty()) return why;
        recv(a.root, 0, rt, a.rcount);
      }
      return "";
    }
    case Kind::kAllgather:
    case Kind::kAllgatherv: {
      const bool v = a.kind == Kind::kAllgatherv;
      if (!(why = TypeReason(rt, "receive")).empty()) return why;
      auto at = [&](int j) { return (v ? std::int64_t(a.rdispls[j]) : j * a.rcount) * rt->extent; };
      auto count = [&](int j) -> std::int64_t { return v ? a.rcounts[j] : a.rcount; };
      if (!send_in_place && !(why = TypeReason(st, "send")).empty()) return why;
      for (int r = 0; r < p; ++r) {
        if (r == me && send_in_place) continue;
        // In place, my block is already at my displacement of recvbuf and
        // goes out from there.
        if (send_in_place)
          send(r, a.recvbuf, at(me), rt, count(me));
        else
          send(r, a.sendbuf, 0, st, a.scount);
        recv(r, at(r), rt, count(r));
      }
      return "";
    }
    case Kind::kAlltoall:
    case Kind::kAlltoallv:
    case Kind::kAlltoallw: {
      const bool v = a.kind == Kind::kAlltoallv, w = a.kind == Kind::kAlltoallw;
      // The send and receive regions are the same memory: a block could be
      // overwritten before it went out.
      if (send_in_place) return "in-place alltoall (send and receive blocks share memory)";
      for (int r = 0; r < p; ++r) {
        const dtype::Type* sr = w ? a.stypes[r] : st;
        const dtype::Type* rr = w ? a.rtypes[r] : rt;
        if (!(why = TypeReason(sr, "send")).empty()) return why;
        if (!(why = TypeReason(rr, "receive")).empty()) return why;
        // Alltoallw's displacements are bytes.
        send(r, a.sendbuf,
             w   ? std::int64_t(a.sdispls[r])
             : v ? std::int64_t(a.sdispls[r]) * sr->extent
                 : r * a.scount * sr->extent,
             sr, v || w ? a.scounts[r] : a.scount);
        recv(r,
             w   ? std::int64_t(a.rdispls[r])
             : v ? std::int64_t(a.rdispls[r]) * rr->extent
                 : r * a.rcount * rr->extent,
             rr, v || w ? a.rcounts[r] : a.rcount);
      }
      return "";
    }
    default:
      return std::string(KindName(a.kind)) + " has no exchange plan";
  }
}

// Where each existing in-edge's block lands (plan scratch when one is not
// one run of bytes).
void PlaceReceives(Layout* l) {
  std::vector<TypedBlock> in;
  for (const RecvEdge& e : l->recv)
    if (e.bytes >= 0) in.push_back(e.block);
  std::vector<std::int64_t> at;
  l->unpack = ReceiveOffsets(in, &at);
  std::size_t k = 0;
  for (RecvEdge& e : l->recv)
    if (e.bytes >= 0) e.landing = at[k++];
}

// Why this rank cannot take the plan ("" when it can).
std::string LocalReason(const Args& a, offload::OffloadBackend* be, Layout* l) {
  if (!a.algo.empty() && a.algo != "auto" && a.algo != "offload")
    return "nicq_algorithm=" + a.algo + " asks for the host schedule";
  if (a.comm->size < 2) return "a single rank";
  if (be == nullptr) return "no offload context";
  if (!be->Caps().remote_counters) return "the backend has no remote counters (ready tokens)";
  std::string why = DenseLayout(a, l);
  if (!why.empty()) return why;
  PlaceReceives(l);
  const std::size_t max_msg = be->Caps().max_msg_bytes;
  for (const SendEdge& e : l->send) {
    if (e.bytes < 0) continue;
    if (max_msg != 0 && std::size_t(e.bytes) > max_msg)
      return "a block of " + std::to_string(e.bytes) + " bytes is larger than one put (" +
             std::to_string(max_msg) + ")";
  }
  return "";
}

// Builds, lowers and binds this rank's plan from its edges and every
// rank's receive layout (`all`: per rank, a verdict word, then P receive
// offsets, then P receive sizes). An error means the host runs it.
Status BuildPlan(const Args& a, offload::OffloadBackend* be, const Layout& l,
                 const std::vector<std::int64_t>& all,
                 std::unique_ptr<offload::TriggerPlan>* plan) {
  const int p = a.comm->size, me = a.comm->rank;
  const std::size_t stride = 1 + 2 * std::size_t(p);
  auto theirs = [&](int r) { return &all[stride * r + 1]; };  // offsets, then sizes
  std::string name = std::string(KindName(a.kind)) + " exchange (coll, ";
  name += a.kind == Kind::kBarrier ? "one byte per edge into plan scratch)"
          : a.kind == Kind::kBcast ? "flat puts from the root gated by ready tokens)"
                                   : "puts gated by ready tokens)";
  offload::Schedule s(name);
  // The byte a barrier's puts carry: its value is never read.
  const char* token_byte = static_cast<const char*>(s.AllocScratch(1));
  ExchangePlanArgs x;
  x.edges.self = a.comm->world_ranks[me];
  x.edges.recvbuf = a.kind == Kind::kBarrier || l.unpack ? nullptr : a.recvbuf;
  x.unpack = l.unpack;
  for (int j = 0; j < p; ++j) {
    const RecvEdge& e = l.recv[j];
    if (e.bytes < 0) continue;
    x.edges.sources.push_back(a.comm->world_ranks[j]);
    x.edges.recv_bytes.push_back(std::size_t(e.bytes));
    x.recv_offset.push_back(std::uint64_t(e.landing));
    x.recv_layout.push_back(e.block);
    if (e.bytes > 0)
      x.edges.recv_len = std::max<std::size_t>(x.edges.recv_len, e.landing + e.bytes);
  }
  for (int r = 0; r < p; ++r) {
    const SendEdge& e = l.send[r];
    const std::int64_t expected = theirs(r)[p + me];
    // Both ends must agree on each edge's size, or a put would wait for a
    // token (or an arrival for a put) that never comes.
    if (std::max<std::int64_t>(e.bytes, 0) != std::max<std::int64_t>(expected, 0))
      return Error(Code::kArg, "rank " + std::to_string(r) + " expects " +
                                   std::to_string(std::max<std::int64_t>(expected, 0)) +
                                   " bytes from this rank, which sends " +
                                   std::to_string(std::max<std::int64_t>(e.bytes, 0)));
    if (e.bytes < 0) continue;
    std::int64_t run = 0;
    (void)OneRun(e.block, &run);
    x.edges.destinations.push_back(a.comm->world_ranks[r]);
    x.edges.send_blocks.push_back(e.block.base ? e.block.base + e.block.displ + run : token_byte);
    x.edges.send_bytes.push_back(std::size_t(e.bytes));
    x.send_layout.push_back(e.block);
    if (a.kind == Kind::kAlltoallw) x.edges.send_notes.push_back(LayoutNote(e.block));
    x.edges.remote_offset.push_back(std::uint64_t(theirs(r)[me]));
  }
  NICQ_RETURN_IF_ERROR(BuildExchangePlan(x, &s));
  return LowerAndBindExchange(s, be, plan);
}

}  // namespace

bool IsDenseExchangeKind(Kind k) {
  switch (k) {
    case Kind::kBarrier:
    case Kind::kBcast:
    case Kind::kGather:
    case Kind::kGatherv:
    case Kind::kScatter:
    case Kind::kScatterv:
    case Kind::kAllgather:
    case Kind::kAllgatherv:
    case Kind::kAlltoall:
    case Kind::kAlltoallv:
    case Kind::kAlltoallw:
      return true;
    default:
      return false;
  }
}

const char* DenseExchangeAlgorithm(Kind k) {
  switch (k) {
    case Kind::kBarrier:
      return "barrier puts (offloaded)";
    case Kind::kBcast:
      return "bcast puts (offloaded)";
    case Kind::kGather:
      return "gather puts (offloaded)";
    case Kind::kGatherv:
      return "gatherv puts (offloaded)";
    case Kind::kScatter:
      return "scatter puts (offloaded)";
    case Kind::kScatterv:
      return "scatterv puts (offloaded)";
    case Kind::kAllgather:
      return "allgather puts (offloaded)";
    case Kind::kAllgatherv:
      return "allgatherv puts (offloaded)";
    case Kind::kAlltoall:
      return "alltoall puts (offloaded)";
    case Kind::kAlltoallv:
      return "alltoallv puts (offloaded)";
    case Kind::kAlltoallw:
      return "alltoallw puts (offloaded)";
    default:
      return "";
  }
}

Status CreateOffloadedDense(const Args& a, std::unique_ptr<OffloadedPlan>* out) {
  out->reset();
  if (a.comm->inter || !IsDenseExchangeKind(a.kind)) return Status::Ok();
  offload::OffloadBackend* be = rt::Backend();
  // No context, or an emulated one the request does not force: today's
  // host paths, with no init step (every rank has the same backend, agreed
  // in MPI_Init; the info key must agree across ranks as for any other
  // collective algorithm choice).
  if (be == nullptr) return Status::Ok();
  if (a.algo != "offload" && !rt::NicFiresOps()) return Status::Ok();
  Layout l;
  const std::string why = LocalReason(a, be, &l);
  // 1. One exchange: every rank's verdict and receive layout (where the
  // block from each rank lands, and its size), so senders put at their
  // receivers' displacements and every rank takes the same path.
  const int p = a.comm->size;
  const std::size_t stride = 1 + 2 * std::size_t(p);
  std::vector<std::int64_t> mine(stride, -1), all(stride * p);
  mine[0] = why.empty() ? 1 : 0;
  if (why.empty())
    for (int j = 0; j < p; ++j) {
      mine[1 + j] = l.recv[j].landing;
      mine[1 + p + j] = l.recv[j].bytes;
    }
  NICQ_RETURN_IF_ERROR(Exchange(a.comm, mine.data(), stride * sizeof(std::int64_t), all.data()));
  for (int r = 0; r < p; ++r)
    if (all[stride * r] != 1) {
      LogHostSchedule(a, why.empty() ? "rank " + std::to_string(r) + " cannot take it" : why);
      return Status::Ok();
    }
  // 2. Build and bind; 3. agree on it, exchange the exports and resolve.
  std::unique_ptr<offload::TriggerPlan> plan;
  const Status built = BuildPlan(a, be, l, all, &plan);
  return AdoptExchangePlan(a, built, std::move(plan), out);
}

}  // namespace nicq::coll
