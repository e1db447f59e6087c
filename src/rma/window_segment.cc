// A window's node-wide segment (shared windows, and the one-node direct
// path's control block and allocated memory) and the direct path's setup:
// whether every rank can take it, and where every rank's memory is.
#include "rma/window_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/config.h"
#include "core/log.h"
#include "rma/direct.h"
#include "runtime/runtime.h"

namespace nicq::rma::detail {
namespace {

// A word every process holds at an address it tells the others: reading it
// with process_vm_readv tells whether the kernel lets ranks reach each other.
constexpr std::uint64_t kProbeMagic = 0x6e6963712d726d61;
const volatile std::uint64_t probe_word = kProbeMagic;

}  // namespace

std::uint64_t ProbeAddress() {
  return reinterpret_cast<std::uintptr_t>(&probe_word);
}

bool DirectAllowed() {
  static const std::string mode = config::GetString("NICQ_RMA_SHM");
  return mode != "off" && mode != "0";
}

// One node-wide segment: `control` bytes (a direct window's control block),
// then every rank's part when `with_data` (each starting at a multiple of
// `align`). The lowest rank creates it, every rank maps it, and it is
// unlinked as soon as every rank has it mapped, before any rank returns, so
// a rank killed later leaves nothing behind in /dev/shm. New pages are zero.
Status MapSegment(Window* w, const std::vector<Record>& all, bool with_data, std::int64_t align,
                  std::size_t control, bool* no_room) {
  w->shm_offsets.assign(std::size_t(w->size), 0);
  std::int64_t data = 0;
  for (int r = 0; r < w->size && with_data; ++r) {
    w->shm_offsets[std::size_t(r)] = data;
    data += RoundUp(all[std::size_t(r)].bytes, align);
  }
  const std::int64_t total = std::int64_t(control) + data;
  if (total == 0) return Barrier(w);
  // Unique to the job (rank 0's pid) and to rank 0's communicator object.
  const std::string agreed = "/nicq-win-" + std::to_string(all[0].pid) + "-" +
                             std::to_string(w->comm->context_id) + "-" +
                             std::to_string(all[0].serial);
  int fd = -1;
  Status st;
  // The pages are reserved now (posix_fallocate): a /dev/shm too small for
  // the window fails here, on every rank alike, not with SIGBUS at the
  // first store to a page it cannot back.
  std::uint8_t created = 1;
  if (w->rank == 0) {
    fd = shm_open(agreed.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    int err = fd < 0 ? errno : 0;
    if (!err && ftruncate(fd, off_t(total)) != 0) err = errno;
    if (!err) err = posix_fallocate(fd, 0, off_t(total));
    if (err) {
      created = 0;
      if (fd >= 0) {
        close(fd);
        shm_unlink(agreed.c_str());
      }
      fd = -1;
    }
  }
  std::vector<std::uint8_t> outcome(std::size_t(w->size));
  NICQ_RETURN_IF_ERROR(Allgather(w->comm, &created, 1, outcome.data()));
  if (no_room) *no_room = !outcome[0];
  if (!outcome[0])
    return Error(Code::kNoMem, "cannot make the shared window segment " + agreed + " of " +
                                   std::to_string(total) + " bytes in /dev/shm");
  if (w->rank != 0) {
    fd = shm_open(agreed.c_str(), O_RDWR, 0600);
    if (fd < 0) st = Error(Code::kNoMem, "opening shared window segment " + agreed);
  }
  if (fd >= 0) {
    void* p = mmap(nullptr, std::size_t(total), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
      st = Error(Code::kNoMem,
                 "mapping shared window segment: " + std::string(std::strerror(errno)));
    } else {
      w->map = p;
      w->map_len = std::size_t(total);
      if (with_data) w->shm = static_cast<char*>(p) + control;
    }
  }
  NICQ_RETURN_IF_ERROR(Barrier(w));
  // Every rank removes the name (the first one succeeds) before it returns,
  // so no rank can run on, fail and have the job killed while the name
  // still exists.
  shm_unlink(agreed.c_str());
  if (!st.ok()) return st;
  if (with_data) w->base = static_cast<char*>(w->shm) + w->shm_offsets[std::size_t(w->rank)];
  return Status::Ok();
}

// Whether the window takes the one-node direct path: every member is on
// this node, none turned it off (NICQ_RMA_SHM=off), the window is not
// dynamic, and for MPI_Win_create memory every rank can reach every other
// one with process_vm (one more allgather). The same answer on every rank.
Status DecideDirect(Window* w, const std::vector<Record>& all, bool* direct) {
  *direct = w->flavor != Flavor::kDynamic;
  for (const Record& r : all)
    *direct = *direct && r.wants_direct && std::strncmp(r.host, all[0].host, sizeof r.host) == 0;
  if (!*direct || w->flavor != Flavor::kCreate) return Status::Ok();
  std::uint8_t mine = 1;
  for (int r = 0; r < w->size; ++r)
    if (r != w->rank && !direct::ProbeProcessVm(all[std::size_t(r)].pid,
                                                all[std::size_t(r)].probe_addr, kProbeMagic))
      mine = 0;
  std::vector<std::uint8_t> every(std::size_t(w->size));
  NICQ_RETURN_IF_ERROR(Allgather(w->comm, &mine, 1, every.data()));
  for (auto ok : every) *direct = *direct && ok;
  return Status::Ok();
}

// Maps the control block (and the data of allocated windows) and tells the
// direct path where every rank's memory is.
// *no_room: /dev/shm could not hold the segment (the same on every rank).
Status SetUpDirect(Window* w, const std::vector<Record>& all, bool noncontig, bool* no_room) {
  const bool with_data = w->flavor != Flavor::kCreate;
  // Allocated parts start on cache lines (as aligned_alloc gave them);
  // shared ones are contiguous unless asked not to be (MPI 4.1 12.2.3).
  const std::int64_t align = w->flavor == Flavor::kAllocate ? 64
                             : noncontig                    ? std::int64_t(sysconf(_SC_PAGESIZE))
                                                            : 1;
  const std::size_t control = direct::ControlBytes(w->size, !with_data);
  NICQ_RETURN_IF_ERROR(MapSegment(w, all, with_data, align, control, no_room));
  auto* d = new Direct();
  w->direct = d;
  direct::Bind(d, w->map, w->size, !with_data);
  d->local_base.assign(std::size_t(w->size), nullptr);
  d->mem_fds.assign(std::size_t(w->size), Direct::kMemUnopened);
  for (int r = 0; r < w->size; ++r) {
    const Record& rec = all[std::size_t(r)];
    d->pids.push_back(pid_t(rec.pid));
    d->remote_base.push_back(rec.base);
    if (with_data)
      d->local_base[std::size_t(r)] = static_cast<char*>(w->shm) + w->shm_offsets[std::size_t(r)];
  }
  if (!with_data) d->local_base[std::size_t(w->rank)] = static_cast<char*>(w->base);
  d->atomic_acc = with_data;  // possible; SetAccumulateGranularity decides
  d->me = w->rank;
  direct::StartLockStage(d);
  return Status::Ok();
}

}  // namespace nicq::rma::detail
