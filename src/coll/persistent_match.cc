// Matching and enqueueing persistent collectives (see persistent.h for the
// protocol and the threads involved).
#include <string>

#include "coll/algorithms.h"
#include "coll/persistent.h"
#include "core/lockfree_push.h"
#include "core/log.h"
#include "offload/algorithms/counter_ops.h"
#include "queue/queue.h"
#include "runtime/async_progress.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

constexpr int kMatchWords = 3;  // init sequence number, kind, signature digest

// Requests whose gate fired and that the engine has not taken yet.
std::atomic<Persistent*> g_fired{nullptr};
// Gated starts posted on the backend and not launched yet, over all
// requests: the host progress thread keeps polling while any is pending.
std::atomic<std::int64_t> g_gated{0};

}  // namespace

Persistent::~Persistent() {
  (void)Release();
  for (dtype::Type* t : retained) dtype::Release(t);
}

// ---- match ---------------------------------------------------------------------

Status Persistent::BeginMatch() {
  if (matched_) return Error(Code::kMatch, "the persistent collective request is already matched");
  if (matching_)
    return Error(Code::kMatch, "a match of this persistent collective request is in progress");
  if (args.comm->inter)
    return Error(Code::kComm,
                 "persistent collectives on an intercommunicator cannot be matched or enqueued "
                 "(they run on the host engine through MPI_Start)");
  offload::OffloadBackend* be = rt::Backend();
  if (!be) return Error(Code::kIntern, "persistent collective match: no offload context");
  const int p = args.comm->size;
  match_words_.assign(std::size_t(kMatchWords) * (p + 1), 0);
  std::uint64_t* mine = &match_words_[std::size_t(kMatchWords) * p];
  mine[0] = std::uint64_t(tag);
  mine[1] = std::uint64_t(args.kind);
  mine[2] = signature;
  // The agreement is one allgather on the init tag class: matches are
  // collective, so every rank takes the same sequence number for it.
  EnsureHook();
  match_sched_ = AcquireSchedule();
  BuildAllgatherBruck(*match_sched_, args.comm->rank, p, mine,
                      reinterpret_cast<char*>(match_words_.data()),
                      kMatchWords * sizeof(std::uint64_t));
  match_sched_->release_on_done = true;
  match_sched_->algorithm = "match-agreement";
  match_req_.done.store(false, std::memory_order_relaxed);
  match_req_.status = RequestStatus{};
  NICQ_RETURN_IF_ERROR(match_sched_->Launch(shadow, NextTag(args.comm, 3), &match_req_));
  matching_ = true;
  Activate(match_sched_);
  return Status::Ok();
}

Status Persistent::PollMatch(bool* done) {
  *done = matched_;
  if (matched_) return Status::Ok();
  if (!matching_) return Error(Code::kMatch, "the persistent collective match was not begun");
  if (!match_req_.IsDone()) return Status::Ok();
  matching_ = false;
  match_sched_ = nullptr;  // went back to the pool when it finished
  if (match_req_.status.error != 0)
    return Error(static_cast<Code>(match_req_.status.error),
                 "persistent collective match: the agreement exchange failed");
  const int p = args.comm->size;
  const std::uint64_t* mine = &match_words_[std::size_t(kMatchWords) * p];
  for (int r = 0; r < p; ++r) {
    const std::uint64_t* w = &match_words_[std::size_t(kMatchWords) * r];
    if (w[0] == mine[0] && w[1] == mine[1] && w[2] == mine[2]) continue;
    const bool known_kind = w[1] <= std::uint64_t(kLastKind);
    const std::string what =
        w[1] != mine[1] && known_kind
            ? std::string("a persistent ") + KindName(static_cast<Kind>(w[1])) + " request"
            : "another persistent " + std::string(KindName(args.kind)) + " request";
    return Error(Code::kMatch, std::string("persistent ") + KindName(args.kind) + " match: rank " +
                                   std::to_string(r) + " matched " + what +
                                   " (every rank must match the same collective request, in the "
                                   "same order)");
  }
  // Counters for the data path, allocated once (match time, not hot path).
  offload::OffloadBackend* be = rt::Backend();
  be_ = be;
  if (!off) {
    offload::CounterId c[2] = {offload::kNoCounter, offload::kNoCounter};
    NICQ_RETURN_IF_ERROR(be->AllocCounters(2, c));
    done_ = c[0];
    fired_counter_ = c[1];
    sched.on_done = &Persistent::ScheduleDone;
    sched.on_done_arg = this;
  }
  epochs_ = gated_posted_ = 0;
  launched_ = 0;
  fired_.store(0, std::memory_order_relaxed);
  matched_ = true;
  *done = true;
  return Status::Ok();
}

// ---- data path -------------------------------------------------------------------

Status Persistent::StartGated(offload::CounterId gate, std::uint64_t threshold) {
  if (!matched_) return Error(Code::kMatch, "request is not matched");
  if (off) {
    offload::OffloadBackend* b = off->plan().backend();
    const bool reached = gate == offload::kNoCounter || b->ReadCounter(gate) >= threshold;
    if (!off_armed_) {
      if (reached) return off->StartNow();
      // Arm the epoch, then let the gate bump the start counter.
      NICQ_RETURN_IF_ERROR(off->plan().ArmNext());
      off_armed_ = true;
    } else if (reached) {
      off_armed_ = false;
      return off->StartArmed();
    }
    offload::TriggeredOp& op = gate_ops_[off->plan().epochs_started() % 2];
    op = offload::LocalCounterAdd(gate, threshold, off->plan().start_counter());
    // kAgain (no trigger slot now): the queue retries this start later,
    // which then must not arm a second epoch.
    NICQ_RETURN_IF_ERROR(b->Post({&op, 1}));
    off_armed_ = false;
    return Status::Ok();
  }
  // On the same-node area a start whose gate is reached (every start of a
  // host-sequenced queue, which runs its steps in order) is published here:
  // the area then advances it inside any MPI call of any rank, with no
  // host op, fired list or schedule launch on the way.
  if (OnArea() && (gate == offload::kNoCounter || be_->ReadCounter(gate) >= threshold)) {
    if (AreaActive()) return Status(Code::kAgain, {});  // the last epoch still runs here
    ++epochs_;
    return StartQueuedOnNode();
  }
  const std::uint64_t n = gated_posted_ + 1;
  // The ring entry's previous op must have completed (its descriptor may
  // still be read by the backend until then): else no slot now.
  if (n > kGateRing && be_->ReadCounter(fired_counter_) < n - kGateRing)
    return Status(Code::kAgain, {});  // ring full; no message: a retry path allocates nothing
  offload::TriggeredOp& op = gate_ops_[n % kGateRing];
  op = offload::GatedHostCall(gate, threshold, &Persistent::FiredStart, this, fired_counter_);
  NICQ_RETURN_IF_ERROR(be_->Post({&op, 1}));
  gated_posted_ = n;
  g_gated.fetch_add(1, std::memory_order_release);
  // The gate fires on the backend's thread, which must not launch the
  // schedule: the host progress thread does, without an MPI call.
  rt::KickAsyncProgress();
  ++epochs_;
  return Status::Ok();
}

void Persistent::EpochRetired() {
  // A failure shows again at the start that needs the epoch (ArmNext).
  if (off) (void)off->plan().Refill();
}

Status Persistent::StartNode(Request* owner) {
  node_owner_ = owner;
  if (matched_) ++epochs_;
  if (hier) return hier->Start(owner, &Persistent::NodeDone, this);
  return node->Start(owner, &Persistent::NodeDone, this);
}

Status Persistent::StartQueuedOnNode(bool in_engine) {
  queued_owner_.done.store(false, std::memory_order_relaxed);
  queued_owner_.status = RequestStatus{};
  node_owner_ = &queued_owner_;
  if (hier) return hier->Start(&queued_owner_, &Persistent::NodeDone, this, in_engine);
  return node->Start(&queued_owner_, &Persistent::NodeDone, this);
}

void Persistent::NodeDone(void* self) {
  auto* P = static_cast<Persistent*>(self);
  P->last_error_ = P->node_owner_->status.error;
  if (P->matched_ && P->be_ && P->done_ != offload::kNoCounter)
    (void)P->be_->AddCounter(P->done_, 1);
}

Status Persistent::StartHost(Request* owner) {
  if (sched.running() || LaunchPending())
    return Error(Code::kRequest, "the persistent collective request is already active");
  NICQ_RETURN_IF_ERROR(sched.Launch(shadow, tag, owner, local_shadow));
  if (matched_) ++epochs_;
  Activate(&sched);
  return Status::Ok();
}

// Runs on the thread driving the backend: no lock, no allocation, no MPI.
void Persistent::FiredStart(void* self) {
  auto* P = static_cast<Persistent*>(self);
  // Sequentially consistent with LaunchFired's unlisting and reading (a
  // Dekker pair): a fire is either seen there or lists the request again.
  P->fired_.fetch_add(1);
  P->List();
}

void Persistent::List() {
  if (listed_.exchange(true)) return;  // already listed
  LockFreePush(g_fired, this, [](Persistent* n, Persistent* next) { n->next_fired_ = next; });
}

bool Persistent::AnyGated() {
  return g_gated.load(std::memory_order_acquire) > 0;
}

bool Persistent::AnyFired() {
  return g_fired.load(std::memory_order_relaxed) != nullptr;
}

Persistent* Persistent::TakeFired() {
  if (g_fired.load(std::memory_order_relaxed) == nullptr) return nullptr;
  return g_fired.exchange(nullptr, std::memory_order_acquire);
}

Schedule* Persistent::LaunchFired() {
  // Unlisted first: a gate that fires from now on lists the request again.
  listed_.store(false);
  if (fired_.load() <= launched_) return nullptr;
  if (sched.running() || AreaActive()) {  // cannot happen when the queue orders
    List();                               // starts; retry later
    return nullptr;
  }
  if (OnArea()) {  // every start of this request runs on the area (epoch counted at the post)
    if (Status st = StartQueuedOnNode(/*in_engine=*/true); !st.ok())
      NICQ_LOG(kError, kColl, "queued %s: start on the node area failed: %s", KindName(args.kind),
               st.message().c_str());
    ++launched_;
    g_gated.fetch_sub(1, std::memory_order_release);
    return nullptr;
  }
  queued_owner_.done.store(false, std::memory_order_relaxed);
  queued_owner_.status = RequestStatus{};
  if (Status st = sched.Launch(shadow, tag, &queued_owner_, local_shadow); !st.ok()) {
    NICQ_LOG(kError, kColl, "queued %s: launch failed: %s", KindName(args.kind),
             st.message().c_str());
    return nullptr;
  }
  ++launched_;
  g_gated.fetch_sub(1, std::memory_order_release);
  return &sched;
}

void Persistent::ScheduleDone(void* self) {
  auto* P = static_cast<Persistent*>(self);
  P->last_error_ = P->sched.last_error();
  if (P->be_ && P->done_ != offload::kNoCounter) (void)P->be_->AddCounter(P->done_, 1);
}

offload::CounterId Persistent::DoneCounter() const {
  return off ? off->plan().done_counter() : done_;
}

std::uint64_t Persistent::DoneTarget() const {
  return off ? off->plan().done_target() : epochs_;
}

std::uint64_t Persistent::EpochsStarted() const {
  return off ? off->plan().epochs_started() : epochs_;
}

void Persistent::GetStatus(RequestStatus* out) const {
  *out = RequestStatus{};
  out->source = rt::kAnySource;
  out->tag = rt::kAnyTag;
  out->error = off ? 0 : last_error_;
}

Status Persistent::Release() {
  if (gated_posted_ > launched_) {  // gates that will not fire any more
    g_gated.fetch_sub(std::int64_t(gated_posted_ - launched_), std::memory_order_release);
    launched_ = gated_posted_;
  }
  offload::CounterId* ids[2] = {&done_, &fired_counter_};
  for (offload::CounterId* id : ids) {
    if (*id != offload::kNoCounter && be_) be_->FreeCounter(*id);
    *id = offload::kNoCounter;
  }
  matched_ = false;
  return Status::Ok();
}

std::string Persistent::DebugString() const {
  std::string s = std::string("coll ") + KindName(args.kind) + " (" + sched.algorithm + ")";
  if (off || !be_) return s;
  return s + " epochs " + std::to_string(epochs_) + " done " +
         std::to_string(be_->ReadCounter(done_)) + " gates fired " +
         std::to_string(fired_.load(std::memory_order_relaxed)) + " launched " +
         std::to_string(launched_) + (sched.running() ? " running" : "");
}

}  // namespace nicq::coll
