// Driving matches and host-started matched requests to completion.
//
// Blocking MPI_Match/MPI_Matchall poll their requests here while driving
// rt:: progress; MPI_Imatch/MPI_Imatchall register a MatchOp that the
// progress hook (core/progress_hooks.h, called by rt::Progress, i.e. by any
// blocking or test MPI call) advances. The same hook completes matched
// requests started with MPI_Start (counter read -> Request::MarkDone) and
// drives the offload backend's software progress (emulator without a
// progress thread, host steps).
#pragma once

#include <span>
#include <vector>

#include "core/status.h"
#include "queue/enqueueable.h"
#include "runtime/request.h"

namespace nicq::queue {

// Blocks until every request is matched (or one fails: that error).
Status MatchAll(std::span<Enqueueable* const> reqs);
// Begins matching `reqs` (BeginMatch already called on each) for `call`
// (MPI_Imatch, ...); `signal` (a kMatch request) is marked done, with
// status.error set on failure, when all are matched. Local.
Status MatchBegin(std::vector<Enqueueable*> reqs, Request* signal, const char* call);
// The call whose background match of `e` is under way, or nullptr.
const char* MatchInProgress(const Enqueueable* e);
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
