// Window creation and destruction, dynamic regions, shared segments, and
// the two collectives windows need on their hidden communicator.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "rma/wire.h"
#include "runtime/runtime.h"

namespace nicq::rma {

using namespace detail;

namespace {

// What every rank tells the others at creation.
struct Record {
  std::int64_t bytes = 0;
  std::int64_t disp_unit = 1;
  std::int32_t pid = 0;
  std::uint64_t serial = 0;  // the hidden communicator's object serial (shared segment name)
  char host[64] = {};
};

std::int64_t RoundUp(std::int64_t v, std::int64_t a) {
  return (v + a - 1) / a * a;
}

// One node-wide segment: the lowest rank creates it, every rank maps it.
// It is unlinked once every rank has it mapped.
Status MapShared(Window* w, const std::vector<Record>& all, bool noncontig) {
  // Contiguous by default (MPI 4.1 12.2.3): rank r+1's part starts where
  // rank r's ends; alloc_shared_noncontig gives each part its own pages.
  const std::int64_t align = noncontig ? std::int64_t(sysconf(_SC_PAGESIZE)) : 1;
  w->shm_offsets.assign(std::size_t(w->size), 0);
  std::int64_t total = 0;
  for (int r = 0; r < w->size; ++r) {
    w->shm_offsets[std::size_t(r)] = total;
    total += RoundUp(all[std::size_t(r)].bytes, align);
  }
  if (total == 0) return Barrier(w);
  // Unique to the job (rank 0's pid) and to rank 0's communicator object.
  const std::string agreed = "/nicq-win-" + std::to_string(all[0].pid) + "-" +
                             std::to_string(w->comm->context_id) + "-" +
                             std::to_string(all[0].serial);
  int fd = -1;
  Status st;
  if (w->rank == 0) {
    fd = shm_open(agreed.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, off_t(total)) != 0)
      st = Error(Code::kNoMem, "shared window segment " + agreed + ": " + std::strerror(errno));
  }
  NICQ_RETURN_IF_ERROR(Barrier(w));
  if (w->rank != 0) {
    fd = shm_open(agreed.c_str(), O_RDWR, 0600);
    if (fd < 0) st = Error(Code::kNoMem, "opening shared window segment " + agreed);
  }
  if (fd >= 0) {
    void* p = mmap(nullptr, std::size_t(total), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
      st = Error(Code::kNoMem,
                 "mapping shared window segment: " + std::string(std::strerror(errno)));
    else {
      w->shm = p;
      w->shm_len = std::size_t(total);
    }
  }
  NICQ_RETURN_IF_ERROR(Barrier(w));
  if (w->rank == 0) shm_unlink(agreed.c_str());
  if (!st.ok()) return st;
  w->base = static_cast<char*>(w->shm) + w->shm_offsets[std::size_t(w->rank)];
  if (w->rank == 0 && w->shm_len) std::memset(w->shm, 0, w->shm_len);
  return Barrier(w);
}

void Destroy(Window* w) {
  if (w->shm) munmap(w->shm, w->shm_len);
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
  gethostname(mine.host, sizeof mine.host - 1);
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
      for (const Record& r : all)
        if (std::strncmp(r.host, mine.host, sizeof r.host) != 0)
          st = Error(Code::kRmaShared, "the communicator's ranks are not all on one node (" +
                                           std::string(r.host) + " and " + mine.host + ")");
      if (st.ok()) st = MapShared(w, all, noncontig);
      break;
    case Flavor::kDynamic:
      break;
  }
  if (!st.ok()) {
    Destroy(w);
    return st;
  }
  w->lock_kind.assign(std::size_t(w->size), 0);
  w->lock_nocheck.assign(std::size_t(w->size), 0);
  w->touched.assign(std::size_t(w->size), 0);
  Serve(w);
  *out = w;
  return Status::Ok();
}

Status CheckFreeable(Window* w) {
  std::lock_guard<std::mutex> lock(w->origin_mu);
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
    std::lock_guard<std::mutex> lock(w->origin_mu);
    NICQ_RETURN_IF_ERROR(DrainReplies(w, -1));
  }
  // After the barrier no rank sends this window another request.
  NICQ_RETURN_IF_ERROR(Barrier(w));
  StopServing(w);
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
