// Registry of queue types (13.3.4). MPI_QUEUE_TYPE_DEFAULT (the host
// thread; the external handle is ignored) is built in. An external type
// (e.g. a CUDA stream, docs/queue-semantics.md "CUDA-stream queue type")
// registers an id with hooks called at MPI_Queue_init / MPI_Queue_free.
#pragma once

#include "core/status.h"

namespace nicq::queue {

inline constexpr int kQueueTypeDefault = 0;  // = MPI_QUEUE_TYPE_DEFAULT

struct QueueType {
  int id = 0;
  const char* name = "";
  // Validates/attaches the external execution context (may be nullptr).
  Status (*attach)(void* external) = nullptr;
};

// Registers (init time); kArg when the id is taken or the table is full.
Status RegisterQueueType(const QueueType& t);
// nullptr when `id` is not a registered type.
const QueueType* FindQueueType(int id);

}  // namespace nicq::queue
