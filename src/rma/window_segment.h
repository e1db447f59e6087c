// The node-wide segment of a window and the one-node direct path's setup
// (window_segment.cc), which window creation (window.cc) runs after every
// rank has told the others its Record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "rma/window.h"

namespace nicq::rma::detail {

// What every rank tells the others at creation.
struct Record {
  std::int64_t bytes = 0;
  std::int64_t disp_unit = 1;
  std::int32_t pid = 0;
  std::uint64_t serial = 0;      // the hidden communicator's object serial (shared segment name)
  std::uint64_t base = 0;        // MPI_Win_create memory (process_vm on the direct path)
  std::uint64_t probe_addr = 0;  // where kProbeMagic is in this process
  std::uint8_t wants_direct = 0;
  char host[64] = {};
};

// The address of the word a process can read in another with
// process_vm_readv when the kernel lets ranks reach each other.
std::uint64_t ProbeAddress();
// NICQ_RMA_SHM=off keeps every window on the active-message path.
bool DirectAllowed();

inline std::int64_t RoundUp(std::int64_t v, std::int64_t a) {
  return (v + a - 1) / a * a;
}

// One node-wide segment: `control` bytes (a direct window's control block),
// then every rank's part when `with_data` (each starting at a multiple of
// `align`). *no_room (when given): /dev/shm could not hold it.
Status MapSegment(Window* w, const std::vector<Record>& all, bool with_data, std::int64_t align,
                  std::size_t control, bool* no_room = nullptr);
// Whether the window takes the one-node direct path (the same answer on
// every rank; collective when the window is MPI_Win_create memory).
Status DecideDirect(Window* w, const std::vector<Record>& all, bool* direct);
// Maps the control block (and the data of allocated windows) and tells the
// direct path where every rank's memory is.
Status SetUpDirect(Window* w, const std::vector<Record>& all, bool noncontig, bool* no_room);

}  // namespace nicq::rma::detail
