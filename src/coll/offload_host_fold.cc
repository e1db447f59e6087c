#include "coll/offload_host_fold.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "coll/exchange_plan.h"
#include "coll/offload_agree.h"
#include "coll/offload_host_fold_parts.h"
#include "coll/offload_reduce_scan.h"
#include "core/config.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "runtime/offload_context.h"

namespace nicq::coll {
namespace {

// The most plan scratch the root's gather slots may take (p contributions).
constexpr std::size_t kMaxGatherBytes = std::size_t{16} << 20;

// The fold step's argument, in plan scratch: a start allocates nothing.
struct Fold {
  host_fold::FoldOp fold;
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
};

// result = x_0 op (x_1 op (... op x_{p-1})): MPI's order, which a
// non-commutative op needs (Reduce computes inout = in op inout).
void RunFold(void* arg) {
  const Fold& f = *static_cast<const Fold*>(arg);
  auto slot = [&](int j) { return f.slots + std::size_t(j) * f.bytes; };
  // Own input first: in place it is the result buffer the fold overwrites.
  if (f.image == nullptr) {
    std::memcpy(slot(f.own), f.input, f.bytes);
    std::memcpy(f.result, slot(f.ranks - 1), f.bytes);
    for (int j = f.ranks - 2; j >= 0; --j) f.fold.Combine(slot(j), f.result, f.count);
    return;
  }
  const auto n = static_cast<std::int64_t>(f.bytes);
  const dtype::Type& t = *f.fold.t;
  dtype::Pack(t, f.input, f.count, slot(f.own));
  dtype::Unpack(t, slot(f.ranks - 1), n, f.count, f.result_image);
  for (int j = f.ranks - 2; j >= 0; --j) {
    dtype::Unpack(t, slot(j), n, f.count, f.image);
    f.fold.Combine(f.image, f.result_image, f.count);
  }
  dtype::CopyTyped(t, f.result_image, f.count, f.result);  // the type's data only
  if (f.packed_result != nullptr) dtype::Pack(t, f.result_image, f.count, f.packed_result);
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
  if (a.kind != Kind::kAllreduce && a.kind != Kind::kReduce) return true;
  const std::string env = config::GetString("NICQ_ALLREDUCE_ALGO");
  return env.empty() || env == "auto" || env == "nic_tree";
}

// Why this rank cannot build the plan ("" when it can).
std::string Refusal(const Args& a, const offload::Capabilities& caps, std::size_t bytes) {
  if (!caps.remote_counters) return "the backend has no remote counters (ready tokens)";
  std::size_t span = 0;
  std::int64_t first = 0;
  if (!a.rtype->IsContiguous() &&
      !host_fold::ImageSpan(*a.rtype, host_fold::ContributionItems(a), &span, &first))
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
  const char* input = static_cast<const char*>(a.sendbuf == kInPlace ? a.recvbuf : a.sendbuf);
  const dtype::Type* t = a.rtype;
  // A noncontiguous type moves packed: host steps pack and unpack it, as
  // the exchange plans' (exchange_pack.h).
  const bool packed = !t->IsContiguous();
  offload::GatherFoldArgs g;
  g.rank = me;
  g.size = p;
  g.root = root;
  g.peers = a.comm->world_ranks.data();
  g.bytes = bytes;
  if (me != root) {
    g.contribution = input;
    if (packed) {
      char* into = nullptr;
      g.pack = host_fold::PreparePack(s, t, a.rcount, input, &into);
      g.contribution = into;
    }
    if (all) {  // the result lands in recvbuf, or packed in scratch the unpack step reads
      g.landing_bytes = bytes;
      g.landing = packed ? s->AllocScratch(bytes) : a.recvbuf;
      if (packed)
        g.unpack =
            host_fold::PrepareUnpack(s, t, a.rcount, a.recvbuf, static_cast<char*>(g.landing));
    }
    return offload::BuildGatherFold(g, s);
  }
  char* slots = static_cast<char*>(s->AllocScratch(std::size_t(p) * bytes));
  auto* f = new (s->AllocScratch(sizeof(Fold))) Fold();
  f->fold = host_fold::MakeFoldOp(a);
  f->count = a.rcount;
  f->bytes = bytes;
  f->ranks = p;
  f->own = me;
  f->input = input;
  f->slots = slots;
  f->result = static_cast<char*>(a.recvbuf);
  if (packed) {
    f->image = host_fold::AllocImage(s, *t, a.rcount);  // Refusal checked the span
    f->result_image = host_fold::AllocImage(s, *t, a.rcount);
    if (all) f->packed_result = static_cast<char*>(s->AllocScratch(bytes));
  }
  g.slots = slots;
  g.fold = {&RunFold, f,
            "fold: " + why + " (" + std::to_string(p) +
                " contributions in rank order into recvbuf" +
                (packed ? ", noncontiguous type packed" : "") + ")"};
  // An allreduce sends every other rank the whole result.
  g.result_from.assign(std::size_t(p),
                       packed ? f->packed_result : static_cast<const char*>(a.recvbuf));
  g.result_bytes.assign(std::size_t(p), all ? bytes : 0);
  return offload::BuildGatherFold(g, s);
}

}  // namespace

Status CreateHostFoldPlan(const Args& a, std::unique_ptr<OffloadedPlan>* out) {
  out->reset();
  const bool scatter = IsReductionPlanKind(a.kind);
  if ((a.kind != Kind::kAllreduce && a.kind != Kind::kReduce && !scatter) || a.comm->inter ||
      a.comm->size < 2 || a.rtype == nullptr || a.rtype->size <= 0 ||
      host_fold::ContributionItems(a) <= 0 || !AlgorithmOpen(a))
    return Status::Ok();
  // As the reduction plans: no context, or an emulated one the request does
  // not force, keeps the host schedule with no init step (every rank has the
  // same backend, op and type, so every rank returns here alike).
  offload::OffloadBackend* be = rt::Backend();
  if (be == nullptr) return Status::Ok();
  if (a.algo != "offload" && !rt::NicFiresOps()) return Status::Ok();
  const std::string why = HostReason(a, be->Caps());
  if (why.empty()) return Status::Ok();  // the atomic plan's case, refused for its own reasons
  const std::size_t bytes =
      std::size_t(host_fold::ContributionItems(a)) * std::size_t(a.rtype->size);
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
  offload::Schedule s(std::string(KindName(a.kind)) +
                      " host fold (coll, puts to the root, folded on the host: " + why + ")");
  Status built =
      scatter ? host_fold::BuildScatterFold(a, why, bytes, &s) : BuildHostFold(a, why, bytes, &s);
  std::unique_ptr<offload::TriggerPlan> plan;
  if (built.ok()) built = LowerAndBindExchange(s, be, &plan);
  NICQ_RETURN_IF_ERROR(AdoptExchangePlan(a, built, std::move(plan), out));
  if (*out) (*out)->HoldOp(a.op);  // a user op may be freed while the request lives
  return Status::Ok();
}

}  // namespace nicq::coll
