// NodeArea: the shared-memory area through which the blocking collectives
// of a communicator whose ranks all share this node run (node_coll.cc).
//
// Layout (one POSIX shm segment, mapped by every rank of the communicator):
//   header    magic, shape, the futex word sleeping waiters block on
//   flags     one cache line per rank: the last generation it arrived at,
//             published addresses, and two 16-byte inline small slots
//   small     [2][ranks][kSmallBytes]: the small-message slots
//   stage     [2][ranks][kChunkBytes]: each rank's chunk of a large message
//   result    [2][kChunkBytes]: the reduced chunk, one share per rank
//   pids      each rank's process id (process_vm_writev needs it)
//   op slots  kOpSlots for persistent collectives, then kNbSlots that the
//             nonblocking ones take in turn (node_persistent.h); each a
//             line of claim and done words, a line per rank (OpLine), and
//             per rank [2][kOpSmallBytes] of small-message data
//
// Synchronization is by generations: every step of every collective on the
// communicator consumes the next number, the same on every rank (MPI's
// collective ordering), and a rank publishes that it reached a step by
// storing the number in its flag after writing what the step provides.
// Whoever reads data written for generation g does so while its own flag
// is still g, so a writer may reuse a region once every flag is past the
// generation the region was last written for (WaitAll(last + 1)).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "dtype/reduce.h"
#include "runtime/comm.h"

namespace nicq::coll {

class NodeSlotCollective;

// One rank's line in a persistent collective's op slot: the generation of
// its latest start (stored last, with release), what that start published,
// and inline data for contributions of up to kInlineBytes.
struct alignas(64) OpLine {
  std::atomic<std::uint64_t> started;
  std::uint64_t src, dst;
  // Folded in place by the reduction kernels: aligned for every predefined
  // type (long double and the complex types need 16 bytes).
  alignas(16) std::uint8_t inline_data[2][16];
};
// The words a persistent collective's workers share: which chunks of the
// current start are taken and how many are finished (node_persistent.cc).
struct alignas(64) OpShared {
  std::atomic<std::uint64_t> claimed;
  std::atomic<std::uint64_t> done;
};

class NodeArea {
 public:
  static constexpr std::size_t kSmallBytes = 8 * 1024;
  static constexpr std::size_t kInlineBytes = 16;
  static constexpr std::size_t kChunkBytes = 64 * 1024;
  // Larger communicators keep the schedules (the area grows with ranks).
  static constexpr int kMaxRanks = 64;
  // Persistent collectives live at the same time (one op slot each) and
  // the small contribution they carry through the area.
  static constexpr int kOpSlots = 16;
  static constexpr std::size_t kOpSmallBytes = 4096;
  // Nonblocking collectives in flight on the area at once (more wait in
  // their slot's queue): op slots kOpSlots .. kAllOpSlots - 1.
  static constexpr int kNbSlots = 8;
  static constexpr int kAllOpSlots = kOpSlots + kNbSlots;

  // Collective over `comm` (every rank calls it at the same collective):
  // rank 0 creates the segment and sends its name over `shadow` with
  // `tag`, the others map it and answer whether they could, rank 0 unlinks
  // the name and tells everyone the outcome. *out stays null when any rank
  // could not map it (the caller falls back); an error is a failed
  // exchange (a dead peer).
  static Status Create(Comm* comm, Comm* shadow, int tag, std::unique_ptr<NodeArea>* out);
  ~NodeArea();
  NodeArea(const NodeArea&) = delete;
  NodeArea& operator=(const NodeArea&) = delete;

  int ranks() const { return ranks_; }
  int rank() const { return rank_; }
  // The next generation (every rank draws the same sequence).
  std::uint64_t Next() { return ++gen_; }

  // Publishes that this rank reached generation g (after the writes of that
  // step) and wakes sleeping waiters.
  void Arrive(std::uint64_t g);
  // Wakes every rank asleep on the area (Arrive does it; others publish
  // progress outside the generations, see node_persistent.h). Ordered after
  // the caller's earlier stores.
  void WakeSleepers();
  // Sleeps on the area up to timeout_us unless ready(arg) holds once this
  // rank is counted among the sleepers (so a wake after that is not lost).
  void SleepUnless(bool (*ready)(void*), void* arg, long timeout_us);
  // Block until every rank / rank r reached generation g: spin briefly,
  // then yield, then sleep on the futex; point-to-point keeps progressing
  // and a member whose process is gone ends the wait with kProcFailed.
  Status WaitAll(std::uint64_t g);
  Status WaitRank(int r, std::uint64_t g);
  // Every rank but this one reached generation g.
  Status WaitPeers(std::uint64_t g);

  // Large messages may be copied straight between the ranks' buffers
  // (process_vm_readv works on this node).
  bool cross_memory() const { return cross_memory_; }
  int world(int r) const { return world_[r]; }
  // Buffer addresses a rank publishes with its next Arrive (read by the
  // others once they see that generation).
  void Publish(std::uint64_t src, std::uint64_t dst);
  std::uint64_t src_of(int r) const;
  // A size that travels with small slot i (written before Arrive, like
  // the slot, and protected the same way).
  void set_small_bytes(int i, std::uint32_t bytes);
  std::uint32_t small_bytes_of(int i, int r) const;
  std::uint64_t dst_of(int r) const;
  // This rank's private scratch memory of at least `bytes` (kept).
  std::uint8_t* scratch(std::size_t bytes) {
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    return scratch_.data();
  }

  // Regions; `i` picks one of the two buffers of each kind.
  std::uint8_t* small(int i, int r) const {
    return small_ + (std::size_t(i) * ranks_ + r) * kSmallBytes;
  }
  // The small slot for `bytes` of data: inside rank r's flag line when it
  // fits there (one cache-line transfer carries flag and data), else small().
  std::uint8_t* slot(int i, int r, std::size_t bytes) const;
  std::uint8_t* stage(int i, int r) const {
    return stage_ + (std::size_t(i) * ranks_ + r) * kChunkBytes;
  }
  std::uint8_t* result(int i) const { return result_ + std::size_t(i) * kChunkBytes; }

  // Op slots (see the layout above).
  OpShared* op_shared(int slot) const;
  OpLine* op_line(int slot, int r) const;
  std::uint8_t* op_data(int slot, int i, int r) const;
  // Rank r's process id (written at Create, before the exchange that ends it).
  int pid(int r) const;
  // Which op slots this rank's persistent collectives hold (bit per slot);
  // slots are agreed collectively when an operation is initialized.
  std::uint64_t op_slots_held = 0;
  // The nonblocking calls that took the area so far (the call number picks
  // the slot: the same sequence on every rank) and each reserved slot's
  // operation, made on first use (node_nonblocking.cc).
  std::uint64_t nb_calls = 0;
  std::shared_ptr<NodeSlotCollective> nb_slots[kNbSlots];

  // The reduction of the last blocking reduction whose type is predefined
  // (most calls repeat it; node_coll.cc).
  int red_op = 0, red_type = 0;
  dtype::PreparedReduce red_fast;

  // The generation this rank last wrote each of its regions for (0: never);
  // see the header comment.
  std::uint64_t last_small[2] = {0, 0};
  std::uint64_t last_stage[2] = {0, 0};
  std::uint64_t last_result[2] = {0, 0};

 private:
  NodeArea() = default;
  template <class Done>
  Status WaitFor(Done done);
  bool AllAt(std::uint64_t g, bool skip_self);
  Status CheckMembers();

  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  int ranks_ = 0, rank_ = 0;
  std::uint64_t gen_ = 0;
  std::uint64_t known_min_ = 0;  // every flag was at least this when last looked
  struct Header* header_ = nullptr;
  struct Flag* flags_ = nullptr;
  std::uint8_t* small_ = nullptr;
  std::uint8_t* stage_ = nullptr;
  std::uint8_t* result_ = nullptr;
  std::uint8_t* ops_ = nullptr;
  std::vector<int> world_;  // comm rank -> world rank (liveness checks)
  bool oversubscribed_ = false;
  std::int64_t spin_max_ns_ = 0, spin_ns_ = 0;  // see WaitFor
  bool cross_memory_ = false;
  std::vector<std::uint8_t> scratch_;
};

}  // namespace nicq::coll
