// Driving matches and host-started matched requests to completion.
//
// Blocking MPI_Match/MPI_Matchall poll their requests here while driving
// rt:: progress; MPI_Imatch/MPI_Imatchall register a MatchOp that the
// progress hook (core/progress_hooks.h, called by rt::Progress, i.e. by any
// blocking or test MPI call) advances. The same hook completes matched
// requests started with MPI_Start (counter read -> Request::MarkDone) and
// drives the offload backend's software progress (emulator without a
// progress thread, host steps).
//
// No request is ever left half-matched: a request whose exchange was begun
// (its peer may already hold its offer or reply) is polled until its match
// ends (matched or failed), in the background when the call that began it
// returns early with an error.
#pragma once

#include <span>
#include <vector>

#include "core/status.h"
#include "queue/enqueueable.h"
#include "runtime/request.h"

namespace nicq::queue {

// Blocks until every request is matched or one fails: that error (naming
// the request as `call` knows it). Requests still matching then go on in
// the background (as with MatchBegin, without a signal).
Status MatchAll(std::span<Enqueueable* const> reqs, const char* call);
// Begins matching `reqs` in the background (BeginMatch already called on
// each, in the order of the call's array); `signal` (a kMatch request, or
// nullptr: nobody waits) is marked done with an empty status, and
// status.error set on failure, when all are matched or the first one
// failed (TakeMatchResult has its message). Local.
Status MatchBegin(std::vector<Enqueueable*> reqs, Request* signal, const char* call);
// The call (MPI_Imatch, ...) whose background match of `e` is under way,
// or nullptr (not begun, or its match ended).
const char* MatchInProgress(const Enqueueable* e);
// A done signal's outcome: Ok or the first failure; releases what it held.
Status TakeMatchResult(Request* signal);
// Progress on pending MatchOps; true if any advanced.
bool PollMatches();
// Watches a matched request started by MPI_Start until its epoch is done.
void WatchHostStarted(Request* req, Enqueueable* e);
bool PollHostStarted();
// Registers the progress hook once (idempotent).
void EnsureProgressHook();
// One pass of everything above plus the backend's software progress.
bool QueueProgress();

}  // namespace nicq::queue
