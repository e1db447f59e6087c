// Data movement of the one-node direct path. The target layout (count
// items of the target datatype at the displacement) is walked block by
// block: memcpy where the target's memory is mapped here (a shared segment,
// or this process's own window), process_vm_readv/writev with one remote
// iovec per block otherwise. Origin data is always packed contiguous by
// the caller, so only the target's layout is walked here.
//
// A target layout of one run (a contiguous type, the common small put or
// get) that lies within one page of the target goes through the target's
// /proc/<pid>/mem instead, opened once per window and rank:
// process_vm_writev looks the task up and runs the ptrace access check (with
// every LSM hook) on each call, the file only at open. A run over two pages
// or more takes process_vm all the same: the mem file moves a page at a time
// through a kernel bounce page (two copies and one remote page lookup per
// page), process_vm pins the pages in one batch and copies once, faster from
// two pages on and about half the time at 64 KiB (docs/rma.md, "Puts on
// created windows").
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <string>

#include "dtype/reduce.h"
#include "mpi.h"
#include "rma/direct.h"
#include "rma/wire.h"

namespace nicq::rma::direct {
namespace {

// The target's /proc/<pid>/mem, opened at the first call; -1 when the
// kernel refuses it (then process_vm serves every access).
int MemFd(Direct* d, int rank) {
  int& fd = d->mem_fds[std::size_t(rank)];
  if (fd == Direct::kMemUnopened) {
    const std::string path = "/proc/" + std::to_string(d->pids[std::size_t(rank)]) + "/mem";
    fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) fd = Direct::kMemRefused;
  }
  return fd >= 0 ? fd : -1;
}

// One run at `addr` in the target through its mem file. false: the file
// is not available (the caller falls back to process_vm); otherwise *st
// says whether every byte moved.
bool MemFileIo(Direct* d, int rank, std::uint64_t addr, char* local, std::size_t len, bool write,
               Status* st) {
  const int fd = MemFd(d, rank);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < len) {
    const off_t at = off_t(addr + done);
    const ssize_t n =
        write ? pwrite(fd, local + done, len - done, at) : pread(fd, local + done, len - done, at);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      *st = Error(Code::kOther, std::string(write ? "write" : "read") + " of /proc/" +
                                    std::to_string(d->pids[std::size_t(rank)]) + "/mem moved " +
                                    std::to_string(done) + " of " + std::to_string(len) +
                                    " bytes: " + std::strerror(n < 0 ? errno : EIO));
      return true;
    }
    done += std::size_t(n);
  }
  *st = Status::Ok();
  return true;
}

// Whether [addr, addr + len) touches at most one page of the target.
bool WithinOnePage(std::uint64_t addr, std::size_t len) {
  static const std::uint64_t page_mask = ~(std::uint64_t(sysconf(_SC_PAGESIZE)) - 1);
  return len == 0 || (addr & page_mask) == ((addr + len - 1) & page_mask);
}

// process_vm_readv/writev over the layout, at most IOV_MAX runs per call.
Status RemoteIo(Window* w, const Target& t, char* local, bool write) {
  Direct* d = w->direct;
  const pid_t pid = d->pids[std::size_t(t.rank)];
  const std::uint64_t base = d->remote_base[std::size_t(t.rank)];
  if (t.type->IsContiguous()) {
    Status st;
    const std::uint64_t addr = base + std::uint64_t(PartOffset(w, t));
    const std::size_t len = std::size_t(t.type->size * t.count);
    if (WithinOnePage(addr, len) && MemFileIo(d, t.rank, addr, local, len, write, &st)) return st;
    // One run: one iovec each side, no list to build.
    iovec mine{local, len};
    iovec theirs{reinterpret_cast<void*>(std::uintptr_t(addr)), len};
    const ssize_t n = write ? process_vm_writev(pid, &mine, 1, &theirs, 1, 0)
                            : process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (n != ssize_t(len))
      return Error(Code::kOther, std::string(write ? "process_vm_writev" : "process_vm_readv") +
                                     " to rank " + std::to_string(t.rank) + " moved " +
                                     std::to_string(n) + " of " + std::to_string(len) +
                                     " bytes: " + std::strerror(errno));
    return Status::Ok();
  }
  std::vector<iovec> remote;
  std::int64_t pending = 0;
  Status st;
  auto flush = [&]() {
    if (remote.empty() || !st.ok()) return;
    iovec mine{local, std::size_t(pending)};
    const ssize_t n = write ? process_vm_writev(pid, &mine, 1, remote.data(), remote.size(), 0)
                            : process_vm_readv(pid, &mine, 1, remote.data(), remote.size(), 0);
    if (n != ssize_t(pending))
      st = Error(Code::kOther, std::string(write ? "process_vm_writev" : "process_vm_readv") +
                                   " to rank " + std::to_string(t.rank) + " moved " +
                                   std::to_string(n) + " of " + std::to_string(pending) +
                                   " bytes: " + std::strerror(errno));
    local += pending;
    pending = 0;
    remote.clear();
  };
  ForEachRun(t, PartOffset(w, t), [&](std::int64_t off, std::int64_t len) {
    remote.push_back(iovec{reinterpret_cast<void*>(std::uintptr_t(base + std::uint64_t(off))),
                           std::size_t(len)});
    pending += len;
    if (remote.size() == IOV_MAX) flush();
  });
  flush();
  return st;
}

// inout = in op inout, run by run of the layout: `inout` is the target's
// mapped memory at `base` (packed = false) or a packed copy (packed = true).
Status ReduceRuns(const Target& t, std::int64_t base, int op, const char* in, char* inout,
                  bool packed) {
  const dtype::Type& tt = *t.type;
  // A pair type reduces as pairs; every other type by its blocks' basic types.
  const int pair = tt.unit != 0 && dtype::IsPairIndex(tt.unit) ? tt.unit : 0;
  if (tt.IsContiguous()) {
    const int unit = pair ? pair : (tt.blocks.empty() ? 0 : tt.blocks[0].basic);
    if (unit == 0) return Status::Ok();
    return dtype::Reduce(op, detail::BasicHandle(unit), in, packed ? inout : inout + base,
                         tt.size * t.count / dtype::BasicSize(unit));
  }
  Status st;
  char* out = inout;
  for (std::int64_t i = 0; i < t.count && st.ok(); ++i)
    for (const dtype::Block& b : tt.blocks) {
      const int unit = pair ? pair : b.basic;
      char* dst = packed ? out : inout + base + i * tt.extent + b.offset;
      st = dtype::Reduce(op, detail::BasicHandle(unit), in, dst, b.length / dtype::BasicSize(unit));
      if (!st.ok()) break;
      in += b.length;
      out += b.length;
    }
  return st;
}

}  // namespace

bool ProbeProcessVm(pid_t pid, std::uint64_t addr, std::uint64_t expect) {
  std::uint64_t got = 0;
  iovec mine{&got, sizeof got};
  iovec theirs{reinterpret_cast<void*>(std::uintptr_t(addr)), sizeof got};
  return process_vm_readv(pid, &mine, 1, &theirs, 1, 0) == ssize_t(sizeof got) && got == expect;
}

Status Write(Window* w, const Target& t, const char* in) {
  char* mapped = w->direct->local_base[std::size_t(t.rank)];
  if (!mapped) return RemoteIo(w, t, const_cast<char*>(in), true);
  ForEachRun(t, PartOffset(w, t), [&](std::int64_t off, std::int64_t len) {
    std::memcpy(mapped + off, in, std::size_t(len));
    in += len;
  });
  return Status::Ok();
}

Status Read(Window* w, const Target& t, char* out) {
  char* mapped = w->direct->local_base[std::size_t(t.rank)];
  if (!mapped) return RemoteIo(w, t, out, false);
  ForEachRun(t, PartOffset(w, t), [&](std::int64_t off, std::int64_t len) {
    std::memcpy(out, mapped + off, std::size_t(len));
    out += len;
  });
  return Status::Ok();
}

Status Accumulate(Window* w, const Target& t, int op, const char* in, char* old,
                  const char* compare) {
  Direct* d = w->direct;
  const std::size_t bytes = std::size_t(t.type->size * t.count);
  char* mapped = d->local_base[std::size_t(t.rank)];
  Status st;
  if (d->atomic_acc) {
    bool taken = false;
    st = AtomicAccumulate(w, t, op, in, old, compare, &taken);
    if (taken) return st;
  }
  AccLock(d, t.rank);
  if (mapped) {
    // In place, on the mapped memory.
    if (old) st = Read(w, t, old);
    if (compare) {
      if (std::memcmp(old, compare, bytes) == 0) st = Write(w, t, in);
    } else if (op != MPI_NO_OP) {
      st = ReduceRuns(t, PartOffset(w, t), op, in, mapped, false);
    }
  } else {
    // Read, combine here, write back: the lock keeps it one atomic update.
    std::vector<char> cur(bytes);
    st = Read(w, t, cur.data());
    if (st.ok() && old) std::memcpy(old, cur.data(), bytes);
    if (st.ok() && compare) {
      if (std::memcmp(cur.data(), compare, bytes) == 0) st = Write(w, t, in);
    } else if (st.ok() && op != MPI_NO_OP) {
      st = ReduceRuns(t, 0, op, in, cur.data(), true);
      if (st.ok()) st = Write(w, t, cur.data());
    }
  }
  AccUnlock(d, t.rank);
  return st;
}

}  // namespace nicq::rma::direct
