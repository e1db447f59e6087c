// Example 13.1 compiled as C++: the by-value MPI_Queue spelling resolves to
// the C++ overloads of include/nicq/mpi_queue.h.
#include "example13_1.c"
