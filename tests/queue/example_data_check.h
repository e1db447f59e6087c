/* Force-included (-include) before the verbatim Example 13.1 so that the
 * example, unchanged, checks its data: MPI_Send_init fills each send buffer
 * with values that name the sender, the destination, the tag and the
 * index; MPI_Recv_init remembers each receive buffer and the source and tag
 * it expects; MPI_Enqueue_waitall remembers the statuses array; after every
 * MPI_Queue_fence each receive buffer must hold exactly what its source's
 * matching send buffer held, and the receives' statuses must name their
 * source, tag and element count. Example 13.1 never changes its send
 * buffers, so the values are fixed per (sender, destination, tag, index). */
#ifndef NICQ_EXAMPLE_DATA_CHECK_H
#define NICQ_EXAMPLE_DATA_CHECK_H

#include "check.h"

#define EXAMPLE_MAX_BUFFERS 8

typedef struct {
  double* buf;
  int count, source, tag;
  MPI_Request* req;
} ExampleRecv;

static ExampleRecv example_recvs[EXAMPLE_MAX_BUFFERS];
static int example_nrecvs, example_fences;
static MPI_Request* example_wait_reqs;
static MPI_Status* example_wait_statuses;
static int example_wait_count;

static double ExampleValue(int sender, int dest, int tag, int i) {
  return sender * 1e6 + dest * 1e4 + tag * 1e3 + i;
}

static int ExampleMe(void) {
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  qt_rank = me;
  return me;
}

static int ExampleSendInit(const void* buf, int count, MPI_Datatype type, int dest, int tag,
                           MPI_Comm comm, MPI_Request* req) {
  QT_CHECK(type == MPI_DOUBLE, "the data check handles MPI_DOUBLE buffers only");
  const int me = ExampleMe();
  for (int i = 0; i < count; ++i) ((double*)buf)[i] = ExampleValue(me, dest, tag, i);
  return (MPI_Send_init)(buf, count, type, dest, tag, comm, req);
}

static int ExampleRecvInit(void* buf, int count, MPI_Datatype type, int source, int tag,
                           MPI_Comm comm, MPI_Request* req) {
  QT_CHECK(type == MPI_DOUBLE, "the data check handles MPI_DOUBLE buffers only");
  QT_CHECK(example_nrecvs < EXAMPLE_MAX_BUFFERS, "too many receive buffers for the check");
  ExampleRecv* r = &example_recvs[example_nrecvs++];
  r->buf = buf;
  r->count = count;
  r->source = source;
  r->tag = tag;
  r->req = req;
  for (int i = 0; i < count; ++i) r->buf[i] = -1.0; /* nothing received yet */
  return (MPI_Recv_init)(buf, count, type, source, tag, comm, req);
}

static int ExampleWaitall(MPI_Queue q, int n, MPI_Request* reqs, MPI_Status* statuses) {
  example_wait_reqs = reqs;
  example_wait_statuses = statuses;
  example_wait_count = n;
  return (MPI_Enqueue_waitall)(&q, n, reqs, statuses);
}

static int ExampleFence(MPI_Queue q) {
  const int rc = (MPI_Queue_fence)(&q);
  if (rc != MPI_SUCCESS) return rc;
  const int me = ExampleMe();
  QT_CHECK(example_nrecvs > 0, "the example posted no receives");
  for (int k = 0; k < example_nrecvs; ++k) {
    const ExampleRecv* r = &example_recvs[k];
    for (int i = 0; i < r->count; ++i) {
      const double want = ExampleValue(r->source, me, r->tag, i);
      QT_CHECK(r->buf[i] == want, "receive %d from rank %d: element %d is %.0f, expected %.0f", k,
               r->source, i, r->buf[i], want);
    }
    int statuses_checked = 0;
    for (int w = 0; w < example_wait_count && example_wait_statuses; ++w) {
      if (&example_wait_reqs[w] != r->req) continue;
      ++statuses_checked;
      const MPI_Status* st = &example_wait_statuses[w];
      int count = -1;
      MPI_Get_count(st, MPI_DOUBLE, &count);
      QT_CHECK(st->MPI_SOURCE == r->source && st->MPI_TAG == r->tag && count == r->count,
               "receive %d: status source %d tag %d count %d, expected %d %d %d", k, st->MPI_SOURCE,
               st->MPI_TAG, count, r->source, r->tag, r->count);
    }
    QT_CHECK(statuses_checked == 1, "receive %d: its status was not in the enqueued waitall", k);
  }
  if (me == 0 && ++example_fences == 1)
    printf("example data check: %d receive buffers and their statuses right after the fence\n",
           example_nrecvs);
  return rc;
}

#undef MPI_Enqueue_waitall
#undef MPI_Queue_fence
#define MPI_Send_init ExampleSendInit
#define MPI_Recv_init ExampleRecvInit
#define MPI_Enqueue_waitall ExampleWaitall
#define MPI_Queue_fence ExampleFence

#endif
