// One iteration of a spin-wait: tells the core we are spinning (frees the
// sibling hyperthread, avoids the memory-order flush on loop exit).
#pragma once

namespace nicq {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace nicq
