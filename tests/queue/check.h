/* Shared by the queue tests: fail loudly with the rank and the MPI message. */
#ifndef NICQ_QUEUE_TEST_CHECK_H
#define NICQ_QUEUE_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#include "mpi.h"

static int qt_rank = -1;

#define QT_FAIL(...)                                                   \
  do {                                                                 \
    fprintf(stderr, "[rank %d] %s:%d: ", qt_rank, __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                                      \
    fprintf(stderr, "\n");                                             \
    fflush(stderr);                                                    \
    MPI_Abort(MPI_COMM_WORLD, 1);                                      \
  } while (0)

#define QT_OK(call)                                \
  do {                                             \
    int qt_rc_ = (call);                           \
    if (qt_rc_ != MPI_SUCCESS) {                   \
      char qt_msg_[512];                           \
      int qt_len_ = 0;                             \
      MPI_Error_string(qt_rc_, qt_msg_, &qt_len_); \
      QT_FAIL("%s failed: %s", #call, qt_msg_);    \
    }                                              \
  } while (0)

#define QT_CHECK(cond, ...)            \
  do {                                 \
    if (!(cond)) QT_FAIL(__VA_ARGS__); \
  } while (0)

/* The call must fail with error class `cls`. */
#define QT_ERR(cls, call)                                                              \
  do {                                                                                 \
    int qt_rc_ = (call), qt_cls_ = -1;                                                 \
    if (qt_rc_ == MPI_SUCCESS) QT_FAIL("%s succeeded; expected class %d", #call, cls); \
    MPI_Error_class(qt_rc_, &qt_cls_);                                                 \
    if (qt_cls_ != (cls)) {                                                            \
      char qt_msg_[512];                                                               \
      int qt_len_ = 0;                                                                 \
      MPI_Error_string(qt_rc_, qt_msg_, &qt_len_);                                     \
      QT_FAIL("%s: class %d, expected %d (%s)", #call, qt_cls_, cls, qt_msg_);         \
    }                                                                                  \
  } while (0)

#endif
