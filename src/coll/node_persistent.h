// A persistent allreduce of a communicator whose ranks all share the node,
// run on the communicator's NodeArea instead of the schedule engine.
//
// MPI_Start only publishes: the rank's contribution (small messages, copied
// into its op slot) or its buffer addresses (large ones), then the start's
// generation in its OpLine. It never waits for the peers. The operation
// then advances wherever this process is inside MPI (the progress hook:
// test, wait, any blocking call, the progress thread) and, for a small
// message, in Start itself when every peer has already started.
//
//  * Small (up to kOpSmallBytes): every rank folds all contributions in
//    rank order into its own buffer (the same bits on every rank). A rank
//    writes its data into half k & 1 of its slot for its k-th start; a
//    peer still reading half k & 1 has not finished start k, so this rank
//    cannot have got past start k + 1 (which needs that peer's start).
//  * Large (process_vm_readv/writev between the ranks): whoever is inside
//    MPI does the work, for everybody. Once every rank has published start
//    g, a worker claims chunk c of g in the slot's claim word, reads that
//    chunk of every input, folds it in rank order and writes the result
//    into every rank's output, then counts it in the done word. A rank's
//    operation is complete when all chunks of g are counted: every write
//    into its buffer happened before that (the writes are synchronous
//    system calls). No chunk of g is claimed before all ranks published g,
//    and a rank's next start (which alone changes its buffers' addresses)
//    comes after its completion, when every chunk of g is finished.
//    A rank that computes while a peer waits finds its result ready.
// The words carry the generation in their top bits (generations come from
// the area's sequence, which grows on every rank alike), so neither needs a
// reset between starts, nor when another operation takes the slot.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/coll.h"
#include "coll/node_area.h"
#include "coll/node_reduce.h"
#include "core/status.h"

namespace nicq::coll {

class NodeAllreduce {
 public:
  // Collective (at MPI_Allreduce_init, after the argument check): *out
  // stays null on every rank alike when the operation keeps the schedule.
  static Status Create(const Args& a, std::unique_ptr<NodeAllreduce>* out);
  ~NodeAllreduce();
  NodeAllreduce(const NodeAllreduce&) = delete;
  NodeAllreduce& operator=(const NodeAllreduce&) = delete;

  Status Start(Request* owner);
  // Whether a start has not completed yet (the request may not be freed).
  bool active() const { return active_.load(std::memory_order_acquire); }
  // Advances a started operation; true when it completed it now.
  bool Progress();
  // Whether Progress would find something to do (a waiter sleeps unless).
  bool Ready() const;
  NodeArea* area() const { return area_; }
  const char* algorithm() const { return large_ ? "node_direct_worker" : "node_slots"; }

 private:
  NodeAllreduce() = default;
  bool AllStarted() const;
  bool FoldSmall();
  // One claimed chunk; false when none was left.
  bool WorkOneChunk(Status* st);
  bool ChunksDone() const;
  bool ChunksLeft() const;
  void Complete(const Status& st);

  NodeArea* area_ = nullptr;
  int slot_ = -1;
  NodeReducer red_;
  const std::uint8_t* in_ = nullptr;  // the recv buffer for MPI_IN_PLACE
  std::uint8_t* out_ = nullptr;
  std::int64_t count_ = 0;
  std::size_t item_ = 0, bytes_ = 0;
  bool large_ = false;
  std::int64_t chunk_items_ = 0;
  std::uint64_t chunks_ = 0;
  // The current start: its generation and its number (1, 2, ...).
  std::uint64_t gen_ = 0, starts_ = 0;
  Request* owner_ = nullptr;
  std::atomic<bool> active_{false};
  std::vector<std::uint8_t> acc_, operand_;  // a chunk's fold and one input
  // Resolved once: every rank's line, the shared words, and where each
  // rank's small contribution lies in each half.
  std::vector<OpLine*> lines_;
  OpShared* shared_ = nullptr;
  std::vector<const std::uint8_t*> small_src_[2];
};

}  // namespace nicq::coll
