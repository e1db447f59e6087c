// Intrusive FIFO and doubly-linked list: the engines keep request-private
// state in pooled objects that carry their own links, so queueing a post or
// a posted receive never allocates.
#pragma once

#include <cstddef>

namespace nicq::transport {

// Singly linked FIFO through the member `T* T::*Next`.
template <class T, T* T::*Next>
class IntrusiveFifo {
 public:
  bool empty() const { return head_ == nullptr; }
  std::size_t size() const { return size_; }
  T* front() const { return head_; }
  void push_back(T* x) {
    x->*Next = nullptr;
    if (tail_)
      tail_->*Next = x;
    else
      head_ = x;
    tail_ = x;
    ++size_;
  }
  T* pop_front() {
    T* x = head_;
    if (!x) return nullptr;
    head_ = x->*Next;
    if (!head_) tail_ = nullptr;
    x->*Next = nullptr;
    --size_;
    return x;
  }
  // Remove every element for which pred(x) is true, keeping the order of the
  // rest (rare path: dead peers, cancel).
  template <class Pred>
  void remove_if(Pred pred) {
    T* prev = nullptr;
    for (T* x = head_; x;) {
      T* nx = x->*Next;
      if (pred(x)) {
        if (prev)
          prev->*Next = nx;
        else
          head_ = nx;
        if (tail_ == x) tail_ = prev;
        --size_;
      } else {
        prev = x;
      }
      x = nx;
    }
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
  std::size_t size_ = 0;
};

// Doubly linked list through `T::prev` / `T::next` (posted receives and
// unexpected messages: matched entries leave from the middle).
template <class T>
class IntrusiveList {
 public:
  bool empty() const { return head_ == nullptr; }
  std::size_t size() const { return size_; }
  T* front() const { return head_; }
  void push_back(T* x) {
    x->next = nullptr;
    x->prev = tail_;
    if (tail_)
      tail_->next = x;
    else
      head_ = x;
    tail_ = x;
    ++size_;
  }
  void erase(T* x) {
    if (x->prev)
      x->prev->next = x->next;
    else
      head_ = x->next;
    if (x->next)
      x->next->prev = x->prev;
    else
      tail_ = x->prev;
    x->prev = x->next = nullptr;
    --size_;
  }

 private:
  T* head_ = nullptr;
  T* tail_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace nicq::transport
