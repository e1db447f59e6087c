/* Groups, attributes, names and communicator creation from groups, checked
 * by their data on any number of ranks (1 included). */
#include "mp_check.h"

/* Callback bookkeeping: what the copy/delete callbacks saw. */
static int copies, deletes, last_deleted, refuse = 1, self_deletes;

static int copy_plus_one(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)comm, (void)keyval;
  CHECK(extra == &copies, "extra_state not passed through");
  ++copies;
  *(void**)out = (char*)in + 1; /* the duplicate gets a different value */
  *flag = 1;
  return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)extra;
  ++deletes;
  last_deleted = (int)(size_t)value;
  return MPI_SUCCESS;
}

static int refuse_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)keyval, (void)value, (void)extra;
  if (refuse) return MPI_ERR_OTHER;
  ++self_deletes;
  return MPI_SUCCESS;
}

/* Every rank sends its world rank to the next in `comm` and checks what the
 * previous one sent: proves the new communicator carries traffic. */
static void ring_check(MPI_Comm comm, const int* world_of) {
  int rank, size, got = -1, me = mp_rank;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  CHECK_OK(MPI_Sendrecv(&me, 1, MPI_INT, (rank + 1) % size, 5, &got, 1, MPI_INT,
                        (rank + size - 1) % size, 5, comm, MPI_STATUS_IGNORE));
  CHECK(got == world_of[(rank + size - 1) % size], "ring got %d, want %d", got,
        world_of[(rank + size - 1) % size]);
}

static void test_groups(int size) {
  MPI_Group world, evens, odds, u, x, d, r;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int ranges[1][3] = {{0, size - 1, 2}};
  CHECK_OK(MPI_Group_range_incl(world, 1, ranges, &evens));
  CHECK_OK(MPI_Group_range_excl(world, 1, ranges, &odds));
  int ne, no, cmp;
  MPI_Group_size(evens, &ne);
  MPI_Group_size(odds, &no);
  CHECK(ne == (size + 1) / 2 && no == size / 2, "evens %d odds %d of %d", ne, no, size);
  CHECK_OK(MPI_Group_union(odds, evens, &u));
  CHECK_OK(MPI_Group_compare(u, world, &cmp));
  CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "union vs world: %d", cmp);
  CHECK_OK(MPI_Group_intersection(evens, odds, &x));
  CHECK(x == MPI_GROUP_EMPTY, "evens and odds intersect");
  CHECK_OK(MPI_Group_difference(world, odds, &d));
  CHECK_OK(MPI_Group_compare(d, evens, &cmp));
  CHECK(cmp == MPI_IDENT, "world - odds != evens (%d)", cmp);
  int zero = 0;
  CHECK_OK(MPI_Group_excl(world, 1, &zero, &r));
  int rs, rr, in[1] = {0}, out[1];
  MPI_Group_size(r, &rs);
  MPI_Group_rank(r, &rr);
  CHECK(rs == size - 1 && rr == (mp_rank == 0 ? MPI_UNDEFINED : mp_rank - 1),
        "excl: size %d rank %d", rs, rr);
  if (size > 1) {
    CHECK_OK(MPI_Group_translate_ranks(r, 1, in, world, out));
    CHECK(out[0] == 1, "rank 0 of world-minus-0 is world %d", out[0]);
  }
  /* Errors change nothing: a bad triplet leaves the output untouched. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Group keep = MPI_GROUP_NULL;
  int bad[1][3] = {{0, size, 1}};
  int rc = MPI_Group_range_incl(world, 1, bad, &keep), cls;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK && keep == MPI_GROUP_NULL, "bad range: class %d", cls);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Group* all[] = {&world, &evens, &odds, &u, &x, &d, &r};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
    CHECK_OK(MPI_Group_free(all[i]));
    CHECK(*all[i] == MPI_GROUP_NULL, "group %zu not nulled", i);
  }
}

static void test_attributes(void) {
  int key, flag = 0, *tag_ub, *universe;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB %d", flag ? *tag_ub : -1);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag));
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(flag && *universe == size, "MPI_UNIVERSE_SIZE %d", *universe);

  CHECK_OK(MPI_Comm_create_keyval(copy_plus_one, count_delete, &key, &copies));
  void* value = NULL;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &value, &flag));
  CHECK(!flag, "unset attribute reported set");
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void*)(size_t)100));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void*)(size_t)200)); /* replaces: deletes 100 */
  CHECK(deletes == 1 && last_deleted == 100, "replace: deletes %d last %d", deletes, last_deleted);

  MPI_Comm dup, dup2;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK(copies == 1, "copy callback ran %d times", copies);
  CHECK_OK(MPI_Comm_get_attr(dup, key, &value, &flag));
  CHECK(flag && (size_t)value == 201, "dup's attribute %zu", (size_t)value);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, key, &value, &flag));
  CHECK(flag && (size_t)value == 200, "parent's attribute changed to %zu", (size_t)value);

  /* The keyval outlives MPI_Comm_free_keyval while attributes use it. */
  int freed = key;
  CHECK_OK(MPI_Comm_free_keyval(&freed));
  CHECK(freed == MPI_KEYVAL_INVALID, "free_keyval did not reset the handle");
  CHECK_OK(MPI_Comm_dup(dup, &dup2));
  CHECK(copies == 2, "copy callback of a freed keyval did not run on dup");
  CHECK_OK(MPI_Comm_free(&dup2));
  CHECK(deletes == 2 && last_deleted == 202, "free of dup2: deletes %d last %d", deletes,
        last_deleted);
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK(deletes == 3 && last_deleted == 201, "free of dup: deletes %d last %d", deletes,
        last_deleted);

  /* MPI_COMM_DUP_FN copies the value as is; NULL_COPY_FN drops it. */
  int k2, k3;
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k3, NULL));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k2, (void*)(size_t)7));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k3, (void*)(size_t)8));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &dup));
  CHECK_OK(MPI_Comm_get_attr(dup, k2, &value, &flag));
  CHECK(flag && (size_t)value == 7, "MPI_COMM_DUP_FN value %zu", (size_t)value);
  CHECK_OK(MPI_Comm_get_attr(dup, k3, &value, &flag));
  CHECK(!flag, "MPI_COMM_NULL_COPY_FN copied the attribute");
  CHECK_OK(MPI_Comm_delete_attr(MPI_COMM_SELF, k3));
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_SELF, k3, &value, &flag));
  CHECK(!flag, "deleted attribute still set");
  CHECK_OK(MPI_Comm_free(&dup));

  /* A delete callback that fails fails MPI_Comm_delete_attr and keeps the value. */
  int k4, rc, cls;
  CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, refuse_delete, &k4, NULL));
  CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, k4, (void*)(size_t)9));
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  rc = MPI_Comm_delete_attr(MPI_COMM_SELF, k4);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OTHER, "refused delete gave class %d", cls);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_SELF, k4, &value, &flag));
  CHECK(flag && (size_t)value == 9, "refused delete removed the value");
  rc = MPI_Comm_set_attr(MPI_COMM_SELF, MPI_TAG_UB, NULL);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_KEYVAL, "setting MPI_TAG_UB gave class %d", cls);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

static void test_names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  CHECK_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "world is named '%s'", name);
  CHECK_OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
  CHECK(!strcmp(name, "MPI_COMM_SELF"), "self is named '%s'", name);
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Comm_get_name(dup, name, &len));
  CHECK(len == 0 && name[0] == 0, "a dup is named '%s'", name);
  CHECK_OK(MPI_Comm_set_name(dup, "solver"));
  CHECK_OK(MPI_Comm_get_name(dup, name, &len));
  CHECK(!strcmp(name, "solver") && len == 6, "set_name gave '%s'", name);
  int inter = -1;
  CHECK_OK(MPI_Comm_test_inter(dup, &inter));
  CHECK(inter == 0, "test_inter %d", inter);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int remote = -7, cls;
  MPI_Error_class(MPI_Comm_remote_size(dup, &remote), &cls);
  CHECK(cls == MPI_ERR_COMM && remote == -7, "remote_size: class %d, size %d", cls, remote);
  CHECK_OK(MPI_Comm_free(&dup));
}

/* Comm_create over world (evens get a communicator) and Comm_create_group
 * among the odds only (the evens do not call it). */
static void test_create(int size) {
  MPI_Group world, evens, odds;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int ranges[1][3] = {{0, size - 1, 2}};
  MPI_Group_range_incl(world, 1, ranges, &evens);
  MPI_Group_range_excl(world, 1, ranges, &odds);
  int world_of[64];
  MPI_Comm ec;
  CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &ec));
  if (mp_rank % 2 == 0) {
    int r, s;
    MPI_Comm_rank(ec, &r);
    MPI_Comm_size(ec, &s);
    CHECK(r == mp_rank / 2 && s == (size + 1) / 2, "evens comm: rank %d size %d", r, s);
    for (int i = 0; i < s; ++i) world_of[i] = 2 * i;
    ring_check(ec, world_of);
    CHECK_OK(MPI_Comm_free(&ec));
  } else {
    CHECK(ec == MPI_COMM_NULL, "odd rank got a communicator from MPI_Comm_create");
    MPI_Comm oc;
    CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, odds, 11, &oc));
    int r, s;
    MPI_Comm_rank(oc, &r);
    MPI_Comm_size(oc, &s);
    CHECK(r == mp_rank / 2 && s == size / 2, "odds comm: rank %d size %d", r, s);
    for (int i = 0; i < s; ++i) world_of[i] = 2 * i + 1;
    ring_check(oc, world_of);
    CHECK_OK(MPI_Comm_free(&oc));
  }
  mp_barrier(MPI_COMM_WORLD);
  /* Disjoint groups in one MPI_Comm_create (MPI-2.2): each rank passes its
   * parity's group and gets that parity's communicator. */
  MPI_Comm pc;
  CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, mp_rank % 2 ? odds : evens, &pc));
  int pr, ps;
  MPI_Comm_rank(pc, &pr);
  MPI_Comm_size(pc, &ps);
  CHECK(pr == mp_rank / 2 && ps == (mp_rank % 2 ? size / 2 : (size + 1) / 2),
        "parity comm: rank %d size %d", pr, ps);
  for (int i = 0; i < ps; ++i) world_of[i] = 2 * i + mp_rank % 2;
  ring_check(pc, world_of);
  CHECK_OK(MPI_Comm_free(&pc));
  MPI_Group_free(&world);
  MPI_Group_free(&evens);
  MPI_Group_free(&odds);
}

/* MPI_COMM_TYPE_SHARED gives this rank's node (the ranks whose processor
 * name is ours: the whole world on one host, a virtual node's ranks under
 * NICQ_NODE_RANKS) ordered by key. */
static void test_split_type(int size) {
  MPI_Comm node, none, dup;
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - mp_rank, MPI_INFO_NULL,
                               &node));
  mp_check_node_comm(node, size, "node comm");
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
  CHECK(none == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
  CHECK_OK(MPI_Comm_dup_with_info(node, MPI_INFO_NULL, &dup));
  int cmp;
  CHECK_OK(MPI_Comm_compare(node, dup, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "dup_with_info: compare %d", cmp);
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK_OK(MPI_Comm_free(&node));
}

int main(int argc, char** argv) {
  CHECK_OK(MPI_Init(&argc, &argv));
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &mp_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size <= 64, "at most 64 ranks");
  test_groups(size);
  test_attributes();
  test_names();
  test_create(size);
  test_split_type(size);
  mp_barrier(MPI_COMM_WORLD);
  /* MPI_Finalize deletes MPI_COMM_SELF's attributes (k4's callback now agrees). */
  refuse = 0;
  CHECK_OK(MPI_Finalize());
  CHECK(self_deletes == 1, "MPI_Finalize ran MPI_COMM_SELF's delete callback %d times",
        self_deletes);
  if (mp_rank == 0) printf("groups and attributes OK: %d ranks\n", size);
  return 0;
}
