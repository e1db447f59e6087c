// Requests freed by MPI_Request_free while still active (orphans): kept
// until their operation completes, then released by a sweep; MPI_Finalize
// sweeps them all, cancelling the ones that never complete.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "api/api_internal.h"
#include "core/config.h"
#include "core/log.h"
#include "runtime/runtime.h"

namespace nicq::api {

std::atomic<int> g_orphan_count{0};

namespace {

struct Orphans {
  std::mutex mu;
  std::vector<ApiRequest*> list;
};
Orphans& Orphanage() {
  static auto* o = new Orphans();
  return *o;
}

}  // namespace

void AddOrphan(ApiRequest* r) {
  Orphans& o = Orphanage();
  std::lock_guard<std::mutex> lock(o.mu);
  r->free_pending = true;
  o.list.push_back(r);
  g_orphan_count.fetch_add(1, std::memory_order_release);
}

namespace {

// MPI_Finalize with a request freed while active that never completes (its
// peer never sends: an erroneous program) must not hang silently: after
// NICQ_PEER_TIMEOUT seconds without any orphan completing, the rest are
// reported and cancelled (a matched or collective request that cannot be
// cancelled keeps its slot).
void GiveUpOrphan(ApiRequest* r) {
  NICQ_LOG(kWarn, kCore,
           "MPI_Finalize(%s): a request freed while active never completed (%s %s rank %d tag "
           "%d, from %s); cancelling it",
           RankText().c_str(), r->is_send ? "send to" : "receive from",
           r->persistent ? "persistent" : "nonblocking", r->peer, r->tag, r->call);
  Status st = CancelRequest(r);
  if (!st.ok()) NICQ_LOG(kWarn, kCore, "MPI_Finalize: cancel failed: %s", st.message().c_str());
}

}  // namespace

void SweepOrphansNow(bool wait_all) {
  Orphans& o = Orphanage();
  if (g_orphan_count.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(o.mu);
  rt::Backoff backoff;
  const double limit = double(std::max<std::int64_t>(1, config::GetInt("NICQ_PEER_TIMEOUT")));
  double deadline = PMPI_Wtime() + limit;
  for (std::size_t i = 0; i < o.list.size();) {
    ApiRequest* r = o.list[i];
    bool gave_up = false;
    if (wait_all) {
      while (!r->req.IsDone()) {
        if (!rt::ProgressWait(backoff).ok()) break;  // dead peer: give the slot up anyway
        if (PMPI_Wtime() > deadline) {
          GiveUpOrphan(r);
          gave_up = true;
          break;
        }
      }
      if (r->req.IsDone()) deadline = PMPI_Wtime() + limit;  // progress: a fresh bound
    }
    if (gave_up && !r->req.IsDone()) {
      ++i;  // still held by its engine: the slot stays taken
      continue;
    }
    if (r->req.IsDone() || wait_all) {
      if (!r->is_send && r->staged && !r->req.status.cancelled && r->req.IsDone())
        dtype::Unpack(*r->type, r->staging.data(), static_cast<std::int64_t>(r->req.status.bytes),
                      r->count, const_cast<void*>(r->user_buf));
      FreeRequest(r);
      o.list[i] = o.list.back();
      o.list.pop_back();
      g_orphan_count.fetch_sub(1, std::memory_order_release);
    } else {
      ++i;
    }
  }
}

}  // namespace nicq::api
