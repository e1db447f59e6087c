// The API side of windows (src/api/win*.cc): the handle table and how a
// call's error reaches the window's error handler.
#pragma once

#include <string>
#include <vector>

#include "api/api_internal.h"
#include "dtype/slot_table.h"
#include "rma/window.h"

namespace nicq::api {

// The handle table, indexed by the handle's low bits: every one-sided call
// looks its window up, so the lookup is two loads (chunks never move), not a
// locked search.
struct WinSlot {
  std::atomic<rma::Window*> w{nullptr};
};
using WinTable = dtype::SlotTable<WinSlot, 6, 1 << 14>;
inline WinTable& Wins() {
  static auto* t = new WinTable(1);  // index 0 is MPI_WIN_NULL
  return *t;
}

// The window behind a handle, or nullptr (null, freed, not a window).
inline rma::Window* LookupWin(MPI_Win handle) {
  if (KindOf(handle) != NICQ_KIND_WIN || IndexOf(handle) == 0) return nullptr;
  const WinSlot* s = Wins().Get(IndexOf(handle));
  return s ? s->w.load(std::memory_order_acquire) : nullptr;
}
// A valid window handle; records MPI_ERR_WIN on c otherwise (the valid
// case inline: every put and flush runs it).
[[gnu::cold]] bool WinArgFailed(Call& c, MPI_Win handle);
inline bool WinArg(Call& c, MPI_Win handle, rma::Window** out) {
  *out = LookupWin(handle);
  return *out != nullptr || WinArgFailed(c, handle);
}
// Raises c's recorded error (or st) through the window's error handler.
int WinFail(Call& c, rma::Window* w);
int WinFail(Call& c, rma::Window* w, const Status& st);
// Deletes the window's attributes, running the delete callbacks (MPI_Win_free).
int DeleteWinAttrs(Call& c, rma::Window* w);

}  // namespace nicq::api
