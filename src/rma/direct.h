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
// pair at stage + (t * size + o) * (sizeof(StageHead) + stage_capacity).
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
  // until the first single-run access, kMemRefused when it cannot be
  // opened): a pwrite/pread on it skips the task lookup and ptrace check
  // that process_vm_writev/readv repeat on every call (direct_ops.cc).
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

}  // namespace direct
}  // namespace nicq::rma
