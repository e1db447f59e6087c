/* Communicator, group, error-class and session calls of MPI-4.1, checked by
 * their results (ranks, sizes, comparisons, hints, messages) and by data
 * moved on every new communicator, on any number of ranks (1 included). */
#include "mp_check.h"

static int world_size;

/* Each rank sends its world rank to the next rank of comm and checks that
 * the previous one's arrived: the communicator carries traffic. */
static void ring_check(MPI_Comm comm) {
  int rank, size, got = -1, me = mp_rank, prev, prev_world;
  MPI_Group g, w;
  CHECK_OK(MPI_Comm_rank(comm, &rank));
  CHECK_OK(MPI_Comm_size(comm, &size));
  prev = (rank + size - 1) % size;
  CHECK_OK(MPI_Comm_group(comm, &g));
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
  CHECK_OK(MPI_Group_translate_ranks(g, 1, &prev, w, &prev_world));
  CHECK_OK(MPI_Sendrecv(&me, 1, MPI_INT, (rank + 1) % size, 5, &got, 1, MPI_INT, prev, 5, comm,
                        MPI_STATUS_IGNORE));
  CHECK(got == prev_world, "ring got %d, want %d", got, prev_world);
  MPI_Group_free(&g);
  MPI_Group_free(&w);
}

static void check_hint(MPI_Comm comm, const char* key, const char* want) {
  MPI_Info info;
  char value[64] = "";
  int len = sizeof value, flag = -1;
  CHECK_OK(MPI_Comm_get_info(comm, &info));
  CHECK_OK(MPI_Info_get_string(info, key, &len, value, &flag));
  if (want) {
    CHECK(flag == 1 && strcmp(value, want) == 0, "hint %s = '%s' (flag %d), want '%s'", key, value,
          flag, want);
  } else {
    CHECK(flag == 0, "hint %s is set ('%s')", key, value);
  }
  CHECK_OK(MPI_Info_free(&info));
}

static void test_idup_and_info(void) {
  MPI_Comm d1 = MPI_COMM_NULL, d2 = MPI_COMM_NULL, d3;
  MPI_Request reqs[2];
  MPI_Info hint;
  int token = 0, cmp = -1;
  CHECK_OK(MPI_Info_create(&hint));
  CHECK_OK(MPI_Info_set(hint, "nicq_test_hint", "42"));
  /* Messages between an idup and its wait: rank 0 sends after its idup,
   * the others receive before theirs. */
  if (mp_rank == 0) {
    CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &reqs[0]));
    for (int r = 1; r < world_size; ++r) CHECK_OK(MPI_Send(&r, 1, MPI_INT, r, 7, MPI_COMM_WORLD));
  } else {
    CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(token == mp_rank, "token %d", token);
    CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d1, &reqs[0]));
  }
  CHECK_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, hint, &d2, &reqs[1]));
  MPI_Status st[2];
  CHECK_OK(MPI_Waitall(2, reqs, st));
  CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "requests not released");
  CHECK(d1 != MPI_COMM_NULL && d2 != MPI_COMM_NULL && d1 != d2, "idup gave %d %d", d1, d2);
  CHECK_OK(MPI_Comm_compare(d1, MPI_COMM_WORLD, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "compare(idup, world) = %d", cmp);
  CHECK_OK(MPI_Comm_compare(d1, d2, &cmp));
  CHECK(cmp == MPI_CONGRUENT, "compare(idup, idup) = %d", cmp);
  ring_check(d1);
  ring_check(d2);
  /* Traffic on the duplicate never matches traffic on its parent. */
  if (world_size > 1 && mp_rank < 2) {
    int a = 100, b = 200, got = 0, peer = 1 - mp_rank;
    if (mp_rank == 0) {
      CHECK_OK(MPI_Send(&a, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
      CHECK_OK(MPI_Send(&b, 1, MPI_INT, peer, 1, d1));
    } else {
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, 1, d1, MPI_STATUS_IGNORE));
      CHECK(got == 200, "d1 got %d", got);
      CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(got == 100, "world got %d", got);
    }
  }
  check_hint(d2, "nicq_test_hint", "42");
  check_hint(d1, "nicq_test_hint", NULL);
  MPI_Info more;
  CHECK_OK(MPI_Info_create(&more));
  CHECK_OK(MPI_Info_set(more, "a", "1"));
  CHECK_OK(MPI_Comm_set_info(d1, more));
  CHECK_OK(MPI_Info_set(more, "a", "2"));
  CHECK_OK(MPI_Info_set(more, "b", "3"));
  CHECK_OK(MPI_Comm_set_info(d1, more));
  check_hint(d1, "a", "2");
  check_hint(d1, "b", "3");
  CHECK_OK(MPI_Comm_dup(d1, &d3)); /* a duplicate carries its parent's hints */
  check_hint(d3, "b", "3");
  ring_check(d3);
  CHECK_OK(MPI_Comm_set_errhandler(d1, MPI_ERRORS_RETURN));
  int rc = MPI_Comm_set_info(d1, MPI_INFO_NULL), cls;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_INFO, "set_info(MPI_INFO_NULL) class %d", cls);
  check_hint(d1, "a", "2"); /* the failed call changed nothing */
  CHECK_OK(MPI_Comm_disconnect(&d3));
  CHECK(d3 == MPI_COMM_NULL, "disconnect left %d", d3);
  CHECK_OK(MPI_Comm_free(&d1));
  CHECK_OK(MPI_Comm_free(&d2));
  /* An idup then a dup of the same parent, the idup waited before the dup
   * on even ranks and after it on odd ones: each stays itself. */
  MPI_Request q;
  MPI_Comm later;
  CHECK_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, hint, &d1, &q));
  if (mp_rank % 2 == 0) CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &later));
  if (mp_rank % 2 == 1) CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  check_hint(d1, "nicq_test_hint", "42");
  check_hint(later, "nicq_test_hint", NULL);
  ring_check(d1);
  ring_check(later);
  if (world_size > 1 && mp_rank < 2) {
    int v = 0, peer = 1 - mp_rank;
    if (mp_rank == 0) {
      v = 11;
      CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 2, later));
      v = 22;
      CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 2, d1));
    } else {
      CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 2, d1, MPI_STATUS_IGNORE));
      CHECK(v == 22, "idup'd comm got %d", v);
      CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 2, later, MPI_STATUS_IGNORE));
      CHECK(v == 11, "dup'd comm got %d", v);
    }
  }
  CHECK_OK(MPI_Comm_free(&d1));
  CHECK_OK(MPI_Comm_free(&later));
  MPI_Info_free(&more);
  MPI_Info_free(&hint);
}

static void test_groups_and_creation(void) {
  MPI_Group world, evens, odds, u, x, d, rev, rev2, ex;
  int size = world_size, n, cmp, r;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int ranges[1][3] = {{0, size - 1, 2}};
  CHECK_OK(MPI_Group_range_incl(world, 1, ranges, &evens));
  CHECK_OK(MPI_Group_range_excl(world, 1, ranges, &odds));
  CHECK_OK(MPI_Group_size(evens, &n));
  CHECK(n == (size + 1) / 2, "evens has %d", n);
  CHECK_OK(MPI_Group_rank(evens, &r));
  CHECK(r == (mp_rank % 2 ? MPI_UNDEFINED : mp_rank / 2), "rank in evens %d", r);
  CHECK_OK(MPI_Group_union(odds, evens, &u));
  CHECK_OK(MPI_Group_compare(u, world, &cmp));
  CHECK(cmp == (size > 1 ? MPI_SIMILAR : MPI_IDENT), "union vs world %d", cmp);
  CHECK_OK(MPI_Group_intersection(world, evens, &x));
  CHECK_OK(MPI_Group_compare(x, evens, &cmp));
  CHECK(cmp == MPI_IDENT, "intersection %d", cmp);
  CHECK_OK(MPI_Group_difference(world, evens, &d));
  CHECK_OK(MPI_Group_compare(d, odds, &cmp));
  CHECK(cmp == MPI_IDENT, "difference %d", cmp);
  int down[1][3] = {{size - 1, 0, -1}};
  CHECK_OK(MPI_Group_range_incl(world, 1, down, &rev));
  int order[64];
  for (int i = 0; i < size; ++i) order[i] = size - 1 - i;
  CHECK_OK(MPI_Group_incl(world, size, order, &rev2));
  CHECK_OK(MPI_Group_compare(rev, rev2, &cmp));
  CHECK(cmp == MPI_IDENT, "reversed groups %d", cmp);
  int in[3] = {0, MPI_PROC_NULL, size - 1}, out[3] = {-7, -7, -7};
  CHECK_OK(MPI_Group_translate_ranks(rev, 3, in, world, out));
  CHECK(out[0] == size - 1 && out[1] == MPI_PROC_NULL && out[2] == 0, "translate %d %d %d", out[0],
        out[1], out[2]);
  if (size > 1) {
    int zero = 0, t = -7;
    CHECK_OK(MPI_Group_translate_ranks(odds, 1, &zero, evens, &t));
    CHECK(t == MPI_UNDEFINED, "odd rank found among evens: %d", t);
  }
  int first = 0;
  CHECK_OK(MPI_Group_excl(world, 1, &first, &ex));
  CHECK_OK(MPI_Group_size(ex, &n));
  CHECK(n == size - 1, "excl size %d", n);

  /* Communicators from groups: create over the parent, create_group by members only. */
  MPI_Comm ce = MPI_COMM_NULL, cg = MPI_COMM_NULL;
  CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &ce));
  CHECK((ce != MPI_COMM_NULL) == (mp_rank % 2 == 0), "create gave %d", ce);
  CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, mp_rank % 2 ? odds : evens, 9, &cg));
  CHECK_OK(MPI_Comm_size(cg, &n));
  CHECK(n == (mp_rank % 2 ? size / 2 : (size + 1) / 2), "create_group size %d", n);
  CHECK_OK(MPI_Comm_rank(cg, &r));
  CHECK(r == mp_rank / 2, "create_group rank %d", r);
  ring_check(cg);
  if (ce != MPI_COMM_NULL) {
    ring_check(ce);
    CHECK_OK(MPI_Comm_compare(ce, cg, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "create vs create_group %d", cmp);
    CHECK_OK(MPI_Comm_free(&ce));
  }
  CHECK_OK(MPI_Comm_free(&cg));
  MPI_Group gs[] = {world, evens, odds, u, x, d, rev, rev2, ex};
  for (size_t i = 0; i < sizeof gs / sizeof gs[0]; ++i) CHECK_OK(MPI_Group_free(&gs[i]));
}

static void test_split_type(void) {
  MPI_Comm shared, guided, none;
  int n;
  /* This rank's node (one host: everyone; NICQ_NODE_RANKS: its virtual
   * node) shares memory; the key reverses the order. */
  CHECK_OK(
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -mp_rank, MPI_INFO_NULL, &shared));
  mp_check_node_comm(shared, world_size, "shared");
  CHECK_OK(MPI_Comm_size(shared, &n));
  ring_check(shared);
  MPI_Info info;
  CHECK_OK(MPI_Info_create(&info));
  CHECK_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &guided));
  CHECK(guided != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
  CHECK_OK(MPI_Comm_size(guided, &n));
  int shared_size = 0;
  CHECK_OK(MPI_Comm_size(shared, &shared_size));
  CHECK(n == shared_size, "guided size %d, the node's %d", n, shared_size);
  ring_check(guided);
  CHECK_OK(MPI_Info_set(info, "mpi_hw_resource_type", "nicq://no-such-resource"));
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &none));
  CHECK(none == MPI_COMM_NULL, "unknown resource type gave a communicator");
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &none));
  CHECK(none == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
  MPI_Info_free(&info);
  CHECK_OK(MPI_Comm_free(&shared));
  CHECK_OK(MPI_Comm_free(&guided));
}

static int handler_calls, handler_code;
static void comm_handler(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++handler_calls;
  handler_code = *code;
}

static void test_error_classes(void) {
  int cls, code, got, len;
  char msg[MPI_MAX_ERROR_STRING];
  CHECK_OK(MPI_Add_error_class(&cls));
  CHECK(cls > MPI_ERR_ERRHANDLER && cls <= 255, "user class %d", cls);
  CHECK_OK(MPI_Add_error_code(cls, &code));
  CHECK(code != cls, "code equals its class");
  CHECK_OK(MPI_Error_class(code, &got));
  CHECK(got == cls, "class of user code %d, want %d", got, cls);
  CHECK_OK(MPI_Error_string(code, msg, &len));
  CHECK(len == 0, "a code without string reads '%s'", msg);
  CHECK_OK(MPI_Add_error_string(code, "the widget is jammed"));
  CHECK_OK(MPI_Add_error_string(cls, "widget trouble"));
  CHECK_OK(MPI_Error_string(code, msg, &len));
  CHECK(strcmp(msg, "the widget is jammed") == 0 && len == 20, "string '%s' (%d)", msg, len);
  CHECK_OK(MPI_Error_string(cls, msg, &len));
  CHECK(strcmp(msg, "widget trouble") == 0, "class string '%s'", msg);
  /* The user code reaches a communicator's handler like any other. */
  MPI_Errhandler eh;
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Comm_create_errhandler(comm_handler, &eh));
  CHECK_OK(MPI_Comm_set_errhandler(dup, eh));
  handler_calls = 0;
  CHECK_OK(MPI_Comm_call_errhandler(dup, code));
  CHECK(handler_calls == 1 && handler_code == code, "handler %d calls, code %d", handler_calls,
        handler_code);
  /* Removal order: string, then code, then class; refusals change nothing. */
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rc = MPI_Remove_error_code(code);
  MPI_Error_class(rc, &got);
  CHECK(got == MPI_ERR_ARG, "removing a code with a string: class %d", got);
  rc = MPI_Remove_error_class(cls);
  MPI_Error_class(rc, &got);
  CHECK(got == MPI_ERR_ARG, "removing a class with codes: class %d", got);
  rc = MPI_Add_error_string(MPI_ERR_TYPE, "mine now");
  MPI_Error_class(rc, &got);
  CHECK(got == MPI_ERR_ARG, "renaming a predefined class: class %d", got);
  CHECK_OK(MPI_Error_string(code, msg, &len));
  CHECK(strcmp(msg, "the widget is jammed") == 0, "string after refusals '%s'", msg);
  CHECK_OK(MPI_Remove_error_string(code));
  CHECK_OK(MPI_Remove_error_code(code));
  CHECK_OK(MPI_Remove_error_class(cls));
  int again;
  CHECK_OK(MPI_Add_error_class(&again));
  CHECK(again == cls, "a removed class is reused: %d, was %d", again, cls);
  CHECK_OK(MPI_Error_string(again, msg, &len));
  CHECK(len == 0, "the reused class kept the string '%s'", msg);
  CHECK_OK(MPI_Remove_error_class(again));
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK_OK(MPI_Errhandler_free(&eh));
}

static int session_calls, session_code;
static MPI_Session session_seen;
static void session_handler(MPI_Session* s, int* code, ...) {
  ++session_calls;
  session_seen = *s;
  session_code = *code;
}

static void info_value(MPI_Info info, const char* key, char* value, int size) {
  int len = size, flag = 0;
  CHECK_OK(MPI_Info_get_string(info, key, &len, value, &flag));
  CHECK(flag == 1, "info has no '%s'", key);
}

static void test_sessions(void) {
  MPI_Session s;
  MPI_Errhandler eh, got;
  char value[64];
  CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
  CHECK_OK(MPI_Session_get_errhandler(s, &got));
  CHECK(got == MPI_ERRORS_RETURN, "session handler %d", got);
  CHECK_OK(MPI_Session_create_errhandler(session_handler, &eh));
  CHECK_OK(MPI_Session_set_errhandler(s, eh));
  CHECK_OK(MPI_Session_get_errhandler(s, &got));
  CHECK(got == eh, "session handler %d, set %d", got, eh);
  int len = 0, cls;
  session_calls = 0;
  int rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, value);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_ARG && session_calls == 1 && session_seen == s && session_code == rc,
        "bad pset index: class %d, %d handler calls", cls, session_calls);
  CHECK_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
  CHECK(session_calls == 2 && session_code == MPI_ERR_OTHER, "call_errhandler: %d calls, code %d",
        session_calls, session_code);
  MPI_Info info;
  CHECK_OK(MPI_Session_get_info(s, &info));
  info_value(info, "thread_level", value, sizeof value);
  CHECK(strncmp(value, "MPI_THREAD_", 11) == 0, "thread_level '%s'", value);
  MPI_Info_free(&info);
  CHECK_OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
  info_value(info, "mpi_size", value, sizeof value);
  CHECK(atoi(value) == world_size, "mpi://WORLD mpi_size '%s'", value);
  MPI_Info_free(&info);
  CHECK_OK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
  info_value(info, "mpi_size", value, sizeof value);
  CHECK(strcmp(value, "1") == 0, "mpi://SELF mpi_size '%s'", value);
  MPI_Info_free(&info);
  rc = MPI_Session_get_pset_info(s, "mpi://NOWHERE", &info);
  CHECK(rc != MPI_SUCCESS && session_calls == 3, "unknown pset: rc %d, %d calls", rc,
        session_calls);
  MPI_Group g;
  MPI_Comm c;
  CHECK_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
  CHECK_OK(
      MPI_Comm_create_from_group(g, "nicq.test.comm_more", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
  ring_check(c);
  CHECK_OK(MPI_Comm_free(&c));
  CHECK_OK(MPI_Group_free(&g));
  CHECK_OK(MPI_Session_finalize(&s));
  CHECK_OK(MPI_Errhandler_free(&eh));
}

static void test_environment(int argc, char** argv) {
  MPI_Comm parent = MPI_COMM_WORLD;
  CHECK_OK(MPI_Comm_get_parent(&parent));
  CHECK(parent == MPI_COMM_NULL, "a parent %d", parent);
  MPI_Info env;
  char value[512];
  CHECK_OK(MPI_Info_create_env(argc, argv, &env));
  info_value(env, "command", value, sizeof value);
  CHECK(strcmp(value, argv[0]) == 0, "command '%s'", value);
  info_value(env, "maxprocs", value, sizeof value);
  CHECK(atoi(value) == world_size, "maxprocs '%s'", value);
  MPI_Info_free(&env);
  int n = -1;
  CHECK_OK(MPI_Get_hw_resource_info(&env));
  CHECK_OK(MPI_Info_get_nkeys(env, &n));
  CHECK(n == 0, "hw info has %d keys", n);
  MPI_Info_free(&env);
  /* Dynamic processes are declared but unsupported. */
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  char port[MPI_MAX_PORT_NAME];
  int rc = MPI_Open_port(MPI_INFO_NULL, port), cls;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Open_port class %d", cls);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  CHECK_OK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &mp_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  CHECK(world_size <= 64, "at most 64 ranks");
  test_idup_and_info();
  test_groups_and_creation();
  test_split_type();
  test_error_classes();
  test_sessions();
  test_environment(argc, argv);
  mp_barrier(MPI_COMM_WORLD);
  if (mp_rank == 0) printf("mp_comm_more: %d ranks ok\n", world_size);
  CHECK_OK(MPI_Finalize());
  return 0;
}
