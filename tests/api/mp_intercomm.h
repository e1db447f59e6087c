/* Shared by the intercommunicator test's two files (mp_intercomm.c: the
 * communicators, point-to-point, merge, errors; mp_intercomm_coll.c: the
 * collectives). */
#ifndef NICQ_TESTS_API_MP_INTERCOMM_H
#define NICQ_TESTS_API_MP_INTERCOMM_H

#include "mp_check.h"

enum { kMaxRanks = 64 };

extern int world_rank, world_size;
extern const char* phase; /* what runs now, for failure messages */

/* Per-test context. */
typedef struct {
  MPI_Comm inter;
  int color, r, p, q;               /* my group, local rank, local size, remote size */
  int lw[kMaxRanks], rw[kMaxRanks]; /* world ranks of the local and remote groups */
} Ctx;

static inline int val(int w, int i) {
  return w * 100 + i + 1;
}

/* Runs a collective in form `mode` (0 blocking, 1 nonblocking, 2
 * persistent: init, two starts, free). */
#define COLL(mode, B, NB, INIT, ...)                                   \
  do {                                                                 \
    MPI_Request rq_;                                                   \
    if ((mode) == 0) {                                                 \
      CHECK_OK(B(__VA_ARGS__));                                        \
    } else if ((mode) == 1) {                                          \
      CHECK_OK(NB(__VA_ARGS__, &rq_));                                 \
      CHECK_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                     \
      CHECK(rq_ == MPI_REQUEST_NULL, "%s: request not released", #NB); \
    } else {                                                           \
      CHECK_OK(INIT(__VA_ARGS__, MPI_INFO_NULL, &rq_));                \
      for (int s_ = 0; s_ < 2; ++s_) {                                 \
        CHECK_OK(MPI_Start(&rq_));                                     \
        CHECK_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                   \
      }                                                                \
      CHECK_OK(MPI_Request_free(&rq_));                                \
    }                                                                  \
  } while (0)

/* mp_check.h's rank for CHECK messages is per file: each file sets its own. */
static inline void mp_intercomm_rank(void) {
  mp_rank = world_rank;
}

/* mp_intercomm_coll.c; mode 0 blocking, 1 nonblocking, 2 persistent. */
void check_rooted(const Ctx* c, int mode, int root_group);
void check_all(const Ctx* c, int mode);
void check_noncommutative(const Ctx* c, int mode);
void check_derived(const Ctx* c, int mode);

/* mp_intercomm_args.c: argument errors of every form, nothing changed. */
void check_collective_args(const Ctx* c);

#endif
