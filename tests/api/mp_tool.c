/* The tool information interface (MPI_T): nested initialisation before
 * MPI_Init, every NICQ_* control variable read back as the environment sets
 * it (and refused a write), the "nicq" category, performance variables that
 * follow the requests, communicators and errors of this process, sessions
 * and handles and their errors, and no events. */
#include <limits.h>
#include <stdint.h>

#include "mp_check.h"

#define T_EXPECT(call, want)                                                         \
  do {                                                                               \
    int rc_ = (call);                                                                \
    CHECK(rc_ == (want), "%s returned %d, want %d (%s)", #call, rc_, (want), #want); \
  } while (0)

/* Every control variable: its name and index agree both ways; strings come
 * back as the MPI_T rules for string arguments say. */
static int check_cvar_names(void) {
  int num = -1;
  T_EXPECT(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
  CHECK(num > 10, "only %d control variables", num);
  for (int i = 0; i < num; ++i) {
    char name[128], desc[1024];
    int name_len = 0, desc_len = sizeof desc, verbosity = -1, bind = -1, scope = -1;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_T_enum en = (MPI_T_enum)&num;
    T_EXPECT(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &en, desc, &desc_len, &bind,
                                 &scope),
             MPI_SUCCESS);
    CHECK(name_len > 6, "cvar %d: length %d asked with 0", i, name_len);
    int need = name_len;
    name_len = sizeof name;
    T_EXPECT(MPI_T_cvar_get_info(i, name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_SUCCESS);
    CHECK(name_len == need && (int)strlen(name) + 1 == need, "cvar %d: %s, len %d need %d", i, name,
          name_len, need);
    CHECK(strncmp(name, "NICQ_", 5) == 0, "cvar %d is %s", i, name);
    CHECK(desc_len > 1 && (int)strlen(desc) + 1 == desc_len, "cvar %s: no description", name);
    CHECK(type == MPI_INT || type == MPI_CHAR, "cvar %s: datatype", name);
    CHECK(en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT && scope == MPI_T_SCOPE_READONLY,
          "cvar %s: enum/bind/scope", name);
    CHECK(verbosity >= MPI_T_VERBOSITY_USER_BASIC && verbosity <= MPI_T_VERBOSITY_MPIDEV_ALL,
          "cvar %s: verbosity %d", name, verbosity);
    int index = -1;
    T_EXPECT(MPI_T_cvar_get_index(name, &index), MPI_SUCCESS);
    CHECK(index == i, "cvar %s: index %d, want %d", name, index, i);
  }
  /* A buffer shorter than the name: truncated, terminated, length written. */
  char small[5];
  int small_len = sizeof small;
  T_EXPECT(MPI_T_cvar_get_info(0, small, &small_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_SUCCESS);
  CHECK(small_len == 5 && strcmp(small, "NICQ") == 0, "truncated name '%s' len %d", small,
        small_len);
  int index = 7;
  T_EXPECT(MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
  T_EXPECT(MPI_T_cvar_get_index("NICQ_NO_SUCH_VARIABLE", &index), MPI_T_ERR_INVALID_NAME);
  CHECK(index == 7, "a failed lookup wrote the index");
  return num;
}

static void check_cvar_values(void) {
  int index = -1, count = -1, value = -5;
  MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
  /* nicqrun sets NICQ_RANK: an integer variable reads as this rank. */
  T_EXPECT(MPI_T_cvar_get_index("NICQ_RANK", &index), MPI_SUCCESS);
  T_EXPECT(MPI_T_cvar_handle_alloc(index, NULL, &h, &count), MPI_SUCCESS);
  CHECK(count == 1 && h != MPI_T_CVAR_HANDLE_NULL, "NICQ_RANK handle count %d", count);
  T_EXPECT(MPI_T_cvar_read(h, &value), MPI_SUCCESS);
  CHECK(value == mp_rank, "NICQ_RANK reads %d on rank %d", value, mp_rank);
  int other = value + 1;
  T_EXPECT(MPI_T_cvar_write(h, &other), MPI_T_ERR_CVAR_SET_NEVER);
  T_EXPECT(MPI_T_cvar_read(h, &value), MPI_SUCCESS);
  CHECK(value == mp_rank, "a refused write changed NICQ_RANK to %d", value);
  T_EXPECT(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
  CHECK(h == MPI_T_CVAR_HANDLE_NULL, "freed handle not nulled");
  T_EXPECT(MPI_T_cvar_handle_free(&h), MPI_T_ERR_INVALID_HANDLE);

  /* A string variable: the environment's value, else the default "auto". */
  T_EXPECT(MPI_T_cvar_get_index("NICQ_PROVIDER", &index), MPI_SUCCESS);
  T_EXPECT(MPI_T_cvar_handle_alloc(index, NULL, &h, &count), MPI_SUCCESS);
  CHECK(count >= 256, "string cvar count %d", count);
  char* text = malloc((size_t)count);
  T_EXPECT(MPI_T_cvar_read(h, text), MPI_SUCCESS);
  const char* env = getenv("NICQ_PROVIDER");
  CHECK(strcmp(text, env ? env : "auto") == 0, "NICQ_PROVIDER reads '%s', env '%s'", text,
        env ? env : "(unset)");
  free(text);
  T_EXPECT(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
  T_EXPECT(MPI_T_cvar_handle_alloc(-1, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
}

static void check_category(int num_cvars) {
  int num = -1, cat = -1, nc = -1, np = -1, nsub = -1;
  char name[32];
  int len = sizeof name;
  T_EXPECT(MPI_T_category_get_num(&num), MPI_SUCCESS);
  CHECK(num == 1, "%d categories", num);
  T_EXPECT(MPI_T_category_get_index("nicq", &cat), MPI_SUCCESS);
  T_EXPECT(MPI_T_category_get_info(cat, name, &len, NULL, NULL, &nc, &np, &nsub), MPI_SUCCESS);
  CHECK(strcmp(name, "nicq") == 0 && nc == num_cvars && np == 3 && nsub == 0,
        "category %s: %d cvars %d pvars %d subcategories", name, nc, np, nsub);
  int* idx = malloc(sizeof(int) * (size_t)nc);
  T_EXPECT(MPI_T_category_get_cvars(cat, nc, idx), MPI_SUCCESS);
  for (int i = 0; i < nc; ++i) CHECK(idx[i] == i, "category cvar %d is %d", i, idx[i]);
  free(idx);
  T_EXPECT(MPI_T_category_get_index("mpi", &cat), MPI_T_ERR_INVALID_NAME);
  T_EXPECT(MPI_T_category_get_info(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
}

static unsigned long long read_pvar(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  unsigned long long v = ~0ull;
  T_EXPECT(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
  return v;
}

static MPI_T_pvar_handle pvar_handle(MPI_T_pvar_session s, const char* name, int var_class) {
  int index = -1, count = -1;
  MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
  T_EXPECT(MPI_T_pvar_get_index(name, var_class, &index), MPI_SUCCESS);
  int continuous = -1, readonly = -1;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  T_EXPECT(MPI_T_pvar_get_info(index, NULL, NULL, NULL, NULL, &type, NULL, NULL, NULL, NULL,
                               &readonly, &continuous, NULL),
           MPI_SUCCESS);
  CHECK(type == MPI_UNSIGNED_LONG_LONG && continuous == 1 && readonly == 1, "pvar %s info", name);
  T_EXPECT(MPI_T_pvar_handle_alloc(s, index, NULL, &h, &count), MPI_SUCCESS);
  CHECK(count == 1, "pvar %s count %d", name, count);
  return h;
}

static void check_pvars(void) {
  int num = -1, index = -1;
  T_EXPECT(MPI_T_pvar_get_num(&num), MPI_SUCCESS);
  CHECK(num == 3, "%d performance variables", num);
  T_EXPECT(MPI_T_pvar_get_index("nicq_requests_in_use", MPI_T_PVAR_CLASS_COUNTER, &index),
           MPI_T_ERR_INVALID_NAME);
  MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL;
  T_EXPECT(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
  MPI_T_pvar_handle requests = pvar_handle(s, "nicq_requests_in_use", MPI_T_PVAR_CLASS_LEVEL);
  MPI_T_pvar_handle comms = pvar_handle(s, "nicq_communicators_in_use", MPI_T_PVAR_CLASS_LEVEL);
  MPI_T_pvar_handle errors = pvar_handle(s, "nicq_errors_returned", MPI_T_PVAR_CLASS_COUNTER);

  /* Requests: two pending receives more, then as many fewer. */
  unsigned long long r0 = read_pvar(s, requests);
  int buf[2];
  MPI_Request rq[2];
  CHECK_OK(MPI_Irecv(&buf[0], 1, MPI_INT, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &rq[0]));
  CHECK_OK(MPI_Irecv(&buf[1], 1, MPI_INT, MPI_ANY_SOURCE, 78, MPI_COMM_WORLD, &rq[1]));
  CHECK(read_pvar(s, requests) == r0 + 2, "requests %llu after 2 receives, %llu before",
        read_pvar(s, requests), r0);
  for (int i = 0; i < 2; ++i) {
    CHECK_OK(MPI_Cancel(&rq[i]));
    CHECK_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
  }
  CHECK(read_pvar(s, requests) == r0, "requests %llu after the waits, %llu before",
        read_pvar(s, requests), r0);

  /* Communicators: world and self at least, one more per dup. */
  unsigned long long c0 = read_pvar(s, comms);
  CHECK(c0 >= 2, "%llu communicators", c0);
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK(read_pvar(s, comms) == c0 + 1, "communicators after a dup: %llu", read_pvar(s, comms));
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK(read_pvar(s, comms) == c0, "communicators after the free: %llu", read_pvar(s, comms));

  /* Errors: counted from the handle's allocation, two returned errors. */
  CHECK(read_pvar(s, errors) == 0, "errors %llu at start", read_pvar(s, errors));
  int x = 0, size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(MPI_Send(&x, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD) != MPI_SUCCESS, "bad rank sent");
  CHECK(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD) != MPI_SUCCESS, "bad count sent");
  CHECK(read_pvar(s, errors) == 2, "errors %llu after two", read_pvar(s, errors));

  /* Continuous and read-only: no start, stop, write or reset of one handle;
   * all handles at once have nothing to do. */
  unsigned long long v = 9;
  T_EXPECT(MPI_T_pvar_start(s, errors), MPI_T_ERR_PVAR_NO_STARTSTOP);
  T_EXPECT(MPI_T_pvar_stop(s, errors), MPI_T_ERR_PVAR_NO_STARTSTOP);
  T_EXPECT(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
  T_EXPECT(MPI_T_pvar_write(s, errors, &v), MPI_T_ERR_PVAR_NO_WRITE);
  T_EXPECT(MPI_T_pvar_reset(s, errors), MPI_T_ERR_PVAR_NO_WRITE);
  T_EXPECT(MPI_T_pvar_readreset(s, errors, &v), MPI_T_ERR_PVAR_NO_WRITE);
  CHECK(v == 9 && read_pvar(s, errors) == 2, "a refused call changed a value");
  T_EXPECT(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);

  /* Handles belong to their session. */
  MPI_T_pvar_session other = MPI_T_PVAR_SESSION_NULL;
  T_EXPECT(MPI_T_pvar_session_create(&other), MPI_SUCCESS);
  T_EXPECT(MPI_T_pvar_read(other, errors, &v), MPI_T_ERR_INVALID_HANDLE);
  T_EXPECT(MPI_T_pvar_handle_free(other, &errors), MPI_T_ERR_INVALID_HANDLE);
  T_EXPECT(MPI_T_pvar_session_free(&other), MPI_SUCCESS);
  CHECK(other == MPI_T_PVAR_SESSION_NULL, "freed session not nulled");
  T_EXPECT(MPI_T_pvar_read(other, errors, &v), MPI_T_ERR_INVALID_SESSION);
  T_EXPECT(MPI_T_pvar_handle_free(s, &errors), MPI_SUCCESS);
  CHECK(errors == MPI_T_PVAR_HANDLE_NULL, "freed pvar handle not nulled");
  T_EXPECT(MPI_T_pvar_session_free(&s), MPI_SUCCESS); /* frees the other two handles */
  (void)requests, (void)comms;
}

static void check_events(void) {
  int num = -1, index = -1;
  T_EXPECT(MPI_T_event_get_num(&num), MPI_SUCCESS);
  CHECK(num == 0, "%d events", num);
  T_EXPECT(MPI_T_source_get_num(&num), MPI_SUCCESS);
  CHECK(num == 0, "%d event sources", num);
  T_EXPECT(MPI_T_event_get_index("nicq_event", &index), MPI_T_ERR_INVALID_NAME);
  MPI_T_event_registration reg;
  T_EXPECT(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
}

int main(int argc, char** argv) {
  const char* rank_env = getenv("NICQ_RANK");
  mp_rank = rank_env ? atoi(rank_env) : 0;
  int provided = -1, num = -1;
  /* Before MPI_Init, nested, any thread level. */
  T_EXPECT(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
  T_EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  T_EXPECT(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), MPI_SUCCESS);
  CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
  T_EXPECT(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
  int num_cvars = check_cvar_names();
  T_EXPECT(MPI_T_finalize(), MPI_SUCCESS);
  T_EXPECT(MPI_T_cvar_get_num(&num), MPI_SUCCESS); /* still one init open */

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &mp_rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check_cvar_values();
  check_category(num_cvars);
  check_pvars();
  check_events();

  /* The classes are classes, with their own text; user classes stay apart. */
  int cls = -1, len = 0;
  char msg[MPI_MAX_ERROR_STRING];
  CHECK_OK(MPI_Error_class(MPI_T_ERR_INVALID_HANDLE, &cls));
  CHECK(cls == MPI_T_ERR_INVALID_HANDLE, "class of MPI_T_ERR_INVALID_HANDLE is %d", cls);
  CHECK_OK(MPI_Error_string(MPI_T_ERR_CVAR_SET_NEVER, msg, &len));
  CHECK(strstr(msg, "MPI_T_ERR_CVAR_SET_NEVER") != NULL, "string '%s'", msg);
  CHECK_OK(MPI_Add_error_class(&cls));
  CHECK(cls > MPI_T_ERR_NOT_ACCESSIBLE || cls < MPI_T_ERR_MEMORY, "user class %d", cls);

  /* A handle outlives nothing: after the last MPI_T_finalize every call is
   * refused. */
  MPI_T_pvar_session s;
  T_EXPECT(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
  T_EXPECT(MPI_T_finalize(), MPI_SUCCESS);
  T_EXPECT(MPI_T_pvar_session_free(&s), MPI_T_ERR_NOT_INITIALIZED);
  T_EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
  /* And it starts again. */
  T_EXPECT(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided), MPI_SUCCESS);
  T_EXPECT(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
  CHECK(num == num_cvars, "%d cvars after a restart, %d before", num, num_cvars);
  T_EXPECT(MPI_T_finalize(), MPI_SUCCESS);

  mp_barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  if (mp_rank == 0) printf("mp_tool: ok\n");
  return 0;
}
