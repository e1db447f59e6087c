// nicq::rma — MPI one-sided communication (windows, put/get/accumulate,
// fence, PSCW and passive-target synchronization). docs/rma.md describes
// both paths: a window whose members are all on this node takes the direct
// path (direct.h: origins move the data and synchronize in shared memory);
// every other window is served as active messages on the point-to-point
// engine, as described below.
//
// Each window holds a hidden duplicate of its communicator. Origins send
// one request message per operation to the target's rank on it; a progress
// hook (every MPI call's progress pass and the async progress thread) serves
// the requests of all windows in arrival order, so a target makes
// passive-target progress without calling a one-sided function, and every
// accumulate on a process is applied by one server at a time (atomic per
// element with respect to other accumulates). Replies (get data, flush and
// unlock acknowledgements, lock grants) come back in request order.
//
// Ranks are window (communicator) ranks; kProcNull targets are no-ops.
// Every call here is made by the application thread that owns the window's
// epoch; the hook runs on any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "dtype/datatype.h"
#include "runtime/comm.h"
#include "runtime/request.h"

namespace nicq::rma {

enum class Flavor : int { kCreate = 1, kAllocate = 2, kDynamic = 3, kShared = 4 };

struct Direct;    // the one-node direct path's state (direct.h)
struct Offload;   // the counter path's state (offload.h)
struct Pending;   // a reply the origin waits for (origin.cc)
struct Incoming;  // a request the target received (target.cc)
struct OutMsg;    // a message in flight whose buffer we own

// What the target of one operation is: window rank, displacement (in the
// target's disp_unit; an address on a dynamic window) and target layout.
struct Target {
  int rank = 0;
  std::int64_t disp = 0;
  const dtype::Type* type = nullptr;
  std::int64_t count = 0;
};

struct Window {
  Comm* comm = nullptr;  // hidden duplicate: all of the window's traffic
  int rank = 0, size = 1;
  Flavor flavor = Flavor::kCreate;
  void* base = nullptr;
  std::int64_t bytes = 0;
  std::int64_t disp_unit = 1;
  std::vector<std::int64_t> sizes;  // every rank's window size (origin range checks)
  bool owns_base = false;           // MPI_Win_allocate memory, freed with the window

  // Shared windows: the node's data segment; each rank's part starts at
  // offsets[r] in it. `map` is the whole mapping (a direct window's control
  // block first, then the data).
  void* shm = nullptr;
  void* map = nullptr;
  std::size_t map_len = 0;
  std::vector<std::int64_t> shm_offsets, disp_units;

  // Every member is on this node: operations and synchronization go through
  // shared memory (and process_vm for MPI_Win_create memory) instead of
  // requests to the target; nullptr on the active-message path. Fixed at
  // creation for the window's life, the same on every member.
  Direct* direct = nullptr;
  bool served = false;  // registered with the server (the active-message path)
  // PSCW puts and synchronization on the offload backend's RMA and counters
  // (offload.h); nullptr unless every member set it up. Only on
  // active-message windows, fixed at creation, the same on every member.
  Offload* offload = nullptr;
  std::string path_note;  // which path and why (the info log line, MPI_Win_get_info)

  // Dynamic windows: attached regions, read by the server.
  std::mutex regions_mu;
  std::vector<std::pair<std::uintptr_t, std::size_t>> regions;

  // ---- origin side (application thread) ----
  // Guards the origin state below (OriginLock), taken only when the process
  // runs at MPI_THREAD_MULTIPLE (fixed at MPI_Init): below that level one
  // thread at a time calls MPI and nothing else touches this state, and the
  // uncontended lock pair was a tenth of a same-node put + flush.
  std::mutex origin_mu;
  bool origin_locking = true;
  bool fence_open = false;  // between fences (not after MPI_MODE_NOSUCCEED)
  bool pscw_access = false;
  std::vector<int> start_group;
  std::vector<std::int8_t> lock_kind;  // per target: 0 none, 1 shared, 2 exclusive
  std::vector<std::uint8_t> lock_nocheck;
  bool lock_all = false, lock_all_nocheck = false;
  std::vector<std::uint8_t> touched;  // operations sent since the target's last flush
  std::deque<std::shared_ptr<Pending>> pending;
  std::vector<std::unique_ptr<OutMsg>> out;
  Status deferred;  // an error found while completing, reported by the next sync call

  // ---- exposure side ----
  bool pscw_exposure = false;
  int completes_expected = 0;
  std::vector<int> post_group;         // the exposure epoch's origins
  std::atomic<int> completes_seen{0};  // kComplete messages served (hook)

  // ---- target side (the server; only under the server's flag) ----
  std::deque<std::unique_ptr<Incoming>> incoming;
  std::vector<std::unique_ptr<OutMsg>> replies;
  int shared_holders = 0, exclusive_holder = -1;
  std::deque<std::pair<int, bool>> lock_queue;  // (origin, exclusive) waiting
  std::vector<Code> origin_error;               // first error per origin since its last ack

  // ---- API layer (never read here) ----
  int handle = 0;
  int errhandler = 0;
  std::string name;
  int comm_handle = 0;  // the user communicator's handle at creation (messages)
  std::vector<std::pair<std::string, std::string>> hints;
};

// Holds w->origin_mu when the window needs it (Window::origin_locking).
class OriginLock {
 public:
  explicit OriginLock(Window* w) : mu_(w->origin_locking ? &w->origin_mu : nullptr) {
    if (mu_) mu_->lock();
  }
  ~OriginLock() {
    if (mu_) mu_->unlock();
  }
  OriginLock(const OriginLock&) = delete;
  OriginLock& operator=(const OriginLock&) = delete;

 private:
  std::mutex* mu_;
};

// ---- windows (window.cc) -------------------------------------------------------
// Collective over comm. kCreate uses `base`; kAllocate and kShared allocate
// `bytes` (kShared: one node-wide shared segment, contiguous by rank
// unless `noncontig`); kDynamic ignores base and bytes.
Status Create(Comm* comm, Flavor flavor, void* base, std::int64_t bytes, std::int64_t disp_unit,
              bool noncontig, Window** out);
// Collective; fails (kRmaSync) while an access or exposure epoch is open,
// which CheckFreeable tells beforehand (the API runs delete callbacks between).
Status CheckFreeable(Window* w);
Status Free(Window* w);
// Local: tears down a window no member has used yet (no epoch, no
// operation), without Free's synchronization, for a caller whose collective
// step around the creation failed on another member (which may hold no
// window at all, so a collective free would wait for it forever).
void Discard(Window* w);
Status Attach(Window* w, void* base, std::int64_t bytes);
Status Detach(Window* w, const void* base);
// MPI 4.1's "mpi_accumulate_granularity" hint, given at creation with the
// same value on every member as the standard requires: 1 to 8 bytes (up to
// the widest atomic element) asks for synchronization per element, and
// accumulates on an allocated or shared direct window then use CPU atomics
// per element where the type has them; 0 (the default: the implementation
// chooses) and larger values keep the target's accumulate lock, one per
// operation, which is as fast for one element and much faster for long
// accumulates (docs/rma.md, "One node").
void SetAccumulateGranularity(Window* w, std::int64_t bytes);
// Read-only entries MPI_Win_get_info adds: the window's path
// ("nicq_rma_path"), on the direct path how accumulates are kept atomic
// ("nicq_rma_accumulate": "atomics" or "lock"), and on the counter path
// what went through counters.
std::vector<std::pair<std::string, std::string>> PathInfo(const Window* w);
// Shared windows: rank's segment (kProcNull: the first rank with a nonzero size).
Status SharedQuery(Window* w, int rank, std::int64_t* bytes, std::int64_t* disp_unit, void** base);

// ---- communication (origin.cc) ------------------------------------------------
// `req`, when given, is an MPI request completed at local completion (Rput...)
// through ResultDone/ResultComplete below.
Status Put(Window* w, const void* origin, const dtype::Type* ot, std::int64_t oc, const Target& t,
           Request* req);
Status Get(Window* w, void* origin, const dtype::Type* ot, std::int64_t oc, const Target& t,
           Request* req);
Status Accumulate(Window* w, const void* origin, const dtype::Type* ot, std::int64_t oc,
                  const Target& t, int op, Request* req);
Status GetAccumulate(Window* w, const void* origin, const dtype::Type* ot, std::int64_t oc,
                     void* result, const dtype::Type* rt, std::int64_t rc, const Target& t, int op,
                     Request* req);
Status CompareAndSwap(Window* w, const void* origin, const void* compare, void* result,
                      const dtype::Type* type, int rank, std::int64_t disp);
// Request-based operations: `poll` for the API's polled requests (true once
// the result arrived), `complete` unpacks it, `release` drops it.
bool ResultArrived(Request* req);
Status ResultComplete(Request* req);
Status ResultRelease(Request* req);

// ---- the same-node fast path (direct_fast.cc, direct_atomic.cc) ---------------
// The common case done without the general path: a direct window used by one
// thread at a time (not MPI_THREAD_MULTIPLE), the target's memory mapped
// here, one predefined type and count on every side, a nonnegative
// displacement in range, and an open fence or lock epoch to the target.
// true: done, and every check the general path makes would have passed;
// false: nothing happened, and the caller takes the general path, which also
// reports every error.
bool FastCopy(Window* w, bool put, void* origin, const dtype::Type* type, std::int64_t count,
              int rank, std::int64_t disp);
// Accumulate (result null), get_accumulate / fetch_and_op, or
// compare_and_swap (compare non-null, count 1) with a predefined op that
// applies to `type` (not a pair type): CPU atomics or the accumulate lock,
// as the element's mechanism on the window is (direct_atomic.cc).
bool FastAtomic(Window* w, const void* origin, const void* compare, void* result,
                const dtype::Type* type, std::int64_t count, int rank, std::int64_t disp, int op);
// MPI_Win_flush(_local) to `rank`, or the _all forms (all), with nothing
// staged and no error deferred: a memory fence.
bool FastFlush(Window* w, int rank, bool all);

// ---- synchronization (sync.cc) ------------------------------------------------
Status Fence(Window* w, int assert);
Status Post(Window* w, const std::vector<int>& ranks, int assert);
Status Start(Window* w, const std::vector<int>& ranks, int assert);
Status Complete(Window* w);
Status WaitExposure(Window* w);
Status TestExposure(Window* w, bool* done);
Status Lock(Window* w, bool exclusive, int rank, int assert);
Status Unlock(Window* w, int rank);
Status LockAll(Window* w, int assert);
Status UnlockAll(Window* w);
// rank < 0: all targets. Local completion is implemented as remote completion.
Status Flush(Window* w, int rank, const char* call);
Status Sync(Window* w);

// ---- internals shared by the files of this layer ------------------------------
namespace detail {
inline constexpr int kRequestTag = 1;  // origin -> target requests (the server probes these)
inline constexpr int kReplyTag = 2;    // target -> origin replies, in request order
inline constexpr int kPostTag = 3;     // MPI_Win_post -> MPI_Win_start
inline constexpr int kCollTag = 8;     // window-internal barrier and allgather (+ round)

// Starts the server hook once and adds/removes a window from its list.
void Serve(Window* w);
void StopServing(Window* w);
// Server-side: one pass over every window (target.cc).
bool ServeAll(void*);
// Reaps finished sends from `list` (origin or server owned).
void ReapSends(std::vector<std::unique_ptr<OutMsg>>& list);
// Sends `bytes` at `data` (moved into an OutMsg kept on `list` until sent).
Status SendOwned(Comm* comm, int dest, int tag, std::vector<char> data,
                 std::vector<std::unique_ptr<OutMsg>>& list);
// Window-internal collectives over the hidden communicator.
Status Barrier(Window* w);
Status Allgather(Comm* comm, const void* mine, std::size_t bytes, void* all);
// Waits until every reply expected from `rank` (< 0: any) arrived and is applied.
Status DrainReplies(Window* w, int rank);
// Sends a request that gets one acknowledgement reply; returns the wait handle.
std::shared_ptr<Pending> SendControl(Window* w, int rank, int kind, Status* st);
Status AwaitAck(Window* w, const std::shared_ptr<Pending>& p, const char* call);
}  // namespace detail

}  // namespace nicq::rma
