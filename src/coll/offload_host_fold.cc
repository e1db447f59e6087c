#include "coll/offload_host_fold.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "coll/exchange_plan.h"
#include "coll/offload_agree.h"
#include "core/config.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "runtime/offload_context.h"

namespace nicq::coll {
namespace {

using offload::RemoteBuffer;
using offload::RemoteCounter;
using offload::StepId;

// The most plan scratch the root's gather slots may take (p contributions).
constexpr std::size_t kMaxGatherBytes = std::size_t{16} << 20;

// The fold step's argument, in plan scratch: a start allocates nothing.
struct Fold {
  int op = 0, type = 0;
  const dtype::Type* t = nullptr;
  std::int64_t count = 0;
  std::size_t bytes = 0;        // one slot: count items' data, packed
  int ranks = 0, own = 0;       // slots, and the root's own slot
  const char* input = nullptr;  // the root's contribution
  char* slots = nullptr;        // ranks * bytes, slot j from comm rank j
  char* result = nullptr;       // the root's recvbuf
  // A noncontiguous type: the origins of two images of count items in
  // scratch, one each slot is unpacked into before the op sees it and one
  // the op folds into (a user op may write a whole C struct, padding
  // included: only the type's data may reach recvbuf), and where the
  // result goes packed for the puts of an allreduce (null: no puts).
  char* image = nullptr;
  char* result_image = nullptr;
  char* packed_result = nullptr;
  dtype::PreparedReduce prepared;
};

void Combine(const Fold& f, const char* in, char* inout) {
  if (f.prepared.valid()) {
    f.prepared.Apply(in, inout, f.count);
  } else {
    // The op and type were checked at init and the op is held by the plan.
    (void)dtype::Reduce(f.op, f.type, in, inout, f.count);
  }
}

// result = x_0 op (x_1 op (... op x_{p-1})): MPI's order, which a
// non-commutative op needs (Reduce computes inout = in op inout).
void RunFold(void* arg) {
  const Fold& f = *static_cast<const Fold*>(arg);
  auto slot = [&](int j) { return f.slots + std::size_t(j) * f.bytes; };
  // Own input first: in place it is the result buffer the fold overwrites.
  if (f.image == nullptr) {
    std::memcpy(slot(f.own), f.input, f.bytes);
    std::memcpy(f.result, slot(f.ranks - 1), f.bytes);
    for (int j = f.ranks - 2; j >= 0; --j) Combine(f, slot(j), f.result);
    return;
  }
  const auto n = static_cast<std::int64_t>(f.bytes);
  dtype::Pack(*f.t, f.input, f.count, slot(f.own));
  dtype::Unpack(*f.t, slot(f.ranks - 1), n, f.count, f.result_image);
  for (int j = f.ranks - 2; j >= 0; --j) {
    dtype::Unpack(*f.t, slot(j), n, f.count, f.image);
    Combine(f, f.image, f.result_image);
  }
  dtype::CopyTyped(*f.t, f.result_image, f.count, f.result);  // the type's data only
  if (f.packed_result != nullptr) dtype::Pack(*f.t, f.result_image, f.count, f.packed_result);
}

// A non-root rank's pack of its contribution, or unpack of the result.
struct Packing {
  const dtype::Type* t = nullptr;
  std::int64_t count = 0;
  char* user = nullptr;
  char* packed = nullptr;
};
void RunPack(void* arg) {
  const Packing& k = *static_cast<const Packing*>(arg);
  dtype::Pack(*k.t, k.user, k.count, k.packed);
}
void RunUnpack(void* arg) {
  const Packing& k = *static_cast<const Packing*>(arg);
  dtype::Unpack(*k.t, k.packed, k.count * k.t->size, k.count, k.user);
}

// Bytes an image of `count` items spans, and the offset of its first byte
// from the items' origin (negative when a type's data starts below it).
// The image covers every item's whole extent from its lower bound, not only
// its data: a user op may read or write an item as a C struct, padding
// included (MPI_DOUBLE_INT: 12 bytes of data in 16), as it may in the
// user's own buffers.
bool ImageSpan(const dtype::Type& t, std::int64_t count, std::size_t* span, std::int64_t* first) {
  if (t.blocks.empty() || t.extent <= 0) return false;
  std::int64_t lo = t.lb, hi = t.lb + t.extent;
  for (const dtype::Block& b : t.blocks) {
    lo = std::min(lo, b.offset);
    hi = std::max(hi, b.offset + b.length);
  }
  hi += (count - 1) * t.extent;
  *span = std::size_t(hi - lo);
  *first = lo;
  return true;
}

// Why the NIC cannot combine this op on this type ("" when it can): the
// text of the fold step's label and of the plan's log lines.
std::string HostReason(const Args& a, const offload::Capabilities& caps) {
  const dtype::Op* o = dtype::LookupOp(a.op);
  if (o != nullptr && !o->predefined) return o->commute ? "user op" : "user op, non-commutative";
  offload::AtomicType t;
  offload::AtomicOp op;
  if (NicAtomicType(a.rtype->handle, &t) && NicAtomicOp(a.op, &op) && caps.SupportsAtomic(op, t))
    return "";
  const char* type = a.rtype->predefined ? dtype::TypeName(a.rtype->handle) : "a derived type";
  return std::string("no atomic for ") + type + "/" + dtype::OpName(a.op);
}

// Whether the request leaves the choice to nicq (or asks for a plan).
bool AlgorithmOpen(const Args& a) {
  if (!a.algo.empty() && a.algo != "auto" && a.algo != "offload" && a.algo != "nic_tree")
    return false;
  if (!a.algo.empty() && a.algo != "auto") return true;
  const std::string env = config::GetString("NICQ_ALLREDUCE_ALGO");
  return env.empty() || env == "auto" || env == "nic_tree";
}

// Why this rank cannot build the plan ("" when it can).
std::string Refusal(const Args& a, const offload::Capabilities& caps, std::size_t bytes) {
  if (!caps.remote_counters) return "the backend has no remote counters (ready tokens)";
  std::size_t span = 0;
  std::int64_t first = 0;
  if (!a.rtype->IsContiguous() && !ImageSpan(*a.rtype, a.rcount, &span, &first))
    return "a noncontiguous datatype of no positive extent";
  // A flat gather holds every contribution at the root and folds them
  // there one after another: past this the host schedule's trees and rings
  // move and combine less per rank.
  if (std::size_t(a.comm->size) * bytes > kMaxGatherBytes)
    return "the root's gather slots would take " +
           std::to_string(std::size_t(a.comm->size) * bytes) + " bytes (at most " +
           std::to_string(kMaxGatherBytes) + ")";
  if (caps.max_msg_bytes != 0 && bytes > caps.max_msg_bytes)
    return "a contribution of " + std::to_string(bytes) + " bytes is larger than one put (" +
           std::to_string(caps.max_msg_bytes) + ")";
  return "";
}

Status BuildHostFold(const Args& a, const std::string& why, std::size_t bytes,
                     offload::Schedule* s) {
  const int p = a.comm->size, me = a.comm->rank;
  const bool all = a.kind == Kind::kAllreduce;
  const int root = all ? 0 : a.root;
  const bool is_root = me == root;
  auto peer = [&](int r) { return static_cast<offload::PeerId>(a.comm->world_ranks[r]); };
  const char* input = static_cast<const char*>(a.sendbuf == kInPlace ? a.recvbuf : a.sendbuf);
  const dtype::Type* t = a.rtype;
  // A noncontiguous type moves packed: host steps pack and unpack it, as
  // the exchange plans' (exchange_pack.h).
  const bool packed = !t->IsContiguous();
  const std::string note = packed ? ", noncontiguous type packed" : "";
  // Counter and buffer indices must agree across ranks: ready, arrive,
  // down; gather slots, result.
  const auto ready = s->AddCounter("ready", is_root ? 0 : 1);
  const auto arrive = s->AddCounter("arrive", is_root ? std::uint64_t(p - 1) : 0);
  const auto down = s->AddCounter("down", all && !is_root ? 1 : 0);
  char* slots = static_cast<char*>(s->AllocScratch(is_root ? std::size_t(p) * bytes : 8));
  const auto gather =
      s->ExposeBuffer("gather slots", slots, is_root ? std::size_t(p) * bytes : 8, arrive);
  const bool lands = all && !is_root;
  // The result lands in recvbuf, or packed in scratch that a host step unpacks.
  char* landing = !lands   ? static_cast<char*>(s->AllocScratch(8))
                  : packed ? static_cast<char*>(s->AllocScratch(bytes))
                           : static_cast<char*>(a.recvbuf);
  const auto res = s->ExposeBuffer("result", landing, lands ? bytes : 8, down);
  if (!is_root) {
    StepId before_put;
    const char* from = input;
    if (packed) {
      auto* k = new (s->AllocScratch(sizeof(Packing))) Packing();
      k->t = t;
      k->count = a.rcount;
      k->user = const_cast<char*>(input);
      k->packed = static_cast<char*>(s->AllocScratch(bytes));
      from = k->packed;
      before_put = s->Host(&RunPack, k, {});
      s->SetLabel(before_put, "pack: noncontiguous type (contribution into plan scratch)");
    } else {
      // The start reaches the put as a zero add to `ready`, which the
      // root's token completes (as the exchange plans gate their puts).
      before_put = s->CounterAdd(ready, 0, {});
      s->SetLabel(before_put, "start counted into ready");
    }
    const StepId put = s->Put(
        from, bytes, RemoteBuffer{peer(root), gather, std::uint64_t(me) * bytes}, {before_put});
    s->WaitOn(put, ready);
    s->SetLabel(put, "contribution -> slot " + std::to_string(me) + " at root " +
                         std::to_string(root) + " (NIC put)");
    if (lands && packed) {
      auto* k = new (s->AllocScratch(sizeof(Packing))) Packing();
      k->t = t;
      k->count = a.rcount;
      k->user = static_cast<char*>(a.recvbuf);
      k->packed = landing;
      const StepId u = s->Host(&RunUnpack, k, {});
      s->WaitOn(u, down);
      s->SetLabel(u, "unpack: noncontiguous type (result from plan scratch into recvbuf)");
    } else if (lands) {
      const StepId arrived = s->Nop({});
      s->WaitOn(arrived, down);
      s->SetLabel(arrived, "result arrived");
    }
    return Status::Ok();
  }
  for (int j = 0; j < p; ++j) {
    if (j == me) continue;
    const StepId tok = s->RemoteCounterAdd(RemoteCounter{peer(j), ready}, 1, {});
    s->SetLabel(tok, "ready token to " + std::to_string(j));
  }
  auto* f = new (s->AllocScratch(sizeof(Fold))) Fold();
  f->op = a.op;
  f->type = t->handle;
  f->t = t;
  f->count = a.rcount;
  f->bytes = bytes;
  f->ranks = p;
  f->own = me;
  f->input = input;
  f->slots = slots;
  f->result = static_cast<char*>(a.recvbuf);
  f->prepared = dtype::PreparedReduce::For(a.op, t->handle);
  if (packed) {
    std::size_t span = 0;
    std::int64_t first = 0;
    (void)ImageSpan(*t, a.rcount, &span, &first);  // Refusal checked it
    // The op sees the items' origin; their data starts `first` bytes past it.
    f->image = static_cast<char*>(s->AllocScratch(span)) - first;
    f->result_image = static_cast<char*>(s->AllocScratch(span)) - first;
    if (all) f->packed_result = static_cast<char*>(s->AllocScratch(bytes));
  }
  // Every put into the slots follows this rank's token, sent at its start:
  // the arrivals gate the fold after the start too.
  const StepId fold = s->Host(&RunFold, f, {});
  s->WaitOn(fold, arrive);
  s->SetLabel(fold, "fold: " + why + " (" + std::to_string(p) +
                        " contributions in rank order into recvbuf" + note + ")");
  if (!all) return Status::Ok();
  const char* result = packed ? f->packed_result : static_cast<const char*>(a.recvbuf);
  for (int j = 0; j < p; ++j) {
    if (j == me) continue;
    const StepId put = s->Put(result, bytes, RemoteBuffer{peer(j), res, 0}, {fold});
    s->SetLabel(put, "result to " + std::to_string(j) + " (NIC put)");
  }
  return Status::Ok();
}

}  // namespace

Status CreateHostFoldPlan(const Args& a, std::unique_ptr<OffloadedPlan>* out) {
  out->reset();
  if ((a.kind != Kind::kAllreduce && a.kind != Kind::kReduce) || a.comm->inter ||
      a.comm->size < 2 || a.rcount <= 0 || a.rtype == nullptr || a.rtype->size <= 0 ||
      !AlgorithmOpen(a))
    return Status::Ok();
  // As the reduction plans: no context, or an emulated one the request does
  // not force, keeps the host schedule with no init step (every rank has the
  // same backend, op and type, so every rank returns here alike).
  offload::OffloadBackend* be = rt::Backend();
  if (be == nullptr) return Status::Ok();
  if (a.algo != "offload" && std::strcmp(rt::BackendName(), "native") != 0) return Status::Ok();
  const std::string why = HostReason(a, be->Caps());
  if (why.empty()) return Status::Ok();  // the atomic plan's case, refused for its own reasons
  const std::size_t bytes = std::size_t(a.rcount) * std::size_t(a.rtype->size);
  const std::string refused = Refusal(a, be->Caps(), bytes);
  const int p = a.comm->size;
  const std::int32_t mine = refused.empty() ? 1 : 0;
  std::vector<std::int32_t> verdicts(std::size_t(p), 0);
  NICQ_RETURN_IF_ERROR(Exchange(a.comm, &mine, sizeof mine, verdicts.data()));
  for (int j = 0; j < p; ++j)
    if (verdicts[std::size_t(j)] != 1) {
      LogHostSchedule(a, refused.empty() ? "rank " + std::to_string(j) + " cannot take it"
                                         : why + ": " + refused);
      return Status::Ok();
    }
  offload::Schedule s(std::string(a.kind == Kind::kAllreduce ? "allreduce" : "reduce") +
                      " host fold (coll, puts to the root, folded on the host: " + why + ")");
  Status built = BuildHostFold(a, why, bytes, &s);
  std::unique_ptr<offload::TriggerPlan> plan;
  if (built.ok()) built = LowerAndBindExchange(s, be, &plan);
  NICQ_RETURN_IF_ERROR(AdoptExchangePlan(a, built, std::move(plan), out));
  if (*out) (*out)->HoldOp(a.op);  // a user op may be freed while the request lives
  return Status::Ok();
}

}  // namespace nicq::coll
