// The ops of one-sided epochs on counters: what src/rma's counter path
// posts for a put, a post and a complete (docs/rma.md, "PSCW on counters"
// and "Fence and lock epochs on counters"). In the terms here an epoch is
// registered memory and counters:
//
//   block write   a contiguous block written into a peer's registered
//                 memory as RMA writes of at most `max_chunk` bytes each;
//                 every landing bumps the peer's counter for that memory
//                 (or none: a fence or lock epoch, whose origin waits for
//                 the writes' delivery itself), every local completion
//                 bumps `completion`.
//   signal write  one 64-bit word written into one slot of a peer's
//                 registered slot array, bumping the peer's counter for
//                 that array: the peer learns "something landed" from the
//                 counter and what from the slot. Fired at once (a post) or
//                 when a local counter reaches a threshold (a complete,
//                 behind the local completion of every block write so far).
//
// Pure functions of their arguments: the caller owns the counters, the
// registrations and the words a signal write reads (which must stay put
// until the write completes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "providers/backend.h"

namespace nicq::offload {

// A peer's registered memory, as the peer exchanged it.
struct RemoteMemory {
  PeerId peer = -1;
  std::uint64_t addr = 0;  // base address as the peer registered it
  std::uint64_t key = 0;
  CounterId counter = kNoCounter;  // the peer's counter a landing bumps; kNoCounter: none
};

struct BlockWriteArgs {
  const void* src = nullptr;
  std::size_t bytes = 0;
  RemoteMemory dst;
  std::uint64_t offset = 0;           // bytes from dst.addr
  std::size_t max_chunk = 0;          // bytes per write (0: the block in one)
  CounterId completion = kNoCounter;  // +1 per write completed locally
};

// How many writes BuildBlockWrite makes (0 for an empty block).
std::size_t BlockWriteOpCount(const BlockWriteArgs& a);
// Fills ops[0 .. BlockWriteOpCount(a)), in block order.
void BuildBlockWrite(const BlockWriteArgs& a, TriggeredOp* ops);

struct SignalWriteArgs {
  const std::uint64_t* word = nullptr;  // read when the write fires
  RemoteMemory slots;                   // the peer's slot array (8 bytes a slot)
  std::size_t slot = 0;
  CounterId gate = kNoCounter;  // fire once gate >= threshold; kNoCounter: at once
  std::uint64_t threshold = 0;
  CounterId completion = kNoCounter;  // +1 when the write completed locally
};

TriggeredOp BuildSignalWrite(const SignalWriteArgs& a);

}  // namespace nicq::offload
