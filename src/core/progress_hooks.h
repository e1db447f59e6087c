// Progress hooks: engines above point-to-point (host-driven collective
// schedules, queues, the offload emulator) register a poll function here;
// rt::Progress() calls every hook on each pass, so any blocking or test MPI
// call drives them (the MPI progress rule). Registration happens at init
// time; the call path takes no lock and allocates nothing.
#pragma once

namespace nicq::progress {

// Returns true when it made progress.
using HookFn = bool (*)(void* arg);

// Up to kMaxHooks hooks; returns false when full. Not thread-safe against
// concurrent PollAll: register during init.
inline constexpr int kMaxHooks = 8;
bool RegisterHook(HookFn fn, void* arg);
void UnregisterHook(HookFn fn, void* arg);
// Runs every hook once; true if any made progress.
bool PollAll();

}  // namespace nicq::progress
