// Data movement between the address spaces of a node's processes: memcpy
// where both ends are in the executing process, process_vm_readv/writev
// (one copy) where one end is, and both through this thread's staging
// buffer where neither is (an op executed for a third process).
#include <sys/uio.h>

#include <algorithm>
#include <cstring>

#include "providers/shm_native/shm_atomics.h"
#include "providers/shm_native/shm_backend.h"

namespace nicq::shmtrig {
namespace {

// Loops over partial transfers; false on any error (a dead peer, a range
// the peer has not mapped).
bool CrossCopy(int pid, bool write, void* local, std::uint64_t remote, std::size_t bytes) {
  std::size_t done = 0;
  while (done < bytes) {
    iovec mine{static_cast<char*>(local) + done, bytes - done};
    iovec theirs{reinterpret_cast<void*>(remote + done), bytes - done};
    const ssize_t n = write ? process_vm_writev(pid, &mine, 1, &theirs, 1, 0)
                            : process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool ShmTriggerBackend::Read(std::uint32_t area, std::uint64_t addr, void* dst, std::size_t bytes) {
  if (Local(area)) {
    std::memcpy(dst, reinterpret_cast<const void*>(addr), bytes);
    return true;
  }
  return CrossCopy(A(area).pid, false, dst, addr, bytes);
}

bool ShmTriggerBackend::Write(std::uint32_t area, std::uint64_t addr, const void* src,
                              std::size_t bytes) {
  if (Local(area)) {
    std::memcpy(reinterpret_cast<void*>(addr), src, bytes);
    return true;
  }
  return CrossCopy(A(area).pid, true, const_cast<void*>(src), addr, bytes);
}

bool ShmTriggerBackend::Move(std::uint32_t src, std::uint64_t src_addr, std::uint32_t dst,
                             std::uint64_t dst_addr, std::size_t bytes) {
  if (bytes == 0) return true;
  if (src >= areas_.size() || dst >= areas_.size()) return false;
  if (Local(src)) return Write(dst, dst_addr, reinterpret_cast<const void*>(src_addr), bytes);
  if (Local(dst)) return Read(src, src_addr, reinterpret_cast<void*>(dst_addr), bytes);
  AtomicStage& stage = ThreadStage();
  for (std::size_t done = 0; done < bytes; done += kStageBytes) {
    const std::size_t len = std::min(kStageBytes, bytes - done);
    if (!Read(src, src_addr + done, stage.target, len) ||
        !Write(dst, dst_addr + done, stage.target, len))
      return false;
  }
  return true;
}

}  // namespace nicq::shmtrig
