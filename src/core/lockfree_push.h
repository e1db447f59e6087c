// Pushes a node onto an intrusive lock-free list head (a Treiber stack's
// push): producers on any thread, one consumer that takes the whole list
// with head.exchange(nullptr, std::memory_order_acquire). The release on
// success publishes the node's fields and its link to that consumer.
#pragma once

#include <atomic>

namespace nicq {

// `link(node, next)` stores the link field (a member or a setter).
template <class T, class Link>
void LockFreePush(std::atomic<T*>& head, T* node, Link link) {
  T* first = head.load(std::memory_order_relaxed);
  do {
    link(node, first);
  } while (!head.compare_exchange_weak(first, node, std::memory_order_release,
                                       std::memory_order_relaxed));
}

}  // namespace nicq
