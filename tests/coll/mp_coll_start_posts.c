/* A start of a resident plan is one counter add (issue: compile once): over
 * `starts` (argv[1], default 10000) starts of a matched persistent 8-byte
 * MPI_SUM allreduce, the starts hand no deferred work to the NIC or the
 * emulator (NICQX_Offload_work_requests read around each start: zero
 * fi_control(FI_QUEUE_WORK) calls on native) and allocate nothing (malloc,
 * calloc and realloc counted on this thread inside the start). The
 * window refills while the waits see epochs complete, so the requests made
 * over the whole loop must grow: that shows the counter is live and the plan
 * is on the offload backend. Where the emulator's agent re-armed every epoch
 * (its own posts are not requests from the host), an epoch that finishes
 * while this thread only sleeps shows it instead. argv[2] = "enqueue" starts through
 * MPI_Enqueue_start on a queue instead of MPI_Start; argv[2] = "asleep"
 * makes every epoch finish while this thread only sleeps: after MPI_Start,
 * no MPI call but NICQX_Request_work_done (a read of the done counter, no
 * progress) with usleep between reads, at most 20 s, and the result is
 * checked before MPI_Wait (where the start leaves the epoch to the
 * emulator's agent, the agent must find the add and issue the epoch).
 * Every epoch's result is checked. */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "coll_check.h"

/* Allocation counting interposes glibc's allocator; sanitizers own it. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNT_ALLOCATIONS 0
#else
#define COUNT_ALLOCATIONS 1
extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
static __thread int g_counting;
static long long g_allocations;
void* malloc(size_t n) {
  if (g_counting) g_allocations++;
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  if (g_counting) g_allocations++;
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  if (g_counting) g_allocations++;
  return __libc_realloc(p, n);
}
#endif

static void counting(int on) {
#if COUNT_ALLOCATIONS
  g_counting = on;
#else
  (void)on;
#endif
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int starts = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 10000;
  const int enqueue = argc > 2 && strcmp(argv[2], "enqueue") == 0;
  const int asleep = argc > 2 && strcmp(argv[2], "asleep") == 0;
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double in = 0, out = 0;
  MPI_Request req;
  CHECK_OK(
      MPI_Allreduce_init(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
  MPI_Queue q = MPI_QUEUE_NULL;
  if (enqueue) {
    CHECK_OK(MPI_Match(&req));
    CHECK_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  }
  long long requests_in_starts = 0, first = 0, last = 0;
  long long allocations_in_starts = 0;
  CHECK_OK(NICQX_Offload_work_requests(&first));
  for (int e = 0; e < starts; e++) {
    in = g_rank + e % 7;
    long long before = 0, after = 0;
    CHECK_OK(NICQX_Offload_work_requests(&before));
#if COUNT_ALLOCATIONS
    const long long allocs_before = g_allocations;
#endif
    counting(1);
    const int rc = enqueue ? MPI_Enqueue_start(&q, &req) : MPI_Start(&req);
    counting(0);
#if COUNT_ALLOCATIONS
    allocations_in_starts += g_allocations - allocs_before;
#endif
    CHECK_OK(rc);
    CHECK_OK(NICQX_Offload_work_requests(&after));
    requests_in_starts += after - before;
    if (enqueue) {
      CHECK_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
      CHECK_OK(MPI_Queue_fence(&q));
    } else {
      const double want = (double)size * (e % 7) + size * (size - 1) / 2.0;
      int done = 0;
      for (int i = 0; asleep && i < 40000 && !done; i++) {
        CHECK_OK(NICQX_Request_work_done(req, &done));
        if (!done) usleep(500);
      }
      CHECK(!asleep || done, "epoch %d did not finish in 20 s without MPI calls after MPI_Start",
            e);
      CHECK(!asleep || out == want, "epoch %d before MPI_Wait: %g, want %g", e, out, want);
      CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    const double want = (double)size * (e % 7) + size * (size - 1) / 2.0;
    CHECK(out == want, "epoch %d: %g, want %g", e, out, want);
  }
  CHECK_OK(NICQX_Offload_work_requests(&last));
  if (last == first) {
    /* No request from the host over the loop: the backend's agent re-armed
     * the window (the emulator's thread, docs/offload-backends.md), or the
     * allreduce is not offloaded at all. An offloaded epoch finishes while
     * this thread only sleeps and reads, with no MPI call that progresses. */
    in = g_rank + 1;
    int done = 0;
    if (enqueue) {
      CHECK_OK(MPI_Enqueue_start(&q, &req));
      CHECK_OK(MPI_Enqueue_wait(&q, &req, MPI_STATUS_IGNORE));
    } else {
      CHECK_OK(MPI_Start(&req));
    }
    for (int i = 0; i < 20000 && !done; i++) {
      if (enqueue) {
        long long completed = 0, enqueued = 0;
        CHECK_OK(NICQX_Queue_waits_completed(q, &completed, &enqueued));
        done = completed == enqueued;
      } else {
        CHECK_OK(NICQX_Request_work_done(req, &done));
      }
      if (!done) usleep(500);
    }
    if (enqueue)
      CHECK_OK(MPI_Queue_fence(&q));
    else
      CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(done,
          "no deferred work was requested over %d epochs and an epoch does not finish without "
          "MPI calls: the allreduce is not on the offload backend, or the counter is dead",
          starts);
    const double want = (double)size + size * (size - 1) / 2.0;
    CHECK(out == want, "last epoch: %g, want %g", out, want);
  }
  CHECK(requests_in_starts == 0, "%d starts handed %lld deferred-work requests to the backend",
        starts, requests_in_starts);
  CHECK(allocations_in_starts == 0, "%d starts made %lld allocations", starts,
        allocations_in_starts);
  if (enqueue) CHECK_OK(MPI_Queue_free(&q));
  CHECK_OK(MPI_Request_free(&req));
  if (g_rank == 0)
    printf(
        "coll_start_posts: %d %s: 0 work requests, 0 allocations in starts; %lld requests "
        "re-armed the window in waits\n",
        starts,
        enqueue  ? "enqueued starts"
        : asleep ? "starts, each epoch done with this thread asleep"
                 : "starts",
        last - first);
  MPI_Finalize();
  return 0;
}
