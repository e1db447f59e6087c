#include "providers/shm_native/shm_segment.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "core/cpu_relax.h"

namespace nicq::shmtrig {

bool FutexWait(std::atomic<std::uint32_t>* word, std::uint32_t expected, std::int64_t timeout_ns) {
  timespec ts{};
  timespec* tp = nullptr;
  if (timeout_ns >= 0) {
    ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
    ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
    tp = &ts;
  }
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, tp,
                 nullptr, 0) != 0 &&
         errno == ETIMEDOUT;
}

void FutexWakeAll(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, 0x7fffffff, nullptr,
          nullptr, 0);
}

namespace {
// How long a waiter sleeps before it looks at the holder again.
constexpr std::int64_t kHolderCheckNs = 100 * 1000 * 1000;
}  // namespace

bool ProcessAlive(int pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  // /proc/<pid>/stat: "pid (comm) S ...", the state after the last ')'.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno != ENOENT;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return true;
  buf[n] = 0;
  const char* paren = std::strrchr(buf, ')');
  if (!paren || paren[1] == 0 || paren[2] == 0) return true;
  return paren[2] != 'Z' && paren[2] != 'X';
}

// Critical sections are a few list operations, so a short spin usually
// suffices. A thread that slept takes the lock with kWaiters set: it cannot
// know whether others still sleep, and a spurious wake is harmless.
bool ShmMutex::Lock(int self_pid, int* dead_holder) {
  const auto self = static_cast<std::uint32_t>(self_pid);
  std::uint32_t c = 0;
  if (word.compare_exchange_strong(c, self, std::memory_order_acquire)) return true;
  for (int i = 0; i < 64; ++i) {
    CpuRelax();
    c = 0;
    if (word.load(std::memory_order_relaxed) == 0 &&
        word.compare_exchange_strong(c, self, std::memory_order_acquire))
      return true;
  }
  for (;;) {
    c = word.load(std::memory_order_relaxed);
    if (c == 0) {
      if (word.compare_exchange_strong(c, self | kWaiters, std::memory_order_acquire)) return true;
      continue;
    }
    if (!(c & kWaiters) &&
        !word.compare_exchange_strong(c, c | kWaiters, std::memory_order_relaxed))
      continue;
    if (!FutexWait(&word, c | kWaiters, kHolderCheckNs)) continue;
    const auto holder = static_cast<int>(c & ~kWaiters);
    if ((word.load(std::memory_order_relaxed) & ~kWaiters) == (c & ~kWaiters) &&
        !ProcessAlive(holder)) {
      *dead_holder = holder;
      return false;
    }
  }
}

void ShmMutex::Unlock() {
  if (word.exchange(0, std::memory_order_release) & kWaiters) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE, 1, nullptr, nullptr, 0);
  }
}

namespace {

std::uint64_t RoundUp(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

std::uint64_t RandomNonce() {
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd() ^ static_cast<std::uint64_t>(getpid());
}

// Free lists thread every counter, node and region; new memfd pages are zero.
void InitArea(const AreaView& v, const AreaSizes& sizes) {
  AreaHeader* h = new (v.base) AreaHeader();
  h->n_counters = sizes.counters;
  h->n_nodes = sizes.nodes;
  h->n_regions = sizes.regions;
  h->counters_off = RoundUp(sizeof(AreaHeader), 64);
  h->nodes_off = RoundUp(h->counters_off + sizeof(Counter) * sizes.counters, 64);
  h->regions_off = RoundUp(h->nodes_off + sizeof(Node) * sizes.nodes, 64);
  h->total_bytes = v.bytes;
  Counter* c = v.counters();
  for (std::uint32_t i = 0; i < sizes.counters; ++i) new (&c[i]) Counter();
  Node* n = v.nodes();
  for (std::uint32_t i = 0; i < sizes.nodes; ++i) {
    new (&n[i]) Node();
    n[i].next = i + 1 < sizes.nodes ? i + 1 : kNil;
  }
  h->free_nodes = sizes.nodes ? 0 : kNil;
  h->nodes_free.store(sizes.nodes);
  Region* r = v.regions();
  for (std::uint32_t i = 0; i < sizes.regions; ++i) new (&r[i]) Region();
  h->pid = getpid();
  h->nonce = RandomNonce();
  std::atomic_thread_fence(std::memory_order_release);
  h->magic = kAreaMagic;
}

}  // namespace

std::size_t AreaBytes(const AreaSizes& s) {
  std::uint64_t b = RoundUp(sizeof(AreaHeader), 64);
  b = RoundUp(b + sizeof(Counter) * s.counters, 64);
  b = RoundUp(b + sizeof(Node) * s.nodes, 64);
  b += sizeof(Region) * s.regions;
  return RoundUp(b, 4096);
}

Status CreateArea(const AreaSizes& sizes, AreaView* out, int* fd_out) {
  if (sizes.nodes >= (1u << kIndexBits))
    return Error(Code::kArg, "shm backend: op pool of " + std::to_string(sizes.nodes) +
                                 " nodes exceeds the handle's index bits");
  const std::size_t bytes = AreaBytes(sizes);
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "nicq-shmtrig", 0));
  if (fd < 0)
    return Error(Code::kUnsupportedOperation,
                 std::string("shm backend: memfd_create: ") + std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int e = errno;
    close(fd);
    return Error(Code::kNoMem, std::string("shm backend: ftruncate: ") + std::strerror(e));
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    close(fd);
    return Error(Code::kNoMem, std::string("shm backend: mmap: ") + std::strerror(e));
  }
  out->base = p;
  out->bytes = bytes;
  out->pid = getpid();
  InitArea(*out, sizes);
  *fd_out = fd;
  return Status::Ok();
}

Status MapPeerArea(int pid, int fd, std::uint64_t nonce, AreaView* out) {
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const int mine = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (mine < 0)
    return Error(Code::kUnsupportedOperation, "shm backend: cannot open the area of pid " +
                                                  std::to_string(pid) + " (" + path +
                                                  "): " + std::strerror(errno));
  const off_t bytes = lseek(mine, 0, SEEK_END);
  void* p = bytes > 0 ? mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ | PROT_WRITE,
                             MAP_SHARED, mine, 0)
                      : MAP_FAILED;
  close(mine);
  if (p == MAP_FAILED)
    return Error(Code::kUnsupportedOperation,
                 "shm backend: cannot map the area of pid " + std::to_string(pid));
  out->base = p;
  out->bytes = static_cast<std::size_t>(bytes);
  out->pid = pid;
  if (out->hdr()->magic != kAreaMagic || out->hdr()->nonce != nonce) {
    UnmapArea(out);
    return Error(
        Code::kUnsupportedOperation,
        "shm backend: the area of pid " + std::to_string(pid) + " is not the one announced");
  }
  return Status::Ok();
}

void UnmapArea(AreaView* v) {
  if (v->base) munmap(v->base, v->bytes);
  v->base = nullptr;
  v->bytes = 0;
}

}  // namespace nicq::shmtrig
