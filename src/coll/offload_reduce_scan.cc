#include "coll/offload_reduce_scan.h"

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

using offload::AtomicOp;
using offload::AtomicType;
using offload::RemoteBuffer;
using offload::RemoteCounter;
using offload::StepId;

// What every builder needs: the ranks' backend peers, the NIC's element
// type and op, and where this rank's input lies.
struct Reduction {
  const Args* a = nullptr;
  AtomicType type = AtomicType::kDouble;
  AtomicOp op = AtomicOp::kSum;
  std::size_t esize = 0;
  const char* input = nullptr;  // sendbuf, or recvbuf in place
  // Bytes one atomic may carry (the backend's max_atomic_count items; cxi:
  // one); 0: any. A longer block goes as several atomics, each counted.
  std::size_t chunk = 0;
  offload::PeerId Peer(int r) const { return a->comm->world_ranks[r]; }
  // Atomics that carry a block of `bytes` (> 0).
  std::uint64_t Pieces(std::size_t bytes) const {
    return chunk == 0 ? 1 : (bytes + chunk - 1) / chunk;
  }
};

// Combines `bytes` at `src` into `to` as Pieces(bytes) atomics, each
// waiting on `wait` after `deps`; appends them to *sent when given.
void Combine(const Reduction& r, offload::Schedule* s, const char* src, std::size_t bytes,
             RemoteBuffer to, const std::vector<StepId>& deps, offload::PlanCounter wait,
             const std::string& label, std::vector<StepId>* sent) {
  const std::size_t step = r.chunk == 0 ? bytes : r.chunk;
  for (std::size_t off = 0; off < bytes; off += step) {
    const std::size_t len = std::min(step, bytes - off);
    const StepId at = s->Atomic(r.op, r.type, src + off, len,
                                RemoteBuffer{to.peer, to.buffer, to.offset + off}, deps);
    s->WaitOn(at, wait);
    s->SetLabel(at, len == bytes ? label
                                 : label + " (bytes " + std::to_string(off) + ".." +
                                       std::to_string(off + len) + ")");
    if (sent != nullptr) sent->push_back(at);
  }
}

std::int64_t BlockCount(const Args& a, int j) {
  return a.kind == Kind::kReduceScatterBlock ? a.rcount : a.rcounts[j];
}

// reduce_scatter(_block): flat remote atomics gated by ready tokens.
Status BuildReduceScatter(const Reduction& r, offload::Schedule* s) {
  const Args& a = *r.a;
  const int p = a.comm->size, me = a.comm->rank;
  std::vector<std::size_t> bytes(p), displ(p);
  std::size_t at = 0;
  for (int j = 0; j < p; ++j) {
    bytes[j] = std::size_t(BlockCount(a, j)) * r.esize;
    displ[j] = at;
    at += bytes[j];
  }
  const std::size_t mine = bytes[me];
  const bool in_place = a.sendbuf == kInPlace;
  // In place, other ranks' atomics would land at the start of recvbuf while
  // this rank still reads the blocks there: they land in scratch instead,
  // unless the own block already starts recvbuf (then the regions are apart).
  const bool staged = in_place && mine > 0 && displ[me] != 0;
  const bool copy = mine > 0 && (!in_place || staged);
  std::uint64_t tokens_owed = 0;  // one per other rank that receives a block
  for (int j = 0; j < p; ++j) tokens_owed += j != me && bytes[j] > 0;
  // Counter and buffer indices must agree across ranks: ready, arrive,
  // self, moved; result, own block, recvbuf.
  const auto ready = s->AddCounter("ready", tokens_owed);
  const auto arrive = s->AddCounter("arrive", mine > 0 ? (p - 1) * r.Pieces(mine) : 0);
  const auto self = s->AddCounter("self", copy ? 1 : 0);
  const auto moved = s->AddCounter("moved", staged ? 1 : 0);
  void* result = mine == 0 ? s->AllocScratch(8) : staged ? s->AllocScratch(mine) : a.recvbuf;
  const std::size_t result_len = mine > 0 ? mine : 8;
  const auto res = s->ExposeBuffer("result", result, result_len, arrive);
  const auto own = s->ExposeBuffer("own block", result, result_len, self);
  const auto out =
      s->ExposeBuffer("recvbuf", staged ? a.recvbuf : s->AllocScratch(8), staged ? mine : 8, moved);

  std::vector<StepId> own_in;  // the own block is in the result buffer
  if (copy) {
    const StepId put = s->Put(r.input + displ[me], mine, RemoteBuffer{r.Peer(me), own, 0}, {});
    s->SetLabel(put, staged ? "own block -> scratch (NIC put)" : "own block -> recvbuf (NIC put)");
    const StepId in = s->Nop({put});
    s->WaitOn(in, self);
    s->SetLabel(in, "own block in place");
    own_in.push_back(in);
  }
  if (mine > 0)
    for (int j = 0; j < p; ++j) {
      if (j == me) continue;
      const StepId t = s->RemoteCounterAdd(RemoteCounter{r.Peer(j), ready}, 1, own_in);
      s->SetLabel(t, "ready token to " + std::to_string(j));
    }
  std::vector<StepId> sent;
  if (tokens_owed) {
    const StepId started = s->CounterAdd(ready, 0, {});
    s->SetLabel(started, "start counted into ready");
    for (int j = 0; j < p; ++j) {
      if (j == me || bytes[j] == 0) continue;
      Combine(r, s, r.input + displ[j], bytes[j], RemoteBuffer{r.Peer(j), res, 0}, {started}, ready,
              "block " + std::to_string(j) + " combined into " + std::to_string(j), &sent);
    }
  }
  if (mine == 0) return Status::Ok();
  const StepId arrived = s->Nop(own_in);
  s->WaitOn(arrived, arrive);
  s->SetLabel(arrived, std::to_string(p - 1) + " blocks combined");
  if (!staged) return Status::Ok();
  // The put overwrites recvbuf's first blocks: after every atomic read them.
  sent.push_back(arrived);
  const StepId mv = s->Put(result, mine, RemoteBuffer{r.Peer(me), out, 0}, sent);
  s->SetLabel(mv, "result (scratch) -> recvbuf (NIC put)");
  const StepId fin = s->Nop({mv});
  s->WaitOn(fin, moved);
  s->SetLabel(fin, "result in recvbuf");
  return Status::Ok();
}

// scan: rank i - 1 combines its inclusive prefix into rank i's recvbuf.
Status BuildScan(const Reduction& r, offload::Schedule* s) {
  const Args& a = *r.a;
  const int p = a.comm->size, me = a.comm->rank;
  const std::size_t n = std::size_t(a.rcount) * r.esize;
  const bool has_prev = me > 0, has_next = me + 1 < p;
  const bool copy = a.sendbuf != kInPlace;
  // Counter and buffer indices must agree across ranks: ready, arrive, self; recvbuf, own.
  const auto ready = s->AddCounter("ready", has_next ? 1 : 0);
  const auto arrive = s->AddCounter("arrive", has_prev ? r.Pieces(n) : 0);
  const auto self = s->AddCounter("self", copy ? 1 : 0);
  const auto res = s->ExposeBuffer("recvbuf", a.recvbuf, n, arrive);
  const auto own = s->ExposeBuffer("own input", a.recvbuf, n, self);
  std::vector<StepId> own_in;
  if (copy) {
    const StepId put = s->Put(a.sendbuf, n, RemoteBuffer{r.Peer(me), own, 0}, {});
    s->SetLabel(put, "sendbuf -> own recvbuf (NIC put)");
    const StepId in = s->Nop({put});
    s->WaitOn(in, self);
    s->SetLabel(in, "own input in place");
    own_in.push_back(in);
  }
  if (has_prev) {
    const StepId t = s->RemoteCounterAdd(RemoteCounter{r.Peer(me - 1), ready}, 1, own_in);
    s->SetLabel(t, "ready token to " + std::to_string(me - 1));
  }
  if (!has_prev && !has_next) return Status::Ok();
  StepId prefix;
  if (has_prev) {
    prefix = s->Nop(own_in);
    s->WaitOn(prefix, arrive);
    s->SetLabel(prefix, "prefix of ranks 0.." + std::to_string(me) + " complete");
  } else if (copy) {
    prefix = own_in[0];
  } else {
    prefix = s->Nop({});
    s->SetLabel(prefix, "start (in place)");
  }
  if (has_next)
    Combine(r, s, static_cast<const char*>(a.recvbuf), n, RemoteBuffer{r.Peer(me + 1), res, 0},
            {prefix}, ready, "prefix combined into " + std::to_string(me + 1), nullptr);
  return Status::Ok();
}

// exscan: the same chain over an inclusive prefix in plan scratch; rank
// i - 1 puts its inclusive prefix into rank i's recvbuf and combines it
// into rank i's scratch.
Status BuildExscan(const Reduction& r, offload::Schedule* s) {
  const Args& a = *r.a;
  const int p = a.comm->size, me = a.comm->rank;
  const std::size_t n = std::size_t(a.rcount) * r.esize;
  const bool first = me == 0, last = me + 1 == p, middle = !first && !last;
  // Rank 0's inclusive prefix is its input; the last rank forwards none.
  void* const incl = middle ? s->AllocScratch(n) : s->AllocScratch(8);
  const std::size_t incl_len = middle ? n : 8;
  // Counter and buffer indices must agree across ranks: ready, arrive,
  // self; recvbuf, prefix, own.
  const auto ready = s->AddCounter("ready", last ? 0 : 1);
  // A middle rank receives the exclusive prefix (one put) and combines it.
  const auto arrive = s->AddCounter("arrive", first ? 0 : middle ? 1 + r.Pieces(n) : 1);
  const auto self = s->AddCounter("self", middle ? 1 : 0);
  const auto res =
      s->ExposeBuffer("recvbuf", first ? s->AllocScratch(8) : a.recvbuf, first ? 8 : n, arrive);
  const auto acc = s->ExposeBuffer("inclusive prefix", incl, incl_len, arrive);
  const auto own = s->ExposeBuffer("own input", incl, incl_len, self);
  StepId own_in = 0;
  if (middle) {
    const StepId put = s->Put(r.input, n, RemoteBuffer{r.Peer(me), own, 0}, {});
    s->SetLabel(put, "input -> own prefix scratch (NIC put)");
    own_in = s->Nop({put});
    s->WaitOn(own_in, self);
    s->SetLabel(own_in, "own input in scratch");
  }
  if (!first) {
    std::vector<StepId> after;
    if (middle) after.push_back(own_in);
    const StepId t = s->RemoteCounterAdd(RemoteCounter{r.Peer(me - 1), ready}, 1, after);
    s->SetLabel(t, "ready token to " + std::to_string(me - 1));
  }
  if (last) {
    const StepId done = s->Nop({});
    s->WaitOn(done, arrive);
    s->SetLabel(done, "exclusive prefix arrived");
    return Status::Ok();
  }
  StepId prefix;
  if (first) {
    prefix = s->Nop({});
    s->SetLabel(prefix, "start");
  } else {
    prefix = s->Nop({own_in});
    s->WaitOn(prefix, arrive);
    s->SetLabel(prefix, "prefix of ranks 0.." + std::to_string(me) + " complete");
  }
  const char* src = first ? r.input : static_cast<const char*>(incl);
  const StepId put = s->Put(src, n, RemoteBuffer{r.Peer(me + 1), res, 0}, {prefix});
  s->WaitOn(put, ready);
  s->SetLabel(put, "prefix -> recvbuf of " + std::to_string(me + 1));
  if (me + 2 < p)
    Combine(r, s, src, n, RemoteBuffer{r.Peer(me + 1), acc, 0}, {prefix}, ready,
            "prefix combined into " + std::to_string(me + 1) + "'s", nullptr);
  return Status::Ok();
}

// Why this rank cannot take the plan ("" when it can).
std::string LocalReason(const Args& a, offload::OffloadBackend* be, Reduction* r) {
  if (!a.algo.empty() && a.algo != "auto" && a.algo != "offload")
    return "nicq_algorithm=" + a.algo + " asks for the host schedule";
  if (a.comm->size < 2) return "a single rank";
  if (be == nullptr) return "no offload context";
  const offload::Capabilities& caps = be->Caps();
  if (!caps.remote_counters) return "the backend has no remote counters (ready tokens)";
  if (!NicAtomicType(a.rtype->handle, &r->type))
    return "a datatype the NIC cannot combine (predefined integers, float and double only)";
  if (!NicAtomicOp(a.op, &r->op))
    return "a reduction the NIC cannot combine (user-defined, MINLOC/MAXLOC, REPLACE, NO_OP)";
  if (!caps.SupportsAtomic(r->op, r->type))
    return "the backend's atomic table lacks this op on this type";
  r->esize = offload::AtomicTypeSize(r->type);
  const bool rs = a.kind == Kind::kReduceScatter || a.kind == Kind::kReduceScatterBlock;
  std::size_t largest = 0, total = 0;
  for (int j = 0; j < (rs ? a.comm->size : 1); ++j) {
    const std::size_t b = std::size_t(rs ? BlockCount(a, j) : a.rcount) * r->esize;
    largest = std::max(largest, b);
    total += b;
  }
  if (total == 0) return "nothing to reduce (every count is zero)";
  // The scan chains land one atomic per buffer and per epoch.
  if (rs && caps.converging_atomics_lose_updates)
    return "the backend's remote atomics lose updates when several land in one buffer at once";
  r->chunk = caps.max_atomic_count * r->esize;
  if (caps.max_msg_bytes != 0 && largest > caps.max_msg_bytes)
    return "a block of " + std::to_string(largest) + " bytes is larger than one put (" +
           std::to_string(caps.max_msg_bytes) + ")";
  return "";
}

const char* PlanName(Kind k) {
  switch (k) {
    case Kind::kReduceScatterBlock:
      return "reduce_scatter_block (coll, remote atomics gated by ready tokens)";
    case Kind::kReduceScatter:
      return "reduce_scatter (coll, remote atomics gated by ready tokens)";
    case Kind::kScan:
      return "scan (coll, chain of remote atomics)";
    default:
      return "exscan (coll, chain of prefix puts and remote atomics)";
  }
}

}  // namespace

bool IsReductionPlanKind(Kind k) {
  return k == Kind::kReduceScatterBlock || k == Kind::kReduceScatter || k == Kind::kScan ||
         k == Kind::kExscan;
}

const char* ReductionPlanAlgorithm(Kind k) {
  switch (k) {
    case Kind::kReduceScatterBlock:
      return "reduce_scatter_block atomics (offloaded)";
    case Kind::kReduceScatter:
      return "reduce_scatter atomics (offloaded)";
    case Kind::kScan:
      return "scan atomic chain (offloaded)";
    case Kind::kExscan:
      return "exscan atomic chain (offloaded)";
    default:
      return "";
  }
}

Status CreateOffloadedReduction(const Args& a, std::unique_ptr<OffloadedPlan>* out) {
  out->reset();
  if (a.comm->inter || !IsReductionPlanKind(a.kind)) return Status::Ok();
  offload::OffloadBackend* be = rt::Backend();
  // As the dense plans: no context, or an emulated one the request does not
  // force, keeps the host schedule with no init step (every rank has the
  // same backend, and the info key agrees across ranks).
  if (be == nullptr) return Status::Ok();
  if (a.algo != "offload" && !rt::NicFiresOps()) return Status::Ok();
  Reduction r;
  r.a = &a;
  r.input = static_cast<const char*>(a.sendbuf == kInPlace ? a.recvbuf : a.sendbuf);
  const std::string why = LocalReason(a, be, &r);
  // Every rank's verdict, so that all take the same path.
  const int p = a.comm->size;
  const std::int32_t mine = why.empty() ? 1 : 0;
  std::vector<std::int32_t> all(p);
  NICQ_RETURN_IF_ERROR(Exchange(a.comm, &mine, sizeof mine, all.data()));
  for (int j = 0; j < p; ++j)
    if (all[j] != 1) {
      LogHostSchedule(a, why.empty() ? "rank " + std::to_string(j) + " cannot take it" : why);
      return Status::Ok();
    }
  offload::Schedule s(PlanName(a.kind));
  Status built = a.kind == Kind::kScan     ? BuildScan(r, &s)
                 : a.kind == Kind::kExscan ? BuildExscan(r, &s)
                                           : BuildReduceScatter(r, &s);
  std::unique_ptr<offload::TriggerPlan> plan;
  if (built.ok()) built = LowerAndBindExchange(s, be, &plan);
  return AdoptExchangePlan(a, built, std::move(plan), out);
}

}  // namespace nicq::coll
