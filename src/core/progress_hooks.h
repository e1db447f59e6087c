// Progress hooks: engines above point-to-point (host-driven collective
// schedules, queues, the offload emulator) register a poll function here;
// rt::Progress() calls every hook on each pass, so any blocking or test MPI
// call drives them (the MPI progress rule). Registration happens at init
// time; the call path takes no lock and allocates nothing.
#pragma once

namespace nicq::progress {

// Returns true when it made progress.
using HookFn = bool (*)(void* arg);

// Up to kMaxHooks hooks; returns false when full. Registrations from
// several threads are safe with each other and with PollAll; a hook
// unregistered during a PollAll may still run in that pass.
// Engines register lazily, each on its first use, so the count differs
// between ranks; the room must be there for all of them on every rank, or
// one rank would take another path than its peers (seven engines now).
inline constexpr int kMaxHooks = 16;
bool RegisterHook(HookFn fn, void* arg);
void UnregisterHook(HookFn fn, void* arg);
// Runs every hook once; true if any made progress.
bool PollAll();

// An engine whose requests complete on something other than the
// point-to-point completion queue (an offload backend's counter, the
// same-node collective area) registers a sleeper: a waiter past its spin
// and yield phases sleeps in the first one that has requests pending, up
// to timeout_ms, instead of in the CQ (else a wait for a counter would
// sleep the CQ's whole timeout). A sleeper returns false, at once, when
// its engine has nothing pending. Registering one twice keeps one entry;
// false when kMaxSleepers are registered.
using SleepFn = bool (*)(int timeout_ms);
inline constexpr int kMaxSleepers = 4;
bool RegisterSleeper(SleepFn fn);
bool SleepInEngine(int timeout_ms);

}  // namespace nicq::progress
