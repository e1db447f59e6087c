// The one-node direct path of nicq::rma (docs/rma.md, "One node"): when
// every member of a window is on this node, origins move data themselves —
// load/store into a shared segment (MPI_Win_allocate, allocate_shared) or
// process_vm_readv/writev into the target's memory (MPI_Win_create) — and
// synchronize through a control block in shared memory: a lock word and an
// accumulate lock per target, PSCW post and complete counters, a barrier.
// No target ever has to run for an origin to finish, so a sleeping or
// computing target delays nobody. Private to src/rma.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/status.h"
#include "dtype/datatype.h"
#include "rma/window.h"

namespace nicq::rma {

// A 32-bit word other processes wait on (futex) and how many of them sleep
// on it, so a waker makes the system call only when someone sleeps.
struct WaitWord {
  std::atomic<std::uint32_t> value{0};
  std::atomic<std::uint32_t> sleepers{0};
};
static_assert(sizeof(WaitWord) == 8, "the control block's layout is shared by processes");

// One target's words, one cache line (origins hammer other targets' lines
// without slowing this one).
struct alignas(64) TargetControl {
  WaitWord lock;       // kExclusive | writers waiting << 16 | shared holders
  WaitWord acc;        // 0 free, 1 held: accumulates to this target
  WaitWord completes;  // MPI_Win_complete calls addressed to this target, ever
};

// The control block at the start of the window's segment: this header,
// then TargetControl[size], then WaitWord posts[size * size]
// (posts[t * size + o]: MPI_Win_post calls of target t naming origin o),
// then, on MPI_Win_create windows, one staging area per (origin, target)
// pair at stage + (t * size + o) * (sizeof(StageHead) + stage_capacity),
// then LockStageTarget[size] and LockSlot[size * size] (lock_slots[t * size
// + o]; direct_lock_stage.cc).
struct alignas(64) ControlHeader {
  WaitWord barrier_arrived;
  WaitWord barrier_round;
};

// The head of a staging area: bytes of runs the origin's MPI_Win_complete
// published and the target's MPI_Win_wait/test has not applied yet. The
// runs follow the head's cache line: StageRun, then its bytes padded to 8.
struct alignas(64) StageHead {
  std::atomic<std::uint32_t> bytes{0};
};
struct StageRun {
  std::int64_t offset;  // in the target's window part
  std::int64_t length;
};

// Lock-epoch staging (direct_lock_stage.cc): one slot per (origin, target)
// pair. Its state word alone decides who writes a published put into the
// target's memory, so it is applied exactly once: the target takes it
// with kStaged -> kApplying, the origin takes it back with kStaged -> kFree.
enum LockSlotState : std::uint32_t {
  kSlotFree = 0,      // the origin's: it writes runs here
  kSlotStaged = 1,    // published: the first of target and origin to move it owns it
  kSlotApplying = 2,  // the target copies the runs into its window
  kSlotApplied = 3,   // done; the origin makes it free again
};
inline constexpr std::size_t kLockSlotBytes = 512;
struct alignas(64) LockSlot {
  std::atomic<std::uint32_t> state{kSlotFree};
  std::uint32_t bytes = 0;  // of runs, written before the state moves to kSlotStaged
  alignas(64) char runs[kLockSlotBytes];
};
// Per target: when it last polled its slots (CLOCK_MONOTONIC ns, 0: it
// went to sleep), and how many of its slots are staged (its progress pass
// looks at them only when this is nonzero).
struct alignas(64) LockStageTarget {
  std::atomic<std::int64_t> listen_ns{0};
  std::atomic<std::uint32_t> staged{0};
};

struct Direct {
  Direct() = default;
  Direct(const Direct&) = delete;
  Direct& operator=(const Direct&) = delete;
  ~Direct() {
    for (int fd : mem_fds)
      if (fd >= 0) close(fd);
  }

  ControlHeader* header = nullptr;
  TargetControl* targets = nullptr;
  WaitWord* posts = nullptr;
  int size = 0;
  // Where each rank's window memory is in this process: the shared segment's
  // part, this process's own base, or nullptr (another process's
  // MPI_Win_create memory: reached through process_vm at remote_base).
  std::vector<char*> local_base;
  std::vector<std::uint64_t> remote_base;
  std::vector<pid_t> pids;
  // Per rank, /proc/<pid>/mem opened for reading and writing (kMemUnopened
  // until the first single-run access within a page, kMemRefused when it
  // cannot be opened): a pwrite/pread on it skips the task lookup and ptrace
  // check that process_vm_writev/readv repeat on every call (direct_ops.cc).
  static constexpr int kMemUnopened = -1;
  static constexpr int kMemRefused = -2;
  std::vector<int> mem_fds;
  // PSCW bookkeeping of this process: posts consumed per target, and the
  // completes counted by earlier MPI_Win_wait/test calls.
  std::vector<std::uint32_t> posts_seen;
  std::uint32_t completes_seen = 0;
  // PSCW puts to MPI_Win_create memory are staged (direct_stage.cc):
  // capacity of one pair's area (0: no staging), and per target the bytes
  // this origin wrote into its area and has not published yet.
  char* stage = nullptr;
  std::size_t stage_capacity = 0;
  std::vector<std::uint32_t> stage_used;
  // Lock-epoch staging of small puts to MPI_Win_create memory (nullptr: not
  // on this window): per target the bytes of runs this origin wrote into
  // its slot and has not published, and until when (ns) it stages nothing
  // there after the target let a staged put wait out the bound.
  LockStageTarget* lock_targets = nullptr;
  LockSlot* lock_slots = nullptr;
  std::vector<std::uint32_t> lock_used;
  int lock_batches = 0;  // targets whose lock_used is nonzero (flush: one test)
  std::vector<std::int64_t> lock_skip_until;
  // Accumulates use CPU atomics per element (direct_atomic.cc): every
  // member maps every part (MPI_Win_allocate, allocate_shared) and the
  // window was made with mpi_accumulate_granularity 1-8
  // (SetAccumulateGranularity). The same on every member, so all origins of
  // a location use one mechanism.
  bool atomic_acc = false;
  int me = 0;  // this process's window rank (the target side's progress pass)
  std::int64_t listen_written = 0;
  // What this origin's lock-epoch puts did (MPI_Win_get_info, tests).
  std::uint64_t lock_staged_puts = 0, lock_applied = 0, lock_reclaimed = 0;
};

namespace direct {

// Bytes of the control block for `size` ranks (with staging areas when
// `staged`), rounded to whole pages.
std::size_t ControlBytes(int size, bool staged);
// Points `d` at the control block at `at` (zeroed by ftruncate at creation).
void Bind(Direct* d, void* at, int size, bool staged);

// Calls fn(offset_in_window_part, length) for every run of the target
// layout of `t` starting at byte `base`, in type-map order (the packed
// data's order).
template <class Fn>
void ForEachRun(const Target& t, std::int64_t base, Fn fn) {
  const dtype::Type& tt = *t.type;
  if (tt.IsContiguous()) {
    if (tt.size * t.count > 0) fn(base, tt.size * t.count);
    return;
  }
  for (std::int64_t i = 0; i < t.count; ++i)
    for (const dtype::Block& b : tt.blocks) fn(base + i * tt.extent + b.offset, b.length);
}

inline std::size_t Pad8(std::int64_t v) {
  return (std::size_t(v) + 7) & ~std::size_t(7);
}

// Bytes the runs of `t` from `base` take when staged (StageRun + padded data each).
inline std::size_t StagedBytes(const Target& t, std::int64_t base) {
  std::size_t need = 0;
  ForEachRun(t, base,
             [&](std::int64_t, std::int64_t len) { need += sizeof(StageRun) + Pad8(len); });
  return need;
}

// Writes the runs of `t` from `base`, with their data from the packed `in`,
// at `at` (StagedBytes(t, base) bytes).
inline void PackStaged(const Target& t, std::int64_t base, const char* in, char* at) {
  ForEachRun(t, base, [&](std::int64_t off, std::int64_t len) {
    const StageRun run{off, len};
    std::memcpy(at, &run, sizeof run);
    std::memcpy(at + sizeof run, in, std::size_t(len));
    at += sizeof run + Pad8(len);
    in += len;
  });
}

// Calls fn(run, data) for each run of `bytes` bytes of runs at `at`.
template <class Fn>
void ForEachStaged(const char* at, std::size_t bytes, Fn fn) {
  for (std::size_t pos = 0; pos < bytes;) {
    StageRun run;
    std::memcpy(&run, at + pos, sizeof run);
    fn(run, at + pos + sizeof run);
    pos += sizeof run + Pad8(run.length);
  }
}

inline std::int64_t PartOffset(Window* w, const Target& t) {
  return t.disp * w->disp_units[std::size_t(t.rank)];
}

// Whether this process may read `addr` in process `pid` with process_vm_readv
// and finds `expect` there (the kernel's ptrace rules allow it).
bool ProbeProcessVm(pid_t pid, std::uint64_t addr, std::uint64_t expect);

// ---- synchronization (direct_sync.cc); all waits spin briefly, yield,
// then sleep on a futex ----
void LockShared(Direct* d, int target);
void LockExclusive(Direct* d, int target);
void UnlockShared(Direct* d, int target);
void UnlockExclusive(Direct* d, int target);
// Serializes accumulates to one target (atomicity per basic element among
// accumulate operations; in fact per operation).
void AccLock(Direct* d, int target);
void AccUnlock(Direct* d, int target);
void Barrier(Direct* d);
void Post(Direct* d, int me, const std::vector<int>& origins);
void Start(Direct* d, int me, const std::vector<int>& targets);
void Complete(Direct* d, int me, const std::vector<int>& targets);
// MPI_Win_wait (block) or MPI_Win_test (block = false): true once every
// origin of the exposure group completed since the last exposure epoch
// ended (then it ends, and their staged puts are applied).
bool WaitCompletes(Direct* d, int me, const std::vector<int>& origins, bool block);

// ---- staged puts (direct_stage.cc) ----
// A put inside a PSCW access epoch to another process's MPI_Win_create
// memory is copied into this origin's staging area for the target instead
// of a process_vm_writev (about 1.5 us per call): MPI_Win_complete
// publishes the area, and the target copies the runs into its window in
// the MPI_Win_wait or MPI_Win_test that ends its exposure epoch, which is
// the first moment the standard lets it see them. A put that does not fit
// writes out what is staged first (the origin does it itself with
// process_vm_writev), so a target sees its puts in issue order.
// Area capacity per pair for `size` ranks (0: too many ranks to stage).
std::size_t StageCapacity(int size);
Status StagePut(Window* w, const Target& t, const char* in);
// Writes this origin's unpublished runs for `target` with process_vm_writev.
Status FlushStaged(Window* w, int target);
// MPI_Win_complete, before the target's completes count moves.
void PublishStaged(Direct* d, int me, int target);
// The target, once every origin of `origins` completed: applies their runs.
void ApplyStaged(Direct* d, int me, const std::vector<int>& origins);

// ---- lock-epoch staging (direct_lock_stage.cc) ----
// A put of at most kLockStagePutMax bytes in a lock epoch to another
// process's MPI_Win_create memory, while that process is seen polling in
// MPI, is copied into the pair's slot; the unlock or flush publishes the
// slot, waits up to NICQ_RMA_LOCK_STAGE_NS for the target's progress pass
// to apply it, and otherwise takes it back and writes it itself, so a
// target outside MPI costs the origin at most the bound.
// 256: a record of one such put fits a slot (512 bytes of records) about
// twice, and up to there copying it in and out costs a few ns against the
// 1.2 us of the system call it saves (0.35 us per epoch at 256 B, 0.29 at
// 8 B, performance.md Run 25).
inline constexpr std::int64_t kLockStagePutMax = 256;
// Bytes of the lock slots (and per-target words) in a created window's
// control block: 0 above kLockStageMaxRanks ranks. The layout does not
// depend on NICQ_RMA_LOCK_STAGE, which ranks need not agree on.
std::size_t LockStageBytes(int size);
void BindLockStage(Direct* d, char* at, int size);
// Registers (and at free unregisters) the window's target side with the
// progress pass that applies staged puts.
void StartLockStage(Direct* d);
void StopLockStage(Direct* d);
// Stages the put when it qualifies (*staged); else the caller writes it.
Status StageLockPut(Window* w, const Target& t, const char* in, bool* staged);
// Publishes this origin's staged puts to `target` and returns once they are
// in its memory (by the target, or by this origin after the bound).
Status FinishLockStage(Window* w, int target);
// Writes `bytes` of runs at `runs` into `target`'s memory (process_vm).
Status WriteRuns(Window* w, int target, const char* runs, std::size_t bytes);

// ---- data movement (direct_ops.cc), after the origin's checks ----
// The target layout `t` (count items of t.type at t.disp) on window w.
// `in` is origin data packed contiguous (t.type->size * t.count bytes);
// `out` receives the target's bytes packed the same way.
Status Write(Window* w, const Target& t, const char* in);
Status Read(Window* w, const Target& t, char* out);
// Under the target's accumulate lock: `old` (when non-null) receives the
// previous bytes, then op is applied (MPI_NO_OP: nothing; compare non-null:
// compare-and-swap of one item).
Status Accumulate(Window* w, const Target& t, int op, const char* in, char* old,
                  const char* compare);
// Accumulate on a window with atomic_acc (direct_atomic.cc); *taken false:
// a pair type, which the caller applies under the accumulate lock.
Status AtomicAccumulate(Window* w, const Target& t, int op, const char* in, char* old,
                        const char* compare, bool* taken);

}  // namespace direct
}  // namespace nicq::rma
