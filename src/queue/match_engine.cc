#include "queue/match_engine.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "core/progress_hooks.h"
#include "queue/matched_p2p.h"
#include "queue/offload_context.h"
#include "queue/queue.h"
#include "runtime/runtime.h"

namespace nicq::queue {
namespace {

struct MatchOp {
  std::vector<Enqueueable*> reqs;
  Request* signal = nullptr;
  const char* call = "";
};

struct Pending {
  std::mutex mu;
  std::vector<MatchOp> matches;
  std::atomic<int> nmatches{0};
  std::vector<std::pair<Request*, Enqueueable*>> started;  // capacity kept: no realloc when warm
  std::atomic<int> nstarted{0};
};
Pending& P() {
  static auto* p = new Pending();
  return *p;
}

// Advances every request of `reqs`; *all_done when all are matched.
Status PollSet(std::span<Enqueueable* const> reqs, bool* all_done) {
  bool all = true;
  for (Enqueueable* e : reqs) {
    bool done = false;
    NICQ_RETURN_IF_ERROR(e->PollMatch(&done));
    all &= done;
  }
  *all_done = all;
  return Status::Ok();
}

bool Hook(void*) {
  return QueueProgress();
}

}  // namespace

Enqueueable* EnqueueableOf(Request* req) {
  if (!req) return nullptr;
  if (req->ops == &kMatchedP2pOps) return static_cast<MatchedP2p*>(req->engine);
  if (req->kind == ReqKind::kPersistentColl) return static_cast<Enqueueable*>(req->engine);
  return nullptr;
}

Status MatchAll(std::span<Enqueueable* const> reqs) {
  rt::Backoff b;
  for (;;) {
    bool done = false;
    NICQ_RETURN_IF_ERROR(PollSet(reqs, &done));
    if (done) return Status::Ok();
    PollMatches();  // this rank's MPI_Imatch ops may be what a peer waits for
    NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
  }
}

Status MatchBegin(std::vector<Enqueueable*> reqs, Request* signal, const char* call) {
  Pending& p = P();
  std::lock_guard<std::mutex> lock(p.mu);
  p.matches.push_back(MatchOp{std::move(reqs), signal, call});
  p.nmatches.fetch_add(1, std::memory_order_release);
  return Status::Ok();
}

const char* MatchInProgress(const Enqueueable* e) {
  Pending& p = P();
  if (p.nmatches.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(p.mu);
  for (const MatchOp& op : p.matches)
    for (const Enqueueable* r : op.reqs)
      if (r == e) return op.call;
  return nullptr;
}

bool PollMatches() {
  Pending& p = P();
  if (p.nmatches.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(p.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool any = false;
  for (std::size_t i = 0; i < p.matches.size();) {
    bool done = false;
    Status st = PollSet(p.matches[i].reqs, &done);
    if (!st.ok() || done) {
      Request* s = p.matches[i].signal;
      s->status = RequestStatus{};
      s->status.error = st.ok() ? 0 : int(st.code() == Code::kTruncate ? Code::kMatch : st.code());
      s->MarkDone();
      p.matches.erase(p.matches.begin() + std::ptrdiff_t(i));
      p.nmatches.fetch_sub(1, std::memory_order_release);
      any = true;
    } else {
      ++i;
    }
  }
  return any;
}

void WatchHostStarted(Request* req, Enqueueable* e) {
  Pending& p = P();
  std::lock_guard<std::mutex> lock(p.mu);
  p.started.emplace_back(req, e);
  p.nstarted.fetch_add(1, std::memory_order_release);
}

bool PollHostStarted() {
  Pending& p = P();
  if (p.nstarted.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(p.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  offload::OffloadBackend* b = Backend();
  // After MPI_Finalize closed the offload context, a start that never
  // completed (an erroneous program, reported there) is dropped.
  if (!b) {
    p.started.clear();
    p.nstarted.store(0, std::memory_order_release);
    return false;
  }
  bool any = false;
  for (std::size_t i = 0; i < p.started.size();) {
    auto [req, e] = p.started[i];
    const bool failed = b->ReadErrors(e->DoneCounter()) > 0;
    if (failed || b->ReadCounter(e->DoneCounter()) >= e->DoneTarget()) {
      e->GetStatus(&req->status);
      req->MarkDone();
      p.started[i] = p.started.back();
      p.started.pop_back();
      p.nstarted.fetch_sub(1, std::memory_order_release);
      any = true;
    } else {
      ++i;
    }
  }
  return any;
}

void EnsureProgressHook() {
  static std::once_flag once;
  std::call_once(once, [] {
    P().started.reserve(4096);
    (void)progress::RegisterHook(&Hook, nullptr);
  });
}

bool QueueProgress() {
  bool any = PollMatches();
  any |= PollHostStarted();
  if (offload::OffloadBackend* b = Backend()) any |= b->Progress();
  any |= AdvanceHostQueues();
  return any;
}

}  // namespace nicq::queue
