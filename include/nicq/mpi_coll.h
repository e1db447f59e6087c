/* nicq: MPI coll entry points (included by mpi.h; do not include directly). */
#ifndef NICQ_MPI_COLL_H_INCLUDED
#define NICQ_MPI_COLL_H_INCLUDED
#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif
#endif
