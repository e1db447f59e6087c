/* Partitioned point-to-point communication (MPI-4.1 chapter 4): a ring of
 * partitioned sends and receives with different partitionings on the two
 * sides, restarted every epoch, partitions readied in every order and from
 * several threads; two pairs with one peer and tag matched in the order of
 * their initialisation; no partitioned message reaching a wildcard receive;
 * a noncontiguous receive; MPI_PROC_NULL; truncation; and the errors of
 * each call, each leaving the requests usable. Every epoch checks the data. */
#include <pthread.h>

#include "partitioned_ring.h"

#define EPOCHS 20
#define TAG 7

static int rank, size;

static void ring(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double out[TOTAL], in[TOTAL];
  MPI_Request send, recv;
  CHECK_OK(MPI_Precv_init(in, RECV_PARTS, RECV_COUNT, MPI_DOUBLE, left, TAG, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &recv));
  CHECK_OK(MPI_Psend_init(out, SEND_PARTS, SEND_COUNT, MPI_DOUBLE, right, TAG, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &send));
  int matched = 0;
  CHECK_OK(MPI_Is_matched(send, &matched));
  CHECK(matched == 1, "a partitioned request is matched from its initialisation");
  MPI_Request copy = send;
  mp_expect_class(MPI_Match(&copy), MPI_ERR_MATCH, "MPI_Match");
  for (int epoch = 0; epoch < EPOCHS; ++epoch) {
    for (int i = 0; i < TOTAL; ++i) {
      out[i] = value(rank, epoch, i);
      in[i] = -1;
    }
    MPI_Request both[2] = {recv, send};
    CHECK_OK(MPI_Startall(2, both));
    ready_all(send, epoch);
    int arrived = 0;
    while (!arrived) CHECK_OK(MPI_Parrived(recv, RECV_PARTS - 1, &arrived));
    for (int i = (RECV_PARTS - 1) * RECV_COUNT; i < TOTAL; ++i)
      CHECK(in[i] == value(left, epoch, i), "epoch %d: after MPI_Parrived in[%d] = %g", epoch, i,
            in[i]);
    MPI_Status st[2];
    CHECK_OK(MPI_Waitall(2, both, st));
    CHECK(both[0] == recv && both[1] == send, "a persistent request stays allocated");
    int count = -1;
    CHECK_OK(MPI_Get_count(&st[0], MPI_DOUBLE, &count));
    CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == TAG && count == TOTAL,
          "epoch %d: status source %d tag %d count %d", epoch, st[0].MPI_SOURCE, st[0].MPI_TAG,
          count);
    for (int i = 0; i < TOTAL; ++i)
      CHECK(in[i] == value(left, epoch, i), "epoch %d: in[%d] = %g, expected %g", epoch, i, in[i],
            value(left, epoch, i));
    int flag = 0;
    CHECK_OK(MPI_Parrived(recv, 0, &flag));
    CHECK(flag == 1, "MPI_Parrived on an inactive request reports true");
  }
  CHECK_OK(MPI_Request_free(&send));
  CHECK_OK(MPI_Request_free(&recv));
}

/* Rank 0 initialises sends a then b to rank 1, both with one tag; rank 1
 * receives x then y. Rank 0 readies b before it starts a, and rank 1 has a
 * wildcard receive posted all along, which must get only the plain message. */
static void order_and_wildcards(void) {
  if (rank > 1) return;
  int a[4], b[4], x[4] = {0}, y[4] = {0}, plain = -1;
  MPI_Request r1, r2;
  if (rank == 0) {
    for (int i = 0; i < 4; ++i) a[i] = 10 + i, b[i] = 20 + i;
    CHECK_OK(MPI_Psend_init(a, 2, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r1));
    CHECK_OK(MPI_Psend_init(b, 4, 1, MPI_INT, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r2));
    CHECK_OK(MPI_Start(&r2));
    CHECK_OK(MPI_Pready_range(0, 3, r2));
    CHECK_OK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Start(&r1));
    CHECK_OK(MPI_Pready_list(2, (int[]){1, 0}, r1));
    CHECK_OK(MPI_Wait(&r1, MPI_STATUS_IGNORE));
    const int msg = 99;
    CHECK_OK(MPI_Send(&msg, 1, MPI_INT, 1, TAG, MPI_COMM_WORLD));
  } else {
    MPI_Request any;
    CHECK_OK(MPI_Irecv(&plain, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &any));
    CHECK_OK(MPI_Precv_init(x, 1, 4, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r1));
    CHECK_OK(MPI_Precv_init(y, 2, 2, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r2));
    MPI_Request both[2] = {r2, r1};
    CHECK_OK(MPI_Startall(2, both));
    CHECK_OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
    MPI_Status st;
    CHECK_OK(MPI_Wait(&any, &st));
    CHECK(plain == 99 && st.MPI_TAG == TAG, "the wildcard receive got %d tag %d", plain,
          st.MPI_TAG);
    for (int i = 0; i < 4; ++i)
      CHECK(x[i] == 10 + i && y[i] == 20 + i, "init order: x[%d] = %d, y[%d] = %d", i, x[i], i,
            y[i]);
  }
  CHECK_OK(MPI_Request_free(&r1));
  CHECK_OK(MPI_Request_free(&r2));
}

/* A send freed before its receive's offer came still took that offer: rank
 * 0 frees send a before rank 1 initialises receive x, and the send b that
 * rank 0 makes next is matched with rank 1's second receive y. */
static void freed_before_matched(void) {
  if (rank > 1) return;
  int out[2] = {31, 32}, x[2] = {0, 0}, y[2] = {0, 0};
  MPI_Request a, b, rx, ry;
  if (rank == 0) {
    CHECK_OK(MPI_Psend_init(out, 1, 2, MPI_INT, 1, TAG + 3, MPI_COMM_WORLD, MPI_INFO_NULL, &a));
    CHECK_OK(MPI_Request_free(&a));
    CHECK_OK(MPI_Send(NULL, 0, MPI_INT, 1, TAG + 4, MPI_COMM_WORLD));
    CHECK_OK(MPI_Psend_init(out, 2, 1, MPI_INT, 1, TAG + 3, MPI_COMM_WORLD, MPI_INFO_NULL, &b));
    CHECK_OK(MPI_Start(&b));
    CHECK_OK(MPI_Pready_range(0, 1, b));
    CHECK_OK(MPI_Wait(&b, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Request_free(&b));
  } else {
    CHECK_OK(MPI_Recv(NULL, 0, MPI_INT, 0, TAG + 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Precv_init(x, 1, 2, MPI_INT, 0, TAG + 3, MPI_COMM_WORLD, MPI_INFO_NULL, &rx));
    CHECK_OK(MPI_Precv_init(y, 1, 2, MPI_INT, 0, TAG + 3, MPI_COMM_WORLD, MPI_INFO_NULL, &ry));
    CHECK_OK(MPI_Start(&ry));
    CHECK_OK(MPI_Wait(&ry, MPI_STATUS_IGNORE));
    CHECK(y[0] == 31 && y[1] == 32 && x[0] == 0, "the second receive got %d %d (x %d)", y[0], y[1],
          x[0]);
    CHECK_OK(MPI_Request_free(&rx));
    CHECK_OK(MPI_Request_free(&ry));
  }
}

/* Rank 1 receives rank 0's 12 ints into every other int of its buffer:
 * elements of two ints, one taken and one skipped, 4 ints apart. */
static void noncontiguous(void) {
  if (rank > 1) return;
  MPI_Request req;
  if (rank == 0) {
    int out[12];
    for (int i = 0; i < 12; ++i) out[i] = 500 + i;
    CHECK_OK(MPI_Psend_init(out, 3, 4, MPI_INT, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Pready_range(0, 2, req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    int in[24];
    for (int i = 0; i < 24; ++i) in[i] = -1;
    MPI_Datatype pair, every_other;
    CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
    CHECK_OK(MPI_Type_create_resized(pair, 0, 4 * sizeof(int), &every_other));
    CHECK_OK(MPI_Type_free(&pair));
    CHECK_OK(MPI_Type_commit(&every_other));
    CHECK_OK(MPI_Precv_init(in, 2, 3, every_other, 0, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    CHECK_OK(MPI_Type_free(&every_other)); /* the request keeps it */
    CHECK_OK(MPI_Start(&req));
    int arrived = 0;
    while (!arrived) CHECK_OK(MPI_Parrived(req, 1, &arrived));
    CHECK(in[22] == 511 && in[23] == -1, "after MPI_Parrived: in[22] = %d, in[23] = %d", in[22],
          in[23]);
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 24; ++i)
      CHECK(in[i] == (i % 2 ? -1 : 500 + i / 2), "strided in[%d] = %d", i, in[i]);
  }
  CHECK_OK(MPI_Request_free(&req));
}

static void proc_null_and_truncation(void) {
  double buf[8] = {0};
  MPI_Request req;
  MPI_Status st;
  CHECK_OK(MPI_Psend_init(buf, 2, 4, MPI_DOUBLE, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &req));
  CHECK_OK(MPI_Start(&req));
  CHECK_OK(MPI_Pready_range(0, 1, req));
  CHECK_OK(MPI_Wait(&req, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "MPI_PROC_NULL send: source %d", st.MPI_SOURCE);
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Precv_init(buf, 2, 4, MPI_DOUBLE, MPI_PROC_NULL, TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &req));
  CHECK_OK(MPI_Start(&req));
  int arrived = 0;
  CHECK_OK(MPI_Parrived(req, 1, &arrived));
  CHECK(arrived == 1, "a started MPI_PROC_NULL receive has arrived");
  CHECK_OK(MPI_Wait(&req, &st));
  int count = -1;
  CHECK_OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && count == 0, "MPI_PROC_NULL receive: source %d count %d",
        st.MPI_SOURCE, count);
  CHECK_OK(MPI_Request_free(&req));

  if (rank > 1) return;
  if (rank == 0) {
    CHECK_OK(MPI_Psend_init(buf, 2, 4, MPI_DOUBLE, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    CHECK_OK(MPI_Start(&req));
    CHECK_OK(MPI_Pready_range(0, 1, req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Precv_init(buf, 2, 2, MPI_DOUBLE, 0, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    CHECK_OK(MPI_Start(&req));
    int rc = MPI_Wait(&req, &st);
    mp_expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Precv_init");
  }
  CHECK_OK(MPI_Request_free(&req));
}

/* Erroneous calls return their class and change nothing: the epoch they
 * interrupt still completes with the right data. */
static void errors(void) {
  if (rank > 1) return;
  int data[4] = {1, 2, 3, 4}, in[4] = {0}, flag = 0;
  MPI_Request req, other;
  mp_expect_class(
      MPI_Precv_init(in, 1, 4, MPI_INT, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
      MPI_ERR_RANK, "MPI_Precv_init");
  mp_expect_class(
      MPI_Precv_init(in, 1, 4, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
      MPI_ERR_TAG, "MPI_Precv_init");
  mp_expect_class(MPI_Psend_init(data, -1, 4, MPI_INT, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req),
                  MPI_ERR_ARG, "MPI_Psend_init");
  CHECK_OK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
  CHECK(flag == 1, "MPI_Parrived(MPI_REQUEST_NULL) reports true");
  if (rank == 0) {
    CHECK_OK(MPI_Psend_init(data, 4, 1, MPI_INT, 1, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    mp_expect_class(MPI_Pready(0, req), MPI_ERR_REQUEST, "MPI_Pready"); /* inactive */
    CHECK_OK(MPI_Start(&req));
    mp_expect_class(MPI_Pready(4, req), MPI_ERR_ARG, "MPI_Pready");
    mp_expect_class(MPI_Pready_range(2, 1, req), MPI_ERR_ARG, "MPI_Pready_range");
    mp_expect_class(MPI_Pready_list(2, (int[]){3, 3}, req), MPI_ERR_ARG, "MPI_Pready_list");
    CHECK_OK(MPI_Pready(1, req));
    mp_expect_class(MPI_Pready(1, req), MPI_ERR_ARG, "MPI_Pready");
    mp_expect_class(MPI_Pready_list(2, (int[]){0, 1}, req), MPI_ERR_ARG, "MPI_Pready_list");
    mp_expect_class(MPI_Pready_list(3, (int[]){0, 2, 0}, req), MPI_ERR_ARG, "MPI_Pready_list");
    mp_expect_class(MPI_Pready_list(3, (int[]){2, 0, 1}, req), MPI_ERR_ARG, "MPI_Pready_list");
    mp_expect_class(MPI_Pready_range(0, 1, req), MPI_ERR_ARG, "MPI_Pready_range");
    mp_expect_class(MPI_Parrived(req, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived");
    MPI_Request copy = req;
    mp_expect_class(MPI_Request_free(&copy), MPI_ERR_REQUEST, "MPI_Request_free");
    mp_expect_class(MPI_Cancel(&req), MPI_ERR_REQUEST, "MPI_Cancel");
    CHECK_OK(MPI_Pready_list(3, (int[]){3, 0, 2}, req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Isend(data, 1, MPI_INT, 1, TAG + 1, MPI_COMM_WORLD, &other));
    mp_expect_class(MPI_Pready(0, other), MPI_ERR_REQUEST, "MPI_Pready");
    CHECK_OK(MPI_Wait(&other, MPI_STATUS_IGNORE));
  } else {
    CHECK_OK(MPI_Precv_init(in, 2, 2, MPI_INT, 0, TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    CHECK_OK(MPI_Start(&req));
    mp_expect_class(MPI_Pready(0, req), MPI_ERR_REQUEST, "MPI_Pready"); /* a receive */
    mp_expect_class(MPI_Parrived(req, 2, &flag), MPI_ERR_ARG, "MPI_Parrived");
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; ++i) CHECK(in[i] == i + 1, "after the errors in[%d] = %d", i, in[i]);
    int one = 0;
    CHECK_OK(MPI_Recv(&one, 1, MPI_INT, 0, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(one == 1, "plain message %d", one);
  }
  CHECK_OK(MPI_Request_free(&req));
}

/* MPI_THREAD_MULTIPLE: four threads ready a quarter of the partitions each. */
static void threads(int provided) {
  if (provided < MPI_THREAD_MULTIPLE || rank > 1) return;
  double buf[TOTAL];
  MPI_Request req;
  for (int epoch = 0; epoch < EPOCHS; ++epoch) {
    if (epoch == 0) {
      if (rank == 0)
        CHECK_OK(MPI_Psend_init(buf, SEND_PARTS, SEND_COUNT, MPI_DOUBLE, 1, TAG + 2, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &req));
      else
        CHECK_OK(MPI_Precv_init(buf, RECV_PARTS, RECV_COUNT, MPI_DOUBLE, 0, TAG + 2, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &req));
    }
    for (int i = 0; i < TOTAL; ++i) buf[i] = rank == 0 ? value(0, epoch, i) : -1;
    CHECK_OK(MPI_Start(&req));
    if (rank == 0) {
      pthread_t t[THREADS];
      struct quarter q[THREADS];
      for (int i = 0; i < THREADS; ++i) {
        q[i] = (struct quarter){req, i * (SEND_PARTS / THREADS)};
        CHECK(pthread_create(&t[i], NULL, ready_quarter, &q[i]) == 0, "pthread_create");
      }
      for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
    }
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank == 1)
      for (int i = 0; i < TOTAL; ++i)
        CHECK(buf[i] == value(0, epoch, i), "threads epoch %d: buf[%d] = %g", epoch, i, buf[i]);
  }
  CHECK_OK(MPI_Request_free(&req));
}

int main(int argc, char** argv) {
  int provided = 0;
  CHECK_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  CHECK(size >= 2, "needs 2 ranks or more");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  ring();
  mp_barrier(MPI_COMM_WORLD);
  order_and_wildcards();
  mp_barrier(MPI_COMM_WORLD);
  freed_before_matched();
  mp_barrier(MPI_COMM_WORLD);
  noncontiguous();
  mp_barrier(MPI_COMM_WORLD);
  proc_null_and_truncation();
  mp_barrier(MPI_COMM_WORLD);
  errors();
  mp_barrier(MPI_COMM_WORLD);
  threads(provided);
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("partitioned OK on %d ranks (threads: %s)\n", size,
           provided >= MPI_THREAD_MULTIPLE ? "yes" : "no");
  CHECK_OK(MPI_Finalize());
  return 0;
}
