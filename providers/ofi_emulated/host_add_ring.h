// HostAddRing: one host thread's counter adds on their way to the emulated
// backend's agent, a single-producer single-consumer ring.
//
// With the agent running, a host add (a resident plan's MPI_Start) is
// the agent's to apply: the owner thread stores "counter id, value" into
// a cell and publishes it with a release store of `head_`; the agent reads
// `head_` at each of its passes, applies the adds (TriggerQueue::Add, which
// collects what they reached) and releases the cells with a store of
// `tail_`. The producer writes only its own lines (cells and head) and
// reads `tail_` only when the ring looks full, so a start makes no
// read-modify-write on a line the agent just read: such a read-modify-write
// waits for the line from the agent's core (performance.md, Run 61). A full
// ring or a value that does not fit a cell makes Push refuse, and the
// caller adds another way: no add is ever dropped.
//
// Ownership: a thread claims a ring once (Claim, a compare-exchange on
// `owner_`) and is its only producer for as long as it lives; a thread
// that finds no free ring adds another way (EmulatedBackend::AddCounter).
#pragma once

#include <atomic>
#include <cstdint>

#include "providers/backend.h"

namespace nicq::ofi {

class HostAddRing {
 public:
  static constexpr std::uint32_t kCells = 256;
  // Counter ids take the low bits of a cell (the backend's counters fit the
  // 20 bits of remote CQ data), the value the rest.
  static constexpr int kIdBits = 20;
  static constexpr std::uint64_t kIdMask = (std::uint64_t(1) << kIdBits) - 1;
  static constexpr std::uint64_t kMaxValue = (std::uint64_t(1) << (64 - kIdBits)) - 1;

  // The owner thread. False (nothing stored): the ring is full, or the
  // add does not fit a cell.
  bool Push(offload::CounterId id, std::uint64_t value) {
    if (value > kMaxValue || id > kIdMask) return false;
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    if (h - tail_seen_ >= kCells) {
      tail_seen_ = tail_.load(std::memory_order_acquire);
      if (h - tail_seen_ >= kCells) return false;
    }
    cells_[h % kCells].store((value << kIdBits) | id, std::memory_order_relaxed);
    head_.store(h + 1, std::memory_order_release);
    pushed_ids_ |= IdBit(id);
    return true;
  }

  // The owner thread: whether an add to `id` it published still waits
  // for the agent. A mask of the counters (id mod 64) pushed since the
  // owner last saw the ring empty answers most reads (a plan's Test reads
  // its done counter, which no start adds to) from the owner's own line.
  // A mask hit may be another id with the same bit: the agent's tail is
  // read and the cells not yet taken are scanned for `id` itself (cold),
  // so a caller waits only on an add to `id`.
  bool HoldsAddTo(offload::CounterId id) {
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    if (tail_seen_ == h || (pushed_ids_ & IdBit(id)) == 0) return false;
    return ScanFor(id, h);
  }

  // Any thread: the adds published so far, and whether the agent has
  // applied every add up to `head` (EmulatedBackend::FreeCounter waits on
  // these for the adds of every thread).
  std::uint64_t published() const { return head_.load(std::memory_order_acquire); }
  bool TakenThrough(std::uint64_t head) const {
    return tail_.load(std::memory_order_acquire) >= head;
  }

  // The agent: adds published and not yet taken.
  bool Pending() const { return head_.load(std::memory_order_acquire) != taken_; }
  // The agent: hands every published add to apply(id, value), in order,
  // then frees their cells. Returns how many.
  template <typename Apply>
  std::uint64_t Take(Apply&& apply) {
    const std::uint64_t h = head_.load(std::memory_order_acquire);
    const std::uint64_t n = h - taken_;
    if (n == 0) return 0;
    for (std::uint64_t t = taken_; t != h; ++t) {
      const std::uint64_t w = cells_[t % kCells].load(std::memory_order_relaxed);
      apply(offload::CounterId(w & kIdMask), w >> kIdBits);
    }
    taken_ = h;
    tail_.store(h, std::memory_order_release);
    return n;
  }

  // A thread's claim (its token: nonzero, unique among live threads).
  bool Claim(std::uintptr_t token) {
    std::uintptr_t none = 0;
    return owner_.compare_exchange_strong(none, token, std::memory_order_acq_rel);
  }
  std::uintptr_t owner() const { return owner_.load(std::memory_order_acquire); }
  // Adds ever published (tests).
  std::uint64_t pushed() const { return head_.load(std::memory_order_acquire); }

 private:
  static std::uint64_t IdBit(offload::CounterId id) { return std::uint64_t(1) << (id % 64); }

  // The owner thread, on a mask hit: only the owner writes the cells, and
  // those from the agent's tail to the head are not reused until taken.
  [[gnu::noinline]] bool ScanFor(offload::CounterId id, std::uint64_t h) {
    tail_seen_ = tail_.load(std::memory_order_acquire);
    if (tail_seen_ == h) {
      pushed_ids_ = 0;
      return false;
    }
    for (std::uint64_t t = tail_seen_; t != h; ++t)
      if ((cells_[t % kCells].load(std::memory_order_relaxed) & kIdMask) == id) return true;
    return false;
  }

  // The producer's line: written by the owner, read by the agent.
  alignas(64) std::atomic<std::uint64_t> head_{0};
  std::uint64_t tail_seen_ = 0;   // the owner's last look at tail_
  std::uint64_t pushed_ids_ = 0;  // HoldsAddTo's mask
  // The agent's line.
  alignas(64) std::atomic<std::uint64_t> tail_{0};
  std::uint64_t taken_ = 0;
  alignas(64) std::atomic<std::uintptr_t> owner_{0};
  alignas(64) std::atomic<std::uint64_t> cells_[kCells] = {};
};

}  // namespace nicq::ofi
