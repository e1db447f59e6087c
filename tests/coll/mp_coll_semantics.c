/* MPI 4.1 7.12/7.13 semantics of nonblocking and persistent collectives:
 *  - many nonblocking collectives outstanding on one communicator (and on
 *    a dup), mixed with point-to-point, completed in reverse order and in
 *    MPI_Waitall; dup/world collectives issued in different orders per rank
 *  - a persistent allreduce reused over argv[1] (default 1000) starts
 *  - persistent requests started in different orders on different ranks,
 *    with MPI_Start and MPI_Startall; inactive after init and completion
 *  - the "nicq_algorithm" info key forcing each allreduce algorithm
 *  - erroneous uses return errors: starting an active request, cancelling
 *    a collective request, mismatched counts/roots/collectives at init,
 *    bad root/op/count, freeing an active collective request; the library
 *    keeps working afterwards. */
#include <string.h>

#include "coll_check.h"

static int rank, p;

static void outstanding(void) {
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  enum { K = 9, N = 33 };
  MPI_Request rq[K];
  int ar[N], ar_out[N], bc[N], ag[N * 8], sc[N], dar[N], dar_out[N];
  int tok_out = rank, tok_in = -1;
  for (int i = 0; i < N; ++i) ar[i] = rank + i, bc[i] = rank == 0 ? 7 * i : -1, dar[i] = 2 * rank;
  CHECK_OK(MPI_Iallreduce(ar, ar_out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
  CHECK_OK(MPI_Ibcast(bc, N, MPI_INT, 0, MPI_COMM_WORLD, &rq[1]));
  CHECK_OK(MPI_Iallreduce(dar, dar_out, N, MPI_INT, MPI_MAX, dup, &rq[2]));
  CHECK_OK(MPI_Irecv(&tok_in, 1, MPI_INT, (rank - 1 + p) % p, 5, MPI_COMM_WORLD, &rq[3]));
  CHECK_OK(MPI_Iallgather(ar, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD, &rq[4]));
  CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[5]));
  CHECK_OK(MPI_Isend(&tok_out, 1, MPI_INT, (rank + 1) % p, 5, MPI_COMM_WORLD, &rq[6]));
  CHECK_OK(MPI_Iscan(ar, sc, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[7]));
  CHECK_OK(MPI_Ibarrier(dup, &rq[8]));
  for (int k = K - 1; k >= 0; --k) CHECK_OK(MPI_Wait(&rq[k], MPI_STATUS_IGNORE));
  for (int i = 0; i < N; ++i) {
    CHECK(ar_out[i] == p * i + p * (p - 1) / 2, "outstanding allreduce [%d]", i);
    CHECK(bc[i] == 7 * i, "outstanding bcast [%d]", i);
    CHECK(dar_out[i] == 2 * (p - 1), "outstanding dup allreduce [%d]", i);
    CHECK(sc[i] == (rank + 1) * i + rank * (rank + 1) / 2, "outstanding scan [%d]", i);
  }
  for (int r = 0; r < p; ++r) CHECK(ag[r] == r, "outstanding allgather [%d]", r);
  CHECK(tok_in == (rank - 1 + p) % p, "p2p token");

  /* Collectives on two communicators issued in different orders per rank. */
  int x = rank, y = 10 * rank, xs = -1, ys = -1;
  MPI_Request two[2];
  if (rank % 2 == 0) {
    CHECK_OK(MPI_Iallreduce(&x, &xs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[0]));
    CHECK_OK(MPI_Iallreduce(&y, &ys, 1, MPI_INT, MPI_SUM, dup, &two[1]));
  } else {
    CHECK_OK(MPI_Iallreduce(&y, &ys, 1, MPI_INT, MPI_SUM, dup, &two[1]));
    CHECK_OK(MPI_Iallreduce(&x, &xs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &two[0]));
  }
  /* A blocking collective between them never matches the nonblocking ones. */
  int z = 1, zs = 0;
  CHECK_OK(MPI_Allreduce(&z, &zs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK_OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
  CHECK(xs == p * (p - 1) / 2 && ys == 10 * p * (p - 1) / 2 && zs == p, "two-comm order");
  MPI_Comm_free(&dup);
}

static void reuse(int starts) {
  enum { N = 4 };
  double in[N] = {0}, out[N];
  MPI_Request rq;
  CHECK_OK(MPI_Allreduce_init(in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
  /* inactive after init: wait returns at once */
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK(rq != MPI_REQUEST_NULL, "persistent request released by a wait");
  for (int it = 0; it < starts; ++it) {
    for (int i = 0; i < N; ++i) in[i] = it + rank * 10 + i;
    CHECK_OK(MPI_Start(&rq));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; ++i)
      CHECK(out[i] == p * (double)(it + i) + 10.0 * p * (p - 1) / 2, "start %d [%d]", it, i);
  }
  CHECK_OK(MPI_Request_free(&rq));
  CHECK(rq == MPI_REQUEST_NULL, "free did not null the handle");
}

static void orders(void) {
  enum { N = 5 };
  int a[N] = {0}, as[N], b[N] = {0}, g[64];
  MPI_Request rq[3];
  CHECK_OK(MPI_Allreduce_init(a, as, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]));
  CHECK_OK(MPI_Bcast_init(b, N, MPI_INT, p - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[1]));
  CHECK_OK(
      MPI_Allgather_init(&rank, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[2]));
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < N; ++i)
      a[i] = rank * round + i, b[i] = rank == p - 1 ? round * 100 + i : -1;
    if (round % 2 == 0) {
      /* individual starts, rotated by rank */
      for (int k = 0; k < 3; ++k) CHECK_OK(MPI_Start(&rq[(k + rank) % 3]));
    } else {
      /* Startall, array reversed on odd ranks */
      MPI_Request arr[3];
      for (int k = 0; k < 3; ++k) arr[k] = rq[rank % 2 ? 2 - k : k];
      CHECK_OK(MPI_Startall(3, arr));
    }
    /* starting an active request is an error and changes nothing */
    CHECK_ERR(MPI_Start(&rq[round % 3]), MPI_ERR_REQUEST);
    CHECK_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; ++k) CHECK(rq[k] != MPI_REQUEST_NULL, "persistent request released");
    for (int i = 0; i < N; ++i) {
      CHECK(as[i] == round * p * (p - 1) / 2 + p * i, "order round %d allreduce", round);
      CHECK(b[i] == round * 100 + i, "order round %d bcast", round);
    }
    for (int r = 0; r < p; ++r) CHECK(g[r] == r, "order round %d allgather", round);
  }
  for (int k = 0; k < 3; ++k) CHECK_OK(MPI_Request_free(&rq[k]));
}

static void algorithms(void) {
  const char* names[] = {"recursive_doubling", "rabenseifner", "ring", "nic_tree", "bogus"};
  enum { N = 1000 };
  static double in[N], out[N];
  for (int k = 0; k < 5; ++k) {
    MPI_Info info;
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_set(info, "nicq_algorithm", names[k]));
    MPI_Request rq;
    CHECK_OK(MPI_Allreduce_init(in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, info, &rq));
    MPI_Info_free(&info);
    for (int it = 0; it < 3; ++it) {
      for (int i = 0; i < N; ++i) in[i] = rank + i + it;
      CHECK_OK(MPI_Start(&rq));
      CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
      for (int i = 0; i < N; ++i)
        CHECK(out[i] == p * (double)(i + it) + p * (p - 1) / 2.0, "%s [%d]", names[k], i);
    }
    CHECK_OK(MPI_Request_free(&rq));
  }
}

static void errors(void) {
  int buf[8] = {0}, out[8];
  MPI_Request rq;
  /* local argument errors */
  CHECK_ERR(MPI_Bcast(buf, 1, MPI_INT, p, MPI_COMM_WORLD), MPI_ERR_ROOT);
  CHECK_ERR(MPI_Allreduce(buf, out, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
  double d = 1, e;
  CHECK_ERR(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
  CHECK_ERR(MPI_Iallreduce(buf, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  CHECK_ERR(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  /* cancel of collective requests: erroneous. Rank 0's barrier cannot
   * complete before its cancel: the others enter only after its token. */
  int token = 0;
  CHECK_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &rq));
  CHECK_ERR(MPI_Cancel(&rq), MPI_ERR_REQUEST); /* inactive */
  MPI_Request nb;
  if (rank == 0) {
    CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &nb));
    CHECK_OK(MPI_Start(&rq));
    if (p > 1) {
      CHECK_ERR(MPI_Cancel(&nb), MPI_ERR_REQUEST);
      CHECK_ERR(MPI_Cancel(&rq), MPI_ERR_REQUEST);
    }
    if (p > 1) {
      CHECK_ERR(MPI_Request_free(&nb), MPI_ERR_REQUEST);
      CHECK_ERR(MPI_Request_free(&rq), MPI_ERR_REQUEST);
    }
    for (int r = 1; r < p; ++r) CHECK_OK(MPI_Send(&token, 1, MPI_INT, r, 9, MPI_COMM_WORLD));
  } else {
    CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &nb));
    CHECK_OK(MPI_Start(&rq));
  }
  CHECK_OK(MPI_Wait(&nb, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Request_free(&rq));
  /* mismatches across ranks, caught by the collective init on every rank */
  if (p > 1) {
    rq = MPI_REQUEST_NULL;
    CHECK_ERR(MPI_Allreduce_init(buf, out, rank == 0 ? 4 : 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &rq),
              MPI_ERR_ARG);
    CHECK(rq == MPI_REQUEST_NULL, "failed init returned a request");
    CHECK_ERR(
        MPI_Bcast_init(buf, 2, MPI_INT, rank == 1 ? 1 : 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq),
        MPI_ERR_ARG);
    if (rank % 2)
      CHECK_ERR(MPI_Bcast_init(buf, 2, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rq),
                MPI_ERR_ARG);
    else
      CHECK_ERR(
          MPI_Allreduce_init(buf, out, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq),
          MPI_ERR_ARG);
    /* reduction datatype (same size) and op differ across ranks */
    CHECK_ERR(MPI_Allreduce_init(buf, out, 2, rank % 2 ? MPI_FLOAT : MPI_INT, MPI_SUM,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, &rq),
              MPI_ERR_ARG);
    CHECK(rq == MPI_REQUEST_NULL, "failed init (types) returned a request");
    CHECK_ERR(MPI_Reduce_init(buf, out, 2, MPI_INT, rank % 2 ? MPI_MAX : MPI_SUM, 0, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &rq),
              MPI_ERR_ARG);
    /* scatter: the last rank expects more than the root sends it */
    CHECK_ERR(MPI_Scatter_init(buf, 1, MPI_INT, out, rank == p - 1 ? 2 : 1, MPI_INT, 0,
                               MPI_COMM_WORLD, MPI_INFO_NULL, &rq),
              MPI_ERR_ARG);
    int counts[16], displs[16];
    for (int r = 0; r < p && r < 16; ++r) counts[r] = 1, displs[r] = r;
    counts[p - 1] = 2; /* root expects 2 from the last rank, which sends 1 */
    int gb[32];
    CHECK_ERR(MPI_Gatherv_init(buf, 1, MPI_INT, gb, counts, displs, MPI_INT, 0, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &rq),
              MPI_ERR_ARG);
  }
  /* everything still works */
  int one = 1, all = 0;
  CHECK_OK(MPI_Allreduce(&one, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(all == p, "allreduce after errors: %d", all);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_rank = rank;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int starts = argc > 1 ? atoi(argv[1]) : 1000;
  outstanding();
  reuse(starts);
  orders();
  algorithms();
  errors();
  if (rank == 0) printf("mp_coll_semantics: ok on %d ranks (%d starts)\n", p, starts);
  MPI_Finalize();
  return 0;
}
