// Partitioned point-to-point communication (MPI-4.1 chapter 4 "Partitioned
// Point-to-Point Communication"): MPI_Psend_init, MPI_Precv_init,
// MPI_Pready(_range, _list), MPI_Parrived; started, completed and freed
// through MPI_Start(all), MPI_Wait/Test and MPI_Request_free.
//
// Matching. Partitioned initialisations match each other in the order they
// are made, per (communicator, peer, tag), and never meet other traffic.
// Both halves are local, so the match is an exchange that needs no call on
// the other side: MPI_Precv_init sends an offer carrying a receive id,
// unique in this process, to the source on the communicator's partitioned
// offer context (+4); MPI_Psend_init posts the receive of that offer to the
// destination under the same tag. Posted receives take messages in the
// order they were posted, so the n-th send of a pair and tag gets the n-th
// receive's offer. Each epoch's data then travels on the partitioned data
// context (+5) tagged with the receive id, so it reaches exactly that
// request, whatever other partitioned pairs share the peer and tag.
//
// Transfer. An epoch's whole message is one send, posted by whoever sees
// the last partition marked ready with the offer already here: the
// MPI_Pready call that readies it, or else the progress pass that polls the
// request. MPI_Parrived therefore reports every partition of an epoch at
// once; the send- and receive-side partitionings may differ, only the
// total must fit. docs/mpi-api.md states both.
#include "api/partitioned.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/api_internal.h"
#include "api/p2p_calls.h"
#include "api/partitioned_queue.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::ApiRequest;
using api::Call;

namespace {

constexpr std::uint64_t kOfferMagic = 0x6e69637170617274ull;  // "nicqpart"

// Receive ids: unique among this process's live partitioned receives.
class ReceiveIds {
 public:
  bool Take(std::uint32_t* id) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!free_.empty()) {
      *id = free_.back();
      free_.pop_back();
      return true;
    }
    if (next_ > std::uint32_t(rt::TagUpperBound())) return false;
    *id = next_++;
    return true;
  }
  void Give(std::uint32_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(id);
  }

 private:
  std::mutex mu_;
  std::vector<std::uint32_t> free_;
  std::uint32_t next_ = 0;
};
ReceiveIds& Ids() {
  static auto* ids = new ReceiveIds();
  return *ids;
}

// A communicator's twin on another of its sub-contexts.
std::unique_ptr<Comm> Shadow(const Comm* comm, std::uint32_t offset) {
  auto s = std::make_unique<Comm>(*comm);
  s->context_id = comm->context_id + offset;
  s->api_data = nullptr;
  s->local_comm = nullptr;  // owned by the original
  return s;
}

}  // namespace

using api::Partitioned;
using api::PartitionedOf;
using api::TryPostSend;
using api::Unpacked;

nicq::api::Partitioned::Partitioned(int n) : ready_flags(static_cast<std::size_t>(n)) {}

nicq::api::Partitioned::~Partitioned() {
  if (has_id) Ids().Give(receive_id);
  if (type) dtype::Release(type);
}

namespace {

Partitioned* Of(Request* req) {
  return static_cast<Partitioned*>(req->engine);
}

}  // namespace

namespace nicq::api {

// Posts the epoch's send once every partition is ready and the offer is
// here; exactly one caller gets to post. Returns false until it is posted.
bool TryPostSend(Partitioned* p) {
  if (p->posted.load(std::memory_order_acquire)) return true;
  if (p->ready.load(std::memory_order_acquire) < p->partitions || !p->offer_req.IsDone())
    return false;
  if (p->claimed.exchange(true, std::memory_order_acq_rel)) return false;
  p->post_error = PostSendData(p);
  if (!p->post_error.ok()) p->data_req.MarkDone();
  p->posted.store(true, std::memory_order_release);
  return true;
}

Status PostSendData(Partitioned* p) {
  const void* buf = p->user_buf;
  if (p->staged) {
    dtype::Pack(*p->type, p->user_buf, p->count * p->partitions, p->staging.data());
    buf = p->staging.data();
  }
  if (p->offer.magic != kOfferMagic)
    return Error(Code::kOther, "the matching MPI_Precv_init sent a malformed offer");
  return rt::Isend(buf, p->bytes, p->peer, static_cast<int>(p->offer.receive_id),
                   p->data_comm.get(), SendMode::kStandard, &p->data_req);
}

}  // namespace nicq::api

namespace nicq::api {

// Whether the received data is in the user's buffer; unpacks a staged
// receive once, whichever caller comes first.
bool Unpacked(Partitioned* p) {
  if (!p->staged) return true;
  api::UnpackStage stage = api::UnpackStage::kPending;
  if (p->unpack.compare_exchange_strong(stage, api::UnpackStage::kUnpacking,
                                        std::memory_order_acq_rel)) {
    dtype::Unpack(*p->type, p->staging.data(), static_cast<std::int64_t>(p->data_req.status.bytes),
                  p->count * p->partitions, p->user_buf);
    p->unpack.store(api::UnpackStage::kDone, std::memory_order_release);
    return true;
  }
  return stage == api::UnpackStage::kDone;
}

}  // namespace nicq::api

namespace {

bool PollEpoch(Request* req) {
  Partitioned* p = Of(req);
  if (p->is_send && !TryPostSend(p)) return false;
  return p->data_req.IsDone();
}

Status FinishEpoch(Request* req, Partitioned* p);

Status PartStart(Request* req) {
  Partitioned* p = Of(req);
  if (p->started.load(std::memory_order_acquire))
    return Error(Code::kRequest, "the partitioned request is already active");
  // A pending enqueued start is refused before this (RequestOps::enqueued);
  // an epoch a queue started may outlive its queue's chain (a failed one).
  if (p->queued && p->queued->Running())
    return Error(Code::kRequest, "an epoch an enqueued start began still runs");
  req->done.store(false, std::memory_order_relaxed);
  req->status = RequestStatus{};
  p->ready.store(0, std::memory_order_relaxed);
  for (auto& f : p->ready_flags) f.store(0, std::memory_order_relaxed);
  p->claimed.store(false, std::memory_order_relaxed);
  p->posted.store(false, std::memory_order_relaxed);
  p->post_error = Status::Ok();
  p->unpack.store(api::UnpackStage::kPending, std::memory_order_relaxed);
  p->data_req.done.store(false, std::memory_order_relaxed);
  p->data_req.status = RequestStatus{};
  if (p->ProcNull()) {
    p->data_req.MarkDone();  // what MPI_Parrived reads
    p->started.store(true, std::memory_order_release);
    req->status.source = MPI_PROC_NULL;
    req->status.tag = MPI_ANY_TAG;
    req->MarkDone();
    return Status::Ok();
  }
  if (!p->is_send) {
    void* buf = p->staged ? p->staging.data() : p->user_buf;
    NICQ_RETURN_IF_ERROR(rt::Irecv(buf, p->bytes, p->peer, static_cast<int>(p->receive_id),
                                   p->data_comm.get(), &p->data_req));
  }
  p->started.store(true, std::memory_order_release);
  if (PollEpoch(req))
    req->MarkDone();
  else
    api::AddPolledRequest(req, PollEpoch);
  return Status::Ok();
}

// The epoch ends (`started` false) only once a staged receive is
// unpacked: an MPI_Parrived on another thread reads an inactive request as
// arrived.
Status PartComplete(Request* req) {
  Partitioned* p = Of(req);
  Status st = FinishEpoch(req, p);
  req->active = false;
  p->started.store(false, std::memory_order_release);
  return st;
}

Status FinishEpoch(Request* req, Partitioned* p) {
  if (p->ProcNull()) return Status::Ok();
  NICQ_RETURN_IF_ERROR(p->post_error);
  const RequestStatus& rs = p->data_req.status;
  req->status.source = p->peer;
  req->status.tag = p->tag;
  req->status.bytes = rs.bytes;
  if (rs.error == static_cast<int>(Code::kTruncate))
    return Error(Code::kTruncate, "the partitioned message from rank " + std::to_string(p->peer) +
                                      " tag " + std::to_string(p->tag) +
                                      " is longer than the receive buffer (" +
                                      std::to_string(p->bytes) + " bytes)");
  if (rs.error != 0)
    return Error(static_cast<Code>(rs.error), std::string(p->is_send ? "send to" : "receive from") +
                                                  " rank " + std::to_string(p->peer) + " tag " +
                                                  std::to_string(p->tag) + " failed");
  if (!p->is_send)
    while (!Unpacked(p)) std::this_thread::yield();  // an MPI_Parrived on another thread
  return Status::Ok();
}

// A request freed before its offer exchange finished leaves that exchange
// running: a send's offer receive must still take the offer of the
// receive it matched in initialisation order (withdrawn, it would let the
// next send of the pair and tag take that offer), and a receive's offer
// send must not keep MPI_Request_free, a local call, waiting for its peer.
// The request's state stays here until the exchange is done.
class Remnants {
 public:
  void Keep(Partitioned* p) {
    std::lock_guard<std::mutex> lock(mu_);
    list_.push_back(p);
  }
  void Sweep() {
    std::lock_guard<std::mutex> lock(mu_);
    for (std::size_t i = 0; i < list_.size();) {
      if (!list_[i]->offer_req.IsDone()) {
        ++i;
        continue;
      }
      delete list_[i];
      list_[i] = list_.back();
      list_.pop_back();
    }
  }

 private:
  std::mutex mu_;
  std::vector<Partitioned*> list_;
};
Remnants& Leftovers() {
  static auto* r = new Remnants();
  return *r;
}

Status PartFree(Request* req) {
  Partitioned* p = Of(req);
  if (!p) return Status::Ok();
  if (p->started.load(std::memory_order_acquire) && !req->IsDone())
    return Error(Code::kRequest,
                 "an active partitioned request cannot be freed; complete it first");
  if (p->queued && p->queued->Running())
    return Error(Code::kRequest,
                 "an epoch an enqueued start began still runs; the request cannot be freed");
  if (p->queued) (void)p->queued->Release();
  req->engine = nullptr;
  if (!p->ProcNull() && !p->offer_req.IsDone())
    Leftovers().Keep(p);
  else
    delete p;
  Leftovers().Sweep();
  return Status::Ok();
}

Status PartCancel(Request* req) {
  Partitioned* p = Of(req);
  if (p && p->started.load(std::memory_order_acquire) && !req->IsDone())
    return Error(Code::kRequest, "an active partitioned request cannot be cancelled (MPI-4.1 4.2)");
  return Status::Ok();
}

// MPI_Start, the waits and tests, MPI_Cancel and MPI_Request_free refuse
// a request while one of its enqueued starts is pending (chapter 13).
bool PartEnqueued(Request* req) {
  Partitioned* p = Of(req);
  return p && p->queued && p->queued->Open();
}

// Both sides' requests: Partitioned::is_send tells them apart.
const RequestOps kPartOps = {&PartStart, &PartFree, &PartCancel, &PartComplete, &PartEnqueued};

}  // namespace

namespace nicq::api {

// The partitioned request behind r, or nullptr for any other request.
Partitioned* PartitionedOf(ApiRequest* r) {
  return r->req.ops == &kPartOps ? Of(&r->req) : nullptr;
}

}  // namespace nicq::api

namespace {

bool PartitionsArg(Call& c, int partitions) {
  return c.Check(partitions >= 0, Code::kArg,
                 "partitions is " + std::to_string(partitions) + "; it must not be negative");
}

int PartitionedInit(const char* name, bool is_send, const void* buf, int partitions,
                    MPI_Count count, MPI_Datatype datatype, int peer, int tag, MPI_Comm comm,
                    MPI_Info info, MPI_Request* request) {
  Call c(name);
  api::P2pArgs a;
  const std::int64_t total = std::int64_t(count) * std::max(partitions, 0);
  if (!c.Init() || !c.NotNull(request, "request") || !PartitionsArg(c, partitions) ||
      !c.CountArg(count) ||
      !(is_send ? api::CheckSend(c, buf, total, datatype, peer, tag, comm, &a)
                : api::CheckRecv(c, buf, total, datatype, peer, tag, comm, &a)) ||
      !c.Check(peer != MPI_ANY_SOURCE, Code::kRank,
               "source is MPI_ANY_SOURCE; a partitioned receive names its source") ||
      !c.Check(tag != MPI_ANY_TAG, Code::kTag,
               "tag is MPI_ANY_TAG; a partitioned receive names its tag") ||
      !c.Check(info == MPI_INFO_NULL || api::KindOf(info) == NICQ_KIND_INFO, Code::kInfo,
               "info is not an info handle"))
    return c.Fail();
  Leftovers().Sweep();
  auto p = std::make_unique<Partitioned>(partitions);
  p->is_send = is_send;
  p->peer = peer;
  p->tag = tag;
  p->partitions = partitions;
  p->count = count;
  p->user_buf = const_cast<void*>(buf);
  p->bytes = static_cast<std::size_t>(total * a.type->size);
  p->staged = !a.type->IsContiguous() && p->bytes > 0;
  if (p->staged) p->staging.resize(p->bytes);
  if (!p->ProcNull()) {
    if (!is_send && !Ids().Take(&p->receive_id))
      return c.Fail(Code::kNoMem, "no partitioned receive id is free (" +
                                      std::to_string(rt::TagUpperBound() + 1) + " in use)");
    p->has_id = !is_send;
    p->offer_comm = Shadow(a.comm, rt::kPartitionedOfferContextOffset);
    p->data_comm = Shadow(a.comm, rt::kPartitionedDataContextOffset);
  }
  MPI_Request handle = MPI_REQUEST_NULL;
  Request* req = api::AllocEngineRequest(comm, name, true, &handle);
  if (!req) return c.Fail(Code::kNoMem, "request table is full");
  if (!p->ProcNull()) {
    Status st;
    if (is_send) {
      st = rt::Irecv(&p->offer, sizeof p->offer, peer, tag, p->offer_comm.get(), &p->offer_req);
    } else {
      p->offer.magic = kOfferMagic;
      p->offer.bytes = p->bytes;
      p->offer.receive_id = p->receive_id;
      st = rt::Isend(&p->offer, sizeof p->offer, peer, tag, p->offer_comm.get(),
                     SendMode::kStandard, &p->offer_req);
    }
    if (!st.ok()) {
      api::FreeRequest(api::LookupRequest(handle));
      return c.Fail(st);
    }
  }
  dtype::Retain(a.type);
  p->type = a.type;
  ApiRequest* r = api::LookupRequest(handle);
  r->is_send = is_send;
  r->peer = peer;
  r->tag = tag;
  req->kind = is_send ? ReqKind::kPersistentSend : ReqKind::kPersistentRecv;
  req->persistent = true;
  req->engine = p.release();
  req->ops = &kPartOps;
  *request = handle;
  return MPI_SUCCESS;
}

}  // namespace

namespace nicq::api {

bool IsPartitioned(const ApiRequest* r) {
  return r->req.ops == &kPartOps;
}

}  // namespace nicq::api

extern "C" {

int MPI_Psend_init(const void* buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                   int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return PartitionedInit("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm,
                         info, request);
}

int MPI_Precv_init(void* buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                   int tag, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return PartitionedInit("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag,
                         comm, info, request);
}

}  // extern "C"
