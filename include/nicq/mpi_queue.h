/* nicq: MPI queue entry points (included by mpi.h; do not include directly).
 *
 * Draft chapter 13, Queued Communication: matching of persistent requests
 * (13.2), queue objects and enqueueing (13.3). Semantics, progress and
 * thread-safety rules of this implementation: docs/queue-semantics.md.
 *
 * The draft's C bindings take `MPI_Queue *` while its Example 13.1 passes
 * the handle by value; both spellings compile: C11 _Generic macros in C,
 * overloads in C++. */
#ifndef NICQ_MPI_QUEUE_H_INCLUDED
#define NICQ_MPI_QUEUE_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

typedef int MPI_Queue;
#define NICQ_KIND_QUEUE 0x71
#define MPI_QUEUE_NULL ((MPI_Queue)NICQ_HANDLE(NICQ_KIND_QUEUE, 0))

/* Queue types (13.3.4). */
#define MPI_QUEUE_TYPE_DEFAULT 0

/* Error classes of erroneous queue / match use (reserved in mpi.h). */
#define MPI_ERR_QUEUE 70
#define MPI_ERR_MATCH 71

/* 13.2 matching */
int MPI_Match(MPI_Request* request);
int MPI_Imatch(MPI_Request* tomatch, MPI_Request* matchrequest);
int MPI_Matchall(int count, MPI_Request array_of_requests[]);
int MPI_Imatchall(int count, MPI_Request array_of_requests[], MPI_Request* request);
int MPI_Is_matched(MPI_Request request, int* flag);
/* The draft's C binding spells these MPI_IMatch / MPI_IMatchall. */
#define MPI_IMatch MPI_Imatch
#define MPI_IMatchall MPI_Imatchall

/* 13.3 queues */
int MPI_Queue_init(MPI_Queue* queue, int type, void* external);
int MPI_Queue_free(MPI_Queue* queue);
int MPI_Enqueue_start(MPI_Queue* queue, MPI_Request* request);
int MPI_Enqueue_startall(MPI_Queue* queue, int count, MPI_Request array_of_requests[]);
int MPI_Enqueue_wait(MPI_Queue* queue, MPI_Request* request, MPI_Status* status);
int MPI_Enqueue_waitall(MPI_Queue* queue, int count, MPI_Request array_of_requests[],
                        MPI_Status* array_of_statuses);
int MPI_Queue_fence(MPI_Queue* queue);
/* nicq extension, for tests and tools: how many enqueued waits of `queue`
 * are known complete and how many were enqueued since it was made. It reads
 * the queue's counter and drives no progress, so a program can observe a
 * chain advancing on the NIC (or the emulator's agent) while it makes no MPI
 * call. */
int NICQX_Queue_waits_completed(MPI_Queue queue, long long* completed, long long* enqueued);
/* nicq extension, for tests and tools: deferred-work requests this
 * process's offload backend has handed to the NIC or the emulator since
 * MPI_Init (fi_control(FI_QUEUE_WORK) calls on the native backend, ops
 * host threads queued on the emulated one, not its agent's own re-arms);
 * 0 without an offload context. Read around
 * MPI_Start to see that a resident plan's start posts nothing. */
int NICQX_Offload_work_requests(long long* requests);
/* nicq extension, for tests and tools: *flag = 1 when the operation of a
 * started request has finished (or the request is not active), read without
 * driving progress and without completing the request: a resident plan's
 * epoch counts as finished once its done counter reached its target, which
 * the NIC or the emulator's agent moves while the host makes no MPI call.
 * MPI_Wait or MPI_Test still completes the request. */
int NICQX_Request_work_done(MPI_Request request, int* flag);

#ifdef __cplusplus
} /* extern "C" */

/* By-value spellings (Example 13.1). */
inline int MPI_Enqueue_start(MPI_Queue queue, MPI_Request* request) {
  return MPI_Enqueue_start(&queue, request);
}
inline int MPI_Enqueue_startall(MPI_Queue queue, int count, MPI_Request array_of_requests[]) {
  return MPI_Enqueue_startall(&queue, count, array_of_requests);
}
inline int MPI_Enqueue_wait(MPI_Queue queue, MPI_Request* request, MPI_Status* status) {
  return MPI_Enqueue_wait(&queue, request, status);
}
inline int MPI_Enqueue_waitall(MPI_Queue queue, int count, MPI_Request array_of_requests[],
                               MPI_Status* array_of_statuses) {
  return MPI_Enqueue_waitall(&queue, count, array_of_requests, array_of_statuses);
}
inline int MPI_Queue_fence(MPI_Queue queue) {
  return MPI_Queue_fence(&queue);
}

#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(NICQ_QUEUE_NO_GENERIC)

static inline int nicq_enqueue_start_v(MPI_Queue q, MPI_Request* r) {
  return (MPI_Enqueue_start)(&q, r);
}
static inline int nicq_enqueue_startall_v(MPI_Queue q, int n, MPI_Request* r) {
  return (MPI_Enqueue_startall)(&q, n, r);
}
static inline int nicq_enqueue_wait_v(MPI_Queue q, MPI_Request* r, MPI_Status* s) {
  return (MPI_Enqueue_wait)(&q, r, s);
}
static inline int nicq_enqueue_waitall_v(MPI_Queue q, int n, MPI_Request* r, MPI_Status* s) {
  return (MPI_Enqueue_waitall)(&q, n, r, s);
}
static inline int nicq_queue_fence_v(MPI_Queue q) {
  return (MPI_Queue_fence)(&q);
}
/* The handle (MPI_Queue, an int) or its address (MPI_Queue *). */
#define NICQ_QSEL(q, byptr, byval) _Generic((q), MPI_Queue * : byptr, default : byval)
#define MPI_Enqueue_start(q, r) NICQ_QSEL((q), (MPI_Enqueue_start), nicq_enqueue_start_v)((q), (r))
#define MPI_Enqueue_startall(q, n, r) \
  NICQ_QSEL((q), (MPI_Enqueue_startall), nicq_enqueue_startall_v)((q), (n), (r))
#define MPI_Enqueue_wait(q, r, s) \
  NICQ_QSEL((q), (MPI_Enqueue_wait), nicq_enqueue_wait_v)((q), (r), (s))
#define MPI_Enqueue_waitall(q, n, r, s) \
  NICQ_QSEL((q), (MPI_Enqueue_waitall), nicq_enqueue_waitall_v)((q), (n), (r), (s))
#define MPI_Queue_fence(q) NICQ_QSEL((q), (MPI_Queue_fence), nicq_queue_fence_v)((q))

#endif
#endif
