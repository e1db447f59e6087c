// NodeAllreduce (node_persistent.h): the op slot's agreement at init, the
// starts, and the progress hook through which whichever thread of this
// process is inside MPI advances the started operations.
#include "coll/node_persistent.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "core/config.h"
#include "core/progress_hooks.h"
#include "dtype/datatype.h"
#include "runtime/async_progress.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

// The claim and done words: the start number above, a chunk count below.
constexpr int kCountBits = 24;
constexpr std::uint64_t kCountMask = (std::uint64_t{1} << kCountBits) - 1;
std::uint64_t Word(std::uint64_t start, std::uint64_t count) {
  return start << kCountBits | count;
}

// Takes the next unit of start `k` in `w` (the first taker of a start
// resets the word); false when `limit` units are taken. Returns the unit
// taken, or the new count for the done word.
bool TakeNext(std::atomic<std::uint64_t>& w, std::uint64_t k, std::uint64_t limit,
              std::uint64_t* taken) {
  std::uint64_t cur = w.load(std::memory_order_acquire);
  for (;;) {
    const std::uint64_t at = cur >> kCountBits, n = at == k ? cur & kCountMask : 0;
    if (at > k || n >= limit) return false;
    if (w.compare_exchange_weak(cur, Word(k, n + 1), std::memory_order_acq_rel,
                                std::memory_order_acquire)) {
      *taken = n;
      return true;
    }
  }
}

int WriteToPid(int pid, std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
  while (len > 0) {
    const std::size_t part = std::min<std::size_t>(len, std::size_t(1) << 30);
    iovec local{const_cast<std::uint8_t*>(src), part};
    iovec remote{reinterpret_cast<void*>(addr), part};
    const ssize_t put = process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (put < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (put == 0) return EFAULT;
    src += put;
    addr += std::uint64_t(put);
    len -= std::size_t(put);
  }
  return 0;
}

Status CopyFailed(const char* what, int err, int r, std::size_t len) {
  return Error(err == ESRCH ? Code::kProcFailed : Code::kIntern,
               std::string(what) + " " + std::to_string(len) + " bytes of rank " +
                   std::to_string(r) + " of the communicator: " + std::strerror(err));
}

// The started operations of this process, advanced by the progress hook.
struct Running {
  std::mutex mu;
  std::vector<NodeAllreduce*> ops;
  std::atomic<int> n{0};
  bool hooked = false;
};
Running& R() {
  static Running* r = new Running;  // outlives static destruction (hooks may run late)
  return *r;
}

bool Hook(void*) {
  Running& r = R();
  if (r.n.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(r.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool any = false;
  for (std::size_t i = 0; i < r.ops.size();) {
    if (!r.ops[i]->Progress()) {
      ++i;
      continue;
    }
    r.ops[i] = r.ops.back();
    r.ops.pop_back();
    any = true;
  }
  r.n.store(int(r.ops.size()), std::memory_order_release);
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
  if (!lock.owns_lock() || r.ops.empty()) return false;
  NodeAllreduce* op = r.ops.front();
  op->area()->SleepUnless([](void* o) { return static_cast<NodeAllreduce*>(o)->Ready(); }, op,
                          long(timeout_ms) * 1000);
  return true;
}

bool EnsureNodeHook() {
  Running& r = R();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.hooked) r.hooked = progress::RegisterHook(&Hook, nullptr);
  if (r.hooked) {
    (void)progress::RegisterSleeper(&SleepOnArea);
    rt::AddAsyncBusyProbe([] { return R().n.load(std::memory_order_acquire) > 0; });
  }
  return r.hooked;
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

Status NodeAllreduce::Create(const Args& a, std::unique_ptr<NodeAllreduce>* out) {
  out->reset();
  if (!NodeCollEnabled() || a.kind != Kind::kAllreduce || !NodeCollFits(a)) return Status::Ok();
  if (!a.algo.empty() && a.algo != "auto") return Status::Ok();
  // A user op would run on behalf of other ranks from any thread inside MPI.
  const dtype::Op* op = dtype::LookupOp(a.op);
  if (op == nullptr || !op->predefined) return Status::Ok();
  NodeArea* area = nullptr;
  NICQ_RETURN_IF_ERROR(NodeAreaOf(a.comm, &area));
  if (area == nullptr) return Status::Ok();
  const std::size_t item = std::size_t(a.rtype->size), bytes = std::size_t(a.rcount) * item;
  const bool large = bytes > NodeArea::kOpSmallBytes;
  // Large messages without cross-memory copies keep the schedule.
  if (large && !area->cross_memory()) return Status::Ok();

  // Every rank offers the slots it has free (none without the hook); the
  // lowest slot free everywhere is the operation's.
  const std::uint64_t all_slots =
      NodeArea::kOpSlots == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << NodeArea::kOpSlots) - 1;
  const std::uint64_t offer = EnsureNodeHook() ? all_slots & ~area->op_slots_held : 0;
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

  std::unique_ptr<NodeAllreduce> p(new NodeAllreduce);
  p->area_ = area;
  p->slot_ = slot;
  area->op_slots_held |= std::uint64_t{1} << slot;
  p->red_ = NodeReducer{a.op, a.rtype->handle, dtype::PreparedReduce::For(a.op, a.rtype->handle)};
  p->out_ = static_cast<std::uint8_t*>(a.recvbuf);
  p->in_ = a.sendbuf == kInPlace ? p->out_ : static_cast<const std::uint8_t*>(a.sendbuf);
  p->count_ = a.rcount;
  p->item_ = item;
  p->bytes_ = bytes;
  p->large_ = large;
  p->shared_ = area->op_shared(slot);
  for (int r = 0; r < area->ranks(); ++r) {
    p->lines_.push_back(area->op_line(slot, r));
    for (int half = 0; half < 2; ++half)
      p->small_src_[half].push_back(bytes <= sizeof(OpLine::inline_data[0])
                                        ? area->op_line(slot, r)->inline_data[half]
                                        : area->op_data(slot, half, r));
  }
  if (large) {
    p->chunk_items_ = std::int64_t(NodeArea::kChunkBytes / item);
    p->chunks_ = std::uint64_t((a.rcount + p->chunk_items_ - 1) / p->chunk_items_);
    p->acc_.resize(NodeArea::kChunkBytes);
    p->operand_.resize(NodeArea::kChunkBytes);
  }
  static const bool dump = !config::GetString("NICQ_PLAN_DUMP").empty();
  if (dump)
    std::fprintf(stderr,
                 "nicq[%d] coll plan: allreduce algorithm=%s ranks=%d slot=%d engine=node\n",
                 area->rank(), p->algorithm(), area->ranks(), slot);
  *out = std::move(p);
  return Status::Ok();
}

NodeAllreduce::~NodeAllreduce() {
  if (area_ != nullptr) area_->op_slots_held &= ~(std::uint64_t{1} << slot_);
}

Status NodeAllreduce::Start(Request* owner) {
  owner_ = owner;
  const std::uint64_t k = ++starts_;
  const int me = area_->rank();
  OpLine* line = lines_[me];
  if (large_) {
    line->src = reinterpret_cast<std::uint64_t>(in_);
    line->dst = reinterpret_cast<std::uint64_t>(out_);
  } else if (bytes_ > 0) {
    std::memcpy(const_cast<std::uint8_t*>(small_src_[k & 1][me]), in_, bytes_);
  }
  line->started.store(k, std::memory_order_release);
  area_->WakeSleepers();
  active_.store(true, std::memory_order_release);
  // The last rank to start a small one has every contribution already.
  if (!large_ && Progress()) return Status::Ok();
  Running& r = R();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    r.ops.push_back(this);
    r.n.store(int(r.ops.size()), std::memory_order_release);
  }
  // The host progress thread, where it runs, advances it while we compute.
  rt::KickAsyncProgress();
  return Status::Ok();
}

bool NodeAllreduce::AllStarted() const {
  for (int r = 0; r < area_->ranks(); ++r)
    if (lines_[r]->started.load(std::memory_order_acquire) < starts_) return false;
  return true;
}

bool NodeAllreduce::Progress() {
  if (!large_) {
    if (!AllStarted()) return false;
    Status st = Status::Ok();
    if (bytes_ > 0)
      st = FoldInRankOrder(red_, small_src_[starts_ & 1].data(), area_->ranks(), out_, count_,
                           bytes_);
    Complete(st);
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

bool NodeAllreduce::ChunksDone() const {
  const std::uint64_t w = shared_->done.load(std::memory_order_acquire);
  return (w >> kCountBits) == starts_ && (w & kCountMask) >= chunks_;
}

bool NodeAllreduce::ChunksLeft() const {
  const std::uint64_t w = shared_->claimed.load(std::memory_order_acquire);
  return (w >> kCountBits) < starts_ ||
         ((w >> kCountBits) == starts_ && (w & kCountMask) < chunks_);
}

bool NodeAllreduce::Ready() const {
  if (!large_) return AllStarted();
  return ChunksDone() || (AllStarted() && ChunksLeft());
}

bool NodeAllreduce::WorkOneChunk(Status* st) {
  OpShared* sh = shared_;
  std::uint64_t c = 0;
  if (!TakeNext(sh->claimed, starts_, chunks_, &c)) return false;
  const int n = area_->ranks(), me = area_->rank();
  const std::int64_t first = std::int64_t(c) * chunk_items_;
  const std::int64_t items = std::min(chunk_items_, count_ - first);
  const std::size_t off = std::size_t(first) * item_, len = std::size_t(items) * item_;
  std::uint8_t* acc = acc_.data();
  // acc = input of rank n-1, then acc = input_r op acc down to rank 0 (the
  // order of every other path, so every element has the same bits).
  for (int r = n - 1; r >= 0; --r) {
    const std::uint8_t* operand = in_ + off;
    if (r != me) {
      std::uint8_t* into = r == n - 1 ? acc : operand_.data();
      const int err = rt::ReadFromRank(area_->world(r), into, lines_[r]->src + off, len);
      if (err != 0) {
        *st = CopyFailed("reading", err, r, len);
        return true;
      }
      operand = into;
    }
    if (r == n - 1) {
      if (operand != acc) std::memcpy(acc, operand, len);
    } else if (Status s = red_.Apply(operand, acc, items); !s.ok()) {
      *st = s;
      return true;
    }
  }
  for (int r = 0; r < n; ++r) {
    if (r == me) {
      std::memcpy(out_ + off, acc, len);
      continue;
    }
    const int err = WriteToPid(area_->pid(r), lines_[r]->dst + off, acc, len);
    if (err != 0) {
      *st = CopyFailed("writing", err, r, len);
      return true;
    }
  }
  std::uint64_t finished = 0;
  if (TakeNext(sh->done, starts_, chunks_, &finished) && finished + 1 == chunks_)
    area_->WakeSleepers();  // the ranks waiting for their result
  return true;
}

void NodeAllreduce::Complete(const Status& st) {
  owner_->status = RequestStatus{};
  owner_->status.source = rt::kAnySource;
  owner_->status.tag = rt::kAnyTag;
  if (!st.ok()) owner_->status.error = static_cast<int>(st.code());
  active_.store(false, std::memory_order_release);
  owner_->MarkDone();
}

}  // namespace nicq::coll
