/* Cartesian topologies, MPI_Dims_create, sessions, memory and datatype
 * introspection, checked by their values on any number of ranks. With the
 * argument "session-only" the program uses sessions alone: the session
 * starts the runtime and its finalize ends it, as in a sessions-only program. */
#include "mp_check.h"

static void expect_dims(int nnodes, int ndims, const int* in, const int* want) {
  int dims[8];
  memcpy(dims, in, sizeof(int) * (size_t)ndims);
  CHECK_OK(MPI_Dims_create(nnodes, ndims, dims));
  for (int i = 0; i < ndims; ++i)
    CHECK(dims[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, want %d", nnodes, ndims, i,
          dims[i], want[i]);
}

static void test_dims(void) {
  const int z[3] = {0, 0, 0};
  expect_dims(6, 2, z, (const int[]){3, 2});
  expect_dims(7, 2, z, (const int[]){7, 1});
  expect_dims(72, 2, z, (const int[]){9, 8});
  expect_dims(16, 3, z, (const int[]){4, 2, 2});
  expect_dims(6, 3, (const int[]){0, 3, 0}, (const int[]){2, 3, 1});
  expect_dims(1, 3, z, (const int[]){1, 1, 1});
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int dims[3] = {0, 3, 0}, cls;
  MPI_Error_class(MPI_Dims_create(7, 3, dims), &cls);
  CHECK(cls == MPI_ERR_DIMS && dims[0] == 0 && dims[2] == 0, "Dims_create(7, {0,3,0}): %d", cls);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void test_cart(int size) {
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  CHECK_OK(MPI_Dims_create(size, 2, dims));
  MPI_Comm cart;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  int rank, nd, status, coords[2], gd[2], gp[2], gc[2];
  MPI_Comm_rank(cart, &rank);
  CHECK(rank == mp_rank, "cart rank %d, world rank %d (no reorder)", rank, mp_rank);
  CHECK_OK(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART, "Topo_test %d", status);
  CHECK_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
  CHECK(status == MPI_UNDEFINED, "world has a topology (%d)", status);
  CHECK_OK(MPI_Cartdim_get(cart, &nd));
  CHECK(nd == 2, "Cartdim_get %d", nd);
  CHECK_OK(MPI_Cart_coords(cart, rank, 2, coords));
  CHECK(coords[0] == rank / dims[1] && coords[1] == rank % dims[1], "coords (%d,%d) of %d",
        coords[0], coords[1], rank);
  CHECK_OK(MPI_Cart_get(cart, 2, gd, gp, gc));
  CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0 && gc[0] == coords[0] &&
            gc[1] == coords[1],
        "Cart_get");
  for (int r = 0; r < size; ++r) {
    int c[2], back;
    CHECK_OK(MPI_Cart_coords(cart, r, 2, c));
    CHECK_OK(MPI_Cart_rank(cart, c, &back));
    CHECK(back == r, "rank %d -> (%d,%d) -> %d", r, c[0], c[1], back);
  }
  /* Dimension 0 is periodic: shifting wraps. Dimension 1 is not: edges see PROC_NULL. */
  int src, dst;
  CHECK_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
  int up = ((coords[0] + dims[0] - 1) % dims[0]) * dims[1] + coords[1];
  int down = ((coords[0] + 1) % dims[0]) * dims[1] + coords[1];
  CHECK(src == up && dst == down, "shift dim 0: %d %d, want %d %d", src, dst, up, down);
  CHECK_OK(MPI_Cart_shift(cart, 1, 1, &src, &dst));
  CHECK(src == (coords[1] == 0 ? MPI_PROC_NULL : rank - 1) &&
            dst == (coords[1] == dims[1] - 1 ? MPI_PROC_NULL : rank + 1),
        "shift dim 1: %d %d", src, dst);
  int wrapped[2] = {coords[0] + dims[0], coords[1]}, at;
  CHECK_OK(MPI_Cart_rank(cart, wrapped, &at));
  CHECK(at == rank, "periodic coordinate did not wrap: %d", at);
  /* Bad input: an error class naming the call, outputs untouched. */
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int outside[2] = {0, dims[1]}, untouched = -9;
  mp_expect_class(MPI_Cart_rank(cart, outside, &untouched), MPI_ERR_ARG, "MPI_Cart_rank");
  mp_expect_class(MPI_Cart_shift(cart, 2, 1, &untouched, &untouched), MPI_ERR_DIMS,
                  "MPI_Cart_shift");
  mp_expect_class(MPI_Cart_coords(cart, size, 2, coords), MPI_ERR_RANK, "MPI_Cart_coords");
  mp_expect_class(MPI_Cartdim_get(MPI_COMM_WORLD, &untouched), MPI_ERR_TOPOLOGY, "MPI_Cartdim_get");
  CHECK(untouched == -9, "an erroneous call wrote its output (%d)", untouched);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_set_errhandler(cart, MPI_ERRORS_ARE_FATAL);
  /* Data moves along the periodic dimension. */
  int got = -1;
  CHECK_OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
  CHECK_OK(
      MPI_Sendrecv(&rank, 1, MPI_INT, dst, 3, &got, 1, MPI_INT, src, 3, cart, MPI_STATUS_IGNORE));
  CHECK(got == src, "received %d from %d", got, src);
  /* Dup keeps the topology; Cart_sub keeps a row. */
  MPI_Comm dup, row;
  CHECK_OK(MPI_Comm_dup(cart, &dup));
  CHECK_OK(MPI_Cartdim_get(dup, &nd));
  CHECK(nd == 2, "dup lost the topology");
  int remain[2] = {0, 1};
  CHECK_OK(MPI_Cart_sub(cart, remain, &row));
  int rr, rs;
  MPI_Comm_rank(row, &rr);
  MPI_Comm_size(row, &rs);
  CHECK(rr == coords[1] && rs == dims[1], "row: rank %d size %d", rr, rs);
  CHECK_OK(MPI_Cartdim_get(row, &nd));
  CHECK(nd == 1, "row has %d dims", nd);
  CHECK_OK(MPI_Comm_free(&row));
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK_OK(MPI_Comm_free(&cart));
  /* A grid smaller than the communicator leaves the extra ranks out. */
  int one = 1, noper = 0;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &one, &noper, 0, &cart));
  CHECK((mp_rank == 0) == (cart != MPI_COMM_NULL), "1-cell grid on rank %d", mp_rank);
  if (cart != MPI_COMM_NULL) CHECK_OK(MPI_Comm_free(&cart));
}

static void test_session(int* size) {
  MPI_Session s;
  CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
  int n = 0, len = 0;
  CHECK_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
  CHECK(n == 2, "%d process sets", n);
  CHECK_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, NULL));
  char name[MPI_MAX_PSET_NAME_LEN];
  CHECK(len == 12, "pset 0 length %d", len);
  CHECK_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &len, name));
  CHECK(!strcmp(name, "mpi://WORLD"), "pset 0 is '%s'", name);
  MPI_Group g;
  MPI_Comm comm;
  CHECK_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
  CHECK_OK(MPI_Comm_create_from_group(g, "nicq.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm));
  MPI_Comm_rank(comm, &mp_rank);
  MPI_Comm_size(comm, size);
  int sum = 0, one = 1;
  for (int i = 0; i < 2; ++i) { /* two rounds: the tag sequence of the new comm works */
    int left = (mp_rank + *size - 1) % *size, right = (mp_rank + 1) % *size, got = -1;
    CHECK_OK(MPI_Sendrecv(&mp_rank, 1, MPI_INT, right, i, &got, 1, MPI_INT, left, i, comm,
                          MPI_STATUS_IGNORE));
    CHECK(got == left, "session comm ring got %d want %d", got, left);
    sum += one;
  }
  CHECK(sum == 2, "rounds");
  MPI_Errhandler eh;
  CHECK_OK(MPI_Comm_get_errhandler(comm, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "errhandler of the new comm %d", eh);
  CHECK_OK(MPI_Comm_free(&comm));
  CHECK_OK(MPI_Group_free(&g));
  CHECK_OK(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
  int gs;
  MPI_Group_size(g, &gs);
  CHECK(gs == 1, "mpi://SELF has %d members", gs);
  MPI_Group_free(&g);
  g = MPI_GROUP_NULL;
  mp_expect_class(MPI_Group_from_session_pset(s, "mpi://NOPE", &g), MPI_ERR_ARG,
                  "MPI_Group_from_session_pset");
  CHECK(g == MPI_GROUP_NULL, "unknown pset wrote a group");
  mp_expect_class(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 2, &len, name), MPI_ERR_ARG,
                  "MPI_Session_get_nth_pset");
  CHECK_OK(MPI_Session_finalize(&s));
  CHECK(s == MPI_SESSION_NULL, "session not nulled");
}

static void test_memory_and_types(void) {
  double* p = NULL;
  CHECK_OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &p));
  CHECK(p != NULL && ((size_t)p % 64) == 0, "Alloc_mem %p", (void*)p);
  for (int i = 0; i < 1000; ++i) p[i] = i;
  MPI_Aint a0, a9;
  CHECK_OK(MPI_Get_address(&p[0], &a0));
  CHECK_OK(MPI_Get_address(&p[9], &a9));
  CHECK(MPI_Aint_diff(a9, a0) == 9 * (MPI_Aint)sizeof(double), "Aint_diff");
  CHECK(*(double*)MPI_Aint_add(a0, 9 * sizeof(double)) == 9.0, "Aint_add");
  CHECK_OK(MPI_Free_mem(p));

  int blocks[2] = {1, 2}, ni, na, nt, comb, len;
  MPI_Aint disps[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, st, vec;
  CHECK_OK(MPI_Type_create_struct(2, blocks, disps, types, &st));
  CHECK_OK(MPI_Type_get_envelope(st, &ni, &na, &nt, &comb));
  CHECK(comb == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nt == 2, "struct envelope");
  CHECK_OK(MPI_Type_vector(4, 1, 3, MPI_INT, &vec));
  CHECK_OK(MPI_Type_get_envelope(vec, &ni, &na, &nt, &comb));
  CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nt == 1, "vector envelope");
  CHECK_OK(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nt, &comb));
  CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nt == 0, "named envelope");
  char name[MPI_MAX_OBJECT_NAME];
  CHECK_OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
  CHECK(!strcmp(name, "MPI_DOUBLE") && len == 10, "MPI_DOUBLE is named '%s'", name);
  CHECK_OK(MPI_Type_get_name(vec, name, &len));
  CHECK(len == 0, "a new type is named '%s'", name);
  CHECK_OK(MPI_Type_set_name(vec, "column"));
  CHECK_OK(MPI_Type_get_name(vec, name, &len));
  CHECK(!strcmp(name, "column") && len == 6, "set_name gave '%s'", name);
  MPI_Type_free(&st);
  MPI_Type_free(&vec);
}

int main(int argc, char** argv) {
  int size = 0;
  if (argc > 1 && !strcmp(argv[1], "session-only")) {
    test_session(&size);
    int finalized = 0;
    MPI_Finalized(&finalized);
    CHECK(finalized, "the last session's finalize did not finalize the runtime");
    if (mp_rank == 0) printf("sessions-only OK: %d ranks\n", size);
    return 0;
  }
  CHECK_OK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &mp_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_dims();
  test_cart(size);
  test_memory_and_types();
  test_session(&size);
  mp_barrier(MPI_COMM_WORLD);
  if (mp_rank == 0) printf("topologies and sessions OK: %d ranks\n", size);
  CHECK_OK(MPI_Finalize());
  return 0;
}
