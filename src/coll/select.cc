#include "coll/select.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "coll/algorithms.h"
#include "coll/node_layout.h"
#include "core/config.h"
#include "core/log.h"
#include "dtype/reduce.h"

namespace nicq::coll {
namespace {

constexpr std::size_t kAllreduceLarge = 64 * 1024;  // bandwidth algorithms above this
constexpr std::size_t kBcastLarge = 256 * 1024;     // scatter+allgather above this
constexpr std::size_t kAllgatherSmall = 4 * 1024;   // latency (log p rounds) below this

// The forced name when it names one of `names`, else nullptr.
const char* Forced(const std::string& want, std::initializer_list<const char*> names) {
  if (want.empty() || want == "auto") return nullptr;
  for (const char* n : names)
    if (want == n) return n;
  return nullptr;
}

void WarnFallback(const char* coll, const std::string& want, const char* got) {
  NICQ_LOG(kInfo, kColl, "%s: algorithm '%s' not usable here; using %s", coll, want.c_str(), got);
}

}  // namespace

bool AllreduceUsesBandwidth(int p, std::size_t bytes, std::size_t elems) {
  return bytes >= kAllreduceLarge && p > 2 && elems >= std::size_t(p);
}
bool BcastUsesScatterAllgather(int p, std::size_t bytes) {
  return bytes >= kBcastLarge && p > 2;
}

const char* PickAlgorithm(const Args& a) {
  const int p = a.comm->size;
  switch (a.kind) {
    case Kind::kAllreduce: {
      // Read once: the environment is fixed for the process, and this runs
      // on every blocking allreduce.
      static const std::string env_algo = config::GetString("NICQ_ALLREDUCE_ALGO");
      std::string want = a.algo;
      if (want.empty() || want == "auto") want = env_algo;
      const dtype::Op* op = dtype::LookupOp(a.op);
      const bool commute = op && op->commute;
      const std::size_t elems = std::size_t(a.rcount);
      const std::size_t bytes = std::size_t(a.rcount * a.rtype->size);
      if (const char* f = Forced(want, {"recursive_doubling", "rabenseifner", "ring"})) {
        if (commute || std::strcmp(f, "recursive_doubling") == 0) return f;
      }
      // Across nodes: inside each node first (commutative ops only: the
      // node phase reorders the contributions).
      if (commute && (want.empty() || want == "auto" || want == "hierarchical") &&
          WantsHierarchy(a.comm))
        return "hierarchical";
      const char* pick = "recursive_doubling";
      if (commute && AllreduceUsesBandwidth(p, bytes, elems))
        pick = IsPof2(p) ? "rabenseifner" : "ring";
      if (!want.empty() && want != "auto" && want != pick) WarnFallback("allreduce", want, pick);
      return pick;
    }
    case Kind::kBcast: {
      if (const char* f = Forced(a.algo, {"binomial", "knomial", "scatter_allgather"})) return f;
      if (WantsHierarchy(a.comm)) return "hierarchical";
      const std::size_t bytes = std::size_t(a.scount * a.stype->size);
      if (BcastUsesScatterAllgather(p, bytes)) return "scatter_allgather";
      return p > 8 ? "knomial" : "binomial";
    }
    case Kind::kAllgather: {
      if (const char* f = Forced(a.algo, {"ring", "recursive_doubling"})) return f;
      const std::size_t bytes = std::size_t(a.rcount * a.rtype->size);
      return IsPof2(p) && bytes < kAllgatherSmall ? "recursive_doubling" : "ring";
    }
    case Kind::kBarrier:
      return WantsHierarchy(a.comm) ? "hierarchical" : "dissemination";
    case Kind::kReduce: {
      const dtype::Op* op = dtype::LookupOp(a.op);
      if (op && op->commute && (a.algo.empty() || a.algo == "auto") && WantsHierarchy(a.comm))
        return "hierarchical";
      return "binomial";
    }
    case Kind::kGather:
    case Kind::kScatter:
      return "binomial";
    case Kind::kGatherv:
    case Kind::kScatterv:
      return "linear";
    case Kind::kAllgatherv:
      return "ring";
    case Kind::kAlltoall:
    case Kind::kAlltoallv:
    case Kind::kAlltoallw:
      return "pairwise";
    case Kind::kReduceScatter:
    case Kind::kReduceScatterBlock:
      return "reduce_scatterv";
    case Kind::kScan:
    case Kind::kExscan:
      return "recursive_doubling";
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAllgatherv:
    case Kind::kNeighborAlltoall:
    case Kind::kNeighborAlltoallv:
    case Kind::kNeighborAlltoallw:
      return "neighbor_direct";
  }
  return "";
}

void DumpSchedule(const Args& a, const Schedule& s) {
  static const std::string mode = config::GetString("NICQ_PLAN_DUMP");
  if (mode.empty()) return;
  // An offloaded schedule is empty here: its trigger plan is dumped on its own.
  const bool offloaded = std::strstr(s.algorithm, "offloaded") != nullptr;
  std::fprintf(stderr,
               "nicq[%d] coll plan: %s algorithm=%s ranks=%d phases=%d steps=%zu engine=%s\n",
               a.comm->rank, KindName(a.kind), s.algorithm, a.comm->size, s.phases(), s.steps(),
               offloaded ? "trigger plan" : "host");
}

}  // namespace nicq::coll
