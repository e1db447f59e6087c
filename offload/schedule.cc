#include "offload/schedule.h"

#include <algorithm>

namespace nicq::offload {

const char* StepKindName(StepKind k) {
  switch (k) {
    case StepKind::kSend:
      return "send";
    case StepKind::kRecv:
      return "recv";
    case StepKind::kPut:
      return "put";
    case StepKind::kAtomic:
      return "atomic";
    case StepKind::kRemoteCounterAdd:
      return "remote_counter_add";
    case StepKind::kCounterAdd:
      return "counter_add";
    case StepKind::kReduce:
      return "reduce";
    case StepKind::kCopy:
      return "copy";
    case StepKind::kHost:
      return "host";
    case StepKind::kNop:
      return "nop";
  }
  return "?";
}

PlanCounter Schedule::AddCounter(std::string name, std::uint64_t remote_per_epoch) {
  counters_.push_back(NamedCounter{std::move(name), remote_per_epoch});
  return static_cast<PlanCounter>(counters_.size() - 1);
}

BufferId Schedule::ExposeBuffer(std::string name, void* addr, std::size_t len,
                                PlanCounter arrival) {
  buffers_.push_back(ExposedBuffer{std::move(name), addr, len, arrival});
  return static_cast<BufferId>(buffers_.size() - 1);
}

void* Schedule::AllocScratch(std::size_t bytes) {
  scratch_.push_back(std::make_unique<std::uint8_t[]>(bytes ? bytes : 1));
  return scratch_.back().get();
}

StepId Schedule::Add(Step s) {
  steps_.push_back(std::move(s));
  return static_cast<StepId>(steps_.size() - 1);
}

StepId Schedule::Send(PeerId peer, const void* src, std::size_t bytes, std::uint64_t tag,
                      std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kSend;
  s.peer = peer;
  s.src = src;
  s.bytes = bytes;
  s.tag = tag;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::Recv(PeerId peer, void* dst, std::size_t bytes, std::uint64_t tag,
                      std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kRecv;
  s.peer = peer;
  s.dst = dst;
  s.bytes = bytes;
  s.tag = tag;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::Put(const void* src, std::size_t bytes, RemoteBuffer to,
                     std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kPut;
  s.peer = to.peer;
  s.src = src;
  s.bytes = bytes;
  s.rbuf = to;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::Atomic(AtomicOp op, AtomicType type, const void* src, std::size_t bytes,
                        RemoteBuffer to, std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kAtomic;
  s.aop = op;
  s.atype = type;
  s.peer = to.peer;
  s.src = src;
  s.bytes = bytes;
  s.rbuf = to;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::RemoteCounterAdd(RemoteCounter to, std::uint64_t value, std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kRemoteCounterAdd;
  s.peer = to.peer;
  s.rctr = to;
  s.value = value;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::CounterAdd(PlanCounter counter, std::uint64_t value, std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kCounterAdd;
  s.local_counter = counter;
  s.value = value;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::Reduce(AtomicOp op, AtomicType type, void* dst, const void* src, std::size_t bytes,
                        std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kReduce;
  s.aop = op;
  s.atype = type;
  s.dst = dst;
  s.src = src;
  s.bytes = bytes;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::Copy(void* dst, const void* src, std::size_t bytes, std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kCopy;
  s.dst = dst;
  s.src = src;
  s.bytes = bytes;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::Host(void (*fn)(void*), void* arg, std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kHost;
  s.host_fn = fn;
  s.host_arg = arg;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

StepId Schedule::Nop(std::vector<StepId> deps) {
  Step s;
  s.kind = StepKind::kNop;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

Status Schedule::Validate() const {
  auto bad = [&](std::size_t i, const std::string& why) {
    return Error(Code::kArg, "Schedule(" + name_ + ")::Validate: step " + std::to_string(i) + " (" +
                                 StepKindName(steps_[i].kind) + "): " + why);
  };
  // For each named counter, the input set of the first step waiting on it.
  std::vector<const std::vector<StepId>*> waiters(counters_.size(), nullptr);
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    for (StepId d : s.deps) {
      if (d >= i) return bad(i, "input " + std::to_string(d) + " is not an earlier step");
    }
    std::vector<StepId> sorted = s.deps;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return bad(i, "an input is listed twice");
    }
    if (s.completion_inc == 0)
      return bad(i, "completion increment 0 would never trigger its consumers");
    if (s.wait_counter != kNoPlanCounter) {
      if (s.wait_counter >= counters_.size()) return bad(i, "waits on an undeclared counter");
      const auto*& first = waiters[s.wait_counter];
      if (first == nullptr) {
        first = &s.deps;
      } else {
        std::vector<StepId> a = *first, b = s.deps;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        if (a != b) {
          return bad(i, "steps waiting on counter '" + counters_[s.wait_counter].name +
                            "' must have the same inputs");
        }
      }
    }
    if (s.kind == StepKind::kCounterAdd && s.local_counter >= counters_.size()) {
      return bad(i, "adds to an undeclared counter");
    }
    if ((s.kind == StepKind::kAtomic || s.kind == StepKind::kReduce) &&
        s.bytes % AtomicTypeSize(s.atype) != 0) {
      return bad(i, "bytes " + std::to_string(s.bytes) + " is not a multiple of the element size");
    }
    if (s.kind == StepKind::kHost && s.host_fn == nullptr)
      return bad(i, "host step without a function");
    const bool remote = s.kind == StepKind::kSend || s.kind == StepKind::kRecv ||
                        s.kind == StepKind::kPut || s.kind == StepKind::kAtomic ||
                        s.kind == StepKind::kRemoteCounterAdd;
    if (remote && s.peer < 0) return bad(i, "no peer");
  }
  for (std::size_t b = 0; b < buffers_.size(); ++b) {
    if (buffers_[b].arrival != kNoPlanCounter && buffers_[b].arrival >= counters_.size()) {
      return Error(Code::kArg, "Schedule(" + name_ + ")::Validate: buffer '" + buffers_[b].name +
                                   "' counts arrivals on an undeclared counter");
    }
  }
  return Status::Ok();
}

}  // namespace nicq::offload
