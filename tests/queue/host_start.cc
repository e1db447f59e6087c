// Matched requests outside queues (13.4): MPI_Start/MPI_Wait on a matched
// request must run the matched data path. Until the API dispatches to
// Request::ops (see docs/queue-semantics.md, "Integration"), this test
// drives the same calls the API will make: ops->start, progress until
// Request::done, ops->complete. Data checked over several epochs, then
// the same requests are used on a queue, then MPI_Start again.
#include <cstdio>
#include <cstring>

#include "api/api_internal.h"
#include "check.h"
#include "queue/match_engine.h"
#include "queue/queue.h"
#include "runtime/runtime.h"

namespace {

void HostStart(MPI_Request h) {
  nicq::api::ApiRequest* r = nicq::api::LookupRequest(h);
  QT_CHECK(r && r->req.ops && r->req.ops->start, "request has no matched ops");
  nicq::Status st = r->req.ops->start(&r->req);
  QT_CHECK(st.ok(), "ops->start: %s", st.message().c_str());
}

void HostWait(MPI_Request h, nicq::RequestStatus* out) {
  nicq::api::ApiRequest* r = nicq::api::LookupRequest(h);
  while (!r->req.IsDone()) {  // what MPI_Wait's loop does once rt::Progress runs the hooks
    nicq::queue::QueueProgress();
    (void)nicq::rt::Progress();
  }
  nicq::Status st = r->req.ops->complete(&r->req);
  QT_CHECK(st.ok(), "ops->complete: %s", st.message().c_str());
  *out = r->req.status;
}

}  // namespace

int main(int argc, char** argv) {
  int rank, size;
  static double s[256], d[256];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  qt_rank = rank;
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  MPI_Request req[2];
  QT_OK(MPI_Recv_init(d, 256, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &req[0]));
  QT_OK(MPI_Send_init(s, 256, MPI_DOUBLE, right, 4, MPI_COMM_WORLD, &req[1]));
  QT_OK(MPI_Matchall(2, req));
  MPI_Queue q;
  QT_OK(MPI_Queue_init(&q, MPI_QUEUE_TYPE_DEFAULT, NULL));
  for (int it = 0; it < 9; ++it) {
    for (int i = 0; i < 256; ++i) s[i] = rank * 1000 + it * 10 + i % 10;
    const bool queued = it % 3 == 1;  // mix host starts and queued epochs
    if (queued) {
      QT_OK(MPI_Enqueue_startall(q, 2, req));
      QT_OK(MPI_Enqueue_waitall(q, 2, req, MPI_STATUSES_IGNORE));
      QT_OK(MPI_Queue_fence(q));
    } else {
      HostStart(req[0]);
      HostStart(req[1]);
      nicq::RequestStatus rs, ss;
      HostWait(req[0], &rs);
      HostWait(req[1], &ss);
      QT_CHECK(rs.source == left && rs.tag == 4 && rs.bytes == sizeof d, "status %d %d %zu",
               rs.source, rs.tag, rs.bytes);
    }
    for (int i = 0; i < 256; ++i)
      QT_CHECK(d[i] == left * 1000 + it * 10 + i % 10, "iter %d d[%d] = %g", it, i, d[i]);
  }
  QT_OK(MPI_Queue_free(&q));
  QT_OK(MPI_Request_free(&req[0]));
  QT_OK(MPI_Request_free(&req[1]));
  MPI_Finalize();
  if (rank == 0) std::printf("host_start: matched requests via ops->start/complete and queues\n");
  return 0;
}
