/* nicq: MPI queue entry points (included by mpi.h; do not include directly). */
#ifndef NICQ_MPI_QUEUE_H_INCLUDED
#define NICQ_MPI_QUEUE_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
