/* Helpers for the API layer's multi-process test programs (C11, MPI only).
 * CHECK aborts the whole job with a message naming rank, file and line, so a
 * failed check never leaves peers waiting. */
#ifndef NICQ_TESTS_API_MP_CHECK_H
#define NICQ_TESTS_API_MP_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mp_rank = -1;

#define CHECK(cond, ...)                                                                         \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", mp_rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                              \
      fputc('\n', stderr);                                                                       \
      fflush(stderr);                                                                            \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                              \
    }                                                                                            \
  } while (0)

#define CHECK_OK(call)                                                   \
  do {                                                                   \
    int rc_ = (call);                                                    \
    if (rc_ != MPI_SUCCESS) {                                            \
      char msg_[MPI_MAX_ERROR_STRING];                                   \
      int len_ = 0;                                                      \
      MPI_Error_string(rc_, msg_, &len_);                                \
      CHECK(rc_ == MPI_SUCCESS, "%s returned %d: %s", #call, rc_, msg_); \
    }                                                                    \
  } while (0)

/* Barrier from point-to-point (collectives are another layer's work): a tag
 * no test uses, gathered at rank 0 and released from there. */
#define MP_BARRIER_TAG 32000
static inline void mp_barrier(MPI_Comm comm) {
  int rank, size, token = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank == 0) {
    for (int i = 1; i < size; ++i)
      CHECK_OK(MPI_Recv(&token, 1, MPI_INT, i, MP_BARRIER_TAG, comm, MPI_STATUS_IGNORE));
    for (int i = 1; i < size; ++i) CHECK_OK(MPI_Send(&token, 1, MPI_INT, i, MP_BARRIER_TAG, comm));
  } else {
    CHECK_OK(MPI_Send(&token, 1, MPI_INT, 0, MP_BARRIER_TAG, comm));
    CHECK_OK(MPI_Recv(&token, 1, MPI_INT, 0, MP_BARRIER_TAG, comm, MPI_STATUS_IGNORE));
  }
}

/* The byte at position i of message `seq` of length n: varies with all three. */
static inline unsigned char mp_pattern(size_t i, size_t n, int seq) {
  return (unsigned char)(i * 131u + n * 7u + (unsigned)seq * 29u + 1u);
}

static inline void mp_fill(unsigned char* buf, size_t n, int seq) {
  for (size_t i = 0; i < n; ++i) buf[i] = mp_pattern(i, n, seq);
}

static inline void mp_verify(const unsigned char* buf, size_t n, int seq, const char* what) {
  for (size_t i = 0; i < n; ++i)
    CHECK(buf[i] == mp_pattern(i, n, seq), "%s: %zu-byte message %d: byte %zu is %u, expected %u",
          what, n, seq, i, buf[i], mp_pattern(i, n, seq));
}

/* `rc` is of MPI error class `cls` and its message names the call `name`. */
static inline void mp_expect_class(int rc, int cls, const char* name) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0, got = -1;
  MPI_Error_class(rc, &got);
  MPI_Error_string(rc, msg, &len);
  CHECK(got == cls, "%s: class %d, expected %d (%s)", name, got, cls, msg);
  CHECK(strstr(msg, name) != NULL, "%s: message does not name the call: %s", name, msg);
}

/* The integer value of window info key `key`, or -1 when the window has
 * no such key. */
static inline long long mp_win_info_value(MPI_Win win, const char* key) {
  MPI_Info info;
  CHECK_OK(MPI_Win_get_info(win, &info));
  char value[64] = "";
  int flag = 0;
  CHECK_OK(MPI_Info_get(info, key, sizeof value - 1, value, &flag));
  CHECK_OK(MPI_Info_free(&info));
  return flag ? atoll(value) : -1;
}

static inline void mp_init(int* argc, char*** argv, int* rank, int* size) {
  CHECK_OK(MPI_Init(argc, argv));
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  mp_rank = *rank;
}

/* The node structure as the library reports it (MPI_Get_processor_name,
 * which virtual nodes, NICQ_NODE_RANKS, change too): whether world rank
 * `w` shares this rank's node, for w in [0, size). size <= 64. */
static inline void mp_node_mates(int size, int mates[64]) {
  char mine[MPI_MAX_PROCESSOR_NAME] = "";
  static char all[64][MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  CHECK(size <= 64, "mp_node_mates: at most 64 ranks");
  CHECK(MPI_Get_processor_name(mine, &len) == MPI_SUCCESS, "MPI_Get_processor_name failed");
  CHECK(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                      MPI_COMM_WORLD) == MPI_SUCCESS,
        "mp_node_mates: allgather failed");
  for (int w = 0; w < size; ++w) mates[w] = strcmp(all[w], mine) == 0;
}

/* Checks that `node` holds exactly this rank's node mates, ordered by
 * descending world rank (the tests split with a key that falls with it). */
static inline void mp_check_node_comm(MPI_Comm node, int size, const char* what) {
  int mates[64], count = 0, above = 0, n = -1, r = -1;
  mp_node_mates(size, mates);
  for (int w = 0; w < size; ++w) {
    count += mates[w];
    above += mates[w] && w > mp_rank;
  }
  MPI_Comm_size(node, &n);
  MPI_Comm_rank(node, &r);
  CHECK(n == count && r == above, "%s: rank %d size %d, want rank %d size %d (node mates)", what, r,
        n, above, count);
  MPI_Group g, world;
  int in_node[64], in_world[64];
  MPI_Comm_group(node, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  for (int i = 0; i < n; ++i) in_node[i] = i;
  MPI_Group_translate_ranks(g, n, in_node, world, in_world);
  for (int i = 0; i < n; ++i)
    CHECK(in_world[i] >= 0 && in_world[i] < size && mates[in_world[i]],
          "%s: member %d is world rank %d, not on this node", what, i, in_world[i]);
  MPI_Group_free(&g);
  MPI_Group_free(&world);
}

#endif
