#include "offload/algorithms/rma_epoch.h"

#include <algorithm>

namespace nicq::offload {

namespace {

std::size_t ChunkBytes(const BlockWriteArgs& a) {
  return a.max_chunk ? a.max_chunk : a.bytes;
}

}  // namespace

std::size_t BlockWriteOpCount(const BlockWriteArgs& a) {
  if (a.bytes == 0) return 0;
  const std::size_t chunk = ChunkBytes(a);
  // Not (bytes + chunk - 1) / chunk: a backend without a limit may say so
  // with a chunk near SIZE_MAX.
  return a.bytes / chunk + (a.bytes % chunk != 0);
}

void BuildBlockWrite(const BlockWriteArgs& a, TriggeredOp* ops) {
  const std::size_t chunk = ChunkBytes(a);
  const std::size_t count = BlockWriteOpCount(a);
  // By op index, not `done += chunk`, which wraps past SIZE_MAX when the
  // chunk is over half of it.
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t done = i * chunk;
    TriggeredOp& op = *ops++;
    op = TriggeredOp{};
    op.kind = OpKind::kPut;
    op.peer = a.dst.peer;
    op.local_buf = static_cast<const char*>(a.src) + done;
    op.bytes = std::min(chunk, a.bytes - done);
    op.remote_addr = a.dst.addr + a.offset + done;
    op.remote_key = a.dst.key;
    op.target_counter = a.dst.counter;
    op.completion = a.completion;
  }
}

TriggeredOp BuildSignalWrite(const SignalWriteArgs& a) {
  TriggeredOp op;
  op.kind = OpKind::kPut;
  op.peer = a.slots.peer;
  op.local_buf = a.word;
  op.bytes = sizeof(std::uint64_t);
  op.remote_addr = a.slots.addr + sizeof(std::uint64_t) * a.slot;
  op.remote_key = a.slots.key;
  op.target_counter = a.slots.counter;
  op.completion = a.completion;
  op.trigger = a.gate;
  op.threshold = a.threshold;
  return op;
}

}  // namespace nicq::offload
