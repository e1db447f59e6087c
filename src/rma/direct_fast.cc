// The same-node fast path of put, get and flush (window.h, FastCopy and
// FastFlush): the checks of the general path (origin.cc, sync.cc) reduced
// to the tests that decide the common case, then the copy or the fence.
// Whatever does not pass them goes the general way, which makes the same
// checks again in the standard's order and names the error.
#include <atomic>
#include <cstring>

#include "rma/direct.h"

namespace nicq::rma {
namespace {

// An access epoch the fast path may use: a fence, or a lock on the target
// (PSCW puts may be staged: the general path decides).
bool FastEpoch(const Window* w, int rank) {
  return w->fence_open || w->lock_all || w->lock_kind[std::size_t(rank)] != 0;
}

}  // namespace

bool FastCopy(Window* w, bool put, void* origin, const dtype::Type* type, std::int64_t count,
              int rank, std::int64_t disp) {
  Direct* d = w->direct;
  if (!d || w->origin_locking || rank < 0 || rank >= w->size || count <= 0 || disp < 0 ||
      !type->IsContiguous() || !FastEpoch(w, rank))
    return false;
  char* mapped = d->local_base[std::size_t(rank)];
  const std::int64_t off = disp * w->disp_units[std::size_t(rank)];
  const std::int64_t bytes = type->size * count;
  if (!mapped || off + bytes > w->sizes[std::size_t(rank)]) return false;
  // Nothing is staged for a mapped target (staging is for other processes'
  // MPI_Win_create memory), so nothing has to land first.
  if (put)
    std::memcpy(mapped + off, origin, std::size_t(bytes));
  else
    std::memcpy(origin, mapped + off, std::size_t(bytes));
  return true;
}

bool FastFlush(Window* w, int rank, bool all) {
  const Direct* d = w->direct;
  if (!d || w->origin_locking || d->lock_batches != 0 || !w->deferred.ok()) return false;
  if (all ? !w->lock_all
          : rank < 0 || rank >= w->size || !(w->lock_all || w->lock_kind[std::size_t(rank)] != 0))
    return false;
  // Every operation completed when it returned: the fence orders them
  // before whatever this process does next.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return true;
}

}  // namespace nicq::rma
