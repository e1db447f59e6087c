/* MPI_Intercomm_create when one group's leader refuses its arguments: no
 * rank may hang. The refusing group fails with the leader's class (it
 * travels to the members); the other group's leader, waiting for a
 * meeting that never comes, gives up after NICQ_INTERCOMM_TIMEOUT seconds
 * (the test sets a few) and its whole group fails too. Afterwards, with
 * nothing left over from the failed call, a correct creation works.
 * Both groups use MPI_ERRORS_RETURN; every rank checks its class and
 * that newintercomm stayed MPI_COMM_NULL.
 *
 * With "deadpeer split|merge|dup": the last world rank exits (no
 * MPI_Finalize) while every other rank calls MPI_Comm_split,
 * MPI_Intercomm_merge or MPI_Comm_dup on an intercommunicator of the two
 * halves. Each must return MPI_ERR_PROC_FAILED (found once a wait passes
 * NICQ_PEER_TIMEOUT) with a message naming the call and either the failed
 * rank or its own leader, whose call failed, and print
 * INTERCOMM-DEADPEER-OK. */
#include <unistd.h>

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

/* Whether a "world rank N" or "world ranks N, M, ..." in msg lists `w` (the
 * survivors that finish first may be listed too: they exit). */
static int names_world_rank(const char* msg, int w) {
  for (const char* at = strstr(msg, "world rank"); at; at = strstr(at + 1, "world rank")) {
    const char* p = at + strlen("world rank");
    if (*p == 's') ++p;
    for (;;) {
      char* end;
      const long r = strtol(p, &end, 10);
      if (end == p) break;
      if (r == w) return 1;
      if (strncmp(end, ", ", 2) != 0) break;
      p = end + 2;
    }
  }
  return 0;
}

static void dead_peer(MPI_Comm local, int color, int remote_leader, const char* call) {
  MPI_Comm ic, out = MPI_COMM_NULL;
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 34, &ic));
  MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
  const int victim = world_size - 1;
  int go = 1;
  if (world_rank == victim) {
    /* Every other rank has its intercommunicator: leave without a word. */
    for (int r = 0; r < victim; ++r)
      CHECK_OK(MPI_Recv(&go, 1, MPI_INT, r, 35, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    _exit(0);
  }
  CHECK_OK(MPI_Send(&go, 1, MPI_INT, victim, 35, MPI_COMM_WORLD));
  int rc;
  const char* name;
  if (strcmp(call, "split") == 0) {
    name = "MPI_Comm_split";
    rc = MPI_Comm_split(ic, 0, world_rank, &out);
  } else if (strcmp(call, "merge") == 0) {
    name = "MPI_Intercomm_merge";
    rc = MPI_Intercomm_merge(ic, color, &out);
  } else {
    name = "MPI_Comm_dup";
    rc = MPI_Comm_dup(ic, &out);
  }
  CHECK(error_class(rc) == MPI_ERR_PROC_FAILED, "%s with a dead peer: class %d (rc %d)", name,
        error_class(rc), rc);
  CHECK(out == MPI_COMM_NULL, "%s set its output on a failed call", name);
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  CHECK(strstr(msg, name) != NULL, "the message '%s' does not name %s", msg, name);
  /* A survivor that got its error first exits: a slower one may then find
   * that peer gone instead ("send to rank N which has failed"). */
  CHECK(names_world_rank(msg, victim) || strstr(msg, "the local leader") != NULL ||
            strstr(msg, "which has failed") != NULL,
        "the message '%s' names neither world rank %d, the local leader nor a failed rank", msg,
        victim);
  /* The message speaks of the MPI call, not of nicq's internal functions. */
  CHECK(strstr(msg, "CommSplit") == NULL && strstr(msg, "CommDup") == NULL,
        "the message '%s' names an internal function", msg);
  printf("INTERCOMM-DEADPEER-OK: world rank %d: %s\n", world_rank, msg);
  fflush(stdout);
  _exit(0); /* MPI_Finalize would wait for the dead rank */
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
  if (argc > 2 && strcmp(argv[1], "deadpeer") == 0) dead_peer(local, color, remote_leader, argv[2]);
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
