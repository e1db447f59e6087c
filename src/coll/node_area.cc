// The shared area's segment (made collectively, unlinked once mapped), the
// generation flags and the waiter's spin / yield / futex escalation.
#include "coll/node_area.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "core/config.h"
#include "core/cpu_relax.h"
#include "core/log.h"
#include "runtime/runtime.h"

namespace nicq::coll {

namespace {
constexpr std::uint64_t kAreaMagic = 0x6e696371636f6c31ull;  // "nicqcol1"
constexpr std::size_t kLine = 64;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kNameBytes = 64;

// Waiting: spin this long when each rank has a core of its own (a partner
// a few hundred nanoseconds behind is the common case; longer spins only
// take the core from a partner that other processes delayed), then yield
// for this long, then sleep on the futex in slices of at most
// kSleepMaxUs (so point-to-point traffic still moves and a dead member is
// noticed).
constexpr std::int64_t kSpinNs = 10000, kMinSpinNs = 300;  // NICQ_WAIT_SPIN_US, when set, instead
constexpr std::int64_t kYieldNs = 2000000;
constexpr long kSleepMaxUs = 1000;
constexpr std::int64_t kLivenessEveryNs = 1000000000;

std::int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::size_t RoundUp(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

// An op slot: the shared line, a line per rank, then the ranks' data.
std::size_t OpSlotBytes(int n) {
  return kLine + std::size_t(n) * kLine + 2 * std::size_t(n) * NodeArea::kOpSmallBytes;
}
std::size_t PidBytes() {
  return RoundUp(NodeArea::kMaxRanks * sizeof(std::int32_t), kLine);
}

std::size_t AreaBytes(int n) {
  return kPage + RoundUp(std::size_t(n) * kLine, kPage) +
         2 * std::size_t(n) * NodeArea::kSmallBytes + 2 * std::size_t(n) * NodeArea::kChunkBytes +
         2 * NodeArea::kChunkBytes + PidBytes() + NodeArea::kAllOpSlots * OpSlotBytes(n);
}

// Written by each rank before it reports the mapping to rank 0, read by
// anyone only after the exchange that ends Create (which orders them).
std::int32_t* PidTable(void* base, int n) {
  return reinterpret_cast<std::int32_t*>(static_cast<std::uint8_t*>(base) + AreaBytes(n) -
                                         NodeArea::kAllOpSlots * OpSlotBytes(n) - PidBytes());
}

long Futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t val, const timespec* ts) {
  // Shared futex (no FUTEX_PRIVATE_FLAG): the word is in a mapping of several processes.
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, val, ts, nullptr, 0);
}
}  // namespace

struct alignas(kLine) Header {
  std::uint64_t magic;
  std::uint32_t ranks;
  std::uint32_t pad;
  // A waiter about to sleep counts itself in `sleepers` and sleeps on `wake`;
  // an arriving rank that sees a sleeper bumps `wake` and wakes them all.
  alignas(kLine) std::atomic<std::uint32_t> wake;
  std::atomic<std::uint32_t> sleepers;
};
struct alignas(kLine) Flag {
  std::atomic<std::uint64_t> gen;
  std::atomic<std::uint64_t> src, dst;  // see NodeArea::Publish
  std::uint32_t small_bytes[2];         // a small bcast's size, by slot (see node_coll.cc)
  // Small slots of up to kInlineBytes, in the flag's own cache line: a
  // reader that sees the generation has the data with the same transfer.
  std::uint8_t inline_slot[2][NodeArea::kInlineBytes];
};
static_assert(sizeof(Flag) == kLine);
static_assert(sizeof(OpLine) == kLine && sizeof(OpShared) == kLine);
static_assert(NodeArea::kOpSlots <= 64);  // op_slots_held is a mask

Status NodeArea::Create(Comm* comm, Comm* shadow, int tag, std::unique_ptr<NodeArea>* out) {
  out->reset();
  const int n = comm->size, me = comm->rank;
  const std::size_t bytes = AreaBytes(n);
  char name[kNameBytes] = {};
  void* base = MAP_FAILED;
  if (me == 0) {
    std::snprintf(name, sizeof name, "/nicq-coll-%d-%u-%llu", int(getpid()), comm->context_id,
                  static_cast<unsigned long long>(comm->serial.value));
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0 && ftruncate(fd, off_t(bytes)) != 0) {
      close(fd);
      fd = -1;
      shm_unlink(name);
    }
    if (fd >= 0) {
      base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      close(fd);
    }
    if (base == MAP_FAILED) {
      NICQ_LOG(kInfo, kColl, "same-node collective area %s: %s", name, std::strerror(errno));
      if (fd >= 0) shm_unlink(name);
      name[0] = 0;
    } else {
      auto* h = new (base) Header{};
      h->ranks = std::uint32_t(n);
      PidTable(base, n)[0] = std::int32_t(getpid());
      std::atomic_thread_fence(std::memory_order_release);
      h->magic = kAreaMagic;
    }
    // The name to every other rank; an empty one says there is no area.
    std::vector<Request> sends(n);
    Status st = Status::Ok();
    int posted = 1;
    for (; posted < n && st.ok(); ++posted)
      st = rt::Isend(name, sizeof name, posted, tag, shadow, SendMode::kStandard, &sends[posted]);
    if (!st.ok()) --posted;  // the failed one was not posted
    // Every posted request lives in `sends`: each is waited before it goes.
    for (int r = 1; r < posted; ++r) {
      Status w = rt::Wait(&sends[r]);
      if (st.ok()) st = w;
    }
    // Every rank answers whether it mapped the area; that is also the
    // barrier after which the name can go.
    std::uint8_t all_ok = st.ok() && name[0] != 0;
    for (int r = 1; r < n && st.ok(); ++r) {
      std::uint8_t ok = 0;
      Request rq;
      st = rt::Irecv(&ok, 1, r, tag, shadow, &rq);
      if (st.ok()) st = rt::Wait(&rq);
      all_ok &= ok;
    }
    if (name[0]) shm_unlink(name);
    for (int r = 1; r < n && st.ok(); ++r) {
      Request rq;
      st = rt::Isend(&all_ok, 1, r, tag, shadow, SendMode::kStandard, &rq);
      if (st.ok()) st = rt::Wait(&rq);
    }
    if (!st.ok() || !all_ok) {
      if (base != MAP_FAILED) munmap(base, bytes);
      return st;
    }
  } else {
    Request rq;
    NICQ_RETURN_IF_ERROR(rt::Irecv(name, sizeof name, 0, tag, shadow, &rq));
    NICQ_RETURN_IF_ERROR(rt::Wait(&rq));
    name[kNameBytes - 1] = 0;
    std::uint8_t ok = 0;
    if (name[0]) {
      const int fd = shm_open(name, O_RDWR, 0);
      if (fd >= 0) {
        base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
      }
      ok = base != MAP_FAILED && static_cast<Header*>(base)->magic == kAreaMagic &&
           static_cast<Header*>(base)->ranks == std::uint32_t(n);
      if (ok) PidTable(base, n)[me] = std::int32_t(getpid());
      if (!ok) NICQ_LOG(kInfo, kColl, "cannot map the same-node collective area %s", name);
    }
    Request answer;
    Status st = rt::Isend(&ok, 1, 0, tag, shadow, SendMode::kStandard, &answer);
    if (st.ok()) st = rt::Wait(&answer);
    std::uint8_t all_ok = 0;
    if (st.ok()) st = rt::Irecv(&all_ok, 1, 0, tag, shadow, &rq);
    if (st.ok()) st = rt::Wait(&rq);
    if (!st.ok() || !all_ok) {
      if (base != MAP_FAILED) munmap(base, bytes);
      return st;
    }
  }
  std::unique_ptr<NodeArea> a(new NodeArea);
  a->base_ = base;
  a->bytes_ = bytes;
  a->ranks_ = n;
  a->rank_ = me;
  auto* p = static_cast<std::uint8_t*>(base);
  a->header_ = static_cast<Header*>(base);
  a->flags_ = reinterpret_cast<Flag*>(p + kPage);
  a->small_ = p + kPage + RoundUp(std::size_t(n) * kLine, kPage);
  a->stage_ = a->small_ + 2 * std::size_t(n) * kSmallBytes;
  a->result_ = a->stage_ + 2 * std::size_t(n) * kChunkBytes;
  a->ops_ = a->result_ + 2 * kChunkBytes + PidBytes();
  a->world_ = comm->world_ranks;
  a->oversubscribed_ = rt::Oversubscribed();
  const std::int64_t spin_us = config::GetInt("NICQ_WAIT_SPIN_US");
  a->spin_max_ns_ = a->oversubscribed_ ? 0 : spin_us > 0 ? spin_us * 1000 : kSpinNs;
  a->spin_ns_ = a->spin_max_ns_;
  // NICQ_NODE_COLL=staged: large messages through the area even where
  // process_vm_readv works (the path of nodes that refuse it).
  a->cross_memory_ = rt::CrossMemoryReads() && config::GetString("NICQ_NODE_COLL") != "staged";
  *out = std::move(a);
  return Status::Ok();
}

NodeArea::~NodeArea() {
  if (base_) munmap(base_, bytes_);
}

OpShared* NodeArea::op_shared(int slot) const {
  return reinterpret_cast<OpShared*>(ops_ + std::size_t(slot) * OpSlotBytes(ranks_));
}
OpLine* NodeArea::op_line(int slot, int r) const {
  return reinterpret_cast<OpLine*>(ops_ + std::size_t(slot) * OpSlotBytes(ranks_) + kLine +
                                   std::size_t(r) * kLine);
}
std::uint8_t* NodeArea::op_data(int slot, int i, int r) const {
  return ops_ + std::size_t(slot) * OpSlotBytes(ranks_) + kLine + std::size_t(ranks_) * kLine +
         (std::size_t(i) * ranks_ + r) * kOpSmallBytes;
}
int NodeArea::pid(int r) const {
  return PidTable(base_, ranks_)[r];
}

void NodeArea::Publish(std::uint64_t src, std::uint64_t dst) {
  // Ordered before the readers' loads by the release store of Arrive.
  flags_[rank_].src.store(src, std::memory_order_relaxed);
  flags_[rank_].dst.store(dst, std::memory_order_relaxed);
}
std::uint8_t* NodeArea::slot(int i, int r, std::size_t bytes) const {
  return bytes <= kInlineBytes ? flags_[r].inline_slot[i] : small(i, r);
}
void NodeArea::set_small_bytes(int i, std::uint32_t bytes) {
  flags_[rank_].small_bytes[i] = bytes;
}
std::uint32_t NodeArea::small_bytes_of(int i, int r) const {
  return flags_[r].small_bytes[i];
}
std::uint64_t NodeArea::src_of(int r) const {
  return flags_[r].src.load(std::memory_order_relaxed);
}
std::uint64_t NodeArea::dst_of(int r) const {
  return flags_[r].dst.load(std::memory_order_relaxed);
}

void NodeArea::Arrive(std::uint64_t g) {
  flags_[rank_].gen.store(g, std::memory_order_release);
  WakeSleepers();
}

void NodeArea::WakeSleepers() {
  // Pairs with the fence of a waiter going to sleep: either it sees our
  // store when it checks again, or we see it counted among the sleepers.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (header_->sleepers.load(std::memory_order_relaxed) == 0) return;
  header_->wake.fetch_add(1, std::memory_order_acq_rel);
  Futex(&header_->wake, FUTEX_WAKE, INT_MAX, nullptr);
}

void NodeArea::SleepUnless(bool (*ready)(void*), void* arg, long timeout_us) {
  header_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  const std::uint32_t seq = header_->wake.load(std::memory_order_acquire);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!ready(arg)) {
    timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000};
    Futex(&header_->wake, FUTEX_WAIT, seq, &ts);
  }
  header_->sleepers.fetch_sub(1, std::memory_order_relaxed);
}

bool NodeArea::AllAt(std::uint64_t g, bool skip_self) {
  if (known_min_ >= g) return true;
  std::uint64_t lo = ~std::uint64_t{0};
  for (int r = 0; r < ranks_; ++r) {
    if (skip_self && r == rank_) continue;
    const std::uint64_t v = flags_[r].gen.load(std::memory_order_acquire);
    if (v < g) return false;
    lo = v < lo ? v : lo;
  }
  if (!skip_self) known_min_ = lo;
  return true;
}

Status NodeArea::WaitAll(std::uint64_t g) {
  return WaitFor([&] { return AllAt(g, false); });
}

Status NodeArea::WaitPeers(std::uint64_t g) {
  return WaitFor([&] { return AllAt(g, true); });
}

Status NodeArea::WaitRank(int r, std::uint64_t g) {
  if (known_min_ >= g) return Status::Ok();
  return WaitFor([&] { return flags_[r].gen.load(std::memory_order_acquire) >= g; });
}

Status NodeArea::CheckMembers() {
  for (int r = 0; r < ranks_; ++r)
    if (r != rank_ && rt::LocalProcessGone(world_[r]))
      return Error(Code::kProcFailed,
                   "rank " + std::to_string(r) + " of the communicator exited during a collective");
  return Status::Ok();
}

template <class Done>
Status NodeArea::WaitFor(Done done) {
  if (done()) return Status::Ok();
  if (spin_max_ns_ > 0) {
    // The spin adapts: it halves when it ends empty (the partner is not
    // running, e.g. on our own core behind us, where spinning only delays
    // it) and doubles back when the partner arrives during it.
    const std::int64_t until = NowNs() + spin_ns_;
    for (unsigned i = 1;; ++i) {
      CpuRelax();
      if (done()) {
        spin_ns_ = std::min(spin_max_ns_, spin_ns_ * 2);
        return Status::Ok();
      }
      if (i % 64 == 0 && NowNs() > until) break;
      if (i % 256 == 0) NICQ_RETURN_IF_ERROR(rt::Progress());
    }
    spin_ns_ = std::max(kMinSpinNs, spin_ns_ / 2);
  }
  // Yield for a while before sleeping: a partner that another process
  // holds off its core comes back within a time slice or two, and a
  // waiter asleep by then needs a futex wake-up (tens of microseconds on a
  // loaded node) at every step: once both sides sleep each step, they keep
  // doing so.
  const std::int64_t yield_until = NowNs() + kYieldNs;
  for (int i = 1;; ++i) {
    sched_yield();
    if (done()) return Status::Ok();
    if (i % 4 == 0) {
      NICQ_RETURN_IF_ERROR(rt::Progress());
      if (NowNs() > yield_until) break;
    }
  }
  std::int64_t next_check = NowNs() + kLivenessEveryNs;
  for (long sleep_us = 20;; sleep_us = sleep_us * 2 > kSleepMaxUs ? kSleepMaxUs : sleep_us * 2) {
    header_->sleepers.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t seq = header_->wake.load(std::memory_order_acquire);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!done()) {
      timespec ts{0, sleep_us * 1000};
      Futex(&header_->wake, FUTEX_WAIT, seq, &ts);
    }
    header_->sleepers.fetch_sub(1, std::memory_order_relaxed);
    if (done()) return Status::Ok();
    NICQ_RETURN_IF_ERROR(rt::Progress());
    if (done()) return Status::Ok();
    const std::int64_t now = NowNs();
    if (now >= next_check) {
      next_check = now + kLivenessEveryNs;
      NICQ_RETURN_IF_ERROR(CheckMembers());
    }
  }
}

}  // namespace nicq::coll
