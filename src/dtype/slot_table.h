// SlotTable: objects stored in place in fixed-size chunks, addressed by a
// small integer index (the low bits of an MPI handle).
//
// Why: MPI handles must be cheap to look up from any thread, and creating
// a request must not allocate once the table is warm. Chunks are allocated
// when the free list runs dry and never moved or freed before shutdown, so
// Get() needs no lock; Alloc()/Free() take a short uncontended mutex (no
// syscall) and reuse indices from a free list whose capacity is reserved
// when each chunk is added.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

namespace nicq::dtype {

template <typename T, int kChunkBits = 8, int kMaxChunks = 1 << 12>
class SlotTable {
 public:
  static constexpr int kChunk = 1 << kChunkBits;
  static constexpr int kCapacity = kChunk * kMaxChunks;

  // Indices below first_index are never handed out (predefined handles).
  explicit SlotTable(int first_index) : next_(first_index) {}
  ~SlotTable() {
    for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
  }
  SlotTable(const SlotTable&) = delete;
  SlotTable& operator=(const SlotTable&) = delete;

  // The live object at index, or nullptr (never allocated or freed).
  T* Get(int index) const {
    Slot* s = SlotAt(index);
    return s && s->used.load(std::memory_order_acquire) ? &s->obj : nullptr;
  }

  // A free slot's index (its object is in the state Free() left it), or -1
  // when the table is full or out of memory.
  int Alloc() {
    std::lock_guard<std::mutex> lock(mu_);
    int index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      if (next_ >= kCapacity) return -1;
      index = next_++;
      int c = index >> kChunkBits;
      if (!chunks_[c].load(std::memory_order_relaxed)) {
        Slot* chunk = new (std::nothrow) Slot[kChunk];
        if (!chunk) return -1;
        free_.reserve(static_cast<std::size_t>(c + 1) * kChunk);
        chunks_[c].store(chunk, std::memory_order_release);
      }
    }
    Slot* s = SlotAt(index);
    if (!s) return -1;
    s->used.store(true, std::memory_order_release);
    return index;
  }

  // Returns the slot to the free list; the caller resets the object first.
  void Free(int index) {
    Slot* s = SlotAt(index);
    if (!s) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (!s->used.exchange(false, std::memory_order_acq_rel)) return;
    free_.push_back(index);
  }

  // Batch interface for a per-thread cache (SlotCache): up to n free
  // indices, reserved for the caller but not live (Get returns nullptr for
  // them until Claim); the number reserved, 0 when the table is full.
  int Reserve(int* out, int n) {
    std::lock_guard<std::mutex> lock(mu_);
    int got = 0;
    while (got < n && !free_.empty()) {
      out[got++] = free_.back();
      free_.pop_back();
    }
    while (got < n && next_ < kCapacity) {
      const int c = next_ >> kChunkBits;
      if (!chunks_[c].load(std::memory_order_relaxed)) {
        Slot* chunk = new (std::nothrow) Slot[kChunk];
        if (!chunk) break;
        free_.reserve(static_cast<std::size_t>(c + 1) * kChunk);
        chunks_[c].store(chunk, std::memory_order_release);
      }
      out[got++] = next_++;
    }
    return got;
  }
  // Gives reserved indices back to the shared free list.
  void Unreserve(const int* idx, int n) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < n; ++i) free_.push_back(idx[i]);
  }
  // A reserved index becomes live (no lock).
  void Claim(int index) { SlotAt(index)->used.store(true, std::memory_order_release); }
  // A live index stops being live and is the caller's to reserve again; false
  // when it was not live (a double free), which leaves everything unchanged.
  bool Release(int index) {
    Slot* s = SlotAt(index);
    return s && s->used.exchange(false, std::memory_order_acq_rel);
  }

  // The object of a reserved (not live) index, to prepare before Claim.
  T* Reserved(int index) const { return &SlotAt(index)->obj; }
  // The live flag of a slot's object, reached from the object itself (a
  // per-thread stock of objects need not go back through the index).
  static std::atomic<bool>& UsedFlag(T* obj) {
    static_assert(std::is_standard_layout_v<Slot>, "the object must be the slot's first member");
    return reinterpret_cast<Slot*>(obj)->used;
  }
  // Release by object: false when it was not live (a double free). Where no
  // other thread can free the same object at once (`concurrent` false) a
  // load and a store do what the exchange does.
  static bool ReleaseObject(T* obj, bool concurrent) {
    std::atomic<bool>& used = UsedFlag(obj);
    if (concurrent) return used.exchange(false, std::memory_order_acq_rel);
    if (!used.load(std::memory_order_relaxed)) return false;
    used.store(false, std::memory_order_release);
    return true;
  }

  int LiveCount() const {
    int n = 0;
    for (int c = 0; c < kMaxChunks; ++c) {
      Slot* chunk = chunks_[c].load(std::memory_order_acquire);
      if (!chunk) continue;
      for (int i = 0; i < kChunk; ++i) n += chunk[i].used.load(std::memory_order_relaxed);
    }
    return n;
  }

 private:
  struct Slot {
    T obj{};
    std::atomic<bool> used{false};
  };
  Slot* SlotAt(int index) const {
    if (index < 0 || index >= kCapacity) return nullptr;
    Slot* chunk = chunks_[index >> kChunkBits].load(std::memory_order_acquire);
    return chunk ? &chunk[index & (kChunk - 1)] : nullptr;
  }

  std::atomic<Slot*> chunks_[kMaxChunks] = {};
  std::mutex mu_;
  std::vector<int> free_;
  int next_;
};

// A per-thread stock of reserved indices in front of a SlotTable: Alloc and
// Free then touch only the slot's own flag, and the table's mutex is taken
// once per kBatch of them. Why: an 8-byte MPI_Isend + MPI_Wait made two
// mutex round trips for its request slot, about a fifth of its host
// instructions. Indices a thread holds stay reserved until it exits.
template <typename Table, int kBatch = 32>
class SlotCache {
 public:
  explicit SlotCache(Table& table) : table_(table) {}
  ~SlotCache() { table_.Unreserve(stock_, count_); }
  SlotCache(const SlotCache&) = delete;
  SlotCache& operator=(const SlotCache&) = delete;

  int Alloc() {
    if (count_ == 0) count_ = table_.Reserve(stock_, kBatch);
    if (count_ == 0) return -1;
    const int index = stock_[--count_];
    table_.Claim(index);
    return index;
  }
  void Free(int index) {
    if (!table_.Release(index)) return;
    if (count_ == 2 * kBatch) {
      table_.Unreserve(stock_ + kBatch, kBatch);
      count_ = kBatch;
    }
    stock_[count_++] = index;
  }

 private:
  Table& table_;
  int stock_[2 * kBatch];
  int count_ = 0;
};

}  // namespace nicq::dtype
