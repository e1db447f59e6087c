#include "coll/offload_reduce_scan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "coll/exchange_plan.h"
#include "coll/offload_agree.h"
#include "dtype/datatype.h"
#include "offload/algorithms/reduce_scan.h"
#include "runtime/offload_context.h"

namespace nicq::coll {
namespace {

// What the builder takes (bytes, addresses, world ranks), filled from the
// request, and the NIC element's size that turns counts into bytes.
struct Reduction {
  offload::ReductionArgs args;
  std::size_t esize = 0;
};

std::int64_t BlockCount(const Args& a, int j) {
  return a.kind == Kind::kReduceScatterBlock ? a.rcount : a.rcounts[j];
}

// Why this rank cannot take the plan ("" when it can).
std::string LocalReason(const Args& a, offload::OffloadBackend* be, Reduction* r) {
  if (!a.algo.empty() && a.algo != "auto" && a.algo != "offload")
    return "nicq_algorithm=" + a.algo + " asks for the host schedule";
  if (a.comm->size < 2) return "a single rank";
  if (be == nullptr) return "no offload context";
  const offload::Capabilities& caps = be->Caps();
  if (!caps.remote_counters) return "the backend has no remote counters (ready tokens)";
  offload::ReductionArgs& x = r->args;
  if (!NicAtomicType(a.rtype->handle, &x.type))
    return "a datatype the NIC cannot combine (predefined integers, float and double only)";
  if (!NicAtomicOp(a.op, &x.op))
    return "a reduction the NIC cannot combine (user-defined, MINLOC/MAXLOC, REPLACE, NO_OP)";
  if (!caps.SupportsAtomic(x.op, x.type))
    return "the backend's atomic table lacks this op on this type";
  r->esize = offload::AtomicTypeSize(x.type);
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
  x.chunk = caps.max_atomic_count * r->esize;
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
  offload::ReductionArgs& x = r.args;
  x.rank = a.comm->rank;
  x.size = a.comm->size;
  x.peers = a.comm->world_ranks.data();
  x.in_place = a.sendbuf == kInPlace;
  x.input = static_cast<const char*>(x.in_place ? a.recvbuf : a.sendbuf);
  x.recvbuf = a.recvbuf;
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
  // The blocks in bytes: the builders know nothing of counts and types.
  if (a.kind == Kind::kScan || a.kind == Kind::kExscan) {
    x.bytes = std::size_t(a.rcount) * r.esize;
  } else {
    for (int j = 0; j < p; ++j) x.block_bytes.push_back(std::size_t(BlockCount(a, j)) * r.esize);
  }
  Status built = a.kind == Kind::kScan     ? offload::BuildScanAtomicChain(x, &s)
                 : a.kind == Kind::kExscan ? offload::BuildExscanAtomicChain(x, &s)
                                           : offload::BuildReduceScatterAtomics(x, &s);
  std::unique_ptr<offload::TriggerPlan> plan;
  if (built.ok()) built = LowerAndBindExchange(s, be, &plan);
  return AdoptExchangePlan(a, built, std::move(plan), out);
}

}  // namespace nicq::coll
