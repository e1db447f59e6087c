#include "coll/schedule.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "coll/offload_allreduce.h"
#include "coll/persistent.h"
#include "core/log.h"
#include "core/progress_hooks.h"
#include "dtype/reduce.h"
#include "runtime/async_progress.h"
#include "runtime/runtime.h"

namespace nicq::coll {

// ---- building ----------------------------------------------------------------

void Schedule::SetReduce(int op, int type_handle, std::ptrdiff_t shift) {
  dtype::RetainOp(op);
  if (op_ != 0) dtype::ReleaseOp(op_);
  op_ = op;
  red_type_ = type_handle;
  red_shift_ = shift;
  prepared_ = dtype::PreparedReduce::For(op, type_handle);
  if (!prepared_.valid()) Hold(dtype::Lookup(type_handle));
}

void Schedule::Hold(const dtype::Type* t) {
  if (!t || t->predefined) return;
  auto* held = const_cast<dtype::Type*>(t);
  dtype::Retain(held);
  held_types_.push_back(held);
}

void Schedule::DropHolds() {
  for (dtype::Type* t : held_types_) dtype::Release(t);
  held_types_.clear();
  if (op_ != 0) dtype::ReleaseOp(op_);
  op_ = 0;
}

void Schedule::Reset() {
  DropHolds();
  steps_.clear();
  phase_end_.clear();
  open_from_ = 0;
  largest_message_ = 0;
  peer_map_ = nullptr;
  scratch_used_ = 0;
  op_ = red_type_ = 0;
  red_shift_ = 0;
  prepared_ = {};
  release_on_done = false;
  algorithm = "";
  on_done = nullptr;
  on_done_arg = nullptr;
}

char* Schedule::Scratch(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  const std::size_t i = scratch_used_++;
  if (i == scratch_.size()) {
    scratch_.emplace_back();
    scratch_size_.push_back(0);
  }
  if (scratch_size_[i] < bytes) {
    scratch_[i].reset(new char[bytes]);
    scratch_size_[i] = bytes;
  }
  return scratch_[i].get();
}

void Schedule::Send(const void* buf, std::size_t bytes, int peer) {
  Step s;
  s.kind = Step::kSend;
  s.src = buf;
  s.bytes = bytes;
  s.peer = peer_map_ ? peer_map_[peer] : peer;
  steps_.push_back(s);
  if (bytes > largest_message_) largest_message_ = bytes;
}

void Schedule::Recv(void* buf, std::size_t bytes, int peer) {
  Step s;
  s.kind = Step::kRecv;
  s.dst = buf;
  s.bytes = bytes;
  s.peer = peer_map_ ? peer_map_[peer] : peer;
  steps_.push_back(s);
  if (bytes > largest_message_) largest_message_ = bytes;
}

void Schedule::SendRemote(const void* buf, std::size_t bytes, int peer) {
  Send(buf, bytes, peer);
  steps_.back().remote = true;
}

void Schedule::RecvRemote(void* buf, std::size_t bytes, int peer) {
  Recv(buf, bytes, peer);
  steps_.back().remote = true;
}

void Schedule::Copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
  Step s;
  s.kind = Step::kCopy;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  steps_.push_back(s);
}

void Schedule::Reduce(const void* in, void* inout, std::size_t elements) {
  if (elements == 0) return;
  Step s;
  s.kind = Step::kReduce;
  s.src = in;
  s.dst = inout;
  s.bytes = elements;
  steps_.push_back(s);
}

void Schedule::Pack(const dtype::Type* t, const void* src, std::int64_t count, void* dst) {
  if (count == 0) return;
  Step s;
  s.kind = Step::kPack;
  Hold(t);
  s.type = t;
  s.src = src;
  s.dst = dst;
  s.count = count;
  steps_.push_back(s);
}

void Schedule::Unpack(const dtype::Type* t, const void* src, std::int64_t count, void* dst) {
  if (count == 0) return;
  Step s;
  s.kind = Step::kUnpack;
  Hold(t);
  s.type = t;
  s.src = src;
  s.dst = dst;
  s.count = count;
  steps_.push_back(s);
}

void Schedule::CopyTyped(const dtype::Type* t, const void* src, std::int64_t count, void* dst) {
  if (count == 0 || src == dst) return;
  Step s;
  s.kind = Step::kCopyTyped;
  Hold(t);
  s.type = t;
  s.src = src;
  s.dst = dst;
  s.count = count;
  steps_.push_back(s);
}

void Schedule::EndPhase() {
  const auto n = static_cast<std::uint32_t>(steps_.size());
  if (n == open_from_) return;
  phase_end_.push_back(n);
  open_from_ = n;
  // Size the request array now so Launch never allocates.
  std::uint32_t comm = 0;
  const std::uint32_t from = phase_end_.size() > 1 ? phase_end_[phase_end_.size() - 2] : 0;
  for (std::uint32_t i = from; i < n; ++i)
    comm += steps_[i].kind == Step::kSend || steps_[i].kind == Step::kRecv;
  if (comm > reqs_cap_) {
    reqs_.reset(new Request[comm]);
    reqs_cap_ = comm;
  }
}

// ---- running -------------------------------------------------------------------

Status Schedule::Launch(Comm* comm, int tag, Request* owner, Comm* local) {
  EndPhase();
  comm_ = comm;
  local_ = local ? local : comm;
  tag_ = tag;
  owner_ = owner;
  phase_ = 0;
  posted_ = 0;
  running_.store(true, std::memory_order_release);
  return Status::Ok();
}

Status Schedule::RunLocal(const Step& s) const {
  switch (s.kind) {
    case Step::kCopy:
      std::memmove(s.dst, s.src, s.bytes);
      break;
    case Step::kReduce:
      if (prepared_.valid()) {
        prepared_.Apply(s.src, s.dst, static_cast<std::int64_t>(s.bytes));
        break;
      }
      return dtype::Reduce(op_, red_type_, static_cast<const char*>(s.src) + red_shift_,
                           static_cast<char*>(s.dst) + red_shift_,
                           static_cast<std::int64_t>(s.bytes));
    case Step::kPack:
      dtype::Pack(*s.type, s.src, s.count, s.dst);
      break;
    case Step::kUnpack:
      dtype::Unpack(*s.type, s.src, s.count * s.type->size, s.count, s.dst);
      break;
    case Step::kCopyTyped:
      dtype::CopyTyped(*s.type, s.src, s.count, s.dst);
      break;
    default:
      return Error(Code::kIntern, "RunLocal: not a local step");
  }
  return Status::Ok();
}

Status Schedule::EnterPhase() {
  const std::uint32_t from = phase_ == 0 ? 0 : phase_end_[phase_ - 1];
  const std::uint32_t to = phase_end_[phase_];
  posted_ = 0;
  for (std::uint32_t i = from; i < to; ++i) {
    const Step& s = steps_[i];
    switch (s.kind) {
      case Step::kCopy:
      case Step::kReduce:
      case Step::kPack:
      case Step::kUnpack:
      case Step::kCopyTyped:
        NICQ_RETURN_IF_ERROR(RunLocal(s));
        break;
      case Step::kSend:
        NICQ_RETURN_IF_ERROR(rt::Isend(s.src, s.bytes, s.peer, tag_, s.remote ? comm_ : local_,
                                       SendMode::kStandard, &reqs_[posted_++]));
        break;
      case Step::kRecv:
        NICQ_RETURN_IF_ERROR(
            rt::Irecv(s.dst, s.bytes, s.peer, tag_, s.remote ? comm_ : local_, &reqs_[posted_++]));
        break;
    }
  }
  return Status::Ok();
}

std::string Schedule::DescribePosted(std::uint32_t index) const {
  const std::uint32_t from = phase_ == 0 ? 0 : phase_end_[phase_ - 1];
  std::uint32_t seen = 0;
  for (std::uint32_t i = from; i < phase_end_[phase_]; ++i) {
    const Step& s = steps_[i];
    if (s.kind != Step::kSend && s.kind != Step::kRecv) continue;
    if (seen++ != index) continue;
    const bool send = s.kind == Step::kSend;
    return std::string(send ? "sending " : "receiving ") + std::to_string(s.bytes) + " bytes " +
           (send ? "to " : "from ") + (s.remote ? "remote rank " : "rank ") +
           std::to_string(s.peer) + " in phase " + std::to_string(phase_ + 1) + " of " +
           std::to_string(phase_end_.size()) + " failed";
  }
  return "a message of the collective failed";
}

void Schedule::Finish(const Status& st) {
  running_.store(false, std::memory_order_release);
  Request* owner = owner_;
  owner->status = RequestStatus{};
  owner->status.source = rt::kAnySource;
  owner->status.tag = rt::kAnyTag;
  last_error_ = st.ok() ? 0 : static_cast<int>(st.code());
  if (!st.ok()) {
    owner->status.error = last_error_;
    NICQ_LOG(kWarn, kColl, "collective (%s) failed: %s", algorithm, st.message().c_str());
    NoteRunFailure(owner, std::string("collective (") + algorithm + "): " + st.message());
  }
  if (on_done) on_done(on_done_arg);
  if (release_on_done) ReleaseSchedule(this);
  owner->MarkDone();  // last: the owner may be reused at once
}

bool Schedule::Advance() {
  if (!running_.load(std::memory_order_relaxed)) return false;
  bool progressed = false;
  for (;;) {
    if (posted_ > 0) {
      for (std::uint32_t i = 0; i < posted_; ++i) {
        if (!reqs_[i].IsDone()) return progressed;
      }
      for (std::uint32_t i = 0; i < posted_; ++i) {
        if (reqs_[i].status.error != 0) {
          Finish(Error(static_cast<Code>(reqs_[i].status.error), DescribePosted(i)));
          return true;
        }
      }
      posted_ = 0;
      ++phase_;
      progressed = true;
    }
    if (phase_ >= phase_end_.size()) {
      Finish(Status::Ok());
      return true;
    }
    Status st = EnterPhase();
    progressed = true;
    if (!st.ok()) {
      // Receives already posted would write into buffers the user now owns:
      // wait them out is impossible without their peers, so report loudly.
      Finish(st);
      return true;
    }
    if (posted_ == 0) ++phase_;  // local-only phase: go on at once
  }
}

}  // namespace nicq::coll
