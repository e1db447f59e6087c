// NodeSlotCollective (node_persistent.h): the op slot's agreement at init, the
// starts, and the progress hook through which whichever thread of this
// process is inside MPI advances the started operations.
#include "coll/node_persistent.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "coll/node_words.h"
#include "core/config.h"
#include "core/lockfree_push.h"
#include "core/progress_hooks.h"
#include "dtype/datatype.h"
#include "runtime/async_progress.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

using node_words::kBcastChunkBytes;
using node_words::kFoldChunkBytes;

// The started operations of this process, advanced by the progress hook.
// A persistent start only pushes its operation onto `pending` (a lock-free
// stack: a start takes no lock, so it never waits behind a progress pass
// or a sleeper); the hook, under mu, moves them into `ops`. The lock also
// guards the nonblocking calls' queues.
struct Running {
  std::mutex mu;
  std::vector<NodeSlotCollective*> ops;
  std::atomic<NodeSlotCollective*> pending{nullptr};
  std::atomic<int> n{0};            // started and not completed: in ops or pending
  std::atomic<bool> hooked{false};  // set once, under mu
};
Running& R() {
  static Running* r = new Running;  // outlives static destruction (hooks may run late)
  return *r;
}

// Under r.mu: the persistent starts pushed since the last pass join ops.
void DrainPending(Running& r) {
  NodeSlotCollective* op = r.pending.exchange(nullptr, std::memory_order_acquire);
  for (; op != nullptr; op = op->pending_next()) r.ops.push_back(op);
}

bool Hook(void*) {
  Running& r = R();
  if (r.n.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(r.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  DrainPending(r);
  bool any = false;
  for (std::size_t i = 0; i < r.ops.size();) {
    if (!r.ops[i]->Progress()) {
      ++i;
      continue;
    }
    any = true;
    if (r.ops[i]->StartQueued()) {
      ++i;
      continue;
    }
    r.ops[i] = r.ops.back();
    r.ops.pop_back();
    r.n.fetch_sub(1, std::memory_order_release);
  }
  return any;
}

// The progress sleeper: a waiter past its spin and yield sleeps on the
// area of the oldest started operation (whose starts and finished chunks
// wake it) instead of in the completion queue, which they would not end.
// The lock is held across the sleep so that no operation is freed under it.
bool SleepOnArea(int timeout_ms) {
  Running& r = R();
  if (r.n.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(r.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  DrainPending(r);
  if (r.ops.empty()) return false;
  NodeSlotCollective* op = r.ops.front();
  op->area()->SleepUnless([](void* o) { return static_cast<NodeSlotCollective*>(o)->Ready(); }, op,
                          long(timeout_ms) * 1000);
  return true;
}

// One blocking step through the area's small slots: every rank gets the
// AND of every rank's `mask` (the same protocol as a small allreduce).
Status AndAcrossRanks(NodeArea& area, std::uint64_t mask, std::uint64_t* all) {
  const std::uint64_t g = area.Next();
  const int i = int(g & 1);
  if (area.last_small[i] != 0) NICQ_RETURN_IF_ERROR(area.WaitPeers(area.last_small[i] + 1));
  area.last_small[i] = g;
  std::memcpy(area.slot(i, area.rank(), sizeof mask), &mask, sizeof mask);
  area.Arrive(g);
  NICQ_RETURN_IF_ERROR(area.WaitAll(g));
  *all = ~std::uint64_t{0};
  for (int r = 0; r < area.ranks(); ++r) {
    std::uint64_t v;
    std::memcpy(&v, area.slot(i, r, sizeof v), sizeof v);
    *all &= v;
  }
  return Status::Ok();
}

}  // namespace

bool NodeSlotCollective::EnsureHook() {
  Running& r = R();
  if (r.hooked.load(std::memory_order_acquire)) return true;  // every nonblocking call asks
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.hooked.load(std::memory_order_relaxed)) return true;
  if (!progress::RegisterHook(&Hook, nullptr)) return false;
  (void)progress::RegisterSleeper(&SleepOnArea);
  rt::AddAsyncBusyProbe([] { return R().n.load(std::memory_order_acquire) > 0; });
  r.hooked.store(true, std::memory_order_release);
  return true;
}

bool NodeSlotCollective::Fits(const Args& a, const NodeArea& area) {
  if (!NodeCollEnabled() || !NodeCollFits(a)) return false;
  if (!a.algo.empty() && a.algo != "auto") return false;
  std::size_t bytes = 0;
  switch (a.kind) {
    case Kind::kBarrier:
      return true;
    case Kind::kBcast:
      if (a.stype == nullptr || a.scount < 0) return false;
      bytes = std::size_t(a.scount) * std::size_t(a.stype->size);
      break;
    case Kind::kAllreduce:
    case Kind::kReduce: {
      // A user op would run on behalf of other ranks from any thread inside MPI.
      const dtype::Op* op = dtype::LookupOp(a.op);
      if (op == nullptr || !op->predefined) return false;
      bytes = std::size_t(a.rcount) * std::size_t(a.rtype->size);
      break;
    }
    default:
      return false;
  }
  // Large messages without cross-memory copies keep the schedule.
  return bytes <= NodeArea::kOpSmallBytes || area.cross_memory();
}

Status NodeSlotCollective::Create(const Args& a, std::unique_ptr<NodeSlotCollective>* out) {
  out->reset();
  if (!NodeCollEnabled() || !NodeCollFits(a)) return Status::Ok();
  NodeArea* area = nullptr;
  NICQ_RETURN_IF_ERROR(NodeAreaOf(a.comm, &area));
  if (area == nullptr || !Fits(a, *area)) return Status::Ok();

  // Every rank offers the slots it has free (none without the hook); the
  // lowest slot free everywhere is the operation's.
  const std::uint64_t all_slots =
      NodeArea::kOpSlots == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << NodeArea::kOpSlots) - 1;
  const std::uint64_t offer = EnsureHook() ? all_slots & ~area->op_slots_held : 0;
  std::uint64_t free_everywhere = 0;
  NICQ_RETURN_IF_ERROR(AndAcrossRanks(*area, offer, &free_everywhere));
  if (free_everywhere == 0) return Status::Ok();
  const int slot = __builtin_ctzll(free_everywhere);
  // Clear what the slot's last operation left, then a step so that no rank
  // starts before every line is clear. (Nobody reads the slot meanwhile:
  // its last operation is freed on every rank.)
  area->op_line(slot, area->rank())->started.store(0, std::memory_order_relaxed);
  if (area->rank() == 0) {
    area->op_shared(slot)->claimed.store(0, std::memory_order_relaxed);
    area->op_shared(slot)->done.store(0, std::memory_order_relaxed);
  }
  std::uint64_t unused = 0;
  NICQ_RETURN_IF_ERROR(AndAcrossRanks(*area, 0, &unused));

  std::unique_ptr<NodeSlotCollective> p(new NodeSlotCollective);
  p->Attach(area, slot);
  area->op_slots_held |= std::uint64_t{1} << slot;
  p->call_ = p->Bind(a);
  static const bool dump = !config::GetString("NICQ_PLAN_DUMP").empty();
  if (dump)
    std::fprintf(stderr, "nicq[%d] coll plan: %s algorithm=%s ranks=%d slot=%d engine=node\n",
                 area->rank(), KindName(a.kind), p->algorithm(), area->ranks(), slot);
  *out = std::move(p);
  return Status::Ok();
}

std::unique_ptr<NodeSlotCollective> NodeSlotCollective::ForReservedSlot(NodeArea* area, int slot) {
  std::unique_ptr<NodeSlotCollective> p(new NodeSlotCollective);
  p->Attach(area, slot);
  return p;
}

void NodeSlotCollective::Attach(NodeArea* area, int slot) {
  area_ = area;
  slot_ = slot;
  shared_ = area->op_shared(slot);
  for (int r = 0; r < area->ranks(); ++r) lines_.push_back(area->op_line(slot, r));
}

void SyncWithNodeHook() {
  std::lock_guard<std::mutex> lock(R().mu);
}

NodeSlotCollective::~NodeSlotCollective() {
  if (area_ != nullptr && slot_ < NodeArea::kOpSlots)
    area_->op_slots_held &= ~(std::uint64_t{1} << slot_);
}

NodeSlotCollective::Call NodeSlotCollective::Bind(const Args& a) {
  Call c;
  c.kind = a.kind;
  c.root = a.root;
  if (a.kind == Kind::kAllreduce || a.kind == Kind::kReduce) {
    // The reduction of the slot's last call with a predefined type again
    // (most calls repeat it) is not looked up anew; a derived type's
    // handle may name another type after a free.
    const int type = a.rtype->handle;
    if (!a.rtype->predefined || !bound_red_ || bound_red_->op != a.op || bound_red_->type != type)
      bound_red_ = NodeReducer{a.op, type, dtype::PreparedReduce::For(a.op, type)};
    c.red = *bound_red_;
    if (!a.rtype->predefined) bound_red_.reset();
    // A reduce's result goes to the root only (the others' recvbuf is
    // not significant).
    const bool gets_result = a.kind == Kind::kAllreduce || area_->rank() == a.root;
    c.out = gets_result ? static_cast<std::uint8_t*>(a.recvbuf) : nullptr;
    c.in = a.sendbuf == kInPlace ? static_cast<const std::uint8_t*>(a.recvbuf)
                                 : static_cast<const std::uint8_t*>(a.sendbuf);
    c.count = a.rcount;
    c.item = std::size_t(a.rtype->size);
    c.bytes = std::size_t(a.rcount) * c.item;
  } else if (a.kind == Kind::kBcast) {
    c.bytes = std::size_t(a.scount) * std::size_t(a.stype->size);
    c.count = std::int64_t(c.bytes);
    c.item = 1;
    c.in = c.out = static_cast<std::uint8_t*>(a.recvbuf);
    if (!a.stype->IsContiguous()) {
      c.layout = a.stype;
      c.user_buf = a.recvbuf;
      c.user_count = a.scount;
    }
  }
  c.large = c.bytes > NodeArea::kOpSmallBytes;
  if (c.large) {
    // A bcast's chunk needs no scratch (it is copied buffer to buffer):
    // larger chunks take fewer claims and system calls.
    c.chunk_items = a.kind == Kind::kBcast ? std::int64_t(kBcastChunkBytes)
                                           : std::int64_t(kFoldChunkBytes / c.item);
    c.chunks = std::uint64_t((c.count + c.chunk_items - 1) / c.chunk_items);
  }
  return c;
}

const std::uint8_t* NodeSlotCollective::SmallSrc(int half, int r) const {
  return call_.bytes <= sizeof(OpLine::inline_data[0]) ? lines_[r]->inline_data[half]
                                                       : area_->op_data(slot_, half, r);
}

Status NodeSlotCollective::Start(Request* owner, void (*on_done)(void*), void* on_done_arg) {
  call_.owner = owner;
  call_.on_done = on_done;
  call_.on_done_arg = on_done_arg;
  if (Publish()) return Status::Ok();
  Running& r = R();
  // Not in ops or pending: the request was inactive, and only the hook
  // completes (and drops) a started operation.
  LockFreePush(r.pending, this,
               [](NodeSlotCollective* n, NodeSlotCollective* next) { n->pending_next_ = next; });
  r.n.fetch_add(1, std::memory_order_release);
  // The host progress thread, where it runs, advances it while we compute.
  rt::KickAsyncProgress();
  return Status::Ok();
}

Status NodeSlotCollective::StartOrQueue(const Args& a, Request* owner) {
  Call c = Bind(a);
  c.owner = owner;
  const dtype::Type* t = a.kind == Kind::kAllreduce || a.kind == Kind::kReduce ? a.rtype
                         : a.kind == Kind::kBcast                              ? a.stype
                                                                               : nullptr;
  if (t != nullptr && !t->predefined) {
    c.retained = const_cast<dtype::Type*>(t);
    dtype::Retain(c.retained);
  }
  Running& r = R();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    // Busy: this rank's last call of the slot has not completed (the hook
    // has this object in its list and starts the queue after it).
    if (active() || !queued_.empty()) {
      queued_.push_back(c);
      return Status::Ok();
    }
    call_ = c;
    if (Publish()) return Status::Ok();
    r.ops.push_back(this);
    r.n.fetch_add(1, std::memory_order_release);
  }
  rt::KickAsyncProgress();
  return Status::Ok();
}

bool NodeSlotCollective::StartQueued() {
  while (!queued_.empty()) {
    call_ = queued_.front();
    queued_.pop_front();
    if (!Publish()) return true;
  }
  return false;
}

bool NodeSlotCollective::Publish() {
  const std::uint64_t k = ++starts_;
  const int me = area_->rank();
  OpLine* line = lines_[me];
  const bool sends = call_.kind != Kind::kBcast || me == call_.root;
  if (call_.layout != nullptr) {
    // A bcast's non-contiguous buffer: packed here, unpacked at completion.
    packed_.resize(call_.bytes);
    if (me == call_.root)
      dtype::Pack(*call_.layout, call_.user_buf, call_.user_count, packed_.data());
    call_.in = call_.out = packed_.data();
  }
  if (call_.large) {
    line->src = reinterpret_cast<std::uint64_t>(call_.in);
    line->dst = reinterpret_cast<std::uint64_t>(call_.out);
  } else if (call_.bytes > 0 && sends && call_.kind != Kind::kBarrier) {
    std::memcpy(const_cast<std::uint8_t*>(SmallSrc(int(k & 1), me)), call_.in, call_.bytes);
  }
  line->started.store(k, std::memory_order_release);
  area_->WakeSleepers();
  active_.store(true, std::memory_order_release);
  // The last rank to start a small one has every contribution already.
  return !call_.large && Progress();
}

bool NodeSlotCollective::AllStarted() const {
  for (int r = 0; r < area_->ranks(); ++r)
    if (lines_[r]->started.load(std::memory_order_acquire) < starts_) return false;
  return true;
}

Status NodeSlotCollective::FinishSmall() {
  if (call_.bytes == 0) return Status::Ok();
  const int half = int(starts_ & 1);
  if (call_.kind == Kind::kReduce && area_->rank() != call_.root) return Status::Ok();
  if (call_.kind == Kind::kAllreduce || call_.kind == Kind::kReduce) {
    const std::uint8_t* src[NodeArea::kMaxRanks];
    for (int r = 0; r < area_->ranks(); ++r) src[r] = SmallSrc(half, r);
    return FoldInRankOrder(call_.red, src, area_->ranks(), call_.out, call_.count, call_.bytes);
  }
  if (call_.kind == Kind::kBcast && area_->rank() != call_.root)
    std::memcpy(call_.out, SmallSrc(half, call_.root), call_.bytes);
  return Status::Ok();
}

bool NodeSlotCollective::Progress() {
  if (!call_.large) {
    if (!AllStarted()) return false;
    Complete(FinishSmall());
    return true;
  }
  if (!ChunksDone()) {
    if (!AllStarted()) return false;
    Status st = Status::Ok();
    while (WorkOneChunk(&st)) {
      if (!st.ok()) {
        Complete(st);
        return true;
      }
    }
    if (!ChunksDone()) return false;
  }
  Complete(Status::Ok());
  return true;
}

void NodeSlotCollective::Complete(Status st) {
  if (st.ok() && call_.layout != nullptr && area_->rank() != call_.root)
    dtype::Unpack(*call_.layout, packed_.data(), std::int64_t(call_.bytes), call_.user_count,
                  call_.user_buf);
  if (call_.retained != nullptr) dtype::Release(call_.retained);
  Request* owner = call_.owner;
  owner->status = RequestStatus{};
  owner->status.source = rt::kAnySource;
  owner->status.tag = rt::kAnyTag;
  if (!st.ok()) owner->status.error = static_cast<int>(st.code());
  active_.store(false, std::memory_order_release);
  if (call_.on_done != nullptr) call_.on_done(call_.on_done_arg);
  owner->MarkDone();
}

}  // namespace nicq::coll
