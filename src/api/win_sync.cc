// One-sided synchronization calls: fence, post/start/complete/wait/test,
// lock/unlock (one target and all), flush (remote and local), sync.
// Erroneous sequences (an unlock without a lock, a complete without a
// start...) are rma::'s MPI_ERR_RMA_SYNC; errors go to the window's handler.
#include <string>
#include <vector>

#include "api/win_internal.h"

using namespace nicq;
using api::Call;

namespace {

constexpr int kAllAsserts =
    MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;

std::string Str(long long v) {
  return std::to_string(v);
}

// The messages are built only on failure (every epoch runs these).
bool AssertArg(Call& c, int assert) {
  if ((assert & ~kAllAsserts) == 0) return true;
  return c.Check(false, Code::kAssert,
                 "invalid assert " + Str(assert) + " (an OR of MPI_MODE_* values)");
}

// The window ranks of a group's members; false with MPI_ERR_GROUP when one
// is not in the window.
bool GroupRanks(Call& c, rma::Window* w, MPI_Group group, std::vector<int>* ranks) {
  const std::vector<int>* world = nullptr;
  if (!api::GroupArg(c, group, &world)) return false;
  for (int wr : *world) {
    const int r = w->comm->RankOfWorld(wr);
    if (r < 0)
      return c.Check(false, Code::kGroup,
                     "world rank " + Str(wr) + " of the group is not in the window");
    ranks->push_back(r);
  }
  return true;
}

bool RankArg(Call& c, rma::Window* w, int rank) {
  if ((rank >= 0 && rank < w->size) || rank == MPI_PROC_NULL) return true;
  return c.Check(false, Code::kRank,
                 "invalid rank " + Str(rank) + " (window of " + Str(w->size) + " ranks)");
}

// Flushes with nothing to wait for (rma::FastFlush) skip the general path.
bool TryFastFlush(MPI_Win win, int rank, bool all) {
  rma::Window* w = api::IsInitialized() ? api::LookupWin(win) : nullptr;
  return w && rma::FastFlush(w, rank, all);
}

template <typename F>
int OnWin(const char* name, MPI_Win win, F&& body) {
  Call c(name);
  rma::Window* w = nullptr;
  if (!c.Init() || !api::WinArg(c, win, &w)) return api::WinFail(c, w);
  return body(c, w);
}

}  // namespace

extern "C" {

int MPI_Win_fence(int assert, MPI_Win win) {
  return OnWin("MPI_Win_fence", win, [&](Call& c, rma::Window* w) {
    if (!AssertArg(c, assert)) return api::WinFail(c, w);
    return api::WinFail(c, w, rma::Fence(w, assert));
  });
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
  return OnWin("MPI_Win_post", win, [&](Call& c, rma::Window* w) {
    std::vector<int> ranks;
    if (!AssertArg(c, assert) || !GroupRanks(c, w, group, &ranks)) return api::WinFail(c, w);
    return api::WinFail(c, w, rma::Post(w, ranks, assert));
  });
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
  return OnWin("MPI_Win_start", win, [&](Call& c, rma::Window* w) {
    std::vector<int> ranks;
    if (!AssertArg(c, assert) || !GroupRanks(c, w, group, &ranks)) return api::WinFail(c, w);
    return api::WinFail(c, w, rma::Start(w, ranks, assert));
  });
}

int MPI_Win_complete(MPI_Win win) {
  return OnWin("MPI_Win_complete", win,
               [&](Call& c, rma::Window* w) { return api::WinFail(c, w, rma::Complete(w)); });
}

int MPI_Win_wait(MPI_Win win) {
  return OnWin("MPI_Win_wait", win,
               [&](Call& c, rma::Window* w) { return api::WinFail(c, w, rma::WaitExposure(w)); });
}

int MPI_Win_test(MPI_Win win, int* flag) {
  return OnWin("MPI_Win_test", win, [&](Call& c, rma::Window* w) {
    if (!c.NotNull(flag, "flag")) return api::WinFail(c, w);
    bool done = false;
    Status st = rma::TestExposure(w, &done);
    if (!st.ok()) return api::WinFail(c, w, st);
    *flag = done ? 1 : 0;
    return MPI_SUCCESS;
  });
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  return OnWin("MPI_Win_lock", win, [&](Call& c, rma::Window* w) {
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED) {
      (void)c.Check(
          false, Code::kLockType,
          "lock_type must be MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED, not " + Str(lock_type));
      return api::WinFail(c, w);
    }
    if (!RankArg(c, w, rank) || !AssertArg(c, assert)) return api::WinFail(c, w);
    return api::WinFail(c, w, rma::Lock(w, lock_type == MPI_LOCK_EXCLUSIVE, rank, assert));
  });
}

int MPI_Win_unlock(int rank, MPI_Win win) {
  return OnWin("MPI_Win_unlock", win, [&](Call& c, rma::Window* w) {
    if (!RankArg(c, w, rank)) return api::WinFail(c, w);
    return api::WinFail(c, w, rma::Unlock(w, rank));
  });
}

int MPI_Win_lock_all(int assert, MPI_Win win) {
  return OnWin("MPI_Win_lock_all", win, [&](Call& c, rma::Window* w) {
    if (!AssertArg(c, assert)) return api::WinFail(c, w);
    return api::WinFail(c, w, rma::LockAll(w, assert));
  });
}

int MPI_Win_unlock_all(MPI_Win win) {
  return OnWin("MPI_Win_unlock_all", win,
               [&](Call& c, rma::Window* w) { return api::WinFail(c, w, rma::UnlockAll(w)); });
}

int MPI_Win_flush(int rank, MPI_Win win) {
  if (TryFastFlush(win, rank, false)) return MPI_SUCCESS;
  return OnWin("MPI_Win_flush", win, [&](Call& c, rma::Window* w) {
    if (!RankArg(c, w, rank)) return api::WinFail(c, w);
    return api::WinFail(c, w, rma::Flush(w, rank, "MPI_Win_flush"));
  });
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
  if (TryFastFlush(win, rank, false)) return MPI_SUCCESS;
  return OnWin("MPI_Win_flush_local", win, [&](Call& c, rma::Window* w) {
    if (!RankArg(c, w, rank)) return api::WinFail(c, w);
    return api::WinFail(c, w, rma::Flush(w, rank, "MPI_Win_flush_local"));
  });
}

int MPI_Win_flush_all(MPI_Win win) {
  if (TryFastFlush(win, 0, true)) return MPI_SUCCESS;
  return OnWin("MPI_Win_flush_all", win, [&](Call& c, rma::Window* w) {
    return api::WinFail(c, w, rma::Flush(w, -2, "MPI_Win_flush_all"));
  });
}

int MPI_Win_flush_local_all(MPI_Win win) {
  if (TryFastFlush(win, 0, true)) return MPI_SUCCESS;
  return OnWin("MPI_Win_flush_local_all", win, [&](Call& c, rma::Window* w) {
    return api::WinFail(c, w, rma::Flush(w, -2, "MPI_Win_flush_local_all"));
  });
}

int MPI_Win_sync(MPI_Win win) {
  return OnWin("MPI_Win_sync", win,
               [&](Call& c, rma::Window* w) { return api::WinFail(c, w, rma::Sync(w)); });
}

}  // extern "C"
