#include "coll/schedule.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

#include "coll/offload_allreduce.h"
#include "coll/persistent.h"
#include "core/log.h"
#include "core/progress_hooks.h"
#include "dtype/reduce.h"
#include "runtime/async_progress.h"
#include "runtime/runtime.h"

namespace nicq::coll {

// ---- building ----------------------------------------------------------------

void Schedule::SetReduce(int op, int type_handle, std::ptrdiff_t shift) {
  dtype::RetainOp(op);
  if (op_ != 0) dtype::ReleaseOp(op_);
  op_ = op;
  red_type_ = type_handle;
  red_shift_ = shift;
  prepared_ = dtype::PreparedReduce::For(op, type_handle);
  if (!prepared_.valid()) Hold(dtype::Lookup(type_handle));
}

void Schedule::Hold(const dtype::Type* t) {
  if (!t || t->predefined) return;
  auto* held = const_cast<dtype::Type*>(t);
  dtype::Retain(held);
  held_types_.push_back(held);
}

void Schedule::DropHolds() {
  for (dtype::Type* t : held_types_) dtype::Release(t);
  held_types_.clear();
  if (op_ != 0) dtype::ReleaseOp(op_);
  op_ = 0;
}

void Schedule::Reset() {
  DropHolds();
  steps_.clear();
  phase_end_.clear();
  open_from_ = 0;
  largest_message_ = 0;
  scratch_used_ = 0;
  op_ = red_type_ = 0;
  red_shift_ = 0;
  prepared_ = {};
  release_on_done = false;
  algorithm = "";
  on_done = nullptr;
  on_done_arg = nullptr;
}

char* Schedule::Scratch(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  const std::size_t i = scratch_used_++;
  if (i == scratch_.size()) {
    scratch_.emplace_back();
    scratch_size_.push_back(0);
  }
  if (scratch_size_[i] < bytes) {
    scratch_[i].reset(new char[bytes]);
    scratch_size_[i] = bytes;
  }
  return scratch_[i].get();
}

void Schedule::Send(const void* buf, std::size_t bytes, int peer) {
  Step s;
  s.kind = Step::kSend;
  s.src = buf;
  s.bytes = bytes;
  s.peer = peer;
  steps_.push_back(s);
  if (bytes > largest_message_) largest_message_ = bytes;
}

void Schedule::Recv(void* buf, std::size_t bytes, int peer) {
  Step s;
  s.kind = Step::kRecv;
  s.dst = buf;
  s.bytes = bytes;
  s.peer = peer;
  steps_.push_back(s);
  if (bytes > largest_message_) largest_message_ = bytes;
}

void Schedule::SendRemote(const void* buf, std::size_t bytes, int peer) {
  Send(buf, bytes, peer);
  steps_.back().remote = true;
}

void Schedule::RecvRemote(void* buf, std::size_t bytes, int peer) {
  Recv(buf, bytes, peer);
  steps_.back().remote = true;
}

void Schedule::Copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
  Step s;
  s.kind = Step::kCopy;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  steps_.push_back(s);
}

void Schedule::Reduce(const void* in, void* inout, std::size_t elements) {
  if (elements == 0) return;
  Step s;
  s.kind = Step::kReduce;
  s.src = in;
  s.dst = inout;
  s.bytes = elements;
  steps_.push_back(s);
}

void Schedule::Pack(const dtype::Type* t, const void* src, std::int64_t count, void* dst) {
  if (count == 0) return;
  Step s;
  s.kind = Step::kPack;
  Hold(t);
  s.type = t;
  s.src = src;
  s.dst = dst;
  s.count = count;
  steps_.push_back(s);
}

void Schedule::Unpack(const dtype::Type* t, const void* src, std::int64_t count, void* dst) {
  if (count == 0) return;
  Step s;
  s.kind = Step::kUnpack;
  Hold(t);
  s.type = t;
  s.src = src;
  s.dst = dst;
  s.count = count;
  steps_.push_back(s);
}

void Schedule::CopyTyped(const dtype::Type* t, const void* src, std::int64_t count, void* dst) {
  if (count == 0 || src == dst) return;
  Step s;
  s.kind = Step::kCopyTyped;
  Hold(t);
  s.type = t;
  s.src = src;
  s.dst = dst;
  s.count = count;
  steps_.push_back(s);
}

void Schedule::EndPhase() {
  const auto n = static_cast<std::uint32_t>(steps_.size());
  if (n == open_from_) return;
  phase_end_.push_back(n);
  open_from_ = n;
  // Size the request array now so Launch never allocates.
  std::uint32_t comm = 0;
  const std::uint32_t from = phase_end_.size() > 1 ? phase_end_[phase_end_.size() - 2] : 0;
  for (std::uint32_t i = from; i < n; ++i)
    comm += steps_[i].kind == Step::kSend || steps_[i].kind == Step::kRecv;
  if (comm > reqs_cap_) {
    reqs_.reset(new Request[comm]);
    reqs_cap_ = comm;
  }
}

// ---- running -------------------------------------------------------------------

Status Schedule::Launch(Comm* comm, int tag, Request* owner, Comm* local) {
  EndPhase();
  comm_ = comm;
  local_ = local ? local : comm;
  tag_ = tag;
  owner_ = owner;
  phase_ = 0;
  posted_ = 0;
  running_.store(true, std::memory_order_release);
  return Status::Ok();
}

Status Schedule::RunLocal(const Step& s) const {
  switch (s.kind) {
    case Step::kCopy:
      std::memmove(s.dst, s.src, s.bytes);
      break;
    case Step::kReduce:
      if (prepared_.valid()) {
        prepared_.Apply(s.src, s.dst, static_cast<std::int64_t>(s.bytes));
        break;
      }
      return dtype::Reduce(op_, red_type_, static_cast<const char*>(s.src) + red_shift_,
                           static_cast<char*>(s.dst) + red_shift_,
                           static_cast<std::int64_t>(s.bytes));
    case Step::kPack:
      dtype::Pack(*s.type, s.src, s.count, s.dst);
      break;
    case Step::kUnpack:
      dtype::Unpack(*s.type, s.src, s.count * s.type->size, s.count, s.dst);
      break;
    case Step::kCopyTyped:
      dtype::CopyTyped(*s.type, s.src, s.count, s.dst);
      break;
    default:
      return Error(Code::kIntern, "RunLocal: not a local step");
  }
  return Status::Ok();
}

Status Schedule::EnterPhase() {
  const std::uint32_t from = phase_ == 0 ? 0 : phase_end_[phase_ - 1];
  const std::uint32_t to = phase_end_[phase_];
  posted_ = 0;
  for (std::uint32_t i = from; i < to; ++i) {
    const Step& s = steps_[i];
    switch (s.kind) {
      case Step::kCopy:
      case Step::kReduce:
      case Step::kPack:
      case Step::kUnpack:
      case Step::kCopyTyped:
        NICQ_RETURN_IF_ERROR(RunLocal(s));
        break;
      case Step::kSend:
        NICQ_RETURN_IF_ERROR(rt::Isend(s.src, s.bytes, s.peer, tag_, s.remote ? comm_ : local_,
                                       SendMode::kStandard, &reqs_[posted_++]));
        break;
      case Step::kRecv:
        NICQ_RETURN_IF_ERROR(
            rt::Irecv(s.dst, s.bytes, s.peer, tag_, s.remote ? comm_ : local_, &reqs_[posted_++]));
        break;
    }
  }
  return Status::Ok();
}

void Schedule::Finish(const Status& st) {
  running_.store(false, std::memory_order_release);
  Request* owner = owner_;
  owner->status = RequestStatus{};
  owner->status.source = rt::kAnySource;
  owner->status.tag = rt::kAnyTag;
  last_error_ = st.ok() ? 0 : static_cast<int>(st.code());
  if (!st.ok()) {
    owner->status.error = last_error_;
    NICQ_LOG(kWarn, kColl, "collective (%s) failed: %s", algorithm, st.message().c_str());
  }
  if (on_done) on_done(on_done_arg);
  if (release_on_done) ReleaseSchedule(this);
  owner->MarkDone();  // last: the owner may be reused at once
}

bool Schedule::Advance() {
  if (!running_.load(std::memory_order_relaxed)) return false;
  bool progressed = false;
  for (;;) {
    if (posted_ > 0) {
      for (std::uint32_t i = 0; i < posted_; ++i) {
        if (!reqs_[i].IsDone()) return progressed;
      }
      for (std::uint32_t i = 0; i < posted_; ++i) {
        if (reqs_[i].status.error != 0) {
          Finish(Error(static_cast<Code>(reqs_[i].status.error),
                       "a message of the collective failed"));
          return true;
        }
      }
      posted_ = 0;
      ++phase_;
      progressed = true;
    }
    if (phase_ >= phase_end_.size()) {
      Finish(Status::Ok());
      return true;
    }
    Status st = EnterPhase();
    progressed = true;
    if (!st.ok()) {
      // Receives already posted would write into buffers the user now owns:
      // wait them out is impossible without their peers, so report loudly.
      Finish(st);
      return true;
    }
    if (posted_ == 0) ++phase_;  // local-only phase: go on at once
  }
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
  if (req->status.error != 0)
    return Error(static_cast<Code>(req->status.error), "the collective failed");
  return Status::Ok();
}

}  // namespace nicq::coll
