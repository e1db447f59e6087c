/* The host-asleep ratio of a queued chain of persistent collectives (issue:
 * compile once): how much of an enqueued chain is left for MPI_Queue_fence
 * after every host thread slept longer than the chain takes.
 *
 * Per kind and size: the request is made once and matched; a round
 * enqueues `pairs` start/wait pairs and fences (chain time T, the median
 * over rounds); then each measured round enqueues `pairs` pairs, sleeps
 * 3 T in nanosleep with no MPI call, and times the fence F. The ratio
 * F / T is near 0 when the NIC (native) or the emulator's agent ran the
 * chain while the hosts slept, and near 1 when the chain moves only inside
 * MPI calls. nicq only (queues are the draft chapter 13's).
 *
 * Usage: nicq_asleep [--kind K[,K...]] [-m bytes] [--pairs W] [--rounds R]
 *                    [--op sum|user] [--type double|strided] [--force]
 *   K: allreduce bcast reduce barrier allgather alltoall gather scatter
 *      neighbor_alltoall (a periodic 2D grid of all ranks)
 *      reduce_scatter_block scan exscan; default all.
 *   bytes: per rank's block (doubles, at least one); default 8.
 *   --op user: the reductions combine with a user-defined double sum
 *      (MPI_Op_create), which no NIC runs (a host fold step of the plan);
 *   --type strided: every kind moves doubles 16 bytes apart (MPI_DOUBLE
 *      resized to extent 16), a noncontiguous type the plans pack;
 *   --force: every request's info sets nicq_algorithm=offload, which takes
 *      the plans on the emulated backend too. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kMaxKinds = 12 };
static const char* const kKinds[kMaxKinds] = {
    "allreduce", "bcast",  "reduce",  "barrier",           "allgather",
    "alltoall",  "gather", "scatter", "neighbor_alltoall", "reduce_scatter_block",
    "scan",      "exscan"};

static MPI_Datatype g_type; /* MPI_DOUBLE, or the strided double */
static MPI_Op g_op;         /* MPI_SUM, or the user sum */
static int g_spread = 1;    /* doubles from one item to the next */
static MPI_Info g_info = MPI_INFO_NULL;

static void UserSum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  /* One double per item, `extent / 8` doubles apart. */
  MPI_Aint lb = 0, extent = 8;
  MPI_Type_get_extent(*dt, &lb, &extent);
  const int step = (int)(extent / 8);
  const double* a = in;
  double* b = inout;
  for (int i = 0; i < *len; ++i) b[i * step] += a[i * step];
}

static void Check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fprintf(stderr, "nicq_asleep: %s: %s\n", what, msg);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void SleepSeconds(double s) {
  struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&t, &t) != 0) {
  }
}

static int CompareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double Median(double* v, int n) {
  qsort(v, (size_t)n, sizeof *v, CompareDoubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The persistent request of `kind` over `count` doubles per block. */
static void Init(const char* kind, int count, int size, double* s, double* r, MPI_Comm* cart,
                 MPI_Request* req) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const MPI_Info i = g_info;
  int rc;
  if (!strcmp(kind, "allreduce"))
    rc = MPI_Allreduce_init(s, r, count, g_type, g_op, w, i, req);
  else if (!strcmp(kind, "bcast"))
    rc = MPI_Bcast_init(r, count, g_type, 0, w, i, req);
  else if (!strcmp(kind, "reduce"))
    rc = MPI_Reduce_init(s, r, count, g_type, g_op, 0, w, i, req);
  else if (!strcmp(kind, "barrier"))
    rc = MPI_Barrier_init(w, i, req);
  else if (!strcmp(kind, "allgather"))
    rc = MPI_Allgather_init(s, count, g_type, r, count, g_type, w, i, req);
  else if (!strcmp(kind, "alltoall"))
    rc = MPI_Alltoall_init(s, count, g_type, r, count, g_type, w, i, req);
  else if (!strcmp(kind, "gather"))
    rc = MPI_Gather_init(s, count, g_type, r, count, g_type, 0, w, i, req);
  else if (!strcmp(kind, "scatter"))
    rc = MPI_Scatter_init(s, count, g_type, r, count, g_type, 0, w, i, req);
  else if (!strcmp(kind, "reduce_scatter_block"))
    rc = MPI_Reduce_scatter_block_init(s, r, count, g_type, g_op, w, i, req);
  else if (!strcmp(kind, "scan"))
    rc = MPI_Scan_init(s, r, count, g_type, g_op, w, i, req);
  else if (!strcmp(kind, "exscan"))
    rc = MPI_Exscan_init(s, r, count, g_type, g_op, w, i, req);
  else {
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    Check(MPI_Dims_create(size, 2, dims), "MPI_Dims_create");
    Check(MPI_Cart_create(w, 2, dims, periods, 0, cart), "MPI_Cart_create");
    rc = MPI_Neighbor_alltoall_init(s, count, g_type, r, count, g_type, *cart, i, req);
  }
  Check(rc, kind);
}

static void Chain(MPI_Queue q, MPI_Request* req, int pairs) {
  for (int p = 0; p < pairs; ++p) {
    Check(MPI_Enqueue_start(q, req), "MPI_Enqueue_start");
    Check(MPI_Enqueue_wait(q, req, MPI_STATUS_IGNORE), "MPI_Enqueue_wait");
  }
}

/* Rank 0 prints kind, bytes, chain time T (us), fence after the sleep F (us), F / T. */
static void Measure(const char* kind, long bytes, int pairs, int rounds, int rank, int size) {
  const int count = bytes < 8 ? 1 : (int)(bytes / 8);
  const size_t blocks = (size_t)size + 4; /* every rank, or the 4 neighbours of a 2D grid */
  double* s = calloc((size_t)count * blocks * (size_t)g_spread, sizeof(double));
  double* r = calloc((size_t)count * blocks * (size_t)g_spread, sizeof(double));
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Request req;
  MPI_Queue q;
  Init(kind, count, size, s, r, &cart, &req);
  Check(MPI_Match(&req), "MPI_Match");
  Check(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL), "MPI_Queue_init");
  double chain[64], fence[64];
  if (rounds > 64) rounds = 64;
  Chain(q, &req, pairs);  // warm-up
  Check(MPI_Queue_fence(q), "MPI_Queue_fence");
  for (int k = 0; k < rounds; ++k) {
    Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    const double t0 = MPI_Wtime();
    Chain(q, &req, pairs);
    Check(MPI_Queue_fence(q), "MPI_Queue_fence");
    chain[k] = MPI_Wtime() - t0;
  }
  double t_chain = Median(chain, rounds);
  Check(MPI_Allreduce(MPI_IN_PLACE, &t_chain, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
        "MPI_Allreduce");
  for (int k = 0; k < rounds; ++k) {
    Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    Chain(q, &req, pairs);
    SleepSeconds(3 * t_chain + 0.001);  // no MPI call: only a NIC or an agent moves it
    const double t0 = MPI_Wtime();
    Check(MPI_Queue_fence(q), "MPI_Queue_fence");
    fence[k] = MPI_Wtime() - t0;
  }
  double t_fence = Median(fence, rounds);
  Check(MPI_Allreduce(MPI_IN_PLACE, &t_fence, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
        "MPI_Allreduce");
  if (rank == 0)
    printf("%-18s %10ld %14.2f %14.2f %8.3f\n", kind, bytes, t_chain * 1e6, t_fence * 1e6,
           t_fence / t_chain);
  fflush(stdout);
  Check(MPI_Request_free(&req), "MPI_Request_free");
  Check(MPI_Queue_free(&q), "MPI_Queue_free");
  if (cart != MPI_COMM_NULL) MPI_Comm_free(&cart);
  free(s);
  free(r);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* kinds = NULL;
  long bytes = 8;
  int pairs = 16, rounds = 5;
  const char* op = "sum";
  const char* type = "double";
  int force = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--kind") && i + 1 < argc)
      kinds = argv[++i];
    else if (!strcmp(argv[i], "-m") && i + 1 < argc)
      bytes = atol(argv[++i]);
    else if (!strcmp(argv[i], "--pairs") && i + 1 < argc)
      pairs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--op") && i + 1 < argc)
      op = argv[++i];
    else if (!strcmp(argv[i], "--type") && i + 1 < argc)
      type = argv[++i];
    else if (!strcmp(argv[i], "--force"))
      force = 1;
    else {
      if (rank == 0)
        fprintf(stderr,
                "usage: nicq_asleep [--kind K[,K...]] [-m bytes] [--pairs W] [--rounds R] "
                "[--op sum|user] [--type double|strided] [--force]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (pairs < 1 || rounds < 1 || bytes < 0 || (strcmp(op, "sum") && strcmp(op, "user")) ||
      (strcmp(type, "double") && strcmp(type, "strided"))) {
    if (rank == 0)
      fprintf(stderr,
              "nicq_asleep: pairs and rounds must be positive, --op sum|user, "
              "--type double|strided\n");
    MPI_Finalize();
    return 2;
  }
  if (force) {
    Check(MPI_Info_create(&g_info), "MPI_Info_create");
    Check(MPI_Info_set(g_info, "nicq_algorithm", "offload"), "MPI_Info_set");
  }
  g_op = MPI_SUM;
  if (!strcmp(op, "user")) Check(MPI_Op_create(&UserSum, 1, &g_op), "MPI_Op_create");
  g_type = MPI_DOUBLE;
  if (!strcmp(type, "strided")) {
    Check(MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &g_type), "MPI_Type_create_resized");
    Check(MPI_Type_commit(&g_type), "MPI_Type_commit");
    g_spread = 2;
  }
  if (rank == 0) {
    printf(
        "# nicq host-asleep ratio: %d enqueued start/wait pairs, %d rounds, %d ranks, op %s, "
        "type %s%s\n",
        pairs, rounds, size, op, type, force ? ", nicq_algorithm=offload" : "");
    printf("# %-16s %10s %14s %14s %8s\n", "kind", "bytes", "chain(us)", "fence(us)", "ratio");
  }
  for (int k = 0; k < kMaxKinds; ++k) {
    if (kinds) {
      const char* hit = strstr(kinds, kKinds[k]);
      const size_t len = strlen(kKinds[k]);
      /* whole names only: "alltoall" must not select "neighbor_alltoall" */
      int found = 0;
      for (; hit; hit = strstr(hit + 1, kKinds[k]))
        if ((hit == kinds || hit[-1] == ',') && (hit[len] == '\0' || hit[len] == ',')) found = 1;
      if (!found) continue;
    }
    Measure(kKinds[k], bytes, pairs, rounds, rank, size);
  }
  if (g_op != MPI_SUM) MPI_Op_free(&g_op);
  if (g_type != MPI_DOUBLE) MPI_Type_free(&g_type);
  if (g_info != MPI_INFO_NULL) MPI_Info_free(&g_info);
  MPI_Finalize();
  return 0;
}
