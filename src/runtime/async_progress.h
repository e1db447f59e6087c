// The host progress thread: runs the progress engine (point-to-point polls
// and every progress hook: collective schedules, queued host starts) while
// host work is pending, so that schedules with host steps (the reduce of a
// large allreduce, rendezvous reads, datatype packing) advance while the
// application computes without MPI calls.
//
// It is the emulator's "progress thread" for everything the backend cannot
// run by itself, and is governed by the same NICQ_PROGRESS_THREAD: 1 on,
// 0 off, -1 on only when each rank of the node has a spare core (the
// thread would otherwise take the core of a rank computing).
//
// The thread behaves as one more application thread under
// MPI_THREAD_MULTIPLE: starting it turns the engine lock on for the rest of
// the run (a process below THREAD_MULTIPLE pays the lock from then on, not
// before). It starts on the first Kick, from an MPI call that holds no
// engine lock.
//
// Rhythm: while work is pending it polls, yields briefly after each pass
// that did something, and otherwise naps from 20 us growing to 200 us. With
// nothing pending for a while it sleeps on a futex until the next Kick, so
// an idle process costs nothing. Kick is a load and an add unless the thread
// sleeps (then one futex wake): enqueue calls may kick.
#pragma once

namespace nicq::rt {

// Whether host work is pending (read by the thread; cheap, lock-free).
using AsyncBusyFn = bool (*)();
// Registers a busy probe (at most a few, at init time of a layer).
void AddAsyncBusyProbe(AsyncBusyFn fn);

// Host work begins: starts the thread on first use when enabled, wakes it
// when asleep. Call from an MPI call holding no engine lock.
void KickAsyncProgress();
// Host work was listed that a busy probe reports: wakes the thread only
// from its idle sleep (and starts it on first use), without the kick's
// "the application started an operation" (which makes the thread poll at
// once beside an application that is about to wait). A load, unless the
// thread sleeps idle. Call after the probe's state changed.
void WakeIdleAsyncProgress();
// Whether the thread runs (it then advances listed host work by itself).
bool AsyncProgressRunning();
// Stops and joins the thread (MPI_Finalize).
void StopAsyncProgress();

}  // namespace nicq::rt
