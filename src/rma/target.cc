// The target side: a progress hook that serves every window's requests in
// arrival order. One thread at a time serves (a flag, not a mutex: the hook
// is entered from the application thread and the async progress thread, and
// must never block either), which is what makes accumulates atomic with
// respect to each other on every provider.
#include <time.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "core/log.h"
#include "core/progress_hooks.h"
#include "dtype/reduce.h"
#include "mpi.h"
#include "rma/offload.h"
#include "rma/wire.h"
#include "runtime/async_progress.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::rma::detail {
namespace {

struct Registry {
  std::atomic<bool> busy{false};  // held by the serving thread or a list change
  std::vector<Window*> windows;
  std::atomic<int> live{0};              // windows served
  std::atomic<std::int64_t> last_ns{0};  // when a request was last served
};

// How long after the last request the async progress thread keeps polling
// for the next one at its short interval; after that it may fall asleep
// (bounded naps), so an idle window costs nothing and a quiet target still
// answers, later.
constexpr std::int64_t kActiveWindowNs = 200'000'000;

std::int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

Registry& Reg() {
  static auto* r = new Registry();
  return *r;
}

// The async progress thread's busy probe: passive-target traffic is recent.
bool RecentlyServed() {
  return Reg().live.load(std::memory_order_relaxed) > 0 &&
         NowNs() - Reg().last_ns.load(std::memory_order_relaxed) < kActiveWindowNs;
}

// The list changes on the application thread: it waits for a serving
// thread to finish its pass (a few microseconds), yielding.
void AcquireForChange() {
  bool expected = false;
  for (int spins = 0; !Reg().busy.compare_exchange_weak(expected, true, std::memory_order_acquire);
       ++spins) {
    expected = false;
    if (spins > 64) std::this_thread::yield();
  }
}

// Where a request's target bytes are, or an error (the target's own check).
Status Resolve(Window* w, const ReqHeader& h, const WireBlock* blocks, char** addr) {
  std::int64_t lo = 0, hi = 0;
  LayoutSpan(blocks, h.nblocks, h.count, h.extent, &lo, &hi);
  if (w->flavor == Flavor::kDynamic) {
    const std::uintptr_t start = std::uintptr_t(h.disp);
    std::lock_guard<std::mutex> lock(w->regions_mu);
    for (auto [b, n] : w->regions)
      if (hi <= lo || (start + lo >= b && start + hi <= b + n)) {
        *addr = reinterpret_cast<char*>(start);
        return Status::Ok();
      }
    return Error(Code::kRmaRange, "address " + std::to_string(h.disp) +
                                      " is not in a region attached to the dynamic window");
  }
  const std::int64_t off = h.disp * w->disp_unit;
  if (hi > lo && (off + lo < 0 || off + hi > w->bytes))
    return Error(Code::kRmaRange, "bytes [" + std::to_string(off + lo) + ", " +
                                      std::to_string(off + hi) + ") outside the window of " +
                                      std::to_string(w->bytes) + " bytes");
  *addr = static_cast<char*>(w->base) + off;
  return Status::Ok();
}

// Copies between the target layout at `addr` and contiguous bytes.
void Gather(const ReqHeader& h, const WireBlock* blocks, const char* addr, char* out) {
  for (std::int64_t i = 0; i < h.count; ++i)
    for (int b = 0; b < h.nblocks; ++b) {
      std::memcpy(out, addr + i * h.extent + blocks[b].offset, std::size_t(blocks[b].length));
      out += blocks[b].length;
    }
}
void Scatter(const ReqHeader& h, const WireBlock* blocks, const char* in, char* addr) {
  for (std::int64_t i = 0; i < h.count; ++i)
    for (int b = 0; b < h.nblocks; ++b) {
      std::memcpy(addr + i * h.extent + blocks[b].offset, in, std::size_t(blocks[b].length));
      in += blocks[b].length;
    }
}
Status Reduce(const ReqHeader& h, const WireBlock* blocks, const char* in, char* addr) {
  for (std::int64_t i = 0; i < h.count; ++i)
    for (int b = 0; b < h.nblocks; ++b) {
      const int unit = h.unit ? h.unit : blocks[b].basic;
      const std::int64_t n = blocks[b].length / dtype::BasicSize(unit);
      NICQ_RETURN_IF_ERROR(
          dtype::Reduce(h.op, BasicHandle(unit), in, addr + i * h.extent + blocks[b].offset, n));
      in += blocks[b].length;
    }
  return Status::Ok();
}

void Reply(Window* w, int origin, Code error, const char* data, std::int64_t bytes) {
  std::vector<char> msg(sizeof(ReplyHeader) + std::size_t(bytes));
  ReplyHeader rh;
  rh.error = std::int32_t(error);
  rh.bytes = bytes;
  std::memcpy(msg.data(), &rh, sizeof rh);
  if (bytes > 0) std::memcpy(msg.data() + sizeof rh, data, std::size_t(bytes));
  Status st = SendOwned(w->comm, origin, kReplyTag, std::move(msg), w->replies);
  if (!st.ok())
    NICQ_LOG(kError, kCore, "one-sided reply to rank %d: %s", origin, st.message().c_str());
}

// The first error since the origin's last acknowledgement, consumed.
Code TakeError(Window* w, int origin) {
  Code c = w->origin_error[std::size_t(origin)];
  w->origin_error[std::size_t(origin)] = Code::kOk;
  return c;
}

void NoteError(Window* w, int origin, const Status& st) {
  NICQ_LOG(kDebug, kCore, "one-sided request from rank %d: %s", origin, st.message().c_str());
  Code& slot = w->origin_error[std::size_t(origin)];
  if (slot == Code::kOk) slot = st.code();
}

bool CanGrant(const Window* w, bool exclusive) {
  if (w->exclusive_holder >= 0) return false;
  return !exclusive || w->shared_holders == 0;
}

void Grant(Window* w, int origin, bool exclusive) {
  if (exclusive)
    w->exclusive_holder = origin;
  else
    ++w->shared_holders;
  Reply(w, origin, Code::kOk, nullptr, 0);
}

void GrantWaiting(Window* w) {
  while (!w->lock_queue.empty() && CanGrant(w, w->lock_queue.front().second)) {
    auto [origin, exclusive] = w->lock_queue.front();
    w->lock_queue.pop_front();
    Grant(w, origin, exclusive);
  }
}

void Apply(Window* w, Incoming& in) {
  ReqHeader h;
  std::memcpy(&h, in.buf.data(), sizeof h);
  const auto* blocks = reinterpret_cast<const WireBlock*>(in.buf.data() + sizeof h);
  const char* data = in.buf.data() + sizeof h + sizeof(WireBlock) * std::size_t(h.nblocks);
  const int o = in.source;
  char* addr = nullptr;
  switch (h.kind) {
    case kPut:
    case kAcc: {
      Status st = Resolve(w, h, blocks, &addr);
      if (st.ok()) {
        if (h.kind == kPut)
          Scatter(h, blocks, data, addr);
        else
          st = Reduce(h, blocks, data, addr);
      }
      if (!st.ok()) NoteError(w, o, st);
      return;
    }
    case kGet:
    case kGetAcc:
    case kCas: {
      std::int64_t bytes = 0;
      for (int b = 0; b < h.nblocks; ++b) bytes += blocks[b].length;
      bytes *= h.count;
      std::vector<char> old(static_cast<std::size_t>(bytes));
      Status st = Resolve(w, h, blocks, &addr);
      if (st.ok()) {
        Gather(h, blocks, addr, old.data());
        if (h.kind == kGetAcc) {
          st = Reduce(h, blocks, data, addr);
        } else if (h.kind == kCas &&
                   std::memcmp(old.data(), data + bytes, std::size_t(bytes)) == 0) {
          Scatter(h, blocks, data, addr);
        }
      }
      Reply(w, o, st.code(), old.data(), bytes);
      return;
    }
    case kFlush:
      Reply(w, o, TakeError(w, o), nullptr, 0);
      return;
    case kLockShared:
    case kLockExclusive: {
      const bool exclusive = h.kind == kLockExclusive;
      if (w->lock_queue.empty() && CanGrant(w, exclusive))
        Grant(w, o, exclusive);
      else
        w->lock_queue.emplace_back(o, exclusive);
      return;
    }
    case kUnlock:
      if (w->exclusive_holder == o)
        w->exclusive_holder = -1;
      else if (w->shared_holders > 0)
        --w->shared_holders;
      Reply(w, o, TakeError(w, o), nullptr, 0);
      GrantWaiting(w);
      return;
    case kComplete:
      w->completes_seen.fetch_add(1, std::memory_order_acq_rel);
      return;
    default:
      NICQ_LOG(kError, kCore, "one-sided request of unknown kind %d from rank %d", int(h.kind), o);
  }
}

bool ServeWindow(Window* w) {
  bool progressed = false;
  for (;;) {
    bool flag = false;
    RequestStatus st;
    void* msg = nullptr;
    if (!rt::Improbe(rt::kAnySource, kRequestTag, w->comm, &flag, &st, &msg).ok() || !flag) break;
    auto in = std::make_unique<Incoming>();
    in->source = st.source;
    in->buf.resize(st.bytes);
    Status s = rt::Mrecv(msg, in->buf.data(), st.bytes, w->comm, &in->req);
    if (!s.ok()) {
      NICQ_LOG(kError, kCore, "one-sided request from rank %d: %s", st.source, s.message().c_str());
      continue;
    }
    w->incoming.push_back(std::move(in));
    progressed = true;
  }
  // In arrival order: an origin's requests are applied in the order it sent them.
  while (!w->incoming.empty() && w->incoming.front()->req.IsDone()) {
    Apply(w, *w->incoming.front());
    w->incoming.pop_front();
    progressed = true;
  }
  if (progressed) Reg().last_ns.store(NowNs(), std::memory_order_relaxed);
  ReapSends(w->replies);
  return progressed;
}

}  // namespace

bool ServeAll(void*) {
  Registry& r = Reg();
  bool expected = false;
  if (!r.busy.compare_exchange_strong(expected, true, std::memory_order_acquire)) return false;
  bool progressed = false;
  bool counters = false;
  for (Window* w : r.windows) {
    progressed |= ServeWindow(w);
    counters |= w->offload != nullptr;
  }
  r.busy.store(false, std::memory_order_release);
  // A host-driven backend fires the counter path's gated completes and
  // lands its puts only while someone calls its Progress, and the native
  // one reclaims finished ops' slots there: every MPI call's progress pass
  // does it, as for the queue engine.
  if (counters)
    if (offload::OffloadBackend* be = rt::Backend()) progressed |= be->Progress();
  return progressed;
}

void Serve(Window* w) {
  static const bool registered = [] {
    rt::AddAsyncBusyProbe(RecentlyServed);
    return progress::RegisterHook(ServeAll, nullptr);
  }();
  if (!registered) NICQ_LOG(kError, kCore, "no room for the one-sided progress hook");
  w->origin_error.assign(std::size_t(w->size), Code::kOk);
  AcquireForChange();
  Reg().windows.push_back(w);
  Reg().live.fetch_add(1, std::memory_order_relaxed);
  Reg().last_ns.store(NowNs(), std::memory_order_relaxed);
  Reg().busy.store(false, std::memory_order_release);
  // Passive-target requests may arrive while this process computes: the
  // async progress thread (when enabled) serves them.
  rt::KickAsyncProgress();
}

void StopServing(Window* w) {
  AcquireForChange();
  auto& v = Reg().windows;
  v.erase(std::remove(v.begin(), v.end(), w), v.end());
  Reg().live.fetch_sub(1, std::memory_order_relaxed);
  Reg().busy.store(false, std::memory_order_release);
}

}  // namespace nicq::rma::detail
