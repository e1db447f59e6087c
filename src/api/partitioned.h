// Partitioned point-to-point requests (MPI-4.1 chapter 4): the state
// shared by their engine (partitioned.cc: initialisation, the offer
// exchange, start, completion, free) and the calls on an active epoch
// (partitioned_ready.cc: MPI_Pready*, MPI_Parrived); the epochs queues
// start and wait (partitioned_queue.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "api/api_internal.h"

namespace nicq::api {

// What the receive side tells its matched send side.
struct PartOffer {
  std::uint64_t magic = 0;
  std::uint64_t bytes = 0;       // the receive buffer's size
  std::uint32_t receive_id = 0;  // the data's tag on the data context
  std::uint32_t reserved = 0;
};

// A staged (noncontiguous) receive reaches the user's buffer when the first
// of MPI_Parrived and the final wait unpacks it.
enum class UnpackStage : std::uint8_t { kPending, kUnpacking, kDone };

class PartQueued;  // partitioned_queue.h

struct Partitioned {
  bool is_send = false;
  int peer = 0, tag = 0;  // comm rank (or MPI_PROC_NULL), user tag
  int partitions = 0;
  std::int64_t count = 0;  // elements per partition
  dtype::Type* type = nullptr;
  void* user_buf = nullptr;
  std::size_t bytes = 0;  // the whole message
  std::vector<char> staging;
  bool staged = false;
  std::unique_ptr<Comm> offer_comm, data_comm;
  PartOffer offer;
  Request offer_req;  // send: the offer's receive; receive: its send
  std::uint32_t receive_id = 0;
  bool has_id = false;

  Request data_req;
  std::atomic<bool> started{false};  // between MPI_Start and completion
  std::atomic<int> ready{0};         // partitions marked ready this epoch
  std::vector<std::atomic<std::uint8_t>> ready_flags;
  std::atomic<bool> claimed{false};  // the epoch's send is being posted
  std::atomic<bool> posted{false};   // ... and has been
  Status post_error;
  std::atomic<UnpackStage> unpack{UnpackStage::kPending};  // staged receives
  // Epochs started by queues (MPI_Enqueue_start): made at the request's
  // first enqueue call. An epoch runs either through MPI_Start (`started`)
  // or through a queue, never both at once.
  std::unique_ptr<PartQueued> queued;

  explicit Partitioned(int n);  // out of line, as `queued` is incomplete here
  ~Partitioned();               // gives back the receive id and the datatype
  bool ProcNull() const { return peer == MPI_PROC_NULL; }
};

// The partitioned request behind r, or nullptr for any other request.
Partitioned* PartitionedOf(ApiRequest* r);
// A request made by MPI_Psend_init or MPI_Precv_init. Such a request is
// matched from its creation (draft chapter 13, MPI_Is_matched).
bool IsPartitioned(const ApiRequest* r);
// Posts a send epoch's one message once every partition is ready and the
// offer is here; exactly one caller posts. False until it is posted.
bool TryPostSend(Partitioned* p);
// The send of an epoch's message itself (packing a staged buffer first),
// for the caller that claimed the epoch; an error leaves data_req as it is.
Status PostSendData(Partitioned* p);
// Whether a receive's data is in the user's buffer; unpacks a staged
// receive once, whichever caller comes first.
bool Unpacked(Partitioned* p);

}  // namespace nicq::api
