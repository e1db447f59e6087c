// The claim and done words of a same-node slot operation's chunks, and the
// chunk sizes: shared by the starts (node_persistent.cc) and the chunk work
// (node_chunks.cc).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nicq::coll::node_words {

// A word holds the start number above and a chunk count below.
inline constexpr int kCountBits = 24;
inline constexpr std::uint64_t kCountMask = (std::uint64_t{1} << kCountBits) - 1;
inline constexpr std::size_t kBcastChunkBytes = 256 * 1024;
// A reduction's chunk: its scratch (a chunk of another rank's input) and
// its share of the output stay in the core's cache between the read, the
// fold and the writes; fewer, larger chunks take fewer claims and system
// calls (process_vm_readv/writev pin the peer's pages per call).
inline constexpr std::size_t kFoldChunkBytes = 128 * 1024;

inline std::uint64_t Word(std::uint64_t start, std::uint64_t count) {
  return start << kCountBits | count;
}

// Takes the next unit of start `k` in `w` (the first taker of a start
// resets the word); false when `limit` units are taken. Returns the unit
// taken, or the new count for the done word.
inline bool TakeNext(std::atomic<std::uint64_t>& w, std::uint64_t k, std::uint64_t limit,
                     std::uint64_t* taken) {
  std::uint64_t cur = w.load(std::memory_order_acquire);
  for (;;) {
    const std::uint64_t at = cur >> kCountBits, n = at == k ? cur & kCountMask : 0;
    if (at > k || n >= limit) return false;
    if (w.compare_exchange_weak(cur, Word(k, n + 1), std::memory_order_acq_rel,
                                std::memory_order_acquire)) {
      *taken = n;
      return true;
    }
  }
}

}  // namespace nicq::coll::node_words
