// Staged puts of the one-node direct path (direct.h): inside a PSCW access
// epoch, a put to another process's MPI_Win_create memory is a memcpy into
// a staging area in the window's control block that only this origin
// writes and only that target reads. The epoch's synchronization already
// orders the two: the origin writes its area only after the target's post
// (which follows the target's previous wait, where it emptied the area)
// and publishes it in MPI_Win_complete before it moves the target's
// completes count; the target applies it once the count says every origin
// of its exposure group completed. One process_vm_writev costs about as
// much as the rest of the epoch, two memcpys of a small put much less.
#include <sys/uio.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "rma/direct.h"

namespace nicq::rma::direct {
namespace {

// All pairs' areas together stay within kStageBudget bytes; each between
// kStageMin and kStageMax bytes, or none when the window has too many ranks
// for that (a put then always takes process_vm_writev).
constexpr std::size_t kStageBudget = std::size_t(1) << 20;
constexpr std::size_t kStageMax = 4096;
constexpr std::size_t kStageMin = 256;

StageHead* Head(Direct* d, int origin, int target) {
  const std::size_t pair = std::size_t(target) * std::size_t(d->size) + std::size_t(origin);
  return reinterpret_cast<StageHead*>(d->stage + pair * (sizeof(StageHead) + d->stage_capacity));
}

char* Runs(StageHead* h) {
  return reinterpret_cast<char*>(h) + sizeof(StageHead);
}

}  // namespace

std::size_t StageCapacity(int size) {
  if (size < 2) return 0;
  const std::size_t pairs = std::size_t(size) * std::size_t(size);
  const std::size_t each = std::min(kStageMax, kStageBudget / pairs / 64 * 64);
  return each < kStageMin ? 0 : each - sizeof(StageHead);
}

Status StagePut(Window* w, const Target& t, const char* in) {
  Direct* d = w->direct;
  const std::int64_t base = PartOffset(w, t);
  const std::size_t need = StagedBytes(t, base);
  std::uint32_t& used = d->stage_used[std::size_t(t.rank)];
  if (used + need > d->stage_capacity) {
    NICQ_RETURN_IF_ERROR(FlushStaged(w, t.rank));
    if (need > d->stage_capacity) return Write(w, t, in);
  }
  PackStaged(t, base, in, Runs(Head(d, w->rank, t.rank)) + used);
  used += std::uint32_t(need);
  return Status::Ok();
}

Status WriteRuns(Window* w, int target, const char* runs, std::size_t bytes) {
  Direct* d = w->direct;
  const pid_t pid = d->pids[std::size_t(target)];
  const std::uint64_t base = d->remote_base[std::size_t(target)];
  std::vector<iovec> mine, theirs;
  std::int64_t pending = 0;
  Status st;
  auto flush = [&]() {
    if (mine.empty() || !st.ok()) return;
    const ssize_t n =
        process_vm_writev(pid, mine.data(), mine.size(), theirs.data(), theirs.size(), 0);
    if (n != ssize_t(pending))
      st = Error(Code::kOther, "process_vm_writev to rank " + std::to_string(target) + " moved " +
                                   std::to_string(n) + " of " + std::to_string(pending) +
                                   " bytes: " + std::strerror(errno));
    mine.clear();
    theirs.clear();
    pending = 0;
  };
  ForEachStaged(runs, bytes, [&](const StageRun& run, const char* data) {
    mine.push_back(iovec{const_cast<char*>(data), std::size_t(run.length)});
    theirs.push_back(
        iovec{reinterpret_cast<void*>(std::uintptr_t(base + std::uint64_t(run.offset))),
              std::size_t(run.length)});
    pending += run.length;
    if (mine.size() == IOV_MAX) flush();
  });
  flush();
  return st;
}

Status FlushStaged(Window* w, int target) {
  Direct* d = w->direct;
  std::uint32_t& used = d->stage_used[std::size_t(target)];
  if (used == 0) return Status::Ok();
  const Status st = WriteRuns(w, target, Runs(Head(d, w->rank, target)), used);
  used = 0;
  return st;
}

void PublishStaged(Direct* d, int me, int target) {
  if (!d->stage) return;
  std::uint32_t& used = d->stage_used[std::size_t(target)];
  if (used == 0) return;
  Head(d, me, target)->bytes.store(used, std::memory_order_release);
  used = 0;
}

void ApplyStaged(Direct* d, int me, const std::vector<int>& origins) {
  if (!d->stage) return;
  char* window = d->local_base[std::size_t(me)];
  for (int o : origins) {
    StageHead* h = Head(d, o, me);
    const std::uint32_t bytes = h->bytes.load(std::memory_order_acquire);
    if (bytes == 0) continue;
    ForEachStaged(Runs(h), bytes, [&](const StageRun& run, const char* data) {
      std::memcpy(window + run.offset, data, std::size_t(run.length));
    });
    // The origin writes the area again only after this process's next
    // post, whose seq_cst add orders this store before it.
    h->bytes.store(0, std::memory_order_relaxed);
  }
}

}  // namespace nicq::rma::direct
