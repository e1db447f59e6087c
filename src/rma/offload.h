// The counter path of the active-message windows: contiguous puts as
// libfabric RMA writes and PSCW epochs as counters on the process's offload
// backend (rt::Backend(), providers/backend.h). docs/rma.md, "PSCW on
// counters" and "Fence and lock epochs on counters".
//
// Per window and process: the window memory registered with an arrival
// counter (+1 per put landed), two small control areas registered with their
// own counters, and two local completion counters:
//
//   arrivals    puts (chunks) landed in my window memory
//   completes   control puts landed in my `complete_slots` (one per origin:
//               the number of puts it ever sent me, written by its complete)
//   posts       control puts landed in my `post_slots` (one per target: how
//               many exposure epochs it ever opened to me, written by post)
//   put_done    local completions of my data puts (gates my complete)
//   ctl_done    local completions of my control puts
//
// post      = a control put of ++post_src[o] to each origin o's post slot;
// start     = wait until post_slots[t] passed what the last start consumed,
//             for each target t (per target: one shared counter could be
//             satisfied by another target posting early for a later epoch);
// put       = one kPut per chunk, target_counter = the target's arrivals;
// complete  = per target, a control put of the cumulative put count, gated
//             on put_done reaching every put posted so far (on the native
//             backend the NIC fires it); when the epoch also sent active
//             messages to that target (gets, accumulates, non-contiguous
//             puts), an acknowledged flush of them comes first;
// wait      = until completes covers the group, then until arrivals reach
//             the sum of complete_slots.
//
// The slots a target reads are only ever written by the one control put it
// is waiting for (a peer cannot post or complete twice toward me before my
// next wait or start), so a torn read can only show "not yet": the counter
// bump that follows the landing wakes the reader to look again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "providers/backend.h"

namespace nicq::rma {

struct Window;
struct Target;

// What every rank tells the others about its counter path (fixed size: one
// allgather of these after the path decision).
struct OffloadRecord {
  std::uint8_t ok = 0;  // this rank set everything up
  std::uint8_t pad[3] = {};
  offload::CounterId arrivals = offload::kNoCounter;
  offload::CounterId completes = offload::kNoCounter;
  offload::CounterId posts = offload::kNoCounter;
  std::uint64_t data_addr = 0, data_key = 0;
  std::uint64_t complete_addr = 0, complete_key = 0;
  std::uint64_t post_addr = 0, post_key = 0;
};

// Which epoch a put on counters belongs to.
enum class EpochKind : std::uint8_t { kNone, kPscw, kFence, kPassive };

struct Offload {
  offload::OffloadBackend* be = nullptr;
  offload::CounterId arrivals = offload::kNoCounter, completes = offload::kNoCounter,
                     posts = offload::kNoCounter, put_done = offload::kNoCounter,
                     ctl_done = offload::kNoCounter;
  offload::MemRegion data_mr, complete_mr, post_mr;
  bool data_registered = false, complete_registered = false, post_registered = false;
  // Written by peers' control puts (my own slot: by me).
  std::uint64_t* complete_slots = nullptr;  // [size], per origin
  std::uint64_t* post_slots = nullptr;      // [size], per target
  // Sources of my control puts: stable until the peer's next wait / start.
  std::vector<std::uint64_t> announce_src;    // per target: puts ever sent to it
  std::vector<std::uint64_t> post_src;        // per origin: posts ever sent to it
  std::vector<std::uint64_t> posts_consumed;  // per target: posts my starts used
  std::uint64_t put_posted = 0, ctl_posted = 0;
  std::uint64_t completes_consumed = 0;  // completes counter value my waits used
  std::vector<OffloadRecord> peers;
  std::vector<offload::PeerId> world;  // window rank -> backend peer (world rank)
  std::size_t max_chunk = 0;           // bytes per kPut (0: unlimited)
  // Copies of small puts' data (the origin buffer is free at return); a
  // slot is reused only after every put posted before it completed.
  static constexpr std::size_t kBounceSlots = 256, kBounceSlotBytes = 64;
  std::vector<unsigned char> bounce;
  std::size_t bounce_used = 0;
  // The writes of the put being posted (kept: a put allocates nothing once
  // it has seen its largest chunk count).
  std::vector<offload::TriggeredOp> put_ops;
  // Test hook (MPI_Win_get_info "nicq_rma_counter_*"): what went on counters.
  std::uint64_t puts_on_counters = 0, completes_on_counters = 0, epochs_waited = 0;
  std::uint64_t epoch_puts_on_counters = 0;  // of fence and lock epochs
};

namespace offload_path {

// Whether this process may take the counter path for `w`: create/allocate
// flavor, a backend with remote counters, NICQ_RMA_OFFLOAD not off; sets
// *why otherwise.
bool Wanted(const Window* w, std::string* why);
// Collective over the window: sets up, exchanges records, and keeps the path
// (w->offload) only when every rank could; otherwise releases everything.
Status SetUp(Window* w, bool wanted, const std::string& why);
// Local: waits for this process's own ops, deregisters, frees counters.
void TearDown(Window* w);

// A contiguous put inside an access epoch (PSCW, fence, lock or lock_all):
// *taken false means "send it as an active message" (not contiguous, no
// slots, a request-based put...).
Status TryPut(Window* w, const void* origin, std::int64_t bytes, const Target& t, bool* taken);
Status Post(Window* w, const std::vector<int>& ranks);
Status Start(Window* w, const std::vector<int>& ranks);
// The counter-path complete to `rank` (its active messages, if any, are
// already acknowledged).
Status CompleteTo(Window* w, int rank);
// Waits until this epoch's puts may be reused (their local completion).
Status FinishComplete(Window* w);
// Flush, unlock and fence: every put this process issued on counters is
// delivered (its local completion is delivery complete), so the
// acknowledgement that follows may say "remotely complete". No-op off the
// counter path.
Status FinishPuts(Window* w, const char* call);
// Exposure: block (or, !block, look once) until the epoch is complete.
Status WaitExposure(Window* w, bool block, bool* done);
// Info entries for MPI_Win_get_info (path and counters).
std::vector<std::pair<std::string, std::string>> Describe(const Window* w);

}  // namespace offload_path
}  // namespace nicq::rma
