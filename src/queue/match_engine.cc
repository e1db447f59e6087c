#include "queue/match_engine.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "core/progress_hooks.h"
#include "queue/matched_p2p.h"
#include "queue/queue.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::queue {
namespace {

// A request of a match call and its place in the call's array.
struct Item {
  Enqueueable* e;
  int index;
};

struct MatchOp {
  std::vector<Item> left;     // requests whose match has not ended yet
  Request* signal = nullptr;  // nullptr once signalled (or nobody waits)
  const char* call = "";
  Status error;  // the first failure
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

std::string Label(const char* call, int index) {
  if (std::strcmp(call, "MPI_Match") == 0) return "request";
  if (std::strcmp(call, "MPI_Imatch") == 0) return "tomatch";
  return "array_of_requests[" + std::to_string(index) + "]";
}

// Polls each request of `left` once and drops those whose match ended
// (matched, or failed: the first failure goes to *error, naming the
// request). An ended request is never polled again (a collective's
// PollMatch does not repeat its verdict).
void PollLeft(std::vector<Item>* left, const char* call, Status* error) {
  for (std::size_t i = 0; i < left->size();) {
    const Item it = (*left)[i];
    bool done = false;
    Status st = it.e->PollMatch(&done);
    if (!st.ok() && error->ok())
      *error = Status(st.code(), Label(call, it.index) + ": " + st.message());
    if (!st.ok() || done) {
      left->erase(left->begin() + std::ptrdiff_t(i));
    } else {
      ++i;
    }
  }
}

std::vector<Item> Items(std::span<Enqueueable* const> reqs) {
  std::vector<Item> v;
  v.reserve(reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) v.push_back(Item{reqs[i], int(i)});
  return v;
}

void AddMatchOp(MatchOp op) {
  Pending& p = P();
  std::lock_guard<std::mutex> lock(p.mu);
  p.matches.push_back(std::move(op));
  p.nmatches.fetch_add(1, std::memory_order_release);
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

Status MatchAll(std::span<Enqueueable* const> reqs, const char* call) {
  std::vector<Item> left = Items(reqs);
  Status error;
  rt::Backoff b;
  for (;;) {
    PollLeft(&left, call, &error);
    if (left.empty()) return error;
    if (error.ok()) {
      PollMatches();  // this rank's MPI_Imatch ops may be what a peer waits for
      error = rt::ProgressWait(b);
    }
    if (!error.ok()) {
      // The others' peers may already hold their offers or replies: they
      // finish in the background rather than hang those peers.
      AddMatchOp(MatchOp{std::move(left), nullptr, call, {}});
      return error;
    }
  }
}

Status MatchBegin(std::vector<Enqueueable*> reqs, Request* signal, const char* call) {
  AddMatchOp(MatchOp{Items(reqs), signal, call, {}});
  return Status::Ok();
}

const char* MatchInProgress(const Enqueueable* e) {
  Pending& p = P();
  if (p.nmatches.load(std::memory_order_acquire) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(p.mu);
  for (const MatchOp& op : p.matches)
    for (const Item& it : op.left)
      if (it.e == e) return op.call;
  return nullptr;
}

Status TakeMatchResult(Request* signal) {
  auto* st = static_cast<Status*>(signal->engine);
  signal->engine = nullptr;
  if (!st) return Status::Ok();
  Status out = std::move(*st);
  delete st;
  return out;
}

bool PollMatches() {
  Pending& p = P();
  if (p.nmatches.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(p.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool any = false;
  for (std::size_t i = 0; i < p.matches.size();) {
    MatchOp& op = p.matches[i];
    const std::size_t before = op.left.size();
    PollLeft(&op.left, op.call, &op.error);
    any |= op.left.size() != before;
    // The first failure completes the match request at once; the requests
    // still matching stay here until their exchanges end.
    if (op.signal && (op.left.empty() || !op.error.ok())) {
      Request* s = op.signal;
      // A match request's status is empty (MPI_ANY_SOURCE, MPI_ANY_TAG,
      // count 0). A truncation keeps its class, MPI_ERR_TRUNCATE, as with
      // MPI_Match: 13.2 has point-to-point requests match by the rules of
      // Section 3, where a message longer than the receive buffer is
      // MPI_ERR_TRUNCATE; MPI_ERR_MATCH is for erroneous uses of matching.
      s->status = RequestStatus{};
      s->status.source = rt::kAnySource;
      s->status.tag = rt::kAnyTag;
      s->status.error = int(op.error.code());
      s->engine = op.error.ok() ? nullptr : new Status(op.error);
      op.signal = nullptr;
      s->MarkDone();
    }
    if (op.left.empty()) {
      p.matches.erase(p.matches.begin() + std::ptrdiff_t(i));
      p.nmatches.fetch_sub(1, std::memory_order_release);
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
  offload::OffloadBackend* b = rt::Backend();
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
    bool failed = false;
    const bool done = e->EpochDone(&failed);
    if (failed || done) {
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
  // Every progress pass of every MPI call runs this: what has nothing to do
  // costs a load here, not a call.
  Pending& p = P();
  bool any = false;
  if (p.nmatches.load(std::memory_order_acquire) != 0) any |= PollMatches();
  if (p.nstarted.load(std::memory_order_acquire) != 0) any |= PollHostStarted();
  if (offload::OffloadBackend* b = rt::Backend()) any |= b->Progress();
  any |= AdvanceQueueSteps();
  return any;
}

}  // namespace nicq::queue
