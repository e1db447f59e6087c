// Requests that complete by polling (AddPolledRequest): a progress hook
// marks each one done when its poll says so (MPI_Isendrecv,
// MPI_Buffer_iflush, ...: operations whose completion no event reports).
#include <atomic>
#include <mutex>
#include <vector>

#include "api/api_internal.h"
#include "core/log.h"
#include "core/progress_hooks.h"

namespace nicq::api {

namespace {

struct Polled {
  Request* req;
  bool (*poll)(Request*);
};
struct PolledList {
  std::mutex mu;
  std::vector<Polled> list;
  std::atomic<int> count{0};
};
PolledList& PolledRequests() {
  static auto* p = new PolledList();
  return *p;
}

// The progress hook: marks done every polled request whose poll says so.
// A pass already running on another thread is enough; never wait for it.
bool PollRequests(void*) {
  PolledList& p = PolledRequests();
  if (p.count.load(std::memory_order_acquire) == 0) return false;
  std::unique_lock<std::mutex> lock(p.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  bool any = false;
  for (std::size_t i = 0; i < p.list.size();) {
    if (!p.list[i].poll(p.list[i].req)) {
      ++i;
      continue;
    }
    p.list[i].req->MarkDone();
    p.list[i] = p.list.back();
    p.list.pop_back();
    p.count.fetch_sub(1, std::memory_order_release);
    any = true;
  }
  return any;
}

}  // namespace

void AddPolledRequest(Request* req, bool (*poll)(Request*)) {
  static const bool registered = progress::RegisterHook(PollRequests, nullptr);
  if (!registered) NICQ_LOG(kError, kCore, "no room for the polled-request progress hook");
  PolledList& p = PolledRequests();
  std::lock_guard<std::mutex> lock(p.mu);
  p.list.push_back(Polled{req, poll});
  p.count.fetch_add(1, std::memory_order_release);
}

}  // namespace nicq::api
