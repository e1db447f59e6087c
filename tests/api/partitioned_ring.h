/* What the partitioned tests (mp_partitioned.c, mp_partitioned_queue.c)
 * share: the ring's partitionings (different on the two sides, the same
 * total), the value an element carries in an epoch, the readying of
 * every send partition in an order that depends on the epoch, and the
 * threads' share of it. */
#pragma once

#include "mp_check.h"

#define SEND_PARTS 8
#define SEND_COUNT 16 /* doubles per send partition */
#define RECV_PARTS 4
#define RECV_COUNT 32 /* doubles per receive partition: the same total */
#define TOTAL (SEND_PARTS * SEND_COUNT)

static inline double value(int from, int epoch, int i) {
  return from * 100000.0 + epoch * 1000.0 + i;
}

/* Readies every send partition: singly in reverse, as two ranges, or as a
 * list, by the epoch. */
static inline void ready_all(MPI_Request req, int epoch) {
  switch (epoch % 3) {
    case 0:
      for (int p = SEND_PARTS - 1; p >= 0; --p) CHECK_OK(MPI_Pready(p, req));
      break;
    case 1:
      CHECK_OK(MPI_Pready_range(SEND_PARTS / 2, SEND_PARTS - 1, req));
      CHECK_OK(MPI_Pready_range(0, SEND_PARTS / 2 - 1, req));
      break;
    default: {
      int list[SEND_PARTS];
      for (int i = 0; i < SEND_PARTS; ++i) list[i] = (i * 3 + epoch) % SEND_PARTS;
      CHECK_OK(MPI_Pready_list(SEND_PARTS, list, req));
    }
  }
}

/* MPI_THREAD_MULTIPLE: THREADS threads ready SEND_PARTS / THREADS
 * partitions each, singly (pthread start routine). */
#define THREADS 4
struct quarter {
  MPI_Request req;
  int first;
};
static inline void* ready_quarter(void* arg) {
  const struct quarter* q = arg;
  for (int p = q->first; p < q->first + SEND_PARTS / THREADS; ++p) CHECK_OK(MPI_Pready(p, q->req));
  return NULL;
}
