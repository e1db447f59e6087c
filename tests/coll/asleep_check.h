/* The host-asleep step of the queued-chain tests (mp_coll_asleep.c,
 * mp_neighbor_asleep.c, mp_dense_asleep.c): after a chain is enqueued,
 * every host thread sleeps and makes no MPI call but the read of
 * NICQX_Queue_waits_completed, which drives no progress. */
#pragma once

#include <mpi.h>
#include <time.h>

#include "coll_check.h"

static inline void sleep_seconds(double s) {
  struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* Sleeps `chain` seconds (the chain's own time with a fence), then in
 * steps of an eighth of it (5 to 200 ms) while fewer than `pairs` waits
 * past `done0` have completed (a loaded machine), at most 20 s. Returns the
 * seconds slept; *done and *enq are the queue's counts at the end. Reading
 * the counts drives no progress, so how often they are read changes
 * nothing the check sees; a rank whose own chain is done goes on to its
 * fence, whose progress cannot advance a peer's chain: every op of its own
 * part of each epoch has completed by then. */
static inline double sleep_while_chain_runs(MPI_Queue q, long long done0, int pairs, double chain,
                                            long long* done, long long* enq) {
  double step = chain / 8;
  step = step < 0.005 ? 0.005 : step > 0.2 ? 0.2 : step;
  sleep_seconds(chain + 0.002);
  double slept = chain;
  CHECK_OK(NICQX_Queue_waits_completed(q, done, enq));
  while (*done - done0 < pairs && slept < 20.0) {
    sleep_seconds(step);
    slept += step;
    CHECK_OK(NICQX_Queue_waits_completed(q, done, enq));
  }
  return slept;
}
