// The calls on an active partitioned epoch: MPI_Pready, MPI_Pready_range,
// MPI_Pready_list (send side, any thread at MPI_THREAD_MULTIPLE) and
// MPI_Parrived (receive side). Each checks every argument before it marks
// anything, so an erroneous call changes nothing. An epoch is active from
// MPI_Start, or from MPI_Enqueue_start until its enqueued wait retires it
// (partitioned_queue.h: readying counts for an enqueued start that has not
// run yet; MPI_Parrived says false until it ran and the data is in).
#include <string>

#include "api/api_internal.h"
#include "api/partitioned.h"
#include "api/partitioned_queue.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::ApiRequest;
using api::Call;
using api::Partitioned;
using api::PartitionedOf;
using api::TryPostSend;
using api::Unpacked;

namespace {

// Messages are built only when a check fails: MPI_Pready* are called once
// per partition and epoch, and building them costs a readied range of 8
// partitions about 9,100 of its 9,900 instructions and allocates
// (performance.md, Run 62).
template <typename Msg>
bool Ensure(Call& c, bool ok, Code cls, Msg&& msg) {
  return ok || c.Check(false, cls, msg());
}

// Whether an enqueued start of the request is pending (an epoch a queue
// began or will begin).
bool Queued(const Partitioned* p) {
  return p->queued && p->queued->Open();
}

// The active partitioned send behind `request`, or nullptr with the error
// recorded on c.
Partitioned* ActiveSendArg(Call& c, MPI_Request request) {
  ApiRequest* r = request == MPI_REQUEST_NULL ? nullptr : api::LookupRequest(request);
  if (!Ensure(c, r != nullptr, Code::kRequest,
              [&] { return "invalid request handle " + std::to_string(request); }))
    return nullptr;
  c.set_comm_handle(r->comm_handle);
  Partitioned* p = PartitionedOf(r);
  if (!Ensure(c, p != nullptr && p->is_send, Code::kRequest,
              [] { return "request is not a partitioned send request (MPI_Psend_init)"; }))
    return nullptr;
  if (!Ensure(c, p->started.load(std::memory_order_acquire) || Queued(p), Code::kRequest, [&] {
        return "the partitioned send (request " + std::to_string(request) +
               ") is not active; start it with MPI_Start or MPI_Enqueue_start first";
      }))
    return nullptr;
  return p;
}

bool PartitionArg(Call& c, const Partitioned* p, int partition, const char* what) {
  return Ensure(c, partition >= 0 && partition < p->partitions, Code::kArg, [&] {
    return std::string(what) + " " + std::to_string(partition) + " is outside 0.." +
           std::to_string(p->partitions - 1);
  });
}

// Marks the partitions ready, each by one exchange of its flag: a flag
// already set is a partition readied before, or listed twice. Then the
// flags this call set are cleared again, so an erroneous call changes
// nothing (the ready count moves only once every flag is in).
int MarkReady(Call& c, Partitioned* p, const int* list, int n, int low) {
  for (int i = 0; i < n; ++i)
    if (!PartitionArg(c, p, list ? list[i] : low + i, "partition")) return c.Fail();
  if (!p->started.load(std::memory_order_acquire) && p->queued)
    return p->queued->MarkReady(c, list, n, low);
  for (int i = 0; i < n; ++i) {
    const int part = list ? list[i] : low + i;
    if (p->ready_flags[std::size_t(part)].exchange(1, std::memory_order_acq_rel) == 0) continue;
    bool listed_twice = false;
    for (int j = 0; j < i; ++j) {
      const int earlier = list ? list[j] : low + j;
      listed_twice = listed_twice || earlier == part;
      if (earlier != part) p->ready_flags[std::size_t(earlier)].store(0, std::memory_order_release);
    }
    if (listed_twice) {
      // The duplicate's first entry was set by this call, too.
      p->ready_flags[std::size_t(part)].store(0, std::memory_order_release);
      return c.Fail(Code::kArg,
                    "partition " + std::to_string(part) + " appears twice in array_of_partitions");
    }
    return c.Fail(Code::kArg,
                  "partition " + std::to_string(part) + " is already marked ready in this epoch");
  }
  if (p->ready.fetch_add(n, std::memory_order_acq_rel) + n == p->partitions) (void)TryPostSend(p);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Pready(int partition, MPI_Request request) {
  Call c("MPI_Pready");
  if (!c.Init()) return c.Fail();
  Partitioned* p = ActiveSendArg(c, request);
  if (!p) return c.Fail();
  return MarkReady(c, p, &partition, 1, 0);
}

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
  Call c("MPI_Pready_range");
  if (!c.Init()) return c.Fail();
  Partitioned* p = ActiveSendArg(c, request);
  if (!p || !PartitionArg(c, p, partition_low, "partition_low") ||
      !PartitionArg(c, p, partition_high, "partition_high") ||
      !Ensure(c, partition_low <= partition_high, Code::kArg, [&] {
        return "partition_low " + std::to_string(partition_low) + " is above partition_high " +
               std::to_string(partition_high);
      }))
    return c.Fail();
  return MarkReady(c, p, nullptr, partition_high - partition_low + 1, partition_low);
}

int MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request) {
  Call c("MPI_Pready_list");
  if (!c.Init()) return c.Fail();
  Partitioned* p = ActiveSendArg(c, request);
  if (!p || !Ensure(c, length >= 0, Code::kArg, [] { return "length is negative"; }) ||
      (length > 0 && !c.NotNull(array_of_partitions, "array_of_partitions")))
    return c.Fail();
  return MarkReady(c, p, array_of_partitions, length, 0);
}

// A null or inactive request reports true, as MPI-4.1 says.
int MPI_Parrived(MPI_Request request, int partition, int* flag) {
  Call c("MPI_Parrived");
  if (!c.Init() || !c.NotNull(flag, "flag")) return c.Fail();
  if (request == MPI_REQUEST_NULL) {
    *flag = 1;
    return MPI_SUCCESS;
  }
  ApiRequest* r = api::LookupRequest(request);
  if (!Ensure(c, r != nullptr, Code::kRequest,
              [&] { return "invalid request handle " + std::to_string(request); }))
    return c.Fail();
  c.set_comm_handle(r->comm_handle);
  Partitioned* p = PartitionedOf(r);
  if (!Ensure(c, p != nullptr && !p->is_send, Code::kRequest,
              [] { return "request is not a partitioned receive request (MPI_Precv_init)"; }))
    return c.Fail();
  if (!PartitionArg(c, p, partition, "partition")) return c.Fail();
  if (!p->started.load(std::memory_order_acquire)) {
    if (!Queued(p)) {
      *flag = 1;
      return MPI_SUCCESS;
    }
    // Progress runs the queue's steps: the enqueued start may begin now.
    Status st = rt::Progress();
    if (!st.ok()) return c.Fail(st);
    *flag = p->queued->Arrived();
    return MPI_SUCCESS;
  }
  if (!r->req.IsDone()) {
    Status st = rt::Progress();
    if (!st.ok()) return c.Fail(st);
  }
  *flag = p->data_req.IsDone() && (p->data_req.status.error != 0 || Unpacked(p));
  return MPI_SUCCESS;
}

}  // extern "C"
