// C entry points of chapter 13.3: queue objects, enqueue start/wait, fence.
// Every check runs before anything is enqueued, so an erroneous call
// (including an erroneous MPI_Enqueue_startall/_waitall element) changes
// nothing. The success path allocates nothing and makes no syscall.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <type_traits>

#include "api/api_internal.h"
#include "api/completion_util.h"
#include "api/partitioned_queue.h"
#include "coll/coll.h"
#include "queue/match_engine.h"
#include "queue/queue.h"
#include "runtime/offload_context.h"

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
// Constant-initialized and trivially destroyed: usable at any time, and
// every enqueue call's lookup is a load, not a guarded function call.
constinit QueueTable g_queues;
static_assert(std::is_trivially_destructible_v<QueueTable>);
QueueTable& Queues() {
  return g_queues;
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

// The queue argument's checks with their messages (QueueArg's cold half:
// it repeats the fast path's tests, so it records the first that fails).
[[gnu::cold, gnu::noinline]] bool QueueArgChecked(Call& c, MPI_Queue* q, queue::Queue** out) {
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

// The queue argument, entered (one thread at a time). Callers Leave().
// The valid case inline: out of line, with its messages' code beside it,
// it was about 50 instructions of every enqueue call.
inline bool QueueArg(Call& c, MPI_Queue* q, queue::Queue** out) {
  if (nicq::api::IsInitialized() && q != nullptr) [[likely]] {
    queue::Queue* found = LookupQueue(*q);
    if (found != nullptr && found->Enter()) [[likely]] {
      *out = found;
      return true;
    }
  }
  return QueueArgChecked(c, q, out);
}

// The rules of one element of an enqueue call, in the order of their
// messages: a request handle; persistent (p2p or collective), not
// generalized, matched; not active through MPI_Start; CheckStart/CheckWait
// on this queue. The first three hold from MPI_Match until
// MPI_Request_free: once they pass, ApiRequest::enqueueable remembers the
// request's Enqueueable, and later calls check only what can change
// between calls (inline, in ValidAll). This cold half runs the whole list
// when nothing is cached yet or a rule failed, and builds the message.
[[gnu::cold, gnu::noinline]] bool ElementChecked(Call& c, queue::Queue* q, MPI_Request* h, int i,
                                                 bool wait, queue::Enqueueable** out) {
  ApiRequest* r = *h != MPI_REQUEST_NULL ? nicq::api::LookupRequest(*h) : nullptr;
  if (!r)
    return c.Check(false, Code::kRequest,
                   "invalid request handle " + std::to_string(*h) + " (" + At(i) + ")");
  if (r->req.kind == nicq::ReqKind::kGeneralized)
    return c.Check(false, Code::kRequest,
                   At(i) + " is a generalized request and cannot be enqueued");
  if (!r->persistent && r->req.kind != nicq::ReqKind::kPersistentColl)
    return c.Check(false, Code::kRequest,
                   At(i) + " is not a persistent request and cannot be enqueued");
  queue::Enqueueable* e = nullptr;
  if (!nicq::api::IsPartitioned(r))
    e = queue::EnqueueableOf(&r->req);
  else if (!nicq::api::PartitionedEnqueueable(c, r, At(i), &e))
    return false;
  if (!e || !e->IsMatched())
    return c.Check(false, Code::kMatch, At(i) + " is not matched (call MPI_Match first)");
  r->enqueueable = e;
  // Started with MPI_Start and not yet completed by MPI_Wait/MPI_Test.
  if (r->active || (r->req.active && e->qslot.queue == nullptr))
    return c.Check(false, Code::kRequest, At(i) + " is active (started with MPI_Start)");
  // Errors of the call go to the handler of the (first) request's
  // communicator, as for MPI_Start.
  if (i <= 0) c.set_comm_handle(r->comm_handle);
  const Status st = wait ? q->CheckWait(e) : q->CheckStart(e);
  if (!st.ok()) return c.Check(false, st.code(), At(i) + ": " + st.message());
  *out = e;
  return true;
}

// Statuses of enqueued waits: MPI_Wait's content (13.3.2); a failed
// operation's class goes to MPI_ERROR (a good one leaves it as the program
// set it, as MPI_Wait does).
void Fill(void* status, const nicq::RequestStatus& rs) {
  auto* st = static_cast<MPI_Status*>(status);
  nicq::api::FillStatus(st, rs);
  if (rs.error != 0 && st != nullptr && st != MPI_STATUS_IGNORE) st->MPI_ERROR = rs.error;
}

// Every element of an enqueue call, checked before anything is enqueued
// (a failed call changes nothing): the first error is recorded in c.
// es receives the first kChunk of them (the rest are looked up again).
constexpr int kChunk = int(queue::Queue::kMaxWaitAll);
// Up to this many elements, a repeat is found by comparing each element
// with those before it; above, by the stamp each element's QueueSlot gets.
constexpr int kPairwiseRepeats = 8;

[[gnu::cold, gnu::noinline]] bool Repeats(Call& c, int i, int first) {
  return c.Check(false, Code::kRequest, At(i) + " repeats " + At(first));
}

// A checked request (enqueueable cached) that MPI_Start has not made
// active and whose queue state allows this call: every rule of
// ElementChecked holds for it.
template <bool kWait>
inline bool CachedRulesHold(queue::Queue* q, const ApiRequest* r, queue::Enqueueable* e) {
  return e && !r->active && !(r->req.active && e->qslot.queue == nullptr) &&
         (kWait ? q->CanWait(e) : q->CanStart(e));
}

template <bool kWait>
bool ValidAll(Call& c, queue::Queue* q, int count, MPI_Request* reqs, bool single,
              queue::Enqueueable** es) {
  if (!c.CountArg(count) || !c.NotNull(count ? reqs : &count, "array_of_requests")) return false;
  const bool pairwise = count <= kPairwiseRepeats;
  const std::uint64_t stamp = pairwise ? 0 : q->NextCheckStamp();  // marks elements of this call
  for (int i = 0; i < count; ++i) {
    ApiRequest* r = nicq::api::LookupRequest(reqs[i]);
    queue::Enqueueable* e = r ? r->enqueueable : nullptr;
    if (CachedRulesHold<kWait>(q, r, e)) [[likely]] {
      if (i == 0) c.set_comm_handle(r->comm_handle);
    } else if (!ElementChecked(c, q, &reqs[i], single ? -1 : i, kWait, &e)) {
      return false;
    }
    if (pairwise) {
      for (int j = 0; j < i; ++j)
        if (es[j] == e) [[unlikely]]
          return Repeats(c, i, j);
      es[i] = e;
      continue;
    }
    queue::QueueSlot& s = e->qslot;
    if (s.check_queue == q && s.check_stamp == stamp) [[unlikely]]
      return Repeats(c, i, s.check_index);
    s.check_queue = q;
    s.check_stamp = stamp;
    s.check_index = i;
    if (i < kChunk) es[i] = e;
  }
  return true;
}

// The Enqueueables of reqs[base, base + n) (checked, so cached, by ValidAll).
void Lookup(MPI_Request* reqs, int base, int n, queue::Enqueueable** es) {
  for (int j = 0; j < n; ++j) es[j] = nicq::api::LookupRequest(reqs[base + j])->enqueueable;
}

// ---- The valid case on a host-sequenced queue, with no Call object ----
// An enqueue call of 1..kPairwiseRepeats requests on a host-sequenced queue
// whose step ring has room, every request passing ValidAll's cached rules,
// skips the Call object (its message string, the Status and Fail() around
// it) and the chunking, about a third of such a call's instructions on the
// checked path. Any other call, and any rule that fails, leaves here
// having changed nothing (the queue entered and left again) for the
// checked path, which runs every check anew and reports the first that
// fails with its message.

// The queue, entered, when the call may take the valid case; else null.
inline queue::Queue* EnterForValidCase(MPI_Queue* qh, int count, MPI_Request* reqs) {
  if (!nicq::api::IsInitialized() || qh == nullptr || reqs == nullptr ||
      unsigned(count - 1) >= unsigned(kPairwiseRepeats)) [[unlikely]]
    return nullptr;
  queue::Queue* q = LookupQueue(*qh);
  if (q == nullptr || !q->Enter()) [[unlikely]]
    return nullptr;
  if (!q->HostRoomFor(std::size_t(count))) [[unlikely]] {
    q->Leave();
    return nullptr;
  }
  return q;
}

// The request object of a handle, through the queue's memo: a handle names
// one slot of the request table for the life of the process (the table is
// never freed, nor are its chunks), so a memo entry never goes wrong. A slot
// freed since holds no Enqueueable (FreeRequest clears it), which the
// caller's checks read, as they would after LookupRequest's own test that
// the slot is live. About a third of a looked-up element's checks.
inline ApiRequest* MemoLookup(queue::Queue* q, MPI_Request h) {
  queue::Queue::HandleMemo& m = q->handle_memo[unsigned(h) % queue::Queue::kHandleMemo];
  if (m.handle == h && m.found != nullptr) [[likely]]
    return static_cast<ApiRequest*>(m.found);
  ApiRequest* r = nicq::api::LookupRequest(h);
  if (r != nullptr) m = {h, r};
  return r;
}

// ValidAll's rules for reqs[0, count) as its inline case checks them
// (count <= kPairwiseRepeats: a repeat found pairwise); false at the first
// request that needs the checked path.
template <bool kWait>
inline bool ValidCase(queue::Queue* q, int count, const MPI_Request* reqs,
                      queue::Enqueueable** es) {
  for (int i = 0; i < count; ++i) {
    ApiRequest* r = MemoLookup(q, reqs[i]);
    queue::Enqueueable* e = r ? r->enqueueable : nullptr;
    if (!CachedRulesHold<kWait>(q, r, e)) [[unlikely]]
      return false;
    for (int j = 0; j < i; ++j)
      if (es[j] == e) [[unlikely]]
        return false;
    es[i] = e;
  }
  return true;
}

int StartAllChecked(const char* name, MPI_Queue* qh, int count, MPI_Request* reqs);
int WaitAllChecked(const char* name, MPI_Queue* qh, int count, MPI_Request* reqs,
                   MPI_Status* statuses, bool single);

int StartAll(const char* name, MPI_Queue* qh, int count, MPI_Request* reqs) {
  if (queue::Queue* q = EnterForValidCase(qh, count, reqs)) [[likely]] {
    queue::Enqueueable* es[kPairwiseRepeats];
    const bool valid = ValidCase<false>(q, count, reqs, es);
    if (valid) [[likely]]
      q->HostStartValid({es, std::size_t(count)});
    q->Leave();
    if (valid) [[likely]]
      return MPI_SUCCESS;
  }
  return StartAllChecked(name, qh, count, reqs);
}

int WaitAll(const char* name, MPI_Queue* qh, int count, MPI_Request* reqs, MPI_Status* statuses,
            bool single) {
  if (queue::Queue* q = EnterForValidCase(qh, count, reqs)) [[likely]] {
    queue::Enqueueable* es[kPairwiseRepeats];
    const bool valid = ValidCase<true>(q, count, reqs, es);
    if (valid) [[likely]] {
      if (statuses == MPI_STATUSES_IGNORE || statuses == nullptr) {
        q->HostWaitValid({es, std::size_t(count)}, {}, nullptr);
      } else {
        void* sts[kPairwiseRepeats];
        for (int j = 0; j < count; ++j) sts[j] = single ? statuses : &statuses[j];
        q->HostWaitValid({es, std::size_t(count)}, {sts, std::size_t(count)}, &Fill);
      }
    }
    q->Leave();
    if (valid) [[likely]]
      return MPI_SUCCESS;
  }
  return WaitAllChecked(name, qh, count, reqs, statuses, single);
}

[[gnu::noinline]] int StartAllChecked(const char* name, MPI_Queue* qh, int count,
                                      MPI_Request* reqs) {
  Call c(name);
  queue::Queue* q = nullptr;
  if (!QueueArg(c, qh, &q)) return c.Fail();
  Status st;
  queue::Enqueueable* es[kChunk];
  if (ValidAll<false>(c, q, count, reqs, count == 1, es)) {
    // Starts of one call all pass the same gate; chunks keep the scratch
    // arrays fixed (no allocation for any count). One chunk: no loop. A
    // call of no requests does not reach the queue (a failed chain's error
    // is not this call's).
    if (count > 0 && count <= kChunk) [[likely]]
      st = q->EnqueueStartAll({es, std::size_t(count)});
    else
      for (int base = 0; base < count && st.ok(); base += kChunk) {
        const int n = std::min(kChunk, count - base);
        if (base > 0) Lookup(reqs, base, n, es);
        st = q->EnqueueStartAll({es, std::size_t(n)});
      }
  }
  q->Leave();  // before an error handler runs: it may use the queue
  return st.ok() ? c.Fail() : c.Fail(st);
}

[[gnu::noinline]] int WaitAllChecked(const char* name, MPI_Queue* qh, int count, MPI_Request* reqs,
                                     MPI_Status* statuses, bool single) {
  Call c(name);
  queue::Queue* q = nullptr;
  if (!QueueArg(c, qh, &q)) return c.Fail();
  Status st;
  queue::Enqueueable* es[kChunk];
  if (ValidAll<true>(c, q, count, reqs, single, es)) {
    // One compiled wait per chunk of 64, in order: MPI_Enqueue_waitall is
    // MPI_Enqueue_wait of each element in any order (13.3.2), and waits of
    // one queue complete in enqueue order.
    const bool ignore = statuses == MPI_STATUSES_IGNORE || statuses == nullptr;
    if (count > 0 && count <= kChunk && ignore) [[likely]]
      st = q->EnqueueWaitAll({es, std::size_t(count)}, {}, nullptr);
    else
      for (int base = 0; base < count && st.ok(); base += kChunk) {
        void* sts[kChunk];
        const int n = std::min(kChunk, count - base);
        if (base > 0) Lookup(reqs, base, n, es);
        for (int j = 0; j < n && !ignore; ++j) sts[j] = single ? statuses : &statuses[base + j];
        st = q->EnqueueWaitAll({es, std::size_t(n)}, {sts, ignore ? 0 : std::size_t(n)},
                               ignore ? nullptr : &Fill);
      }
  }
  q->Leave();  // before an error handler runs: it may use the queue
  return st.ok() ? c.Fail() : c.Fail(st);
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

int NICQX_Queue_waits_completed(MPI_Queue queue, long long* completed, long long* enqueued) {
  Call c("NICQX_Queue_waits_completed");
  if (!c.Init() || !c.NotNull(completed, "completed") || !c.NotNull(enqueued, "enqueued"))
    return c.Fail();
  queue::Queue* q = LookupQueue(queue);
  if (!Ensure(c, q != nullptr, Code::kQueue,
              [&] { return "invalid queue handle " + std::to_string(queue); }))
    return c.Fail();
  // Reads only, so no Enter: entering would fail while the progress thread
  // advances the queue. The caller is the queue's own thread (13.4).
  *completed = static_cast<long long>(q->WaitsCompleted());
  *enqueued = static_cast<long long>(q->waits_enqueued());
  return MPI_SUCCESS;
}

int NICQX_Offload_work_requests(long long* requests) {
  Call c("NICQX_Offload_work_requests");
  if (!c.Init() || !c.NotNull(requests, "requests")) return c.Fail();
  const nicq::offload::OffloadBackend* backend = nicq::rt::Backend();
  *requests = backend ? static_cast<long long>(backend->WorkRequests()) : 0;
  return MPI_SUCCESS;
}

int NICQX_Request_work_done(MPI_Request request, int* flag) {
  Call c("NICQX_Request_work_done");
  ApiRequest* r = nullptr;
  if (!c.Init() || !c.NotNull(flag, "flag") || !nicq::api::completion::RequestArg(c, request, &r))
    return c.Fail();
  // Reads only: no progress, no completion, the request stays as it is.
  *flag = !nicq::api::completion::Pending(r) || nicq::coll::RequestWorkDone(&r->req);
  return MPI_SUCCESS;
}

int(MPI_Queue_fence)(MPI_Queue* queue) {
  Call c("MPI_Queue_fence");
  queue::Queue* q = nullptr;
  if (!QueueArg(c, queue, &q)) return c.Fail();
  const Status st = q->Fence();
  q->Leave();  // before an error handler runs: it may use the queue
  return c.Fail(st);
}

}  // extern "C"
