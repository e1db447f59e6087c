// Window creation and destruction, dynamic regions, shared segments' query,
// and the two collectives windows need on their hidden communicator. The
// node-wide segment and the one-node direct path's setup are in
// window_segment.cc.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/config.h"
#include "core/log.h"
#include "core/node_name.h"
#include "mpi.h"
#include "rma/direct.h"
#include "rma/offload.h"
#include "rma/window_segment.h"
#include "rma/wire.h"
#include "runtime/runtime.h"

namespace nicq::rma {

using namespace detail;

namespace {

void Destroy(Window* w) {
  offload_path::TearDown(w);
  if (w->direct) direct::StopLockStage(w->direct);
  if (w->map) munmap(w->map, w->map_len);
  delete w->direct;
  if (w->owns_base) std::free(w->base);
  if (w->comm) (void)rt::CommFree(w->comm);
  delete w;
}

}  // namespace

namespace detail {

Status Barrier(Window* w) {
  // Dissemination: round k sends to rank+2^k and hears from rank-2^k.
  char out = 0, in = 0;
  int round = 0;
  for (int d = 1; d < w->size; d <<= 1, ++round) {
    Request s, r;
    const int to = (w->rank + d) % w->size, from = (w->rank - d + w->size) % w->size;
    NICQ_RETURN_IF_ERROR(rt::Irecv(&in, 1, from, kCollTag + 1 + round, w->comm, &r));
    NICQ_RETURN_IF_ERROR(
        rt::Isend(&out, 1, to, kCollTag + 1 + round, w->comm, SendMode::kStandard, &s));
    NICQ_RETURN_IF_ERROR(rt::Wait(&s));
    NICQ_RETURN_IF_ERROR(rt::Wait(&r));
  }
  return Status::Ok();
}

Status Allgather(Comm* comm, const void* mine, std::size_t bytes, void* all) {
  const int n = comm->size;
  std::vector<Request> reqs(2 * std::size_t(n));
  char* dst = static_cast<char*>(all);
  std::memcpy(dst + bytes * std::size_t(comm->rank), mine, bytes);
  for (int r = 0; r < n; ++r) {
    if (r == comm->rank) continue;
    NICQ_RETURN_IF_ERROR(
        rt::Irecv(dst + bytes * std::size_t(r), bytes, r, kCollTag, comm, &reqs[std::size_t(r)]));
    NICQ_RETURN_IF_ERROR(
        rt::Isend(mine, bytes, r, kCollTag, comm, SendMode::kStandard, &reqs[std::size_t(n + r)]));
  }
  for (int r = 0; r < n; ++r) {
    if (r == comm->rank) continue;
    NICQ_RETURN_IF_ERROR(rt::Wait(&reqs[std::size_t(r)]));
    NICQ_RETURN_IF_ERROR(rt::Wait(&reqs[std::size_t(n + r)]));
  }
  return Status::Ok();
}

}  // namespace detail

Status Create(Comm* comm, Flavor flavor, void* base, std::int64_t bytes, std::int64_t disp_unit,
              bool noncontig, Window** out) {
  *out = nullptr;
  auto* w = new Window();
  w->flavor = flavor;
  w->origin_locking = rt::ThreadLevel() == MPI_THREAD_MULTIPLE;
  Status st = rt::CommDup(comm, &w->comm);
  if (!st.ok()) {
    delete w;
    return st;
  }
  w->rank = w->comm->rank;
  w->size = w->comm->size;
  Record mine;
  mine.bytes = flavor == Flavor::kDynamic ? 0 : bytes;
  mine.disp_unit = flavor == Flavor::kDynamic ? 1 : disp_unit;
  mine.pid = std::int32_t(getpid());
  mine.serial = w->comm->serial.value;
  mine.base = reinterpret_cast<std::uintptr_t>(base);
  mine.probe_addr = ProbeAddress();
  mine.wants_direct = DirectAllowed();
  const std::string node = NodeName(rt::WorldRank());
  std::strncpy(mine.host, node.c_str(), sizeof mine.host - 1);
  std::vector<Record> all(std::size_t(w->size));
  st = Allgather(w->comm, &mine, sizeof mine, all.data());
  if (!st.ok()) {
    Destroy(w);
    return st;
  }
  for (const Record& r : all) {
    w->sizes.push_back(r.bytes);
    w->disp_units.push_back(r.disp_unit);
  }
  w->bytes = mine.bytes;
  w->disp_unit = mine.disp_unit;
  bool direct = false;
  st = DecideDirect(w, all, &direct);
  if (st.ok() && flavor == Flavor::kShared)
    for (const Record& r : all)
      if (std::strncmp(r.host, mine.host, sizeof r.host) != 0)
        st = Error(Code::kRmaShared, "the communicator's ranks are not all on one node (" +
                                         std::string(r.host) + " and " + mine.host + ")");
  if (st.ok() && direct) {
    if (flavor == Flavor::kCreate) w->base = base;
    bool no_room = false;
    st = SetUpDirect(w, all, noncontig, &no_room);
    // Allocated memory that /dev/shm cannot hold (every rank learnt it from
    // rank 0) is private memory served by active messages, as before.
    if (no_room && flavor == Flavor::kAllocate) {
      direct = false;
      st = Status::Ok();
    }
  }
  if (st.ok() && !direct) {
    switch (flavor) {
      case Flavor::kCreate:
        w->base = base;
        break;
      case Flavor::kAllocate:
        if (bytes > 0) {
          w->base = std::aligned_alloc(64, std::size_t(RoundUp(bytes, 64)));
          if (!w->base)
            st = Error(Code::kNoMem, "cannot allocate " + std::to_string(bytes) + " bytes");
          else
            std::memset(w->base, 0, std::size_t(bytes));
          w->owns_base = true;
        }
        break;
      case Flavor::kShared:
        st = MapSegment(w, all, true,
                        noncontig ? std::int64_t(sysconf(_SC_PAGESIZE)) : std::int64_t(1), 0);
        break;
      case Flavor::kDynamic:
        break;
    }
  }
  if (!st.ok()) {
    Destroy(w);
    return st;
  }
  if (direct) {
    w->path_note = "direct (one node)";
  } else if (flavor == Flavor::kCreate || flavor == Flavor::kAllocate) {
    // Collective: every member reaches it, with the same flavor and path.
    std::string why;
    const bool wanted = offload_path::Wanted(w, &why);
    st = offload_path::SetUp(w, wanted, why);
    if (!st.ok()) {
      Destroy(w);
      return st;
    }
  } else {
    w->path_note = std::string("active messages (") +
                   (flavor == Flavor::kDynamic ? "dynamic" : "shared") + " window)";
  }
  NICQ_LOG(kInfo, kCore, "one-sided window of %d ranks (%s, %lld bytes here): %s", w->size,
           flavor == Flavor::kCreate     ? "create"
           : flavor == Flavor::kAllocate ? "allocate"
           : flavor == Flavor::kDynamic  ? "dynamic"
                                         : "shared",
           static_cast<long long>(w->bytes), w->path_note.c_str());
  w->lock_kind.assign(std::size_t(w->size), 0);
  w->lock_nocheck.assign(std::size_t(w->size), 0);
  w->touched.assign(std::size_t(w->size), 0);
  // The direct path needs no server: nothing is ever sent to a target.
  if (!w->direct) {
    Serve(w);
    w->served = true;
  }
  *out = w;
  return Status::Ok();
}

Status CheckFreeable(Window* w) {
  OriginLock lock(w);
  bool locked = w->lock_all;
  for (auto k : w->lock_kind) locked |= k != 0;
  if (w->pscw_access || w->pscw_exposure || locked)
    return Error(Code::kRmaSync,
                 "MPI_Win_free: an access or exposure epoch is still open on the window");
  return Status::Ok();
}

Status Free(Window* w) {
  NICQ_RETURN_IF_ERROR(CheckFreeable(w));
  {
    OriginLock lock(w);
    NICQ_RETURN_IF_ERROR(DrainReplies(w, -1));
  }
  // After the barrier no rank sends this window another request.
  NICQ_RETURN_IF_ERROR(Barrier(w));
  if (w->served) StopServing(w);
  rt::Backoff b;
  for (;;) {
    ReapSends(w->replies);
    ReapSends(w->out);
    if (w->replies.empty() && w->out.empty()) break;
    NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
  }
  Destroy(w);
  return Status::Ok();
}

void Discard(Window* w) {
  if (w->served) StopServing(w);
  Destroy(w);
}

Status Attach(Window* w, void* base, std::int64_t bytes) {
  if (w->flavor != Flavor::kDynamic)
    return Error(Code::kRmaFlavor,
                 "MPI_Win_attach: the window was not made by MPI_Win_create_dynamic");
  std::lock_guard<std::mutex> lock(w->regions_mu);
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  for (auto [rb, rn] : w->regions)
    if (b < rb + rn && rb < b + std::uintptr_t(bytes))
      return Error(Code::kRmaAttach, "MPI_Win_attach: the region overlaps one already attached");
  w->regions.emplace_back(b, std::size_t(bytes));
  return Status::Ok();
}

Status Detach(Window* w, const void* base) {
  if (w->flavor != Flavor::kDynamic)
    return Error(Code::kRmaFlavor,
                 "MPI_Win_detach: the window was not made by MPI_Win_create_dynamic");
  std::lock_guard<std::mutex> lock(w->regions_mu);
  const auto b = reinterpret_cast<std::uintptr_t>(base);
  for (auto it = w->regions.begin(); it != w->regions.end(); ++it)
    if (it->first == b) {
      w->regions.erase(it);
      return Status::Ok();
    }
  return Error(Code::kRmaAttach, "MPI_Win_detach: no region attached at that address");
}

std::vector<std::pair<std::string, std::string>> PathInfo(const Window* w) {
  std::vector<std::pair<std::string, std::string>> info;
  info.emplace_back("nicq_rma_path", w->direct    ? "direct"
                                     : w->offload ? "counters"
                                                  : "active_messages");
  for (auto& kv : offload_path::Describe(w)) info.push_back(std::move(kv));
  if (w->direct)
    info.emplace_back("nicq_rma_accumulate", w->direct->atomic_acc ? "atomics" : "lock");
  if (w->direct && w->direct->lock_slots) {
    const Direct& d = *w->direct;
    info.emplace_back("nicq_rma_lock_staged_puts", std::to_string(d.lock_staged_puts));
    info.emplace_back("nicq_rma_lock_stage_applied", std::to_string(d.lock_applied));
    info.emplace_back("nicq_rma_lock_stage_reclaimed", std::to_string(d.lock_reclaimed));
  }
  return info;
}

Status SharedQuery(Window* w, int rank, std::int64_t* bytes, std::int64_t* disp_unit, void** base) {
  if (w->flavor != Flavor::kShared)
    return Error(Code::kRmaFlavor,
                 "MPI_Win_shared_query: the window was not made by MPI_Win_allocate_shared");
  if (rank == rt::kProcNull) {
    rank = 0;
    for (int r = 0; r < w->size; ++r)
      if (w->sizes[std::size_t(r)] > 0) {
        rank = r;
        break;
      }
  }
  if (rank < 0 || rank >= w->size)
    return Error(Code::kRank, "MPI_Win_shared_query: invalid rank " + std::to_string(rank));
  *bytes = w->sizes[std::size_t(rank)];
  *disp_unit = w->disp_units[std::size_t(rank)];
  *base = w->shm ? static_cast<char*>(w->shm) + w->shm_offsets[std::size_t(rank)] : nullptr;
  return Status::Ok();
}

}  // namespace nicq::rma
