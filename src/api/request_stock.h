// RequestStock: a thread's stock of free request slots in front of the
// request table (requests.cc keeps one per thread).
//
// A LIFO linked through ApiRequest::next_free, every slot in it already in
// the state of a fresh one (FreeRequest resets a slot as it gives it back),
// so taking one is a pop and a flag store. Indices come from the table
// kBatch at a time (SlotTable::Reserve), and go back kBatch at a time
// (SlotTable::Unreserve) when the stock passes 2 * kBatch and when the
// stock ends with its thread. Resetting on give-back, not on take, lets
// every layer above take a slot as fresh (rt::IsendFresh/IrecvFresh reset
// nothing), so a request is reset once per use; and a pointer pop needs no
// index-to-slot walk. Why a stock at all: an 8-byte MPI_Isend + MPI_Wait
// made two mutex round trips for its request slot, about a fifth of its
// host instructions (docs/performance.md, Run 55).
#pragma once

#include <atomic>

#include "api/api_internal.h"

namespace nicq::api {

// Hidden: libnicq.so then calls Refill directly, not through the PLT that
// an exported inline member function goes through.
class __attribute__((visibility("hidden"))) RequestStock {
 public:
  static constexpr int kBatch = 32;

  explicit RequestStock(RequestTable& table) : table_(table) {}
  ~RequestStock() {
    while (count_ > 0) Spill(count_ < kBatch ? count_ : kBatch);
  }
  RequestStock(const RequestStock&) = delete;
  RequestStock& operator=(const RequestStock&) = delete;

  // A live slot, or nullptr when the table is full.
  ApiRequest* Take() {
    if (!head_ && !Refill()) [[unlikely]]
      return nullptr;
    ApiRequest* r = head_;
    head_ = r->next_free;
    --count_;
    RequestTable::UsedFlag(r).store(true, std::memory_order_release);
    return r;
  }
  // r is reset and no longer live.
  void Give(ApiRequest* r) {
    if (count_ == 2 * kBatch) [[unlikely]]
      Spill(kBatch);
    r->next_free = head_;
    head_ = r;
    ++count_;
  }
  // Slots held, reserved in the table and not live.
  int count() const { return count_; }

 private:
  [[gnu::noinline]] bool Refill() {
    int index[kBatch];
    const int n = table_.Reserve(index, kBatch);
    for (int i = n - 1; i >= 0; --i) {
      ApiRequest* r = table_.Reserved(index[i]);
      r->handle = NICQ_HANDLE(NICQ_KIND_REQUEST, index[i]);
      r->next_free = head_;
      head_ = r;
    }
    count_ += n;
    return n > 0;
  }
  [[gnu::noinline]] void Spill(int n) {
    int index[kBatch];
    for (int i = 0; i < n; ++i) {
      index[i] = IndexOf(head_->handle);
      head_ = head_->next_free;
    }
    count_ -= n;
    table_.Unreserve(index, n);
  }

  RequestTable& table_;
  ApiRequest* head_ = nullptr;
  int count_ = 0;
};

}  // namespace nicq::api
