// C entry points of chapter 13.3: queue objects, enqueue start/wait, fence.
// Every check runs before anything is enqueued, so an erroneous call
// (including an erroneous MPI_Enqueue_startall/_waitall element) changes
// nothing. The success path allocates nothing and makes no syscall.
#include <atomic>
#include <mutex>
#include <string>

#include "api/api_internal.h"
#include "queue/match_engine.h"
#include "queue/queue.h"

using nicq::Code;
using nicq::Status;
using nicq::api::ApiRequest;
using nicq::api::Call;
namespace queue = nicq::queue;

namespace {

constexpr int kMaxQueues = 4096;
struct QueueTable {
  std::mutex mu;  // init/free only
  std::atomic<queue::Queue*> slots[kMaxQueues] = {};
};
QueueTable& Queues() {
  static auto* t = new QueueTable();
  return *t;
}

queue::Queue* LookupQueue(MPI_Queue h) {
  if (nicq::api::KindOf(h) != NICQ_KIND_QUEUE) return nullptr;
  const int i = nicq::api::IndexOf(h);
  if (i <= 0 || i >= kMaxQueues) return nullptr;
  return Queues().slots[i].load(std::memory_order_acquire);
}

// Checks build their message only on failure: the success path of an
// enqueue call must not allocate.
template <typename Msg>
bool Ensure(Call& c, bool ok, Code cls, Msg&& msg) {
  return ok || c.Check(false, cls, msg());
}

std::string At(int i) {
  return i < 0 ? std::string("request") : "array_of_requests[" + std::to_string(i) + "]";
}

// The queue argument, entered (one thread at a time). Callers Leave().
bool QueueArg(Call& c, MPI_Queue* q, queue::Queue** out) {
  if (!c.Init() || !c.NotNull(q, "queue")) return false;
  *out = LookupQueue(*q);
  if (!Ensure(c, *out != nullptr, Code::kQueue,
              [&] { return "invalid queue handle " + std::to_string(*q); }))
    return false;
  return Ensure(c, (*out)->Enter(), Code::kQueue, [] {
    return "queue is being used by another thread at the same time (13.4: a queue must not be "
           "accessed concurrently)";
  });
}

// An enqueueable request: persistent (p2p or collective), not generalized,
// matched, not active through MPI_Start. The valid case is one inline test;
// EnqueueableFailed (cold) finds which rule failed and builds the message.
[[gnu::cold, gnu::noinline]] bool EnqueueableFailed(Call& c, MPI_Request* h, int i, ApiRequest* r,
                                                    queue::Enqueueable* e) {
  if (!c.NotNull(h, "request")) return false;
  if (!r)
    return c.Check(false, Code::kRequest,
                   "invalid request handle " + std::to_string(*h) + " (" + At(i) + ")");
  if (r->req.kind == nicq::ReqKind::kGeneralized)
    return c.Check(false, Code::kRequest,
                   At(i) + " is a generalized request and cannot be enqueued");
  if (!r->persistent && r->req.kind != nicq::ReqKind::kPersistentColl)
    return c.Check(false, Code::kRequest,
                   At(i) + " is not a persistent request and cannot be enqueued");
  if (!e || !e->IsMatched())
    return c.Check(false, Code::kMatch, At(i) + " is not matched (call MPI_Match first)");
  return c.Check(false, Code::kRequest, At(i) + " is active (started with MPI_Start)");
}

inline bool EnqueueableArg(Call& c, MPI_Request* h, int i, queue::Enqueueable** out) {
  ApiRequest* r = h && *h != MPI_REQUEST_NULL ? nicq::api::LookupRequest(*h) : nullptr;
  queue::Enqueueable* e = nullptr;
  if (r && r->req.kind != nicq::ReqKind::kGeneralized &&
      (r->persistent || r->req.kind == nicq::ReqKind::kPersistentColl))
    e = queue::EnqueueableOf(&r->req);
  *out = e;
  // Started with MPI_Start and not yet completed by MPI_Wait/MPI_Test: not enqueueable.
  if (e && e->IsMatched() && !r->active && !(r->req.active && e->qslot.queue == nullptr)) [[likely]]
    return true;
  return EnqueueableFailed(c, h, i, r, e);
}

void Fill(void* status, const nicq::RequestStatus& rs) {
  auto* s = static_cast<MPI_Status*>(status);
  nicq::api::FillStatus(s, rs);
  s->MPI_ERROR = rs.error;
}

struct Entered {  // leaves the queue on every return path
  queue::Queue* q;
  ~Entered() {
    if (q) q->Leave();
  }
};

int StartAll(const char* name, MPI_Queue* qh, int count, MPI_Request* reqs) {
  Call c(name);
  queue::Queue* q = nullptr;
  if (!QueueArg(c, qh, &q)) return c.Fail();
  Entered guard{q};
  if (!c.CountArg(count) || !c.NotNull(count ? reqs : &count, "array_of_requests")) return c.Fail();
  queue::Enqueueable* es[64];
  if (!Ensure(c, count <= 64, Code::kCount, [&] { return "more than 64 requests in one call"; }))
    return c.Fail();
  for (int i = 0; i < count; ++i) {
    if (!EnqueueableArg(c, &reqs[i], count == 1 ? -1 : i, &es[i])) return c.Fail();
    Status st = q->CheckStart(es[i]);
    if (!st.ok()) return c.Fail(st.code(), At(count == 1 ? -1 : i) + ": " + st.message());
    for (int j = 0; j < i; ++j)
      if (!Ensure(c, es[j] != es[i], Code::kRequest, [&] { return At(i) + " repeats " + At(j); }))
        return c.Fail();
  }
  return c.Fail(q->EnqueueStartAll({es, std::size_t(count)}));
}

int WaitAll(const char* name, MPI_Queue* qh, int count, MPI_Request* reqs, MPI_Status* statuses,
            bool single) {
  Call c(name);
  queue::Queue* q = nullptr;
  if (!QueueArg(c, qh, &q)) return c.Fail();
  Entered guard{q};
  if (!c.CountArg(count) || !c.NotNull(count ? reqs : &count, "array_of_requests")) return c.Fail();
  queue::Enqueueable* es[64];
  if (!Ensure(c, count <= 64, Code::kCount, [&] { return "more than 64 requests in one call"; }))
    return c.Fail();
  for (int i = 0; i < count; ++i) {
    if (!EnqueueableArg(c, &reqs[i], single ? -1 : i, &es[i])) return c.Fail();
    Status st = q->CheckWait(es[i]);
    if (!st.ok()) return c.Fail(st.code(), At(single ? -1 : i) + ": " + st.message());
    for (int j = 0; j < i; ++j)
      if (!Ensure(c, es[j] != es[i], Code::kRequest, [&] { return At(i) + " repeats " + At(j); }))
        return c.Fail();
  }
  // One compiled wait for all of them: enqueued together or not at all.
  const bool ignore = statuses == MPI_STATUSES_IGNORE || statuses == nullptr;
  void* sts[64];
  for (int i = 0; i < count && !ignore; ++i) sts[i] = single ? statuses : &statuses[i];
  return c.Fail(q->EnqueueWaitAll({es, std::size_t(count)}, {sts, ignore ? 0 : std::size_t(count)},
                                  ignore ? nullptr : &Fill));
}

}  // namespace

extern "C" {

int(MPI_Queue_init)(MPI_Queue* queue, int type, void* external) {
  Call c("MPI_Queue_init");
  if (!c.Init() || !c.NotNull(queue, "queue")) return c.Fail();
  queue::Queue* q = nullptr;
  Status st = queue::Queue::Create(type, external, &q);
  if (!st.ok()) return c.Fail(st);
  QueueTable& t = Queues();
  std::lock_guard<std::mutex> lock(t.mu);
  for (int i = 1; i < kMaxQueues; ++i) {
    if (t.slots[i].load(std::memory_order_relaxed) == nullptr) {
      t.slots[i].store(q, std::memory_order_release);
      *queue = NICQ_HANDLE(NICQ_KIND_QUEUE, i);
      return MPI_SUCCESS;
    }
  }
  delete q;
  return c.Fail(Code::kNoMem, "queue table is full");
}

int(MPI_Queue_free)(MPI_Queue* queue) {
  Call c("MPI_Queue_free");
  queue::Queue* q = nullptr;
  if (!QueueArg(c, queue, &q)) return c.Fail();
  if (!q->Empty()) {
    q->Leave();
    return c.Fail(Code::kQueue,
                  "queue is not empty (enqueued operations are not complete; call "
                  "MPI_Queue_fence first)");
  }
  QueueTable& t = Queues();
  {
    std::lock_guard<std::mutex> lock(t.mu);
    t.slots[nicq::api::IndexOf(*queue)].store(nullptr, std::memory_order_release);
  }
  delete q;
  *queue = MPI_QUEUE_NULL;
  return MPI_SUCCESS;
}

int(MPI_Enqueue_start)(MPI_Queue* queue, MPI_Request* request) {
  return StartAll("MPI_Enqueue_start", queue, 1, request);
}

int(MPI_Enqueue_startall)(MPI_Queue* queue, int count, MPI_Request array_of_requests[]) {
  return StartAll("MPI_Enqueue_startall", queue, count, array_of_requests);
}

int(MPI_Enqueue_wait)(MPI_Queue* queue, MPI_Request* request, MPI_Status* status) {
  return WaitAll("MPI_Enqueue_wait", queue, 1, request, status, true);
}

int(MPI_Enqueue_waitall)(MPI_Queue* queue, int count, MPI_Request array_of_requests[],
                         MPI_Status* array_of_statuses) {
  return WaitAll("MPI_Enqueue_waitall", queue, count, array_of_requests, array_of_statuses, false);
}

int(MPI_Queue_fence)(MPI_Queue* queue) {
  Call c("MPI_Queue_fence");
  queue::Queue* q = nullptr;
  if (!QueueArg(c, queue, &q)) return c.Fail();
  Entered guard{q};
  return c.Fail(q->Fence());
}

}  // extern "C"
