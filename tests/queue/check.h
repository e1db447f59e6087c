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

/* MPI_Init, then the communicator of world ranks 0 and 1 that the pair
 * tests run on; every other rank, and a world of one, finalizes and exits 0
 * here. */
static inline MPI_Comm qt_init_pair(int* argc, char*** argv, int* rank) {
  int size;
  MPI_Comm pair;
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = *rank;
  QT_OK(MPI_Comm_split(MPI_COMM_WORLD, *rank < 2 ? 0 : MPI_UNDEFINED, *rank, &pair));
  if (size < 2 || *rank >= 2) {
    MPI_Finalize();
    exit(0);
  }
  return pair;
}

#endif
