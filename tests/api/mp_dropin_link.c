/* Drop-in surface: every entry point that benchmark and test suites link
 * against exists in mpi.h and in libnicq (the table below must link), and
 * each one nicq does not implement returns MPI_ERR_UNSUPPORTED_OPERATION
 * under MPI_ERRORS_RETURN, with the call's name in MPI_Error_string's text,
 * leaving its outputs untouched. */
#include "mp_check.h"

struct entry {
  const char* name;
  void (*fn)(void);
};

/* Taking each address makes the linker resolve it from libnicq. */
static const struct entry linked[] = {
    {"MPI_Session_init", (void (*)(void))MPI_Session_init},
    {"MPI_Session_finalize", (void (*)(void))MPI_Session_finalize},
    {"MPI_Session_get_num_psets", (void (*)(void))MPI_Session_get_num_psets},
    {"MPI_Session_get_nth_pset", (void (*)(void))MPI_Session_get_nth_pset},
    {"MPI_Group_from_session_pset", (void (*)(void))MPI_Group_from_session_pset},
    {"MPI_Comm_create_from_group", (void (*)(void))MPI_Comm_create_from_group},
    {"MPI_Group_free", (void (*)(void))MPI_Group_free},
    {"MPI_Group_excl", (void (*)(void))MPI_Group_excl},
    {"MPI_Group_range_incl", (void (*)(void))MPI_Group_range_incl},
    {"MPI_Group_range_excl", (void (*)(void))MPI_Group_range_excl},
    {"MPI_Group_incl", (void (*)(void))MPI_Group_incl},
    {"MPI_Group_translate_ranks", (void (*)(void))MPI_Group_translate_ranks},
    {"MPI_Group_union", (void (*)(void))MPI_Group_union},
    {"MPI_Group_intersection", (void (*)(void))MPI_Group_intersection},
    {"MPI_Group_difference", (void (*)(void))MPI_Group_difference},
    {"MPI_Group_compare", (void (*)(void))MPI_Group_compare},
    {"MPI_Comm_group", (void (*)(void))MPI_Comm_group},
    {"MPI_Comm_create", (void (*)(void))MPI_Comm_create},
    {"MPI_Comm_create_group", (void (*)(void))MPI_Comm_create_group},
    {"MPI_Comm_get_name", (void (*)(void))MPI_Comm_get_name},
    {"MPI_Comm_set_name", (void (*)(void))MPI_Comm_set_name},
    {"MPI_Comm_get_attr", (void (*)(void))MPI_Comm_get_attr},
    {"MPI_Comm_set_attr", (void (*)(void))MPI_Comm_set_attr},
    {"MPI_Comm_delete_attr", (void (*)(void))MPI_Comm_delete_attr},
    {"MPI_Comm_test_inter", (void (*)(void))MPI_Comm_test_inter},
    {"MPI_Comm_remote_size", (void (*)(void))MPI_Comm_remote_size},
    {"MPI_Comm_create_keyval", (void (*)(void))MPI_Comm_create_keyval},
    {"MPI_Comm_free_keyval", (void (*)(void))MPI_Comm_free_keyval},
    {"MPI_Intercomm_create", (void (*)(void))MPI_Intercomm_create},
    {"MPI_Intercomm_merge", (void (*)(void))MPI_Intercomm_merge},
    {"MPI_Intercomm_create_from_groups", (void (*)(void))MPI_Intercomm_create_from_groups},
    {"MPI_Comm_remote_group", (void (*)(void))MPI_Comm_remote_group},
    {"MPI_Type_indexed", (void (*)(void))MPI_Type_indexed},
    {"MPI_Type_create_struct", (void (*)(void))MPI_Type_create_struct},
    {"MPI_Type_create_resized", (void (*)(void))MPI_Type_create_resized},
    {"MPI_Type_get_name", (void (*)(void))MPI_Type_get_name},
    {"MPI_Type_set_name", (void (*)(void))MPI_Type_set_name},
    {"MPI_Type_get_envelope", (void (*)(void))MPI_Type_get_envelope},
    {"MPI_Get_address", (void (*)(void))MPI_Get_address},
    {"MPI_Aint_add", (void (*)(void))MPI_Aint_add},
    {"MPI_Aint_diff", (void (*)(void))MPI_Aint_diff},
    {"MPI_Alloc_mem", (void (*)(void))MPI_Alloc_mem},
    {"MPI_Free_mem", (void (*)(void))MPI_Free_mem},
    {"MPI_Cart_create", (void (*)(void))MPI_Cart_create},
    {"MPI_Cart_coords", (void (*)(void))MPI_Cart_coords},
    {"MPI_Cart_rank", (void (*)(void))MPI_Cart_rank},
    {"MPI_Cart_shift", (void (*)(void))MPI_Cart_shift},
    {"MPI_Cart_get", (void (*)(void))MPI_Cart_get},
    {"MPI_Cartdim_get", (void (*)(void))MPI_Cartdim_get},
    {"MPI_Cart_sub", (void (*)(void))MPI_Cart_sub},
    {"MPI_Topo_test", (void (*)(void))MPI_Topo_test},
    {"MPI_Dims_create", (void (*)(void))MPI_Dims_create},
    {"MPI_Dist_graph_create_adjacent", (void (*)(void))MPI_Dist_graph_create_adjacent},
    {"MPI_Dist_graph_neighbors", (void (*)(void))MPI_Dist_graph_neighbors},
    {"MPI_Win_create", (void (*)(void))MPI_Win_create},
    {"MPI_Win_allocate", (void (*)(void))MPI_Win_allocate},
    {"MPI_Win_create_dynamic", (void (*)(void))MPI_Win_create_dynamic},
    {"MPI_Win_attach", (void (*)(void))MPI_Win_attach},
    {"MPI_Win_free", (void (*)(void))MPI_Win_free},
    {"MPI_Win_create_keyval", (void (*)(void))MPI_Win_create_keyval},
    {"MPI_Win_free_keyval", (void (*)(void))MPI_Win_free_keyval},
    {"MPI_Win_get_attr", (void (*)(void))MPI_Win_get_attr},
    {"MPI_Win_set_attr", (void (*)(void))MPI_Win_set_attr},
    {"MPI_Neighbor_allgather", (void (*)(void))MPI_Neighbor_allgather},
    {"MPI_Ineighbor_allgather", (void (*)(void))MPI_Ineighbor_allgather},
    {"MPI_Neighbor_allgather_init", (void (*)(void))MPI_Neighbor_allgather_init},
    {"MPI_Neighbor_alltoall", (void (*)(void))MPI_Neighbor_alltoall},
    {"MPI_Ineighbor_alltoall", (void (*)(void))MPI_Ineighbor_alltoall},
    {"MPI_Neighbor_alltoall_init", (void (*)(void))MPI_Neighbor_alltoall_init},
    {"MPI_Psend_init", (void (*)(void))MPI_Psend_init},
    {"MPI_Precv_init", (void (*)(void))MPI_Precv_init},
    {"MPI_Pready", (void (*)(void))MPI_Pready},
    {"MPI_Parrived", (void (*)(void))MPI_Parrived},
    {"MPI_COMM_NULL_COPY_FN", (void (*)(void))MPI_COMM_NULL_COPY_FN},
    {"MPI_COMM_DUP_FN", (void (*)(void))MPI_COMM_DUP_FN},
    {"MPI_COMM_NULL_DELETE_FN", (void (*)(void))MPI_COMM_NULL_DELETE_FN}};

static int checked;

#define EXPECT_UNSUPPORTED(call, name) expect_unsupported((call), (name))

static void expect_unsupported(int rc, const char* name) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0, cls = -1;
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, msg, &len);
  CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "%s: class %d (%s)", name, cls, msg);
  CHECK(strstr(msg, name) != NULL, "%s: message does not name the call: %s", name, msg);
  ++checked;
}

int main(int argc, char** argv) {
  CHECK_OK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &mp_rank);
  for (size_t i = 0; i < sizeof linked / sizeof linked[0]; ++i)
    CHECK(linked[i].fn != NULL, "%s did not link", linked[i].name);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request req = MPI_REQUEST_NULL;
  int flag = -5, ints[4] = {0, 0, 0, 0};
  double buf[8];
  /* Topologies and neighborhood collectives are implemented: tests/api/mp_topo_graph.c
   * and tests/coll/mp_neighbor.c check them; one-sided windows tests/rma. */
  /* Partitioned communication is implemented: tests/api/mp_partitioned.c.
   * Dynamic process management is not. */
  char port[MPI_MAX_PORT_NAME] = "";
  EXPECT_UNSUPPORTED(MPI_Open_port(MPI_INFO_NULL, port), "MPI_Open_port");
  EXPECT_UNSUPPORTED(MPI_Comm_join(0, &comm), "MPI_Comm_join");
  EXPECT_UNSUPPORTED(MPI_Comm_spawn("a.out", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                    &comm, MPI_ERRCODES_IGNORE),
                     "MPI_Comm_spawn");
  (void)flag;
  (void)ints;
  (void)buf;
  CHECK(comm == MPI_COMM_NULL && req == MPI_REQUEST_NULL,
        "an unsupported call wrote its output handle");
  if (mp_rank == 0)
    printf("drop-in OK: %zu entry points linked, %d unsupported checked\n",
           sizeof linked / sizeof linked[0], checked);
  CHECK_OK(MPI_Finalize());
  return 0;
}
