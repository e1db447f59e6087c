/* A start of a matched persistent send or receive with a resident window
 * is one counter add (issue 15, "compile once", item 2). A ring: every rank
 * sends to its right neighbour and receives from its left over kPairs
 * matched send/recv pairs (one tag each). An iteration enqueues, pair by
 * pair, the receive's start, the send's start and a wait for both, and
 * fences after the last pair; `epochs` (argv[1]) iterations of the ring
 * are run, and every epoch's data is checked after its fence.
 *
 * Around each MPI_Enqueue_start it reads NICQX_Offload_work_requests (ops
 * handed to the emulator, fi_control(FI_QUEUE_WORK) calls on native) and
 * counts the allocations made on this thread inside the call:
 *  - a start whose gate is already reached (pair 0, right after a fence:
 *    the queue's counter has passed every earlier wait) hands no work to
 *    the backend: the host bumps the start counter itself;
 *  - a start gated on a wait not yet done (the later pairs) posts exactly
 *    the one counter op that links the queue's counter to the start
 *    counter: at most one work request (none when the wait completed before
 *    the start read the gate);
 *  - no start allocates (but for libfabric's own record of a work request
 *    on native sockets, at most one per linking op).
 * Waits and fences see epochs retire and re-arm the window, so the work
 * requests over the whole run must grow: the requests are live on the
 * offload backend.
 *
 * argv[2] = "at_start": the backend cannot withdraw unfired ops (cxi) or
 * NICQ_RESIDENT_PLANS=0: every start arms its own epoch, so the starts with
 * a reached gate must post work (that path is kept, and this test sees it). */
#define _GNU_SOURCE
#include <stddef.h>
#include <string.h>

#include "check.h"

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

enum { kPairs = 4, kLen = 16 };

/* One MPI_Enqueue_start; returns the work requests it made and adds the
 * allocations made inside it to *allocs. */
static long long MeasuredStart(MPI_Queue q, MPI_Request* req, long long* allocs) {
  long long before = 0, after = 0;
  QT_OK(NICQX_Offload_work_requests(&before));
#if COUNT_ALLOCATIONS
  const long long allocs_before = g_allocations;
  g_counting = 1;
#endif
  const int rc = MPI_Enqueue_start(&q, req);
#if COUNT_ALLOCATIONS
  g_counting = 0;
  *allocs += g_allocations - allocs_before;
#endif
  QT_OK(rc);
  QT_OK(NICQX_Offload_work_requests(&after));
  return after - before;
}

static long long Value(int src, int epoch, int pair, int i) {
  return ((long long)src << 40) + ((long long)epoch << 12) + pair * kLen + i;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int epochs = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 10000;
  const int at_start = argc > 2 && strcmp(argv[2], "at_start") == 0;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  static long long sendbuf[kPairs][kLen], recvbuf[kPairs][kLen];
  MPI_Request reqs[2 * kPairs]; /* receives, then sends */
  MPI_Request *recv = reqs, *send = reqs + kPairs;
  for (int j = 0; j < kPairs; ++j) {
    QT_OK(MPI_Recv_init(recvbuf[j], kLen, MPI_LONG_LONG, left, 10 + j, MPI_COMM_WORLD, &recv[j]));
    QT_OK(MPI_Send_init(sendbuf[j], kLen, MPI_LONG_LONG, right, 10 + j, MPI_COMM_WORLD, &send[j]));
  }
  /* All at once: a blocking match of one receive would wait for the
   * neighbour, itself blocked matching its own receive. */
  QT_OK(MPI_Matchall(2 * kPairs, reqs));
  MPI_Queue q = MPI_QUEUE_NULL;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));

  long long first = 0, last = 0;
  long long reached_allocs = 0, gated_allocs = 0;
  long long reached_requests = 0, reached_starts = 0, gated_requests = 0, gated_starts = 0;
  QT_OK(NICQX_Offload_work_requests(&first));
  for (int e = 0; e < epochs; ++e) {
    for (int j = 0; j < kPairs; ++j) {
      for (int i = 0; i < kLen; ++i) {
        sendbuf[j][i] = Value(rank, e, j, i);
        recvbuf[j][i] = -1;
      }
    }
    for (int j = 0; j < kPairs; ++j) {
      long long* allocs = j == 0 ? &reached_allocs : &gated_allocs;
      const long long r = MeasuredStart(q, &recv[j], allocs);
      const long long s = MeasuredStart(q, &send[j], allocs);
      if (j == 0) {  // after the fence: the gate is reached
        reached_requests += r + s;
        reached_starts += 2;
      } else {
        QT_CHECK(at_start || (r <= 1 && s <= 1),
                 "epoch %d pair %d: a gated start posted %lld (recv) / %lld (send) work "
                 "requests, more than its one linking counter op",
                 e, j, r, s);
        gated_requests += r + s;
        gated_starts += 2;
      }
      MPI_Request both[2] = {recv[j], send[j]};
      QT_OK(MPI_Enqueue_waitall(&q, 2, both, MPI_STATUSES_IGNORE));
    }
    QT_OK(MPI_Queue_fence(&q));
    for (int j = 0; j < kPairs; ++j)
      for (int i = 0; i < kLen; ++i)
        QT_CHECK(recvbuf[j][i] == Value(left, e, j, i),
                 "epoch %d pair %d: recv[%d] = %lld, want %lld", e, j, i, recvbuf[j][i],
                 Value(left, e, j, i));
  }
  QT_OK(NICQX_Offload_work_requests(&last));
  QT_CHECK(last > first,
           "no work was handed to the backend over %d epochs: the requests are not on the "
           "offload backend, or the counter is dead",
           epochs);
  if (at_start) {
    QT_CHECK(reached_requests >= reached_starts,
             "%lld starts armed at start posted only %lld work requests", reached_starts,
             reached_requests);
  } else {
    QT_CHECK(reached_requests == 0,
             "%lld starts with a reached gate handed %lld work requests to the backend",
             reached_starts, reached_requests);
  }
  /* A gated start's one linking op is a fi_control(FI_QUEUE_WORK) on native
   * sockets, which allocates its trigger record inside libfabric: at most
   * one allocation per work request there, none anywhere else. Arming at
   * the start (at_start) posts through the provider at every start, which
   * allocates there: not checked. */
  QT_CHECK(at_start || (reached_allocs == 0 && gated_allocs <= gated_requests),
           "the starts made %lld allocations with the gate reached, %lld in gated starts that "
           "handed %lld work requests to the backend",
           reached_allocs, gated_allocs, gated_requests);
  QT_OK(MPI_Queue_free(&q));
  for (int j = 0; j < kPairs; ++j) {
    QT_OK(MPI_Request_free(&recv[j]));
    QT_OK(MPI_Request_free(&send[j]));
  }
  if (rank == 0)
    printf(
        "p2p_start_posts: %d ring epochs x %d pairs%s: %lld work requests in %lld starts with "
        "the gate reached, %lld in %lld gated starts, %lld allocations (gated); %lld requests "
        "over the run\n",
        epochs, kPairs, at_start ? " (armed at start)" : "", reached_requests, reached_starts,
        gated_requests, gated_starts, gated_allocs, last - first);
  MPI_Finalize();
  return 0;
}
