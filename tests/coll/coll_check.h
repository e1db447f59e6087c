/* Checks for the multi-process collective tests: every failure names the
 * rank, the line and what differed, then aborts the job (nicqrun reports a
 * nonzero exit). */
#ifndef NICQ_TESTS_COLL_CHECK_H
#define NICQ_TESTS_COLL_CHECK_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int g_rank = -1;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "rank %d %s:%d: ", g_rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      fflush(stderr);                                                 \
      MPI_Abort(MPI_COMM_WORLD, 1);                                   \
    }                                                                 \
  } while (0)

#define CHECK_OK(call)                                  \
  do {                                                  \
    int rc_ = (call);                                   \
    if (rc_ != MPI_SUCCESS) {                           \
      char msg_[MPI_MAX_ERROR_STRING];                  \
      int len_ = 0;                                     \
      MPI_Error_string(rc_, msg_, &len_);               \
      CHECK(0, "%s returned %d: %s", #call, rc_, msg_); \
    }                                                   \
  } while (0)

/* The call must fail with error class `cls` (under MPI_ERRORS_RETURN). */
#define CHECK_ERR(call, cls)                                                          \
  do {                                                                                \
    int rc_ = (call), cls_ = -1;                                                      \
    CHECK(rc_ != MPI_SUCCESS, "%s succeeded; expected an error", #call);              \
    MPI_Error_class(rc_, &cls_);                                                      \
    CHECK(cls_ == (cls), "%s: error class %d, expected %d", #call, cls_, (int)(cls)); \
  } while (0)

#endif
