/* Partitioned requests on a queue (draft chapter 13: MPI_Enqueue_start takes
 * a partitioned persistent request, matched from its initialisation): a ring
 * of partitioned sends and receives enqueued for 20 epochs on a queue that
 * also carries a matched point-to-point pair, partitions readied before the
 * enqueued start ran (it waits behind an enqueued wait whose message is not
 * sent yet, and MPI_Parrived says false meanwhile) and after it ran; data
 * and statuses checked after every fence. Then six epochs in the draft's
 * conforming order (enqueue start, enqueue wait, MPI_Pready, fence), the
 * send's wait not retired before its last partition is readied. Then five
 * epochs whose partitions are all readied ahead, run with the host inside
 * MPI_Queue_fence only; and
 * the errors: enqueueing a request started with MPI_Start, MPI_Start,
 * MPI_Wait and MPI_Request_free of one with an enqueued start pending,
 * MPI_Pready with no start or past the starts enqueued, a partition listed
 * twice; each leaving the requests usable (the epoch after it checks data).
 * Last, MPI_PROC_NULL peers and a noncontiguous receive on the queue, and
 * four threads readying the partitions of enqueued starts. */
#include <pthread.h>

#include "partitioned_ring.h"

#define EPOCHS 20
#define AHEAD 5
#define TAG 7
#define TAG_MATCHED 9
#define TAG_TOKEN 11
#define UNTOUCHED 12345 /* MPI_ERROR as the program set it */

static int rank, size, left, right;
static double out[TOTAL], in[TOTAL];
static int mout, min;
/* 0 precv, 1 psend, 2 matched receive, 3 matched send */
static MPI_Request reqs[4];
static MPI_Queue queue;

static void fill(int epoch) {
  for (int i = 0; i < TOTAL; ++i) {
    out[i] = value(rank, epoch, i);
    in[i] = -1;
  }
  mout = rank * 1000 + epoch;
  min = -1;
}

static void clear_statuses(MPI_Status* st, int n) {
  memset(st, 0xff, sizeof *st * (size_t)n);
  for (int i = 0; i < n; ++i) st[i].MPI_ERROR = UNTOUCHED;
}

/* The partitioned receive's data and status, the matched receive's value. */
static void verify_recv(int epoch, const MPI_Status* st, int matched_too, int queued,
                        const char* what) {
  for (int i = 0; i < TOTAL; ++i)
    CHECK(in[i] == value(left, epoch, i), "%s epoch %d: in[%d] = %g, expected %g", what, epoch, i,
          in[i], value(left, epoch, i));
  CHECK(st->MPI_SOURCE == left && st->MPI_TAG == TAG, "%s epoch %d: status source %d tag %d", what,
        epoch, st->MPI_SOURCE, st->MPI_TAG);
  /* An enqueued wait leaves it as the program set it (13.3.2); MPI_Waitall
   * may write MPI_SUCCESS. */
  CHECK(st->MPI_ERROR == UNTOUCHED || (!queued && st->MPI_ERROR == MPI_SUCCESS),
        "%s epoch %d: MPI_ERROR set to %d", what, epoch, st->MPI_ERROR);
  int count = -1;
  CHECK_OK(MPI_Get_count(st, MPI_DOUBLE, &count));
  CHECK(count == TOTAL, "%s epoch %d: count %d, expected %d", what, epoch, count, TOTAL);
  if (matched_too)
    CHECK(min == left * 1000 + epoch, "%s epoch %d: matched receive got %d", what, epoch, min);
}

/* Even epochs: the partitioned starts wait behind the enqueued wait of a
 * matched receive whose message the left neighbour starts (MPI_Start) only
 * after this rank's token, so they cannot have run while this rank readies its send
 * partitions and asks MPI_Parrived. */
static void epoch_ready_before(int epoch) {
  MPI_Status st[4];
  clear_statuses(st, 4);
  CHECK_OK(MPI_Enqueue_start(&queue, &reqs[2]));
  CHECK_OK(MPI_Enqueue_wait(&queue, &reqs[2], &st[2]));
  CHECK_OK(MPI_Enqueue_startall(&queue, 2, reqs));
  ready_all(reqs[1], epoch);
  int arrived = -1;
  CHECK_OK(MPI_Parrived(reqs[0], RECV_PARTS - 1, &arrived));
  CHECK(arrived == 0, "epoch %d: MPI_Parrived true before the enqueued start ran", epoch);
  int token = epoch;
  CHECK_OK(MPI_Send(&token, 1, MPI_INT, left, TAG_TOKEN, MPI_COMM_WORLD));
  CHECK_OK(MPI_Recv(&token, 1, MPI_INT, right, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  /* Outside the queue: enqueued, it would wait behind this rank's own
   * enqueued receive, as every rank's would. */
  CHECK_OK(MPI_Start(&reqs[3]));
  MPI_Status st3[2];
  clear_statuses(st3, 2);
  CHECK_OK(MPI_Enqueue_waitall(&queue, 2, reqs, st3));
  CHECK_OK(MPI_Queue_fence(&queue));
  CHECK_OK(MPI_Wait(&reqs[3], MPI_STATUS_IGNORE));
  CHECK(st[2].MPI_SOURCE == left && st[2].MPI_TAG == TAG_MATCHED,
        "epoch %d: matched receive status source %d tag %d", epoch, st[2].MPI_SOURCE,
        st[2].MPI_TAG);
  verify_recv(epoch, &st3[0], 1, 1, "ready before");
}

/* Odd epochs: every start runs (the fence of the matched pair's wait comes
 * after them), then the send partitions are readied and the receive's last
 * partition awaited with MPI_Parrived. */
static void epoch_ready_after(int epoch) {
  MPI_Status st[4];
  clear_statuses(st, 4);
  CHECK_OK(MPI_Enqueue_startall(&queue, 4, reqs));
  CHECK_OK(MPI_Enqueue_waitall(&queue, 2, &reqs[2], &st[2]));
  CHECK_OK(MPI_Queue_fence(&queue));
  ready_all(reqs[1], epoch);
  int arrived = 0;
  while (!arrived) CHECK_OK(MPI_Parrived(reqs[0], RECV_PARTS - 1, &arrived));
  for (int i = (RECV_PARTS - 1) * RECV_COUNT; i < TOTAL; ++i)
    CHECK(in[i] == value(left, epoch, i), "epoch %d: after MPI_Parrived in[%d] = %g", epoch, i,
          in[i]);
  CHECK_OK(MPI_Enqueue_waitall(&queue, 2, reqs, st));
  CHECK_OK(MPI_Queue_fence(&queue));
  verify_recv(epoch, &st[0], 1, 1, "ready after");
}

static void ring(void) {
  for (int epoch = 0; epoch < EPOCHS; ++epoch) {
    fill(epoch);
    if (epoch % 2 == 0)
      epoch_ready_before(epoch);
    else
      epoch_ready_after(epoch);
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL,
          "a partitioned request stays allocated");
  }
}

/* The draft's conforming order (13.3: once MPI_Enqueue_start returns, no
 * MPI call on the request before MPI_Enqueue_wait): the starts and the waits
 * enqueued, then the send's partitions written and readied one by one (an
 * order that depends on the epoch), then the fence. With every partition
 * but the last readied the send's wait, enqueued first (waits retire in
 * order), has not retired however much progress runs (checked before
 * every MPI_Pready), and the data carry the epoch. */
#define CONFORMING_EPOCHS 6
#define TAG_NEVER 13 /* probed for progress only */
static void conforming_order(void) {
  for (int k = 0; k < CONFORMING_EPOCHS; ++k) {
    const int epoch = 400 + k;
    for (int i = 0; i < TOTAL; ++i) in[i] = -1;
    MPI_Status st[2];
    clear_statuses(st, 2);
    long long base = -1, enqueued = -1, completed = -1;
    CHECK_OK(NICQX_Queue_waits_completed(queue, &base, &enqueued));
    CHECK(base == enqueued, "conforming epoch %d: waits completed %lld of %lld at its start", epoch,
          base, enqueued);
    CHECK_OK(MPI_Enqueue_startall(&queue, 2, reqs));
    CHECK_OK(MPI_Enqueue_wait(&queue, &reqs[1], &st[1]));
    CHECK_OK(MPI_Enqueue_wait(&queue, &reqs[0], &st[0]));
    for (int n = 0; n < SEND_PARTS; ++n) {
      const int p = (n * 3 + k) % SEND_PARTS;
      for (int i = p * SEND_COUNT; i < (p + 1) * SEND_COUNT; ++i) out[i] = value(rank, epoch, i);
      /* Before the last MPI_Pready, progress runs a while first. */
      for (int poll = 0; poll < (n == SEND_PARTS - 1 ? 100 : 1); ++poll) {
        int flag = 0;
        CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK_OK(NICQX_Queue_waits_completed(queue, &completed, &enqueued));
        CHECK(completed == base,
              "conforming epoch %d: %lld waits retired (%lld before it) with send partition %d "
              "not readied",
              epoch, completed, base, p);
      }
      CHECK_OK(MPI_Pready(p, reqs[1]));
    }
    CHECK_OK(MPI_Queue_fence(&queue));
    CHECK_OK(NICQX_Queue_waits_completed(queue, &completed, &enqueued));
    CHECK(completed == base + 2 && enqueued == base + 2,
          "conforming epoch %d: after the fence waits completed %lld of %lld, expected %lld", epoch,
          completed, enqueued, base + 2);
    verify_recv(epoch, &st[0], 0, 1, "conforming order");
  }
}

/* AHEAD epochs enqueued back to back, each send's partitions readied right
 * after its start was enqueued (long before it runs where the queue runs
 * its steps in host calls), then one fence: no other MPI call drives them. */
static void fence_only(void) {
  const int epoch = 100;
  fill(epoch);
  MPI_Status st[AHEAD][2];
  for (int k = 0; k < AHEAD; ++k) {
    clear_statuses(st[k], 2);
    CHECK_OK(MPI_Enqueue_startall(&queue, 2, reqs));
    ready_all(reqs[1], k);
    CHECK_OK(MPI_Enqueue_waitall(&queue, 2, reqs, st[k]));
  }
  long long completed = -1, enqueued = -1;
  CHECK_OK(NICQX_Queue_waits_completed(queue, &completed, &enqueued));
  CHECK(completed <= enqueued, "waits completed %lld of %lld", completed, enqueued);
  CHECK_OK(MPI_Queue_fence(&queue));
  CHECK_OK(NICQX_Queue_waits_completed(queue, &completed, &enqueued));
  CHECK(completed == enqueued, "after the fence: waits completed %lld of %lld", completed,
        enqueued);
  for (int k = 0; k < AHEAD; ++k) verify_recv(epoch, &st[k][0], 0, 1, "fence only");
}

static void expect_message(int rc, int cls, const char* call, const char* text) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  mp_expect_class(rc, cls, call);
  MPI_Error_string(rc, msg, &len);
  CHECK(strstr(msg, text) != NULL, "%s: message does not say \"%s\": %s", call, text, msg);
}

static void errors(void) {
  int matched = 0;
  CHECK_OK(MPI_Is_matched(reqs[0], &matched));
  CHECK(matched == 1, "a partitioned receive is matched from its initialisation");
  CHECK_OK(MPI_Is_matched(reqs[1], &matched));
  CHECK(matched == 1, "a partitioned send is matched from its initialisation");

  /* No start enqueued: MPI_Pready is MPI_ERR_REQUEST. */
  expect_message(MPI_Pready(0, reqs[1]), MPI_ERR_REQUEST, "MPI_Pready", "not active");

  /* Started with MPI_Start: enqueueing it is MPI_ERR_REQUEST, singly and in
   * an array; the MPI_Start epoch then completes as usual. */
  fill(200);
  CHECK_OK(MPI_Startall(2, reqs));
  MPI_Request copy = reqs[1];
  expect_message(MPI_Enqueue_start(&queue, &copy), MPI_ERR_REQUEST, "MPI_Enqueue_start",
                 "request is active");
  CHECK(copy == reqs[1], "a refused enqueue leaves the handle");
  expect_message(MPI_Enqueue_startall(&queue, 2, reqs), MPI_ERR_REQUEST, "MPI_Enqueue_startall",
                 "array_of_requests[0] is active");
  ready_all(reqs[1], 0);
  MPI_Status st[2];
  clear_statuses(st, 2);
  CHECK_OK(MPI_Waitall(2, reqs, st));
  verify_recv(200, &st[0], 0, 0, "MPI_Start epoch");

  /* An enqueued start pending: MPI_Start, MPI_Wait and MPI_Request_free are
   * MPI_ERR_QUEUE; readying a partition twice for the one enqueued start,
   * or listing one twice, is MPI_ERR_ARG; none changes the epoch. */
  fill(201);
  CHECK_OK(MPI_Enqueue_startall(&queue, 2, reqs));
  MPI_Request send = reqs[1], recv = reqs[0];
  expect_message(MPI_Start(&send), MPI_ERR_QUEUE, "MPI_Start", "request has a pending enqueued");
  expect_message(MPI_Startall(2, reqs), MPI_ERR_QUEUE, "MPI_Startall", "array_of_requests[0]");
  expect_message(MPI_Wait(&recv, MPI_STATUS_IGNORE), MPI_ERR_QUEUE, "MPI_Wait",
                 "request has a pending enqueued");
  expect_message(MPI_Request_free(&send), MPI_ERR_QUEUE, "MPI_Request_free",
                 "request has a pending enqueued");
  CHECK(send == reqs[1] && recv == reqs[0], "refused calls leave the handles");
  int twice[2] = {1, 1};
  expect_message(MPI_Pready_list(2, twice, reqs[1]), MPI_ERR_ARG, "MPI_Pready_list",
                 "appears twice");
  ready_all(reqs[1], 1);
  expect_message(MPI_Pready(3, reqs[1]), MPI_ERR_ARG, "MPI_Pready", "already marked ready");
  expect_message(MPI_Pready_range(0, SEND_PARTS - 1, reqs[1]), MPI_ERR_ARG, "MPI_Pready_range",
                 "already marked ready");
  clear_statuses(st, 2);
  CHECK_OK(MPI_Enqueue_waitall(&queue, 2, reqs, st));
  CHECK_OK(MPI_Queue_fence(&queue));
  verify_recv(201, &st[0], 0, 1, "after the errors");
  /* Retired: inactive again, so MPI_Pready is refused and MPI_Start runs. */
  expect_message(MPI_Pready(0, reqs[1]), MPI_ERR_REQUEST, "MPI_Pready", "not active");
  fill(202);
  CHECK_OK(MPI_Startall(2, reqs));
  ready_all(reqs[1], 2);
  clear_statuses(st, 2);
  CHECK_OK(MPI_Waitall(2, reqs, st));
  verify_recv(202, &st[0], 0, 0, "MPI_Start after the queue");
}

/* MPI_PROC_NULL peers on the queue: the epochs complete when their starts
 * run, with the MPI_PROC_NULL status; partitions are readied all the same. */
static void proc_null(void) {
  double buf[TOTAL];
  MPI_Request pn[2];
  CHECK_OK(MPI_Precv_init(buf, RECV_PARTS, RECV_COUNT, MPI_DOUBLE, MPI_PROC_NULL, TAG,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &pn[0]));
  CHECK_OK(MPI_Psend_init(buf, SEND_PARTS, SEND_COUNT, MPI_DOUBLE, MPI_PROC_NULL, TAG,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &pn[1]));
  for (int epoch = 0; epoch < 3; ++epoch) {
    MPI_Status st[2];
    clear_statuses(st, 2);
    CHECK_OK(MPI_Enqueue_startall(&queue, 2, pn));
    ready_all(pn[1], epoch);
    CHECK_OK(MPI_Enqueue_waitall(&queue, 2, pn, st));
    CHECK_OK(MPI_Queue_fence(&queue));
    for (int i = 0; i < 2; ++i) {
      int count = -1;
      CHECK_OK(MPI_Get_count(&st[i], MPI_DOUBLE, &count));
      CHECK(st[i].MPI_SOURCE == MPI_PROC_NULL && st[i].MPI_TAG == MPI_ANY_TAG && count == 0,
            "MPI_PROC_NULL epoch %d request %d: source %d tag %d count %d", epoch, i,
            st[i].MPI_SOURCE, st[i].MPI_TAG, count);
    }
  }
  for (int i = 0; i < 2; ++i) CHECK_OK(MPI_Request_free(&pn[i]));
}

/* A noncontiguous receive on the queue (every other double): staged, so
 * its data reach the buffer when MPI_Parrived or the enqueued wait unpacks
 * them. */
static void strided(void) {
  static double sout[TOTAL], sin[2 * TOTAL];
  MPI_Datatype pair, every_other;
  CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &pair));
  CHECK_OK(MPI_Type_create_resized(pair, 0, 4 * sizeof(double), &every_other));
  CHECK_OK(MPI_Type_free(&pair));
  CHECK_OK(MPI_Type_commit(&every_other));
  MPI_Request sr[2];
  CHECK_OK(MPI_Precv_init(sin, RECV_PARTS, RECV_COUNT / 2, every_other, left, TAG + 100,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &sr[0]));
  CHECK_OK(MPI_Type_free(&every_other)); /* the request keeps it */
  CHECK_OK(MPI_Psend_init(sout, SEND_PARTS, SEND_COUNT, MPI_DOUBLE, right, TAG + 100,
                          MPI_COMM_WORLD, MPI_INFO_NULL, &sr[1]));
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int i = 0; i < TOTAL; ++i) sout[i] = value(rank, epoch, i);
    for (int i = 0; i < 2 * TOTAL; ++i) sin[i] = -1;
    MPI_Status st[2];
    clear_statuses(st, 2);
    CHECK_OK(MPI_Enqueue_startall(&queue, 2, sr));
    ready_all(sr[1], epoch);
    if (epoch != 1) { /* epoch 1: the enqueued wait unpacks */
      int arrived = 0;
      while (!arrived) CHECK_OK(MPI_Parrived(sr[0], 0, &arrived));
      CHECK(sin[0] == value(left, epoch, 0) && sin[1] == -1,
            "strided epoch %d after MPI_Parrived: %g %g", epoch, sin[0], sin[1]);
    }
    CHECK_OK(MPI_Enqueue_waitall(&queue, 2, sr, st));
    CHECK_OK(MPI_Queue_fence(&queue));
    for (int i = 0; i < 2 * TOTAL; ++i)
      CHECK(sin[i] == (i % 2 ? -1 : value(left, epoch, i / 2)), "strided epoch %d: in[%d] = %g",
            epoch, i, sin[i]);
    int count = -1;
    CHECK_OK(MPI_Get_count(&st[0], MPI_DOUBLE, &count));
    CHECK(st[0].MPI_SOURCE == left && count == TOTAL, "strided epoch %d: source %d count %d", epoch,
          st[0].MPI_SOURCE, count);
  }
  for (int i = 0; i < 2; ++i) CHECK_OK(MPI_Request_free(&sr[i]));
}

/* At MPI_THREAD_MULTIPLE: four threads ready the partitions of enqueued
 * starts, each enqueued (by the main thread) before the threads begin;
 * two epochs ahead, then one fence. */
static void threads(int provided) {
  if (provided < MPI_THREAD_MULTIPLE) return;
  const int epoch = 300;
  fill(epoch);
  MPI_Status st[2][2];
  for (int k = 0; k < 2; ++k) {
    clear_statuses(st[k], 2);
    CHECK_OK(MPI_Enqueue_startall(&queue, 2, reqs));
    pthread_t t[THREADS];
    struct quarter q[THREADS];
    for (int i = 0; i < THREADS; ++i) {
      q[i].req = reqs[1];
      q[i].first = i * (SEND_PARTS / THREADS);
      CHECK(pthread_create(&t[i], NULL, ready_quarter, &q[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
    CHECK_OK(MPI_Enqueue_waitall(&queue, 2, reqs, st[k]));
  }
  CHECK_OK(MPI_Queue_fence(&queue));
  for (int k = 0; k < 2; ++k) verify_recv(epoch, &st[k][0], 0, 1, "threads");
}

int main(int argc, char** argv) {
  int provided = 0;
  CHECK_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  left = (rank + size - 1) % size;
  right = (rank + 1) % size;
  CHECK_OK(MPI_Precv_init(in, RECV_PARTS, RECV_COUNT, MPI_DOUBLE, left, TAG, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &reqs[0]));
  CHECK_OK(MPI_Psend_init(out, SEND_PARTS, SEND_COUNT, MPI_DOUBLE, right, TAG, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &reqs[1]));
  CHECK_OK(MPI_Recv_init(&min, 1, MPI_INT, left, TAG_MATCHED, MPI_COMM_WORLD, &reqs[2]));
  CHECK_OK(MPI_Send_init(&mout, 1, MPI_INT, right, TAG_MATCHED, MPI_COMM_WORLD, &reqs[3]));
  CHECK_OK(MPI_Matchall(2, &reqs[2]));
  CHECK_OK(MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL));
  errors();
  mp_barrier(MPI_COMM_WORLD);
  ring();
  mp_barrier(MPI_COMM_WORLD);
  conforming_order();
  mp_barrier(MPI_COMM_WORLD);
  fence_only();
  proc_null();
  mp_barrier(MPI_COMM_WORLD);
  strided();
  mp_barrier(MPI_COMM_WORLD);
  threads(provided);
  mp_barrier(MPI_COMM_WORLD);
  CHECK_OK(MPI_Queue_free(&queue));
  for (int i = 0; i < 4; ++i) CHECK_OK(MPI_Request_free(&reqs[i]));
  if (rank == 0)
    printf("partitioned queue OK on %d ranks (threads: %s)\n", size,
           provided >= MPI_THREAD_MULTIPLE ? "yes" : "no");
  CHECK_OK(MPI_Finalize());
  return 0;
}
