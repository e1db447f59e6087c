/* MPI_Intercomm_create when one group's leader refuses its arguments: no
 * rank may hang. The refusing group fails with the leader's class (it
 * travels to the members); the other group's leader, waiting for a
 * meeting that never comes, gives up after NICQ_INTERCOMM_TIMEOUT seconds
 * (the test sets a few) and its whole group fails too. Afterwards, with
 * nothing left over from the failed call, a correct creation works.
 * Both groups use MPI_ERRORS_RETURN; every rank checks its class and
 * that newintercomm stayed MPI_COMM_NULL. */
#include "mp_check.h"

static int world_rank, world_size;

static int error_class(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* Group 0 (the lower half) is the refusing one; `how` picks the refusal. */
static void refused_creation(MPI_Comm local, int color, int remote_leader, int how, int tag) {
  MPI_Comm ic = MPI_COMM_NULL;
  int rc;
  if (color == 0) {
    /* how 0: remote_leader out of range; 1: peer_comm MPI_COMM_NULL */
    rc = how == 0 ? MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, world_size + 3, tag, &ic)
                  : MPI_Intercomm_create(local, 0, MPI_COMM_NULL, remote_leader, tag, &ic);
    const int want = how == 0 ? MPI_ERR_RANK : MPI_ERR_COMM;
    CHECK(error_class(rc) == want, "refusing group, case %d: class %d, want %d", how,
          error_class(rc), want);
  } else {
    rc = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, tag, &ic);
    CHECK(error_class(rc) == MPI_ERR_OTHER,
          "the group whose remote leader never came, case %d: class %d (rc %d)", how,
          error_class(rc), rc);
    /* The leader names the remote leader it waited for, the members
     * their own leader. */
    char msg[MPI_MAX_ERROR_STRING], want[64];
    int len = 0, lrank = -1;
    MPI_Comm_rank(local, &lrank);
    MPI_Error_string(rc, msg, &len);
    if (lrank == 0)
      snprintf(want, sizeof want, "remote leader (world rank %d)", remote_leader);
    else
      snprintf(want, sizeof want, "local leader (local rank 0");
    CHECK(strstr(msg, want) != NULL, "case %d: message '%s' does not say '%s'", how, msg, want);
  }
  CHECK(ic == MPI_COMM_NULL, "case %d: newintercomm set on a failed call", how);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  mp_rank = world_rank;
  CHECK(world_size >= 2, "needs 2 ranks or more");
  const int half = world_size / 2;
  const int color = world_rank < half ? 0 : 1;
  const int remote_leader = color == 0 ? half : 0; /* world ranks of the leaders */
  MPI_Comm local;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, color, world_rank, &local));
  MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  refused_creation(local, color, remote_leader, 0, 31);
  refused_creation(local, color, remote_leader, 1, 32);
  /* Nothing of the failed calls is left to match: a good creation works.
   * The refusing group returned at once while the other still waited out
   * its timeout; the barrier keeps that lag out of the next meeting's. */
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Comm ic;
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 33, &ic));
  int rsize = -1;
  CHECK_OK(MPI_Comm_remote_size(ic, &rsize));
  CHECK(rsize == (color == 0 ? world_size - half : half), "remote size %d", rsize);
  int lrank;
  MPI_Comm_rank(local, &lrank);
  int got = -1, mine = 1000 + world_rank;
  const int peer = lrank < rsize ? lrank : 0;
  MPI_Request r[2];
  int n = 0;
  CHECK_OK(MPI_Isend(&mine, 1, MPI_INT, peer, 7, ic, &r[n++]));
  /* Each rank of the smaller side may get several; receive what comes to me. */
  int expected = 0;
  for (int q = 0; q < rsize; ++q) {
    const int lsize = color == 0 ? half : world_size - half;
    if ((q < lsize ? q : 0) == lrank) ++expected;
  }
  for (int i = 0; i < expected; ++i) {
    MPI_Status st;
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 7, ic, &st));
    const int from_world = (color == 0 ? half : 0) + st.MPI_SOURCE;
    CHECK(got == 1000 + from_world, "message %d from remote rank %d", got, st.MPI_SOURCE);
  }
  CHECK_OK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
  CHECK_OK(MPI_Comm_free(&ic));
  CHECK_OK(MPI_Comm_free(&local));
  MPI_Finalize();
  if (world_rank == 0) printf("intercomm_refused: %d ranks ok\n", world_size);
  return 0;
}
