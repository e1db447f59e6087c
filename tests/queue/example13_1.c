/* Example 13.1 of the draft Queued Communication chapter, verbatim (only
 * this comment added). It passes MPI_Queue by value to the enqueue calls
 * and MPI_Queue_fence, which nicq accepts through C11 _Generic. */
#include "mpi.h"
#define N    1024
#define NITER 100

int main(int argc, char *argv[])
{
    int rank, size, left, right;
    double send_left[N], send_right[N];
    double recv_left[N], recv_right[N];
    MPI_Queue queue;
    MPI_Request reqs[4];
    MPI_Status  statuses[4];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Determine neighbors in a 1-D ring topology */
    left = (rank - 1 + size) % size;
    right = (rank + 1) % size;

    /* Initialize a queue. A system-specific type and external execution
     * context can be used if available. */
    MPI_Queue_init(&queue, MPI_QUEUE_TYPE_DEFAULT, NULL);

    /* Create persistent send and receive requests for ring exchange */
    MPI_Recv_init(recv_left, N, MPI_DOUBLE, left, 0,
                MPI_COMM_WORLD, &reqs[0]);
    MPI_Recv_init(recv_right, N, MPI_DOUBLE, right, 0,
                MPI_COMM_WORLD, &reqs[1]);
    MPI_Send_init(send_left, N, MPI_DOUBLE, left, 0,
                MPI_COMM_WORLD, &reqs[2]);
    MPI_Send_init(send_right, N, MPI_DOUBLE, right, 0,
                MPI_COMM_WORLD, &reqs[3]);

    /* Match all requests once, removing per-iteration tag matching and
      buffer negotiation from the communication critical path */
    MPI_Matchall(4, reqs);

    /* Enqueue the data exchange operations each iteration */
    for (int iter = 0; iter < NITER; iter++) {
        MPI_Enqueue_startall(queue, 2, &reqs[0]);

        /* Schedule iteration work needed prior to sending
         * (e.g., packing send buffers) here */
        MPI_Enqueue_startall(queue, 2, &reqs[2]);

        /* Schedule work overlapped with communication here */

        /* Enqueue waits for all sends and receives to complete */
        MPI_Enqueue_waitall(queue, 4, reqs, statuses);

        /* Schedule work that depends on the results of the receive
         * (e.g., unpacking receive buffers) here */
    }

    /* Block until all enqueued communication operations complete */
    MPI_Queue_fence(queue);

    /* Free requests and the queue */
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&reqs[i]);
    MPI_Queue_free(&queue);

    MPI_Finalize();
    return 0;
}
