// The host collective engine's runtime: the pool of schedules, the list
// of active ones that progress hooks advance, and blocking waits.
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "coll/offload_allreduce.h"
#include "coll/persistent.h"
#include "coll/schedule.h"
#include "core/log.h"
#include "core/progress_hooks.h"
#include "dtype/reduce.h"
#include "runtime/async_progress.h"
#include "runtime/runtime.h"

namespace nicq::coll {

namespace {

// What a failed run failed on, by owner request, for WaitRequest's message:
// the schedule may be back in the pool by then, and the run may have
// finished on the progress thread. Only failures are recorded; entries of
// requests nobody waits on here (nonblocking ones) are dropped past 64.
struct FailureNotes {
  std::mutex mu;
  std::unordered_map<const Request*, std::string> by_request;
};
FailureNotes& Failures() {
  static auto* notes = new FailureNotes();
  return *notes;
}

}  // namespace

void NoteRunFailure(const Request* owner, std::string why) {
  FailureNotes& f = Failures();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.by_request.size() >= 64) f.by_request.clear();
  f.by_request[owner] = std::move(why);
}

std::string TakeRunFailure(const Request* owner) {
  FailureNotes& f = Failures();
  std::lock_guard<std::mutex> lock(f.mu);
  auto it = f.by_request.find(owner);
  if (it == f.by_request.end()) return "the collective failed";
  std::string why = std::move(it->second);
  f.by_request.erase(it);
  return why;
}

// ---- the engine ------------------------------------------------------------------

namespace {

struct Engine {
  std::mutex mu;  // active list; Poll only try_locks it
  std::vector<Schedule*> active;
  // active.size(), readable without mu: the hook runs on every progress pass
  // of every MPI wait (point-to-point ones too), and with nothing active it
  // returns after one load instead of a try_lock/unlock pair (perf showed
  // the engines' mutex calls at ~30% of an 8-byte allreduce's samples).
  std::atomic<std::size_t> n_active{0};
  std::mutex pool_mu;
  std::vector<Schedule*> pool;
  std::atomic<bool> hooked{false};
};

Engine& E() {
  static auto* e = new Engine();
  return *e;
}

bool Hook(void*) {
  const bool a = Poll();
  return PollOffloaded() || a;
}

// The host progress thread keeps polling while this holds: a schedule is
// running, a queued start fired and awaits its launch, or one is gated on
// a queue whose counter has not reached it yet (the gate fires on the
// backend's thread, which must not wake anyone: no system call there).
bool HostWorkPending() {
  return E().n_active.load(std::memory_order_acquire) != 0 || Persistent::AnyFired() ||
         Persistent::AnyGated();
}

}  // namespace

Schedule* AcquireSchedule() {
  Engine& e = E();
  {
    std::lock_guard<std::mutex> lock(e.pool_mu);
    if (!e.pool.empty()) {
      Schedule* s = e.pool.back();
      e.pool.pop_back();
      s->Reset();
      return s;
    }
  }
  return new Schedule();
}

void ReleaseSchedule(Schedule* s) {
  s->Reset();  // drops the op and types it held before it waits in the pool
  Engine& e = E();
  std::lock_guard<std::mutex> lock(e.pool_mu);
  e.pool.push_back(s);
}

void EnsureHook() {
  Engine& e = E();
  if (e.hooked.load(std::memory_order_acquire)) return;  // every start passes here
  std::lock_guard<std::mutex> lock(e.mu);
  if (!e.hooked.load(std::memory_order_relaxed)) {
    e.active.reserve(64);
    e.hooked.store(progress::RegisterHook(&Hook, nullptr), std::memory_order_release);
    rt::AddAsyncBusyProbe(&HostWorkPending);
  }
}

namespace {

void ListLocked(Engine& e, Schedule* s) {
  if (e.active.size() == e.active.capacity()) e.active.reserve(e.active.size() * 2);
  e.active.push_back(s);
  e.n_active.store(e.active.size(), std::memory_order_release);
}

void ActivateLocked(Engine& e, Schedule* s) {
  ListLocked(e, s);
  s->Advance();  // post the first phase at once
  if (!s->running()) {
    e.active.pop_back();
    e.n_active.store(e.active.size(), std::memory_order_release);
  }
}

// Queued persistent collectives whose gate fired (persistent.h): launched
// here, on a thread inside an MPI call, never on the backend's thread.
bool LaunchFiredLocked(Engine& e) {
  bool any = false;
  for (Persistent* p = Persistent::TakeFired(); p != nullptr;) {
    Persistent* next = p->next_fired();  // read first: p may be listed again
    if (Schedule* s = p->LaunchFired()) {
      ActivateLocked(e, s);
      any = true;
    }
    p = next;
  }
  return any;
}

}  // namespace

void Activate(Schedule* s, bool async) {
  EnsureHook();
  const bool kick = async && s->largest_message() >= kAsyncMinBytes;  // s may finish below
  // With the host progress thread running, such a schedule is only listed:
  // its first phase (a local copy of the whole vector, rendezvous reads of
  // messages already announced) ran inside MPI_Start, 74-184 us of a 1 MiB
  // allreduce that the application could not overlap. The thread takes it
  // from here (schedules carry their own tags: listing order is not
  // matching order).
  const bool defer = kick && rt::AsyncProgressRunning();
  Engine& e = E();
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (defer)
      ListLocked(e, s);
    else
      ActivateLocked(e, s);
  }
  // After the schedule is listed, so a thread about to sleep either sees it
  // (HostWorkPending) or is woken; outside the lock, as the first kick
  // starts the thread.
  if (kick) rt::KickAsyncProgress();
}

bool Poll() {
  Engine& e = E();
  if (e.n_active.load(std::memory_order_acquire) == 0 && !Persistent::AnyFired()) return false;
  std::unique_lock<std::mutex> lock(e.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool any = LaunchFiredLocked(e);
  for (std::size_t i = 0; i < e.active.size();) {
    Schedule* s = e.active[i];
    any |= s->Advance();
    if (s->running()) {
      ++i;
    } else {
      e.active[i] = e.active.back();
      e.active.pop_back();
    }
  }
  e.n_active.store(e.active.size(), std::memory_order_release);
  return any;
}

void SyncWithEngine() {
  std::lock_guard<std::mutex> lock(E().mu);
}

Status WaitRequest(Request* req) {
  // rt::ProgressWait runs the hook (Poll, PollOffloaded) after the fabric
  // poll on every pass; polling here as well only doubled the engine's
  // share of each pass.
  // Without the hook (all kMaxHooks slots taken) the engine is polled here.
  EnsureHook();
  const bool hooked = E().hooked.load(std::memory_order_acquire);
  rt::Backoff b;
  while (!req->IsDone()) {
    if (!hooked && (Poll() || PollOffloaded())) b.Reset();
    if (req->IsDone()) break;
    NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
  }
  if (req->status.error != 0) {
    return Error(static_cast<Code>(req->status.error), TakeRunFailure(req));
  }
  return Status::Ok();
}

}  // namespace nicq::coll
