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

  // Batch interface for a per-thread stock of slots (the request table's
  // RequestStock, src/api/request_stock.h): up to n free indices, reserved
  // for the caller but not live (Get returns nullptr for them until the
  // caller sets UsedFlag); the number reserved, 0 when the table is full.
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
  // The object of a reserved (not live) index, to prepare before it is live.
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

}  // namespace nicq::dtype
