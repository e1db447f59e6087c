// Synchronization: every completion guarantee is a request that the target
// acknowledges after applying all earlier requests of this origin (they are
// served in order), so "acknowledged" means "remotely complete".
//   fence      flush every target touched, then a barrier
//   PSCW       post sends a token to each origin, start waits for them;
//              complete sends kComplete behind the epoch's operations and
//              the target's wait counts them
//   lock       kLock* is acknowledged when granted; unlock is a flush that
//              releases; lock_all locks every rank shared
// On the one-node direct path (w->direct) operations are complete when they
// return (except PSCW puts to created windows, staged until the target's
// wait: direct_stage.cc, and small lock-epoch puts, which unlock and flush
// land: direct_lock_stage.cc), so every completion is a memory fence, and the
// synchronization itself is the control block's (direct_sync.cc): the same
// checks and error classes first, then one branch. Windows on the counter
// path (w->offload, offload.cc) run PSCW on the offload backend's counters.
#include <atomic>
#include <cstring>
#include <string>

#include "mpi.h"
#include "rma/direct.h"
#include "rma/offload.h"
#include "rma/wire.h"
#include "runtime/runtime.h"

namespace nicq::rma {

using namespace detail;

namespace {

std::string R(int rank) {
  return "rank " + std::to_string(rank);
}

Status SyncError(const char* call, const std::string& why) {
  return Error(Code::kRmaSync, std::string(call) + ": " + why);
}

bool AnyLock(const Window* w) {
  if (w->lock_all) return true;
  for (auto k : w->lock_kind)
    if (k) return true;
  return false;
}

// Direct path: every target's staged lock-epoch puts land (the first error).
Status FinishAllLockStages(Window* w) {
  if (w->direct->lock_batches == 0) return Status::Ok();
  Status first;
  for (int r = 0; r < w->size; ++r) {
    Status st = direct::FinishLockStage(w, r);
    if (first.ok()) first = st;
  }
  return first;
}

// The deferred error (a result that failed while completing), consumed.
Status TakeDeferred(Window* w, Status st) {
  if (w->deferred.ok()) return st;
  if (st.ok()) st = w->deferred;
  w->deferred = Status();
  return st;
}

// Acknowledged flushes of every rank in `ranks` that has operations
// outstanding (all ranks when `ranks` is null), then every reply. Puts that
// went on counters are delivered first, so that a target's acknowledgement
// (or the fence's barrier) follows them.
Status FlushTargets(Window* w, const char* call, const std::vector<int>* ranks,
                    int kind_all = kFlush) {
  Status st = offload_path::FinishPuts(w, call);
  auto one = [&](int r) {
    if (!w->touched[std::size_t(r)] && kind_all == kFlush) return;
    Status s;
    (void)SendControl(w, r, kind_all, &s);
    if (st.ok() && !s.ok()) st = s;
    w->touched[std::size_t(r)] = 0;
  };
  if (ranks)
    for (int r : *ranks) one(r);
  else
    for (int r = 0; r < w->size; ++r) one(r);
  Status d = DrainReplies(w, -1);
  return st.ok() ? d : st;
}

}  // namespace

Status Fence(Window* w, int assert) {
  OriginLock lock(w);
  if (w->pscw_access || w->pscw_exposure || AnyLock(w))
    return SyncError("MPI_Win_fence", "a PSCW or passive-target epoch is open on the window");
  if (w->direct) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    direct::Barrier(w->direct);
    w->fence_open = (assert& MPI_MODE_NOSUCCEED) == 0;
    return TakeDeferred(w, Status::Ok());
  }
  // The barrier runs even when the flush failed: the other ranks are in it.
  Status st = FlushTargets(w, "MPI_Win_fence", nullptr);
  Status b = Barrier(w);
  w->fence_open = (assert& MPI_MODE_NOSUCCEED) == 0;
  return TakeDeferred(w, st.ok() ? b : st);
}

Status Post(Window* w, const std::vector<int>& ranks, int assert) {
  OriginLock lock(w);
  if (w->pscw_exposure)
    return SyncError("MPI_Win_post", "an exposure epoch is already open (MPI_Win_wait first)");
  if ((assert& MPI_MODE_NOCHECK) == 0 && w->direct) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    direct::Post(w->direct, w->rank, ranks);
  } else if ((assert& MPI_MODE_NOCHECK) == 0 && w->offload) {
    NICQ_RETURN_IF_ERROR(offload_path::Post(w, ranks));
  } else if ((assert& MPI_MODE_NOCHECK) == 0) {
    for (int r : ranks)
      NICQ_RETURN_IF_ERROR(SendOwned(w->comm, r, kPostTag, std::vector<char>(1), w->out));
  }
  w->completes_expected = int(ranks.size());
  w->post_group = ranks;
  w->pscw_exposure = true;
  return Status::Ok();
}

Status Start(Window* w, const std::vector<int>& ranks, int assert) {
  OriginLock lock(w);
  if (w->pscw_access)
    return SyncError("MPI_Win_start", "an access epoch is already open (MPI_Win_complete first)");
  if ((assert& MPI_MODE_NOCHECK) == 0 && w->direct) {
    direct::Start(w->direct, w->rank, ranks);
  } else if ((assert& MPI_MODE_NOCHECK) == 0 && w->offload) {
    NICQ_RETURN_IF_ERROR(offload_path::Start(w, ranks));
  } else if ((assert& MPI_MODE_NOCHECK) == 0) {
    std::vector<char> tokens(ranks.size());
    std::vector<Request> reqs(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      NICQ_RETURN_IF_ERROR(rt::Irecv(&tokens[i], 1, ranks[i], kPostTag, w->comm, &reqs[i]));
    for (auto& r : reqs) NICQ_RETURN_IF_ERROR(rt::Wait(&r));
  }
  w->start_group = ranks;
  w->pscw_access = true;
  return Status::Ok();
}

Status Complete(Window* w) {
  OriginLock lock(w);
  if (!w->pscw_access)
    return SyncError("MPI_Win_complete", "no access epoch is open (MPI_Win_start first)");
  if (w->direct) {
    direct::Complete(w->direct, w->rank, w->start_group);
    w->pscw_access = false;
    w->start_group.clear();
    return TakeDeferred(w, Status::Ok());
  }
  Status st;
  if (w->offload) {
    // Active messages to a target this epoch are acknowledged first (the
    // target's wait counts only the counter-path complete behind them).
    for (int r : w->start_group) {
      if (w->touched[std::size_t(r)]) {
        Status s;
        (void)SendControl(w, r, kFlush, &s);
        if (st.ok() && !s.ok()) st = s;
        w->touched[std::size_t(r)] = 0;
      }
      Status d = DrainReplies(w, r);
      if (st.ok() && !d.ok()) st = d;
      NICQ_RETURN_IF_ERROR(offload_path::CompleteTo(w, r));
    }
    Status f = offload_path::FinishComplete(w);
    if (st.ok()) st = f;
    w->pscw_access = false;
    w->start_group.clear();
    return TakeDeferred(w, st);
  }
  for (int r : w->start_group) {
    Status d = DrainReplies(w, r);
    if (st.ok() && !d.ok()) st = d;
    ReqHeader h;
    h.kind = kComplete;
    std::vector<char> msg(sizeof h);
    std::memcpy(msg.data(), &h, sizeof h);
    NICQ_RETURN_IF_ERROR(SendOwned(w->comm, r, kRequestTag, std::move(msg), w->out));
    w->touched[std::size_t(r)] = 0;
  }
  w->pscw_access = false;
  w->start_group.clear();
  return TakeDeferred(w, st);
}

Status WaitExposure(Window* w) {
  OriginLock lock(w);
  if (!w->pscw_exposure)
    return SyncError("MPI_Win_wait", "no exposure epoch is open (MPI_Win_post first)");
  if (w->direct) {
    (void)direct::WaitCompletes(w->direct, w->rank, w->post_group, true);
    w->pscw_exposure = false;
    return Status::Ok();
  }
  if (w->offload) {
    bool done = false;
    NICQ_RETURN_IF_ERROR(offload_path::WaitExposure(w, true, &done));
    w->pscw_exposure = false;
    return Status::Ok();
  }
  rt::Backoff b;
  while (w->completes_seen.load(std::memory_order_acquire) < w->completes_expected)
    NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
  w->completes_seen.fetch_sub(w->completes_expected, std::memory_order_acq_rel);
  w->pscw_exposure = false;
  return Status::Ok();
}

Status TestExposure(Window* w, bool* done) {
  OriginLock lock(w);
  if (!w->pscw_exposure)
    return SyncError("MPI_Win_test", "no exposure epoch is open (MPI_Win_post first)");
  if (w->direct) {
    *done = direct::WaitCompletes(w->direct, w->rank, w->post_group, false);
    if (*done) w->pscw_exposure = false;
    return Status::Ok();
  }
  NICQ_RETURN_IF_ERROR(rt::Progress());
  if (w->offload) {
    NICQ_RETURN_IF_ERROR(offload_path::WaitExposure(w, false, done));
    if (*done) w->pscw_exposure = false;
    return Status::Ok();
  }
  *done = w->completes_seen.load(std::memory_order_acquire) >= w->completes_expected;
  if (*done) {
    w->completes_seen.fetch_sub(w->completes_expected, std::memory_order_acq_rel);
    w->pscw_exposure = false;
  }
  return Status::Ok();
}

Status Lock(Window* w, bool exclusive, int rank, int assert) {
  if (rank == rt::kProcNull) return Status::Ok();
  OriginLock lock(w);
  if (w->lock_all || w->lock_kind[std::size_t(rank)] != 0)
    return SyncError("MPI_Win_lock", R(rank) + " is already locked by this process");
  const bool nocheck = (assert& MPI_MODE_NOCHECK) != 0;
  if (!nocheck && w->direct) {
    if (exclusive)
      direct::LockExclusive(w->direct, rank);
    else
      direct::LockShared(w->direct, rank);
  } else if (!nocheck) {
    Status st;
    (void)SendControl(w, rank, exclusive ? kLockExclusive : kLockShared, &st);
    NICQ_RETURN_IF_ERROR(st);
    NICQ_RETURN_IF_ERROR(DrainReplies(w, rank));
  }
  w->lock_kind[std::size_t(rank)] = exclusive ? 2 : 1;
  w->lock_nocheck[std::size_t(rank)] = nocheck;
  return Status::Ok();
}

Status Unlock(Window* w, int rank) {
  if (rank == rt::kProcNull) return Status::Ok();
  OriginLock lock(w);
  if (w->lock_kind[std::size_t(rank)] == 0)
    return SyncError("MPI_Win_unlock", R(rank) + " is not locked by this process");
  if (w->direct) {
    // Staged puts land before the lock goes (even when landing failed).
    const Status landed = direct::FinishLockStage(w, rank);
    // Release: the epoch's stores are visible to whoever locks next.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!w->lock_nocheck[std::size_t(rank)]) {
      if (w->lock_kind[std::size_t(rank)] == 2)
        direct::UnlockExclusive(w->direct, rank);
      else
        direct::UnlockShared(w->direct, rank);
    }
    w->lock_kind[std::size_t(rank)] = 0;
    return TakeDeferred(w, landed);
  }
  const int kind = w->lock_nocheck[std::size_t(rank)] ? kFlush : kUnlock;
  w->lock_kind[std::size_t(rank)] = 0;
  const std::vector<int> one{rank};
  // A nocheck lock holds nothing at the target: only its operations need flushing.
  w->touched[std::size_t(rank)] |= kind == kUnlock;
  return TakeDeferred(w,
                      FlushTargets(w, "MPI_Win_unlock", &one, kind == kUnlock ? kUnlock : kFlush));
}

Status LockAll(Window* w, int assert) {
  OriginLock lock(w);
  if (AnyLock(w))
    return SyncError("MPI_Win_lock_all", "a passive-target epoch is already open on the window");
  w->lock_all_nocheck = (assert& MPI_MODE_NOCHECK) != 0;
  if (!w->lock_all_nocheck && w->direct) {
    for (int r = 0; r < w->size; ++r) direct::LockShared(w->direct, r);
  } else if (!w->lock_all_nocheck) {
    for (int r = 0; r < w->size; ++r) {
      Status st;
      (void)SendControl(w, r, kLockShared, &st);
      NICQ_RETURN_IF_ERROR(st);
    }
    NICQ_RETURN_IF_ERROR(DrainReplies(w, -1));
  }
  w->lock_all = true;
  return Status::Ok();
}

Status UnlockAll(Window* w) {
  OriginLock lock(w);
  if (!w->lock_all)
    return SyncError("MPI_Win_unlock_all", "no MPI_Win_lock_all epoch is open on the window");
  w->lock_all = false;
  if (w->direct) {
    const Status landed = FinishAllLockStages(w);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!w->lock_all_nocheck)
      for (int r = 0; r < w->size; ++r) direct::UnlockShared(w->direct, r);
    return TakeDeferred(w, landed);
  }
  if (w->lock_all_nocheck) return TakeDeferred(w, FlushTargets(w, "MPI_Win_unlock_all", nullptr));
  return TakeDeferred(w, FlushTargets(w, "MPI_Win_unlock_all", nullptr, kUnlock));
}

Status Flush(Window* w, int rank, const char* call) {
  if (rank == rt::kProcNull) return Status::Ok();
  OriginLock lock(w);
  if (rank >= 0 && !w->lock_all && w->lock_kind[std::size_t(rank)] == 0)
    return SyncError(call, "no passive-target epoch to " + R(rank) + " is open");
  if (rank < 0 && !AnyLock(w))
    return SyncError(call, "no passive-target epoch is open on the window");
  if (w->direct) {
    // Every operation completed when it returned, except staged puts.
    if (w->direct->lock_batches == 0 && w->deferred.ok()) [[likely]] {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      return Status::Ok();
    }
    const Status landed = rank >= 0 ? direct::FinishLockStage(w, rank) : FinishAllLockStages(w);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return TakeDeferred(w, landed);
  }
  if (rank >= 0) {
    const std::vector<int> one{rank};
    return TakeDeferred(w, FlushTargets(w, call, &one));
  }
  return TakeDeferred(w, FlushTargets(w, call, nullptr));
}

Status Sync(Window*) {
  // The unified model: public and private copies are the same memory; the
  // fence orders this process's loads and stores against the server's.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return Status::Ok();
}

}  // namespace nicq::rma
