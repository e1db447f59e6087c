#include "offload/algorithms/reduce_scan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace nicq::offload {
namespace {

// Combines `bytes` at `src` into `to` as Pieces(bytes) atomics, each
// waiting on `wait` after `deps`; appends them to *sent when given.
void Combine(const ReductionArgs& r, Schedule* s, const char* src, std::size_t bytes,
             RemoteBuffer to, const std::vector<StepId>& deps, PlanCounter wait,
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

}  // namespace

// reduce_scatter(_block): flat remote atomics gated by ready tokens.
Status BuildReduceScatterAtomics(const ReductionArgs& r, Schedule* s) {
  const int p = r.size, me = r.rank;
  if (r.block_bytes.size() != std::size_t(p))
    return Error(Code::kArg, "BuildReduceScatterAtomics: one block size per rank");
  const std::vector<std::size_t>& bytes = r.block_bytes;
  std::vector<std::size_t> displ(p);
  std::size_t at = 0;
  for (int j = 0; j < p; ++j) {
    displ[j] = at;
    at += bytes[j];
  }
  const std::size_t mine = bytes[me];
  const bool in_place = r.in_place;
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
  void* result = mine == 0 ? s->AllocScratch(8) : staged ? s->AllocScratch(mine) : r.recvbuf;
  const std::size_t result_len = mine > 0 ? mine : 8;
  const auto res = s->ExposeBuffer("result", result, result_len, arrive);
  const auto own = s->ExposeBuffer("own block", result, result_len, self);
  const auto out =
      s->ExposeBuffer("recvbuf", staged ? r.recvbuf : s->AllocScratch(8), staged ? mine : 8, moved);

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
Status BuildScanAtomicChain(const ReductionArgs& r, Schedule* s) {
  const int p = r.size, me = r.rank;
  const std::size_t n = r.bytes;
  const bool has_prev = me > 0, has_next = me + 1 < p;
  const bool copy = !r.in_place;
  // Counter and buffer indices must agree across ranks: ready, arrive, self; recvbuf, own.
  const auto ready = s->AddCounter("ready", has_next ? 1 : 0);
  const auto arrive = s->AddCounter("arrive", has_prev ? r.Pieces(n) : 0);
  const auto self = s->AddCounter("self", copy ? 1 : 0);
  const auto res = s->ExposeBuffer("recvbuf", r.recvbuf, n, arrive);
  const auto own = s->ExposeBuffer("own input", r.recvbuf, n, self);
  std::vector<StepId> own_in;
  if (copy) {
    const StepId put = s->Put(r.input, n, RemoteBuffer{r.Peer(me), own, 0}, {});
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
    Combine(r, s, static_cast<const char*>(r.recvbuf), n, RemoteBuffer{r.Peer(me + 1), res, 0},
            {prefix}, ready, "prefix combined into " + std::to_string(me + 1), nullptr);
  return Status::Ok();
}

// exscan: the same chain over an inclusive prefix in plan scratch; rank
// i - 1 puts its inclusive prefix into rank i's recvbuf and combines it
// into rank i's scratch.
Status BuildExscanAtomicChain(const ReductionArgs& r, Schedule* s) {
  const int p = r.size, me = r.rank;
  const std::size_t n = r.bytes;
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
      s->ExposeBuffer("recvbuf", first ? s->AllocScratch(8) : r.recvbuf, first ? 8 : n, arrive);
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

}  // namespace nicq::offload
