#include "coll/offload_dense.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "coll/exchange_plan.h"
#include "coll/offload_agree.h"
#include "dtype/datatype.h"
#include "queue/offload_context.h"

namespace nicq::coll {
namespace {

// This rank's edges, by comm rank. An edge with bytes < 0 does not exist;
// one with 0 bytes exists and moves nothing (a zero count of a v form).
struct SendEdge {
  const char* base = nullptr;  // null: the plan's one-byte scratch (barrier)
  std::int64_t offset = 0, bytes = -1;
};
struct RecvEdge {
  std::int64_t offset = 0, bytes = -1;
};
struct Layout {
  std::vector<SendEdge> send;  // per destination
  std::vector<RecvEdge> recv;  // per source
};

std::string TypeReason(const dtype::Type* t, const char* which) {
  if (t == nullptr) return std::string("no ") + which + " datatype";
  if (!t->IsContiguous() || t->lb != 0)
    return std::string("noncontiguous ") + which + " datatype (or a nonzero lower bound)";
  return "";
}

// Fills this rank's edges from the kind, root and buffers; returns why the
// plan cannot take them ("" when it can). Displacements are the types'
// extents apart, sizes the types' sizes (equal for a contiguous type).
std::string DenseLayout(const Args& a, Layout* l) {
  const int p = a.comm->size, me = a.comm->rank;
  const bool root = me == a.root;
  const bool send_in_place = a.sendbuf == kInPlace;
  const bool recv_in_place = a.recvbuf == kInPlace;
  l->send.assign(p, SendEdge{});
  l->recv.assign(p, RecvEdge{});
  auto send = [&](int r, const void* base, std::int64_t off, std::int64_t bytes) {
    l->send[r] = SendEdge{static_cast<const char*>(base), off, bytes};
  };
  auto recv = [&](int j, std::int64_t off, std::int64_t bytes) {
    l->recv[j] = RecvEdge{off, bytes};
  };
  const dtype::Type* st = a.stype;
  const dtype::Type* rt = a.rtype;
  std::string why;
  switch (a.kind) {
    case Kind::kBarrier:
      for (int r = 0; r < p; ++r) {
        if (r == me) continue;
        send(r, nullptr, 0, 1);
        recv(r, r, 1);
      }
      return "";
    case Kind::kBcast: {
      if (!(why = TypeReason(st, "buffer")).empty()) return why;
      const std::int64_t bytes = a.scount * st->size;
      for (int r = 0; r < p; ++r) {
        if (r == a.root) continue;
        if (root) send(r, a.sendbuf, 0, bytes);
        if (r == me) recv(a.root, 0, bytes);
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
          const std::int64_t n = v ? a.rcounts[j] : a.rcount;
          recv(j, (v ? std::int64_t(a.rdispls[j]) : j * a.rcount) * rt->extent, n * rt->size);
        }
      }
      if (!(root && send_in_place)) {
        if (!(why = TypeReason(st, "send")).empty()) return why;
        send(a.root, a.sendbuf, 0, a.scount * st->size);
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
          const std::int64_t n = v ? a.scounts[r] : a.scount;
          send(r, a.sendbuf, (v ? std::int64_t(a.sdispls[r]) : r * a.scount) * st->extent,
               n * st->size);
        }
      }
      if (!(root && recv_in_place)) {
        if (!(why = TypeReason(rt, "receive")).empty()) return why;
        recv(a.root, 0, a.rcount * rt->size);
      }
      return "";
    }
    case Kind::kAllgather:
    case Kind::kAllgatherv: {
      const bool v = a.kind == Kind::kAllgatherv;
      if (!(why = TypeReason(rt, "receive")).empty()) return why;
      auto at = [&](int j) { return (v ? std::int64_t(a.rdispls[j]) : j * a.rcount) * rt->extent; };
      auto size = [&](int j) { return (v ? a.rcounts[j] : a.rcount) * rt->size; };
      // In place, my block is already at my displacement of recvbuf and
      // goes out from there.
      const void* base = send_in_place ? static_cast<const void*>(a.recvbuf) : a.sendbuf;
      const std::int64_t off = send_in_place ? at(me) : 0;
      if (!send_in_place && !(why = TypeReason(st, "send")).empty()) return why;
      const std::int64_t bytes = send_in_place ? size(me) : a.scount * st->size;
      for (int r = 0; r < p; ++r) {
        if (r == me && send_in_place) continue;
        send(r, base, off, bytes);
        recv(r, at(r), size(r));
      }
      return "";
    }
    case Kind::kAlltoall:
    case Kind::kAlltoallv: {
      const bool v = a.kind == Kind::kAlltoallv;
      // The send and receive regions are the same memory: a block could be
      // overwritten before it went out.
      if (send_in_place) return "in-place alltoall (send and receive blocks share memory)";
      if (!(why = TypeReason(st, "send")).empty()) return why;
      if (!(why = TypeReason(rt, "receive")).empty()) return why;
      for (int r = 0; r < p; ++r) {
        send(r, a.sendbuf, (v ? std::int64_t(a.sdispls[r]) : r * a.scount) * st->extent,
             (v ? a.scounts[r] : a.scount) * st->size);
        recv(r, (v ? std::int64_t(a.rdispls[r]) : r * a.rcount) * rt->extent,
             (v ? a.rcounts[r] : a.rcount) * rt->size);
      }
      return "";
    }
    default:
      return std::string(KindName(a.kind)) + " has no exchange plan";
  }
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
  const std::size_t max_msg = be->Caps().max_msg_bytes;
  for (const SendEdge& e : l->send) {
    if (e.bytes < 0) continue;
    if (e.offset < 0) return "a negative send displacement";
    if (max_msg != 0 && std::size_t(e.bytes) > max_msg)
      return "a block of " + std::to_string(e.bytes) + " bytes is larger than one put (" +
             std::to_string(max_msg) + ")";
  }
  for (const RecvEdge& e : l->recv)
    if (e.bytes >= 0 && e.offset < 0) return "a negative receive displacement";
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
  x.self = a.comm->world_ranks[me];
  x.recvbuf = a.kind == Kind::kBarrier ? nullptr : a.recvbuf;
  for (int j = 0; j < p; ++j) {
    const RecvEdge& e = l.recv[j];
    if (e.bytes < 0) continue;
    x.sources.push_back(a.comm->world_ranks[j]);
    x.recv_bytes.push_back(std::size_t(e.bytes));
    if (e.bytes > 0) x.recv_len = std::max<std::size_t>(x.recv_len, e.offset + e.bytes);
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
    x.destinations.push_back(a.comm->world_ranks[r]);
    x.send_blocks.push_back(e.base ? e.base + e.offset : token_byte);
    x.send_bytes.push_back(std::size_t(e.bytes));
    x.remote_offset.push_back(std::uint64_t(theirs(r)[me]));
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
    default:
      return "";
  }
}

Status CreateOffloadedDense(const Args& a, std::unique_ptr<OffloadedAllreduce>* out) {
  out->reset();
  if (a.comm->inter || !IsDenseExchangeKind(a.kind)) return Status::Ok();
  offload::OffloadBackend* be = queue::Backend();
  // No context, or an emulated one the request does not force: today's
  // host paths, with no init step (every rank has the same backend, agreed
  // in MPI_Init; the info key must agree across ranks as for any other
  // collective algorithm choice).
  if (be == nullptr) return Status::Ok();
  if (a.algo != "offload" && std::strcmp(queue::BackendName(), "native") != 0) return Status::Ok();
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
      mine[1 + j] = l.recv[j].offset;
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
