/* Intercommunicators: creation, queries, dup/split/create/compare, merge
 * (rank order follows the high flag), point-to-point with wildcards and
 * statuses, and every collective defined on them in blocking, nonblocking
 * and persistent forms, each result checked element by element against
 * values computed here. Three ways to cut the world in two: halves
 * (unequal for odd sizes), rank 0 against the rest, and even against odd
 * world ranks (groups whose world ranks interleave). */
#include "mp_intercomm.h"

int world_rank, world_size;
const char* phase = "";

/* A two-group cut of the world: group_of(w) is 0 or 1. */
typedef struct {
  const char* name;
  int kind; /* 0 halves, 1 rank 0 vs rest, 2 even vs odd */
} Cut;

static int group_of(const Cut* cut, int w) {
  switch (cut->kind) {
    case 0:
      return w < world_size / 2 ? 0 : 1;
    case 1:
      return w == 0 ? 0 : 1;
    default:
      return w % 2;
  }
}

/* The world ranks of group g in world order (its local rank order). */
static int members(const Cut* cut, int g, int* out) {
  int n = 0;
  for (int w = 0; w < world_size; ++w)
    if (group_of(cut, w) == g) out[n++] = w;
  return n;
}

static void check_groups(const Ctx* c) {
  int flag = 0, n = 0, rank = -1;
  CHECK_OK(MPI_Comm_test_inter(c->inter, &flag));
  CHECK(flag == 1, "test_inter gave %d", flag);
  CHECK_OK(MPI_Comm_size(c->inter, &n));
  CHECK(n == c->p, "size %d, expected the local group's %d", n, c->p);
  CHECK_OK(MPI_Comm_rank(c->inter, &rank));
  CHECK(rank == c->r, "rank %d, expected %d", rank, c->r);
  CHECK_OK(MPI_Comm_remote_size(c->inter, &n));
  CHECK(n == c->q, "remote size %d, expected %d", n, c->q);
  MPI_Group wg, rg, lg;
  int idx[kMaxRanks], out[kMaxRanks];
  for (int i = 0; i < kMaxRanks; ++i) idx[i] = i;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  CHECK_OK(MPI_Comm_remote_group(c->inter, &rg));
  CHECK_OK(MPI_Group_translate_ranks(rg, c->q, idx, wg, out));
  for (int i = 0; i < c->q; ++i)
    CHECK(out[i] == c->rw[i], "remote rank %d is world %d, expected %d", i, out[i], c->rw[i]);
  CHECK_OK(MPI_Comm_group(c->inter, &lg));
  CHECK_OK(MPI_Group_translate_ranks(lg, c->p, idx, wg, out));
  for (int i = 0; i < c->p; ++i)
    CHECK(out[i] == c->lw[i], "local rank %d is world %d, expected %d", i, out[i], c->lw[i]);
  MPI_Group_free(&wg);
  MPI_Group_free(&rg);
  MPI_Group_free(&lg);
  CHECK_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
  CHECK(flag == 0, "MPI_COMM_WORLD reported as an intercommunicator");
}

/* Everyone sends one message to every remote rank; receives name
 * MPI_ANY_SOURCE / MPI_ANY_TAG and the statuses must name remote ranks. */
static void check_p2p(const Ctx* c) {
  int msg[3], got[kMaxRanks] = {0};
  MPI_Request reqs[kMaxRanks];
  int out[kMaxRanks][3];
  for (int j = 0; j < c->q; ++j) {
    out[j][0] = c->r;
    out[j][1] = world_rank;
    out[j][2] = j;
    CHECK_OK(MPI_Isend(out[j], 3, MPI_INT, j, 100 + c->r, c->inter, &reqs[j]));
  }
  for (int k = 0; k < c->q; ++k) {
    MPI_Status st;
    int flag = 0;
    CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->inter, &st));
    CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < c->q, "probe source %d", st.MPI_SOURCE);
    CHECK_OK(MPI_Iprobe(st.MPI_SOURCE, st.MPI_TAG, c->inter, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "iprobe of a probed message found nothing");
    CHECK_OK(MPI_Recv(msg, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c->inter, &st));
    const int src = st.MPI_SOURCE;
    int count = -1;
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 3, "%s: count %d from remote %d tag %d", phase, count, st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK(src >= 0 && src < c->q, "status source %d outside the remote group", src);
    CHECK(st.MPI_TAG == 100 + src, "tag %d from remote %d", st.MPI_TAG, src);
    CHECK(msg[0] == src && msg[1] == c->rw[src] && msg[2] == c->r,
          "message (%d,%d,%d) from remote %d (world %d)", msg[0], msg[1], msg[2], src, c->rw[src]);
    CHECK(got[src] == 0, "two messages from remote %d", src);
    got[src] = 1;
  }
  CHECK_OK(MPI_Waitall(c->q, reqs, MPI_STATUSES_IGNORE));
  /* No remote process leaves the barrier before all have received, so the
   * wildcard receives above cannot take the message below. */
  CHECK_OK(MPI_Barrier(c->inter));
  /* A named source, and MPI_PROC_NULL. */
  if (c->r < c->q) {
    int x = world_rank, y = -1;
    MPI_Status st;
    CHECK_OK(MPI_Sendrecv(&x, 1, MPI_INT, c->r, 7, &y, 1, MPI_INT, c->r, 7, c->inter, &st));
    CHECK(y == c->rw[c->r] && st.MPI_SOURCE == c->r && st.MPI_TAG == 7,
          "sendrecv with remote %d: got %d from %d", c->r, y, st.MPI_SOURCE);
  }
  int y = 5;
  MPI_Status st;
  CHECK_OK(MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, c->inter, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && y == 5, "MPI_PROC_NULL receive");
}

/* Errors the standard names, under MPI_ERRORS_RETURN; nothing changes. */
static void check_errors(const Ctx* c) {
  int x[2] = {1, 2}, y[2] = {0, 0}, cls = 0;
  MPI_Comm_set_errhandler(c->inter, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Error_class(MPI_Scan(x, y, 2, MPI_INT, MPI_SUM, c->inter), &cls);
  CHECK(cls == MPI_ERR_COMM, "MPI_Scan on an intercommunicator: class %d", cls);
  MPI_Request rq = MPI_REQUEST_NULL;
  MPI_Error_class(MPI_Iexscan(x, y, 2, MPI_INT, MPI_SUM, c->inter, &rq), &cls);
  CHECK(cls == MPI_ERR_COMM && rq == MPI_REQUEST_NULL, "MPI_Iexscan: class %d", cls);
  MPI_Error_class(MPI_Allreduce(MPI_IN_PLACE, y, 2, MPI_INT, MPI_SUM, c->inter), &cls);
  CHECK(cls == MPI_ERR_BUFFER, "in-place allreduce: class %d", cls);
  MPI_Error_class(MPI_Bcast(x, 2, MPI_INT, c->q, c->inter), &cls);
  CHECK(cls == MPI_ERR_ROOT, "bcast root %d (remote size %d): class %d", c->q, c->q, cls);
  MPI_Error_class(MPI_Send(x, 1, MPI_INT, c->q, 0, c->inter), &cls);
  CHECK(cls == MPI_ERR_RANK, "send to remote rank %d: class %d", c->q, cls);
  int n = -1;
  MPI_Error_class(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), &cls);
  CHECK(cls == MPI_ERR_COMM && n == -1, "remote_size of MPI_COMM_WORLD: class %d", cls);
  MPI_Comm m = MPI_COMM_NULL;
  MPI_Error_class(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &m), &cls);
  CHECK(cls == MPI_ERR_COMM && m == MPI_COMM_NULL, "merge of MPI_COMM_WORLD: class %d", cls);
  /* Matching (queued execution) refuses intercommunicators. */
  CHECK_OK(MPI_Allreduce_init(x, y, 2, MPI_INT, MPI_SUM, c->inter, MPI_INFO_NULL, &rq));
  MPI_Error_class(MPI_Match(&rq), &cls);
  CHECK(cls == MPI_ERR_COMM && rq != MPI_REQUEST_NULL, "MPI_Match on an intercomm: class %d", cls);
  MPI_Queue queue;
  CHECK_OK(MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = MPI_Enqueue_start(&queue, &rq);
  CHECK(rc != MPI_SUCCESS, "an unmatched intercomm request was enqueued");
  CHECK_OK(MPI_Queue_free(&queue));
  CHECK_OK(MPI_Request_free(&rq));
  MPI_Request p2p;
  CHECK_OK(MPI_Send_init(x, 1, MPI_INT, 0, 3, c->inter, &p2p));
  MPI_Error_class(MPI_Match(&p2p), &cls);
  CHECK(cls == MPI_ERR_COMM, "MPI_Match of a p2p request on an intercomm: class %d", cls);
  CHECK_OK(MPI_Request_free(&p2p));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  y[0] = y[1] = 0;
}

/* Merge: the group that passes high = 0 comes first. */
static void check_merge(const Ctx* c, int high, int other_high) {
  MPI_Comm m;
  CHECK_OK(MPI_Intercomm_merge(c->inter, high, &m));
  int flag = 1, n = 0, rank = -1;
  CHECK_OK(MPI_Comm_test_inter(m, &flag));
  CHECK(!flag, "a merged communicator is an intracommunicator");
  CHECK_OK(MPI_Comm_size(m, &n));
  CHECK(n == c->p + c->q, "merged size %d", n);
  int order[2 * kMaxRanks];
  CHECK_OK(MPI_Allgather(&world_rank, 1, MPI_INT, order, 1, MPI_INT, m));
  CHECK_OK(MPI_Comm_rank(m, &rank));
  CHECK(order[rank] == world_rank, "merged rank %d holds world %d", rank, order[rank]);
  int local_first;
  if (high != other_high) {
    local_first = !high;
  } else {
    /* Any order, but consistent: one group, then the other. */
    local_first = order[0] == c->lw[0];
  }
  for (int i = 0; i < n; ++i) {
    const int want = local_first ? (i < c->p ? c->lw[i] : c->rw[i - c->p])
                                 : (i < c->q ? c->rw[i] : c->lw[i - c->q]);
    CHECK(order[i] == want, "merge (high %d vs %d): rank %d is world %d, expected %d", high,
          other_high, i, order[i], want);
  }
  int sum = 0, want = 0;
  CHECK_OK(MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, m));
  for (int w = 0; w < n; ++w) want += order[w];
  CHECK(sum == want, "allreduce over the merged communicator: %d", sum);
  CHECK_OK(MPI_Comm_free(&m));
}

/* Split by local-rank parity with reversed keys; MPI_COMM_NULL when the
 * other side has no rank of that parity. */
static void check_split(const Ctx* c) {
  MPI_Comm s;
  const int color = c->r % 2;
  CHECK_OK(MPI_Comm_split(c->inter, color, -c->r, &s));
  Ctx d = *c;
  d.inter = s;
  d.p = d.q = 0;
  for (int i = c->p - 1; i >= 0; --i)
    if (i % 2 == color) d.lw[d.p++] = c->lw[i];
  for (int i = c->q - 1; i >= 0; --i)
    if (i % 2 == color) d.rw[d.q++] = c->rw[i];
  if (d.q == 0) {
    CHECK(s == MPI_COMM_NULL, "split: no remote rank of parity %d, yet a communicator", color);
    return;
  }
  CHECK(s != MPI_COMM_NULL, "split gave MPI_COMM_NULL");
  d.r = 0;
  while (d.lw[d.r] != world_rank) ++d.r;
  check_groups(&d);
  phase = "split";
  check_p2p(&d);
  check_all(&d, 0);
  CHECK_OK(MPI_Comm_free(&s));
}

/* MPI_Intercomm_create_from_groups: the same groups without a parent. */
static void check_from_groups(const Ctx* c) {
  MPI_Group wg, lg, rg;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  CHECK_OK(MPI_Group_incl(wg, c->p, c->lw, &lg));
  CHECK_OK(MPI_Group_incl(wg, c->q, c->rw, &rg));
  Ctx d = *c;
  CHECK_OK(MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "nicq-intercomm-test", MPI_INFO_NULL,
                                            MPI_ERRORS_ARE_FATAL, &d.inter));
  phase = "from_groups";
  check_groups(&d);
  check_p2p(&d);
  check_all(&d, 1);
  /* An intercommunicator is no parent for MPI_Comm_create_group. */
  MPI_Comm bad = MPI_COMM_NULL;
  int cls = 0;
  MPI_Comm_set_errhandler(d.inter, MPI_ERRORS_RETURN);
  MPI_Error_class(MPI_Comm_create_group(d.inter, lg, 5, &bad), &cls);
  CHECK(cls == MPI_ERR_COMM && bad == MPI_COMM_NULL, "create_group on an intercomm: class %d", cls);
  CHECK_OK(MPI_Comm_free(&d.inter));
  MPI_Group_free(&lg);
  MPI_Group_free(&rg);
  MPI_Group_free(&wg);
}

static void run_cut(const Cut* cut) {
  Ctx c;
  c.color = group_of(cut, world_rank);
  c.p = members(cut, c.color, c.lw);
  c.q = members(cut, 1 - c.color, c.rw);
  c.r = 0;
  while (c.lw[c.r] != world_rank) ++c.r;
  MPI_Comm local;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, c.color, world_rank, &local));
  /* Arguments every member can check fail on every member, before any
   * exchange: nobody is left waiting. */
  MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
  MPI_Comm none = MPI_COMM_NULL;
  int cls = 0;
  MPI_Error_class(MPI_Intercomm_create(local, c.p, MPI_COMM_WORLD, c.rw[0], 77, &none), &cls);
  CHECK(cls == MPI_ERR_RANK && none == MPI_COMM_NULL, "local_leader %d: class %d", c.p, cls);
  /* Only the leader sees that its remote leader is in its own group; its
   * group fails with it (the class travels), rather than waiting for it. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Error_class(MPI_Intercomm_create(MPI_COMM_WORLD, 0, MPI_COMM_WORLD, 1, 77, &none), &cls);
  CHECK(cls == MPI_ERR_RANK && none == MPI_COMM_NULL, "overlapping groups: class %d", cls);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, c.rw[0], 77, &c.inter));
  check_groups(&c);
  phase = cut->name;
  check_p2p(&c);
  for (int mode = 0; mode < 3; ++mode) {
    check_all(&c, mode);
    check_rooted(&c, mode, 0);
    check_rooted(&c, mode, 1);
    check_derived(&c, mode);
    check_noncommutative(&c, mode);
  }
  /* dup: congruent, and a working intercommunicator of its own */
  Ctx d = c;
  CHECK_OK(MPI_Comm_dup(c.inter, &d.inter));
  int res = -1;
  CHECK_OK(MPI_Comm_compare(c.inter, d.inter, &res));
  CHECK(res == MPI_CONGRUENT, "compare(inter, dup) = %d", res);
  CHECK_OK(MPI_Comm_compare(c.inter, MPI_COMM_WORLD, &res));
  CHECK(res == MPI_UNEQUAL, "compare(inter, world) = %d", res);
  check_groups(&d);
  phase = "dup";
  check_p2p(&d);
  check_all(&d, 1);
  check_errors(&d);
  check_collective_args(&d);
  CHECK_OK(MPI_Comm_free(&d.inter));
  check_merge(&c, c.color, 1 - c.color);
  check_merge(&c, 1 - c.color, c.color);
  check_merge(&c, 0, 0);
  check_split(&c);
  check_from_groups(&c);
  /* MPI_Comm_create: each group keeps all but its last rank (if it has two) */
  MPI_Group lg, sub;
  CHECK_OK(MPI_Comm_group(c.inter, &lg));
  int drop[1] = {c.p - 1};
  CHECK_OK(MPI_Group_excl(lg, c.p > 1 ? 1 : 0, drop, &sub));
  MPI_Comm cc;
  CHECK_OK(MPI_Comm_create(c.inter, sub, &cc));
  if (c.p > 1 && c.r == c.p - 1) {
    CHECK(cc == MPI_COMM_NULL, "MPI_Comm_create: a rank outside the group got a communicator");
  } else {
    int n = -1;
    CHECK(cc != MPI_COMM_NULL, "MPI_Comm_create gave MPI_COMM_NULL to a member");
    CHECK_OK(MPI_Comm_remote_size(cc, &n));
    CHECK(n == (c.q > 1 ? c.q - 1 : 1), "created remote size %d", n);
    CHECK_OK(MPI_Comm_free(&cc));
  }
  MPI_Group_free(&sub);
  MPI_Group_free(&lg);
  CHECK_OK(MPI_Comm_free(&c.inter));
  CHECK_OK(MPI_Comm_free(&local));
}

/* World ranks 0 and 1, each its own group through MPI_COMM_SELF (a
 * common way test suites pair processes); the others stay out. */
static void check_self_pair(void) {
  if (world_rank > 1) return;
  Ctx c;
  c.color = world_rank;
  c.r = 0;
  c.p = c.q = 1;
  c.lw[0] = world_rank;
  c.rw[0] = 1 - world_rank;
  CHECK_OK(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 1 - world_rank, 9, &c.inter));
  phase = "self pair";
  check_groups(&c);
  check_p2p(&c);
  check_all(&c, 0);
  check_rooted(&c, 1, 1);
  CHECK_OK(MPI_Comm_free(&c.inter));
}

int main(int argc, char** argv) {
  mp_init(&argc, &argv, &world_rank, &world_size);
  CHECK(world_size >= 2 && world_size <= kMaxRanks, "needs 2..%d ranks", kMaxRanks);
  const Cut cuts[] = {{"halves", 0}, {"rank 0 vs rest", 1}, {"even vs odd", 2}};
  for (int i = 0; i < 3; ++i) run_cut(&cuts[i]);
  check_self_pair();
  CHECK_OK(MPI_Finalize());
  if (world_rank == 0) printf("intercomm: %d ranks ok\n", world_size);
  return 0;
}
