/* OSU-style ping-pong latency between ranks 0 and 1 through a queue
 * (draft chapter 13): per size, persistent send and receive requests are
 * made and matched once (MPI_Matchall); every iteration is enqueued:
 *   rank 0: Enqueue_start(recv) Enqueue_start(send) Enqueue_waitall(both)
 *   rank 1: Enqueue_start(recv) Enqueue_wait(recv) Enqueue_start(send)
 *           Enqueue_wait(send)
 * so rank 1's reply is gated on its receive inside the queue, not by the
 * host. The host fences every WINDOW iterations (Example 13.1 enqueues 100
 * iterations per fence) and at the end; latency is half the round trip.
 * Ranks >= 2 idle. Both ranks check the last received message.
 * Built with an MPI without queues it prints that and exits 0. */
#include "osu_util.h"

#ifndef WINDOW
#define WINDOW 100
#endif

#ifdef NICQ_MPI
static void ok(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  osu_fail("%s failed: %s", what, msg);
}

/* One ping-pong iteration enqueued on q. */
static void enqueue_iteration(MPI_Queue* q, int rank, MPI_Request reqs[2]) { /* recv, send */
  MPI_Request *recv = &reqs[0], *send = &reqs[1];
  if (rank == 0) {
    ok(MPI_Enqueue_start(q, recv), "MPI_Enqueue_start(recv)");
    ok(MPI_Enqueue_start(q, send), "MPI_Enqueue_start(send)");
    ok(MPI_Enqueue_waitall(q, 2, reqs, MPI_STATUSES_IGNORE), "MPI_Enqueue_waitall");
  } else {
    ok(MPI_Enqueue_start(q, recv), "MPI_Enqueue_start(recv)");
    ok(MPI_Enqueue_wait(q, recv, MPI_STATUS_IGNORE), "MPI_Enqueue_wait(recv)");
    ok(MPI_Enqueue_start(q, send), "MPI_Enqueue_start(send)");
    ok(MPI_Enqueue_wait(q, send, MPI_STATUS_IGNORE), "MPI_Enqueue_wait(send)");
  }
}

/* Enqueues `count` iterations, fencing every WINDOW and at the end. */
static void run(MPI_Queue* q, int rank, MPI_Request reqs[2], int count) {
  for (int i = 0; i < count; ++i) {
    enqueue_iteration(q, rank, reqs);
    if (i % WINDOW == WINDOW - 1) ok(MPI_Queue_fence(q), "MPI_Queue_fence");
  }
  ok(MPI_Queue_fence(q), "MPI_Queue_fence");
}
#endif

int main(int argc, char** argv) {
  int rank, size;
  struct osu_options o;
  if (osu_p2p_start(&argc, &argv, "nicq_latency_queued", 0, 1, 4L << 20, &o, &rank, &size) != 0)
    return 1;
  if (rank == 0) osu_header("Queued Latency Test", &o, size);
#ifndef NICQ_MPI
  if (rank == 0) printf("# form not supported by this MPI\n");
#else
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm pair = osu_pair_comm(rank);
  char* sbuf = osu_buffer(o.max_size, 0);
  char* rbuf = osu_buffer(o.max_size, 0);
  const int peer = rank == 0 ? 1 : 0;
  MPI_Queue q = MPI_QUEUE_NULL;
  if (rank < 2) ok(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL), "MPI_Queue_init");
  if (rank == 0) {
    printf("# fence every %d iterations\n", WINDOW);
    printf("# %-10s%18s", "Size", "Latency (us)");
    osu_full_columns(&o, "us");
    printf("\n");
    fflush(stdout);
  }
  struct osu_progress progress;
  osu_progress_init(&progress, &o, rank);
  for (long n = o.min_size; n <= o.max_size; n = osu_next_size(n)) {
    const int iters = osu_iters(&o, n), warmup = osu_warmup(&o, n);
    memset(sbuf, osu_pattern(rank, n), (size_t)n);
    memset(rbuf, 0, (size_t)n);
    /* Receive first: nicq's MPI_Matchall of {send, recv} on both ranks of
     * a pair fails ("malformed reply"), {recv, send} matches. */
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}; /* recv, send */
    double us = 0;
    if (rank < 2) {
      ok(MPI_Recv_init(rbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &reqs[0]), "MPI_Recv_init");
      ok(MPI_Send_init(sbuf, (int)n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &reqs[1]), "MPI_Send_init");
      ok(MPI_Matchall(2, reqs), "MPI_Matchall");
      run(&q, rank, reqs, warmup);
      osu_sync_pair(rank);
      double t0 = MPI_Wtime();
      run(&q, rank, reqs, iters);
      us = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
      osu_check_bytes("queued ping-pong message", rbuf, n, osu_pattern(peer, n));
      ok(MPI_Request_free(&reqs[0]), "MPI_Request_free");
      ok(MPI_Request_free(&reqs[1]), "MPI_Request_free");
      osu_print_row(&o, pair, n, us, iters);
    }
    osu_progress_done(&progress, &o, n);
  }
  if (rank < 2) ok(MPI_Queue_free(&q), "MPI_Queue_free");
  free(sbuf);
  free(rbuf);
  MPI_Comm_free(&pair);
#endif
  MPI_Finalize();
  return 0;
}
