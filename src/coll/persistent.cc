// Persistent collectives (MPI 4.1 7.13): init is collective and ordered,
// so it (1) checks every rank's arguments against the others' (two small
// allgathers for gatherv/scatterv: signatures, then verdicts; one for the
// rest, whose verdict every rank computes alike from the same signatures),
// so every rank returns the same error instead of some hanging later), (2)
// takes a tag from the init sequence, which makes starts in any order on
// different ranks match, and (3) builds the schedule once. MPI_Start
// relaunches it: no allocation. Matching and enqueueing: persistent.h.
#include "coll/persistent.h"

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/coll.h"
#include "coll/offload_allreduce.h"
#include "coll/offload_dense.h"
#include "coll/offload_host_fold.h"
#include "coll/offload_neighbor.h"
#include "coll/offload_reduce_scan.h"
#include "coll/select.h"
#include "dtype/reduce.h"
#include "queue/enqueueable.h"
#include "queue/queue.h"

namespace nicq::coll {
namespace {

Persistent* Of(Request* req) {
  return static_cast<Persistent*>(static_cast<queue::Enqueueable*>(req->engine));
}

// What every rank must agree on, as far as each rank can tell.
struct Sig {
  std::int32_t kind = 0, root = 0, op = 0, type = 0;
  std::int64_t bytes = 0;  // per-rank data size all ranks must agree on (-1: none)
  std::int64_t mine = 0;   // this rank's own contribution (v variants)
};

int TypeKey(const dtype::Type* t) {
  return t->unit ? t->unit : t->handle;
}

Sig SignatureOf(const Args& a) {
  Sig s;
  s.kind = static_cast<int>(a.kind);
  s.root = a.root;
  s.op = a.op;
  s.bytes = -1;
  const bool root = a.comm->rank == a.root;
  const bool in_place = a.sendbuf == kInPlace;
  auto sb = [&] { return a.scount * a.stype->size; };
  auto rbytes = [&] { return a.rcount * a.rtype->size; };
  switch (a.kind) {
    case Kind::kBarrier:
      break;
    case Kind::kBcast:
      s.bytes = sb();
      break;
    case Kind::kReduce:
    case Kind::kAllreduce:
    case Kind::kScan:
    case Kind::kExscan:
    case Kind::kReduceScatterBlock:
      s.bytes = rbytes();
      s.type = TypeKey(a.rtype);
      break;
    case Kind::kReduceScatter: {
      // A digest of the counts array: every rank passes the same one.
      // Unsigned: the digest wraps by design.
      std::uint64_t h = 0;
      for (int i = 0; i < a.comm->size; ++i)
        h = h * 1000003u + static_cast<std::uint64_t>(a.rcounts[i]);
      s.bytes = static_cast<std::int64_t>(h * static_cast<std::uint64_t>(a.rtype->size));
      s.type = TypeKey(a.rtype);
      break;
    }
    case Kind::kGather:
      s.bytes = root && in_place ? rbytes() : sb();
      break;
    case Kind::kScatter:
      s.bytes = root && a.recvbuf == kInPlace ? sb() : rbytes();
      break;
    case Kind::kAllgather:
    case Kind::kAlltoall:
      s.bytes = in_place ? rbytes() : sb();
      break;
    case Kind::kGatherv:
      s.mine = root && in_place ? -1 : sb();
      break;
    case Kind::kScatterv:
    case Kind::kAllgatherv:
      s.mine = (a.kind == Kind::kScatterv && root && a.recvbuf == kInPlace) ? -1
               : a.kind == Kind::kAllgatherv && in_place                    ? -1
               : a.kind == Kind::kScatterv                                  ? rbytes()
                                                                            : sb();
      break;
    default:
      break;
  }
  return s;
}

// What a match compares across ranks (the per-rank `mine` differs by design).
std::uint64_t Digest(const Sig& s) {
  std::uint64_t h = 1469598103934665603u;
  for (std::int64_t v : {std::int64_t(s.kind), std::int64_t(s.root), std::int64_t(s.op),
                         std::int64_t(s.type), s.bytes})
    h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211u;
  return h;
}

// Checks this rank can make from all signatures; "" when fine.
std::string Verdict(const Args& a, const std::vector<Sig>& all) {
  const Sig& me = all[a.comm->rank];
  for (int i = 0; i < a.comm->size; ++i) {
    const Sig& o = all[i];
    const std::string at = " (rank " + std::to_string(i) + " passed ";
    if (o.kind != me.kind)
      return std::string("ranks called different collectives: this rank ") + KindName(a.kind) +
             ", rank " + std::to_string(i) + " " + KindName(static_cast<Kind>(o.kind));
    if (o.root != me.root)
      return "root " + std::to_string(me.root) + " differs" + at + std::to_string(o.root) + ")";
    if (o.op != me.op) return "reduction operation differs across ranks" + at + "another op)";
    if (o.type != me.type) return "reduction datatype differs across ranks" + at + "another)";
    if (o.bytes != me.bytes)
      return "data size " + std::to_string(me.bytes) + " bytes differs" + at +
             std::to_string(o.bytes) + " bytes; counts/datatypes must match)";
  }
  // v variants: whoever holds the counts checks them against each rank's own size.
  const bool root = a.comm->rank == a.root;
  if ((a.kind == Kind::kGatherv && root) || a.kind == Kind::kAllgatherv ||
      (a.kind == Kind::kScatterv && root)) {
    const dtype::Type* t = a.kind == Kind::kScatterv ? a.stype : a.rtype;
    const int* counts = a.kind == Kind::kScatterv ? a.scounts : a.rcounts;
    for (int i = 0; i < a.comm->size; ++i) {
      if (all[i].mine < 0) continue;
      if (counts[i] * t->size != all[i].mine)
        return "counts entry " + std::to_string(i) + " is " + std::to_string(counts[i] * t->size) +
               " bytes but rank " + std::to_string(i) + " passes " + std::to_string(all[i].mine);
    }
  }
  return "";
}

// A blocking allgather of `bytes` per rank on the init tag class.
Status InitExchange(Comm* comm, const void* mine, std::size_t bytes, void* all) {
  Schedule* s = AcquireSchedule();
  char* out = static_cast<char*>(all);
  s->Copy(out + bytes * comm->rank, mine, bytes);
  s->EndPhase();
  BuildAllgatherRing(*s, comm->rank, comm->size, [&](int i) {
    return Block{out + bytes * i, bytes};
  });
  s->release_on_done = true;
  s->algorithm = "init-check";
  Request req;
  NICQ_RETURN_IF_ERROR(s->Launch(ShadowOf(comm), NextTag(comm, 3), &req));
  Activate(s, /*async=*/false);
  return WaitRequest(&req);
}

[[gnu::cold, gnu::noinline]] Status AlreadyActive() {
  return Error(Code::kRequest, "the persistent collective request is already active");
}

Status PStart(Request* req) {
  Persistent* P = Of(req);
  // A resident plan first: its start is the plan's counter add, and nothing
  // of the host schedule (launch, area) can be running for it.
  if (P->off) [[likely]] {
    if (req->active && !req->IsDone()) return AlreadyActive();
    req->done.store(false, std::memory_order_relaxed);
    req->status = RequestStatus{};
    req->active = true;
    return P->off->Start(req);
  }
  if (P->sched.running() || P->LaunchPending() || P->AreaActive() ||
      (req->active && !req->IsDone()))
    return AlreadyActive();
  req->done.store(false, std::memory_order_relaxed);
  req->status = RequestStatus{};
  req->active = true;
  if (P->OnArea()) return P->StartNode(req);
  return P->StartHost(req);
}

// Called by the API when the slot is released (MPI_Request_free of an
// inactive request, or once an orphaned active one has finished).
Status PFree(Request* req) {
  Persistent* P = Of(req);
  if (!P) return Status::Ok();
  SyncWithEngine();  // a run that completed may still be leaving Finish on another thread
  if (P->node) SyncWithNodeHook();  // likewise the area's pass that completed it
  if (P->sched.running() || P->LaunchPending() || P->AreaActive())
    return Error(Code::kRequest, "persistent collective freed while still running");
  if (P->Matching())
    return Error(Code::kRequest, "persistent collective freed while its match is in progress");
  delete P;
  req->engine = nullptr;
  req->ops = nullptr;
  return Status::Ok();
}

Status PComplete(Request* req) {
  req->active = false;
  return Status::Ok();
}

Status PCancel(Request*) {
  return Error(Code::kRequest, "persistent collective requests cannot be cancelled (MPI 4.1 7.13)");
}

// queue::HasPendingEnqueuedStart without finding the Enqueueable again
// (every MPI_Start asks).
bool PEnqueued(Request* req) {
  return Of(req)->qslot.queue != nullptr;
}

const RequestOps kPersistentOps = {&PStart, &PFree, &PCancel, &PComplete, &PEnqueued};

void Retain(Persistent* P, const dtype::Type* t) {
  if (!t || t->predefined) return;
  auto* m = const_cast<dtype::Type*>(t);
  dtype::Retain(m);
  P->retained.push_back(m);
}

void Publish(std::unique_ptr<Persistent> P, Request* req) {
  if (!P->hier) DumpSchedule(P->args, P->sched);  // a hierarchical run dumps its own line
  req->kind = ReqKind::kPersistentColl;
  req->persistent = true;
  req->active = false;
  req->comm = P->args.comm;
  req->ops = &kPersistentOps;
  req->engine = static_cast<queue::Enqueueable*>(P.release());
}

// Intercommunicators: the schedule runs on the host engine; the argument
// signatures of the two groups differ by design (MPI_ROOT, counts of the
// other group), so there is no cross-rank check, and no offload.
Status InitInterPersistent(std::unique_ptr<Persistent> P, Request* req) {
  NICQ_RETURN_IF_ERROR(Build(P->args, &P->sched));
  P->sched.EndPhase();
  P->shadow = ShadowOf(P->args.comm);
  P->local_shadow = LocalShadowOf(P->args.comm);
  P->tag = NextTag(P->args.comm, 1);
  Publish(std::move(P), req);
  return Status::Ok();
}

}  // namespace

Status InitPersistent(const Args& in, Request* req) {
  auto P = std::make_unique<Persistent>();
  P->args = in;
  Args& a = P->args;
  // Arrays have an entry per rank of the group the ranks name: the remote
  // group on an intercommunicator, except reduce_scatter's (local) counts.
  const bool local_counts = a.kind == Kind::kReduceScatter;
  const int p = local_counts ? a.comm->size : a.comm->PeerSize();
  // Neighborhood collectives: send arrays per destination, receive arrays per source.
  const bool neighbor = IsNeighborKind(a.kind);
  const int ns = neighbor ? a.outdegree : p, nr = neighbor ? a.indegree : p;
  auto copy = [](const auto* src, int n, auto& dst) -> decltype(src) {
    if (!src) return nullptr;
    dst.assign(src, src + n);
    return dst.data();
  };
  a.scounts = copy(in.scounts, ns, P->scounts);
  a.sdispls = copy(in.sdispls, ns, P->sdispls);
  a.rcounts = copy(in.rcounts, nr, P->rcounts);
  a.rdispls = copy(in.rdispls, nr, P->rdispls);
  a.destinations = copy(in.destinations, a.outdegree, P->destinations);
  a.sources = copy(in.sources, a.indegree, P->sources);
  a.sbyte_displs = copy(in.sbyte_displs, ns, P->sbyte_displs);
  a.rbyte_displs = copy(in.rbyte_displs, nr, P->rbyte_displs);
  if (in.stypes) {
    P->stypes.assign(in.stypes, in.stypes + ns);
    a.stypes = P->stypes.data();
    for (auto* t : P->stypes) Retain(P.get(), t);
  }
  if (in.rtypes) {
    P->rtypes.assign(in.rtypes, in.rtypes + nr);
    a.rtypes = P->rtypes.data();
    for (auto* t : P->rtypes) Retain(P.get(), t);
  }
  Retain(P.get(), a.stype);
  Retain(P.get(), a.rtype);

  if (a.comm->inter) return InitInterPersistent(std::move(P), req);

  // Collective argument check: every rank reaches the same verdict.
  const Sig mine = SignatureOf(a);
  P->signature = Digest(mine);
  std::vector<Sig> sigs(p);
  NICQ_RETURN_IF_ERROR(InitExchange(a.comm, &mine, sizeof(Sig), sigs.data()));
  const std::string why = Verdict(a, sigs);
  const std::int32_t bad = why.empty() ? 0 : 1;
  std::vector<std::int32_t> verdicts(p, 0);
  // Only the v variants have checks some ranks cannot make (the counts
  // live at the root): share the verdicts so every rank fails alike.
  if (a.kind == Kind::kGatherv || a.kind == Kind::kScatterv)
    NICQ_RETURN_IF_ERROR(InitExchange(a.comm, &bad, sizeof bad, verdicts.data()));
  if (!why.empty()) return Error(Code::kArg, why);
  for (int i = 0; i < p; ++i)
    if (verdicts[i])
      return Error(Code::kArg, "rank " + std::to_string(i) +
                                   " found the collective's arguments inconsistent across ranks");

  if (IsNeighborKind(a.kind)) NICQ_RETURN_IF_ERROR(CheckNeighborSizes(a));
  // The NIC plan first: it progresses with every host thread asleep, which
  // the same-node area (the next choice) cannot. Every rank decides alike,
  // so every rank takes the same path.
  // What the NIC cannot combine (a user op, a pair its atomic table
  // lacks) becomes a plan whose fold is a host step.
  bool host_fold = false;
  if (a.kind == Kind::kAllreduce || a.kind == Kind::kReduce) {
    NICQ_RETURN_IF_ERROR(OffloadedPlan::Create(a, &P->off));
    if (!P->off) {
      NICQ_RETURN_IF_ERROR(CreateHostFoldPlan(a, &P->off));
      host_fold = P->off != nullptr;
    }
  }
  if (IsDenseExchangeKind(a.kind)) NICQ_RETURN_IF_ERROR(CreateOffloadedDense(a, &P->off));
  if (IsReductionPlanKind(a.kind)) {
    NICQ_RETURN_IF_ERROR(CreateOffloadedReduction(a, &P->off));
    if (!P->off) {
      NICQ_RETURN_IF_ERROR(CreateHostFoldPlan(a, &P->off));
      host_fold = P->off != nullptr;
    }
  }
  if (!P->off && (a.kind == Kind::kAllreduce || a.kind == Kind::kReduce || a.kind == Kind::kBcast ||
                  a.kind == Kind::kBarrier)) {
    // A communicator spanning nodes: node phases on each node's area.
    NICQ_RETURN_IF_ERROR(HierRun::CreatePersistent(a, &P->hier));
    if (!P->hier) NICQ_RETURN_IF_ERROR(NodeSlotCollective::Create(a, &P->node));
  }
  if (IsNeighborKind(a.kind)) NICQ_RETURN_IF_ERROR(CreateOffloadedNeighbor(a, &P->off));
  if (P->off) {
    P->sched.algorithm = host_fold ? kHostFoldAlgorithm
                         : a.kind == Kind::kAllreduce || a.kind == Kind::kReduce
                             ? "nic_tree (offloaded)"
                         : IsNeighborKind(a.kind)      ? "neighbor puts (offloaded)"
                         : IsReductionPlanKind(a.kind) ? ReductionPlanAlgorithm(a.kind)
                                                       : DenseExchangeAlgorithm(a.kind);
  } else if (P->hier) {
    P->sched.algorithm = "hierarchical";
  } else {
    NICQ_RETURN_IF_ERROR(Build(a, &P->sched));
    P->sched.EndPhase();
  }
  P->shadow = ShadowOf(a.comm);
  P->tag = NextTag(a.comm, 1);
  Publish(std::move(P), req);
  return Status::Ok();
}

bool IsCollRequest(const Request* req) {
  return req && (req->kind == ReqKind::kColl || req->kind == ReqKind::kPersistentColl);
}

const char* RequestAlgorithm(const Request* req) {
  if (!req || req->kind != ReqKind::kPersistentColl || !req->engine) return "";
  const Persistent* P = Of(const_cast<Request*>(req));
  if (P->node) return P->node->algorithm();
  if (P->hier) return "hierarchical";
  return P->sched.algorithm;
}

bool RequestWorkDone(const Request* req) {
  if (req->IsDone()) return true;
  if (req->kind != ReqKind::kPersistentColl || !req->engine) return false;
  const Persistent* P = Of(const_cast<Request*>(req));
  return P->off && P->off->owner() == req && P->off->Done();
}

}  // namespace nicq::coll
