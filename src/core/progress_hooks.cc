#include "core/progress_hooks.h"

#include <atomic>
#include <mutex>

namespace nicq::progress {
namespace {
struct Hook {
  std::atomic<HookFn> fn{nullptr};
  void* arg = nullptr;
};
Hook g_hooks[kMaxHooks];
std::atomic<int> g_count{0};
// One past the highest slot ever holding a hook: a pass walks only those
// (engines register a few hooks at their first use, never 16).
std::atomic<int> g_limit{0};
// Engines register on first use, each under its own lock, so two threads
// may register at once: the claim of a slot and the raise of g_limit are
// one step under this mutex. PollAll takes no lock.
std::mutex g_register_mu;
}  // namespace

bool RegisterHook(HookFn fn, void* arg) {
  std::lock_guard<std::mutex> lock(g_register_mu);
  for (int i = 0; i < kMaxHooks; ++i) {
    Hook& h = g_hooks[i];
    if (h.fn.load(std::memory_order_acquire) == nullptr) {
      h.arg = arg;
      h.fn.store(fn, std::memory_order_release);
      g_count.fetch_add(1, std::memory_order_relaxed);
      if (g_limit.load(std::memory_order_relaxed) <= i)
        g_limit.store(i + 1, std::memory_order_release);
      return true;
    }
  }
  return false;
}

void UnregisterHook(HookFn fn, void* arg) {
  std::lock_guard<std::mutex> lock(g_register_mu);
  for (auto& h : g_hooks) {
    if (h.fn.load(std::memory_order_acquire) == fn && h.arg == arg) {
      h.fn.store(nullptr, std::memory_order_release);
      g_count.fetch_sub(1, std::memory_order_relaxed);
    }
  }
}

bool PollAll() {
  if (g_count.load(std::memory_order_relaxed) == 0) return false;
  bool any = false;
  const int limit = g_limit.load(std::memory_order_acquire);
  for (int i = 0; i < limit; ++i) {
    HookFn fn = g_hooks[i].fn.load(std::memory_order_acquire);
    if (fn != nullptr) any |= fn(g_hooks[i].arg);
  }
  return any;
}

namespace {
std::atomic<SleepFn> g_sleepers[kMaxSleepers];
}  // namespace

bool RegisterSleeper(SleepFn fn) {
  for (auto& s : g_sleepers)
    if (s.load(std::memory_order_acquire) == fn) return true;
  for (auto& s : g_sleepers) {
    SleepFn none = nullptr;
    if (s.compare_exchange_strong(none, fn, std::memory_order_acq_rel)) return true;
  }
  return false;
}

bool SleepInEngine(int timeout_ms) {
  for (auto& s : g_sleepers) {
    SleepFn fn = s.load(std::memory_order_acquire);
    if (fn != nullptr && fn(timeout_ms)) return true;
  }
  return false;
}

}  // namespace nicq::progress
