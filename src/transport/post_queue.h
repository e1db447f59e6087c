// PostQueue: the order-preserving software queue in front of the provider.
//
// When a provider's transmit queue is full (fi_* returns -FI_EAGAIN) the post
// is kept here and retried from progress. Once anything is queued, every
// later post queues behind it, so posts reach the provider in exactly the
// order the application made them (MPI's non-overtaking rule must not depend
// on provider queue depth).
#pragma once

#include "core/status.h"
#include "transport/intrusive_list.h"

namespace nicq::transport {

template <class T, T* T::*Next>
class PostQueue {
 public:
  bool empty() const { return q_.empty(); }
  std::size_t size() const { return q_.size(); }

  // Post `x` now if nothing is waiting, else queue it. try_post(x) returns
  // Ok (posted), kAgain (provider full) or an error (x is handed to
  // on_error and dropped from the queue).
  template <class TryPost, class OnError>
  void Submit(T* x, TryPost&& try_post, OnError&& on_error) {
    if (q_.empty()) {
      Status s = try_post(x);
      if (s.ok()) return;
      if (s.code() != Code::kAgain) {
        on_error(x, s);
        return;
      }
    }
    q_.push_back(x);
  }

  // Retry queued posts in order until the provider pushes back. Returns the
  // number posted (or failed), so progress knows something happened.
  template <class TryPost, class OnError>
  std::size_t Drain(TryPost&& try_post, OnError&& on_error) {
    std::size_t n = 0;
    while (T* x = q_.front()) {
      Status s = try_post(x);
      if (s.code() == Code::kAgain) break;
      q_.pop_front();
      ++n;
      if (!s.ok()) on_error(x, s);
    }
    return n;
  }

  template <class Pred>
  void remove_if(Pred pred) {
    q_.remove_if(pred);
  }

 private:
  IntrusiveFifo<T, Next> q_;
};

}  // namespace nicq::transport
