// Collectives of a communicator whose ranks all share the node that run on
// one op slot of the communicator's NodeArea instead of the schedule
// engine: persistent allreduce, reduce, bcast and barrier (one slot each,
// agreed at init) and nonblocking ones (node_nonblocking.cc: slots reserved for
// them, taken round-robin by call number).
//
// A start only publishes: the rank's contribution (small messages, copied
// into its op slot) or its buffer addresses (large ones), then the start's
// number in its OpLine. It never waits for the peers. The operation then
// advances wherever this process is inside MPI (the progress hook: test,
// wait, any blocking call, the progress thread) and, for a small message,
// in the start itself when every peer has already started.
//
//  * Small (up to kOpSmallBytes): once every rank started, an allreduce
//    folds all contributions in rank order into its own buffer (the same
//    bits on every rank; a reduce: the root only), a bcast copies the
//    root's, a barrier is done. A
//    rank writes its data into half k & 1 of its slot for its k-th start.
//    A rank starts k only after its own start k - 1 completed (a persistent
//    request is inactive by then; a nonblocking call waits in the slot's
//    queue), and completion needs every rank's start: so a rank at start
//    k + 1 knows every peer started k, hence completed k - 1 and finished
//    reading half (k + 1) & 1.
//  * Large (process_vm_readv/writev between the ranks): whoever is inside
//    MPI does the work, for everybody. Once every rank has published start
//    k, a worker claims chunk c of k in the slot's claim word, reads that
//    chunk of every input (of the root's, for a bcast), folds it in rank
//    order and writes the result into every rank's output (a reduce: the
//    root's), then counts it
//    in the done word. A rank's operation is complete when all chunks of k
//    are counted: every write into its buffer happened before that (the
//    writes are synchronous system calls). No chunk of k is claimed before
//    all ranks published k, and a rank's next start (which alone changes
//    its buffers' addresses) comes after its completion, when every chunk
//    of k is finished. A rank that computes while a peer waits finds its
//    result ready.
// The words carry the start number in their top bits (it grows on every
// rank alike), so neither needs a reset between starts.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "coll/coll.h"
#include "coll/node_area.h"
#include "coll/node_reduce.h"
#include "core/status.h"

namespace nicq::coll {

class NodeSlotCollective {
 public:
  // Whether `a` (allreduce, reduce, bcast or barrier) can run on an op slot of
  // `area`; every rank decides alike (from arguments MPI requires to match).
  static bool Fits(const Args& a, const NodeArea& area);
  // Persistent (collective, at MPI_*_init after the argument check): *out
  // stays null on every rank alike when the operation keeps the schedule.
  static Status Create(const Args& a, std::unique_ptr<NodeSlotCollective>* out);
  // The nonblocking calls' object for reserved op slot `slot` (local).
  static std::unique_ptr<NodeSlotCollective> ForReservedSlot(NodeArea* area, int slot);
  ~NodeSlotCollective();
  NodeSlotCollective(const NodeSlotCollective&) = delete;
  NodeSlotCollective& operator=(const NodeSlotCollective&) = delete;

  // Persistent start (the request is inactive, so no start of it runs).
  // `on_done(arg)`, when given, runs at its completion just before the
  // owner is marked done (a matched request counts the epoch there).
  Status Start(Request* owner, void (*on_done)(void*) = nullptr, void* on_done_arg = nullptr);
  // Nonblocking call `a` (which Fits): started now when the slot's last
  // call completed here, else queued and started by the progress hook once
  // it has.
  Status StartOrQueue(const Args& a, Request* owner);
  // Whether a start has not completed yet (the request may not be freed).
  bool active() const { return active_.load(std::memory_order_acquire); }
  // Advances a started operation; true when it completed it now.
  bool Progress();
  // Starts the calls queued behind the one that completed; true when one
  // is left running (the hook keeps this object in its list).
  bool StartQueued();
  // Whether Progress would find something to do (a waiter sleeps unless).
  bool Ready() const;
  NodeArea* area() const { return area_; }
  // The next operation on the progress hook's stack of new starts.
  NodeSlotCollective* pending_next() const { return pending_next_; }
  const char* algorithm() const { return call_.large ? "node_direct_worker" : "node_slots"; }

  // The progress hook's registration (false: the area cannot run them).
  static bool EnsureHook();

 private:
  // What one start works on.
  struct Call {
    Kind kind = Kind::kAllreduce;
    int root = 0;
    NodeReducer red;
    const std::uint8_t* in = nullptr;  // what this rank contributes
    std::uint8_t* out = nullptr;       // where its result goes
    std::int64_t count = 0;            // items (allreduce) or bytes
    std::size_t item = 1, bytes = 0;
    bool large = false;
    std::int64_t chunk_items = 0;
    std::uint64_t chunks = 0;
    // A bcast of a non-contiguous layout goes through packed_ (packed at
    // the root's start, unpacked at a receiver's completion).
    const dtype::Type* layout = nullptr;
    void* user_buf = nullptr;
    std::int64_t user_count = 0;
    Request* owner = nullptr;
    void (*on_done)(void*) = nullptr;
    void* on_done_arg = nullptr;
    // A nonblocking call's derived type, kept alive until it completes
    // (the user may free it after the start; persistent requests hold
    // theirs themselves).
    dtype::Type* retained = nullptr;
  };
  NodeSlotCollective() = default;
  void Attach(NodeArea* area, int slot);
  Call Bind(const Args& a);
  // Publishes call_ as the next start; true when it completed it at once.
  bool Publish();
  bool AllStarted() const;
  const std::uint8_t* SmallSrc(int half, int r) const;
  Status FinishSmall();
  // Folds chunk [off, off + len) of every rank's input in rank order; the
  // result (in this rank's output or scratch), or null with *st set.
  const std::uint8_t* FoldChunk(std::size_t off, std::size_t len, std::int64_t items, Status* st);
  // One claimed chunk; false when none was left.
  bool WorkOneChunk(Status* st);
  bool ChunksDone() const;
  bool ChunksLeft() const;
  void Complete(Status st);

  NodeArea* area_ = nullptr;
  int slot_ = -1;
  Call call_;
  std::deque<Call> queued_;  // nonblocking calls waiting for the slot (hook's lock)
  // The current start's number (1, 2, ...).
  std::uint64_t starts_ = 0;
  std::atomic<bool> active_{false};
  std::vector<std::uint8_t> acc_, operand_;  // a chunk's fold and one input
  std::vector<std::uint8_t> packed_;
  // The reduction Bind prepared last (Bind runs on the starting thread only).
  std::optional<NodeReducer> bound_red_;
  // Resolved once: every rank's line and the shared words.
  std::vector<OpLine*> lines_;
  OpShared* shared_ = nullptr;
  NodeSlotCollective* pending_next_ = nullptr;  // see pending_next()
};

// persistent.h's name for the persistent operation.
using NodeAllreduce = NodeSlotCollective;

// Returns once no progress pass over the area's started operations is
// running: the pass that completed an operation still reads it after the
// completion a waiter saw, so a free must not come before the pass ends.
void SyncWithNodeHook();

// MPI_Iallreduce / MPI_Ireduce / MPI_Ibcast / MPI_Ibarrier on the area when the
// communicator has one already and the call fits; false: the schedule runs
// it (every rank decides alike). req is set up as a nonblocking request.
// (node_nonblocking.cc)
bool TryNodeNonblocking(const Args& a, Request* req, Status* st);

}  // namespace nicq::coll
