#include "queue/queue_types.h"

#include <mutex>
#include <string>

namespace nicq::queue {
namespace {

constexpr int kMaxTypes = 8;
struct Registry {
  std::mutex mu;
  QueueType types[kMaxTypes];
  int n = 0;
  Registry() {
    types[0] = QueueType{kQueueTypeDefault, "default", nullptr};
    n = 1;
  }
};
Registry& R() {
  static auto* r = new Registry();
  return *r;
}

}  // namespace

Status RegisterQueueType(const QueueType& t) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mu);
  for (int i = 0; i < r.n; ++i)
    if (r.types[i].id == t.id)
      return Error(Code::kArg, "queue type id " + std::to_string(t.id) + " is already registered");
  if (r.n == kMaxTypes) return Error(Code::kArg, "queue type table is full");
  r.types[r.n++] = t;
  return Status::Ok();
}

const QueueType* FindQueueType(int id) {
  Registry& r = R();
  std::lock_guard<std::mutex> lock(r.mu);
  for (int i = 0; i < r.n; ++i)
    if (r.types[i].id == id) return &r.types[i];
  return nullptr;
}

}  // namespace nicq::queue
