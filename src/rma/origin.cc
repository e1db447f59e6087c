// The origin side: each operation becomes one request message to the target
// (origin data packed contiguously after the target layout); operations
// with a result post the receive of their reply first. Results are unpacked
// when a synchronization call (or MPI_Wait on an R* request) finds the
// reply arrived. Replies from one target arrive in request order, so the
// receives posted in issue order match them one for one. On the direct path
// (w->direct) the same checks run, then the origin moves the data itself
// (IssueDirect, direct_ops.cc) and the operation is complete at return,
// except a PSCW put to another process's created window, which is staged
// until the target's wait (direct_stage.cc).
#include <cstring>
#include <string>

#include "mpi.h"
#include "rma/direct.h"
#include "rma/offload.h"
#include "rma/wire.h"
#include "runtime/runtime.h"

namespace nicq::rma {

using namespace detail;

namespace {

std::string R(int rank) {
  return "rank " + std::to_string(rank);
}

// An access epoch to `rank` is open: fence, PSCW start group, or a lock.
Status CheckAccess(Window* w, int rank, const char* call) {
  if (rank < 0 || rank >= w->size)
    return Error(Code::kRank, std::string(call) + ": invalid target rank " + std::to_string(rank) +
                                  " (window of " + std::to_string(w->size) + " ranks)");
  if (w->fence_open || w->lock_all || w->lock_kind[std::size_t(rank)] != 0) return Status::Ok();
  if (w->pscw_access)
    for (int r : w->start_group)
      if (r == rank) return Status::Ok();
  return Error(Code::kRmaSync, std::string(call) + ": no access epoch to target " + R(rank) +
                                   " is open (MPI_Win_fence, MPI_Win_start, MPI_Win_lock or "
                                   "MPI_Win_lock_all first)");
}

// Header and target layout of a request; `data_bytes` of room after them.
std::vector<char> BuildRequest(MsgKind kind, const Target& t, int op, std::int64_t data_bytes,
                               char** data) {
  ReqHeader h;
  h.kind = kind;
  h.op = op;
  const dtype::Type& tt = *t.type;
  h.unit = tt.unit != 0 && dtype::IsPairIndex(tt.unit) ? tt.unit : 0;
  h.nblocks = std::int32_t(tt.blocks.size());
  h.disp = t.disp;
  h.count = t.count;
  h.extent = tt.extent;
  h.data_bytes = data_bytes;
  std::vector<char> msg(sizeof h + sizeof(WireBlock) * tt.blocks.size() + std::size_t(data_bytes));
  std::memcpy(msg.data(), &h, sizeof h);
  auto* wb = reinterpret_cast<WireBlock*>(msg.data() + sizeof h);
  for (std::size_t i = 0; i < tt.blocks.size(); ++i) {
    wb[i].offset = tt.blocks[i].offset;
    wb[i].length = tt.blocks[i].length;
    wb[i].basic = tt.blocks[i].basic;
  }
  *data = msg.data() + sizeof h + sizeof(WireBlock) * tt.blocks.size();
  return msg;
}

// The origin's range check, where the target's window size is known.
Status CheckRange(Window* w, const Target& t, const char* call) {
  if (w->flavor == Flavor::kDynamic) return Status::Ok();  // the target checks
  const dtype::Type& tt = *t.type;
  std::int64_t lo = 0, hi = 0;
  if (tt.IsContiguous()) {
    // One run from the displacement (the common case, without the walk).
    const std::int64_t off = t.disp * w->disp_units[std::size_t(t.rank)];
    const std::int64_t end = off + tt.size * t.count;
    if (end == off || (off >= 0 && end <= w->sizes[std::size_t(t.rank)])) return Status::Ok();
  }
  bool first = true;
  // The first and the last item bound the layout (items are at multiples
  // of the extent, which may be negative).
  for (std::int64_t item : {std::int64_t(0), t.count - 1}) {
    if (t.count <= 0) break;
    for (const dtype::Block& b : tt.blocks) {
      const std::int64_t s = item * tt.extent + b.offset, e = s + b.length;
      if (first || s < lo) lo = s;
      if (first || e > hi) hi = e;
      first = false;
    }
  }
  const std::int64_t off = t.disp * w->disp_units[std::size_t(t.rank)];
  const std::int64_t size = w->sizes[std::size_t(t.rank)];
  if (hi > lo && (off + lo < 0 || off + hi > size))
    return Error(Code::kRmaRange, std::string(call) + ": bytes [" + std::to_string(off + lo) +
                                      ", " + std::to_string(off + hi) + ") of " + R(t.rank) +
                                      "'s window of " + std::to_string(size) + " bytes");
  return Status::Ok();
}

Status CheckSizes(std::int64_t origin_bytes, const Target& t, const char* call) {
  const std::int64_t tb = t.type->size * t.count;
  if (origin_bytes != tb)
    return Error(Code::kType, std::string(call) + ": the origin gives " +
                                  std::to_string(origin_bytes) +
                                  " bytes, the target layout holds " + std::to_string(tb));
  return Status::Ok();
}

void Pack(const void* origin, const dtype::Type* ot, std::int64_t oc, char* dst) {
  if (ot->IsContiguous())
    std::memcpy(dst, origin, std::size_t(ot->size * oc));
  else
    dtype::Pack(*ot, origin, oc, dst);
}

// Drops finished results at the head of the list (keeps it short in long
// epochs of request-based operations).
void Prune(Window* w) {
  while (!w->pending.empty() && w->pending.front()->finished.load(std::memory_order_acquire))
    w->pending.pop_front();
}

// Posts the receive of a reply carrying `bytes` and queues it.
std::shared_ptr<Pending> ExpectReply(Window* w, int rank, std::int64_t bytes, void* user,
                                     const dtype::Type* type, std::int64_t count, Status* st) {
  auto p = std::make_shared<Pending>();
  p->target = rank;
  p->buf.resize(sizeof(ReplyHeader) + std::size_t(bytes));
  p->user = user;
  p->count = count;
  if (type) {
    p->type = type;
    dtype::Retain(const_cast<dtype::Type*>(type));
  }
  *st = rt::Irecv(p->buf.data(), p->buf.size(), rank, kReplyTag, w->comm, &p->recv);
  if (st->ok()) w->pending.push_back(p);
  return p;
}

Status Finish(Window* w, Pending& p) {
  (void)w;
  if (p.finished.load(std::memory_order_acquire)) return p.result;
  ReplyHeader rh;
  std::memcpy(&rh, p.buf.data(), sizeof rh);
  if (p.recv.status.error != 0) {
    p.result = Error(Code(p.recv.status.error), "the reply from " + R(p.target) + " failed");
  } else if (rh.error != 0) {
    p.result = Error(Code(rh.error), "an operation on " + R(p.target) +
                                         "'s window failed at the target (out of range or "
                                         "invalid for its datatype)");
  } else if (p.user && rh.bytes > 0) {
    const char* src = p.buf.data() + sizeof rh;
    if (p.type->IsContiguous())
      std::memcpy(p.user, src, std::size_t(rh.bytes));
    else
      dtype::Unpack(*p.type, src, rh.bytes, p.count, p.user);
  }
  if (p.type) dtype::Release(const_cast<dtype::Type*>(p.type));
  p.type = nullptr;
  p.finished.store(true, std::memory_order_release);
  return p.result;
}

// Marks an R* request: done at once (no result), or through its reply.
void BindRequest(Request* req, const std::shared_ptr<Pending>& p) {
  if (!req) return;
  req->status = RequestStatus{};
  req->engine = p ? new std::shared_ptr<Pending>(p) : nullptr;
  if (!p) req->MarkDone();
}

// Whether a put to `rank` goes to the staging area (direct_stage.cc): the
// target's memory is another process's MPI_Win_create memory and the put
// belongs to a PSCW access epoch to it (whose complete publishes it), not
// to a lock epoch (whose unlock must find it written).
bool StagesPut(Window* w, int rank) {
  const Direct* d = w->direct;
  if (d->stage_capacity == 0 || d->local_base[std::size_t(rank)] || !w->pscw_access ||
      w->lock_all || w->lock_kind[std::size_t(rank)] != 0)
    return false;
  for (int r : w->start_group)
    if (r == rank) return true;
  return false;
}

// The one-node direct path: the origin moves the data itself. Origin data
// is packed (unless contiguous), results are read packed and unpacked into
// the result layout. A failure found while applying an accumulate (an op
// the type does not allow) is kept for the next synchronization call, as
// the active-message path reports it.
Status IssueDirect(Window* w, MsgKind kind, const void* origin, const dtype::Type* ot,
                   std::int64_t oc, const void* extra, void* result, const dtype::Type* rtype,
                   std::int64_t rc, const Target& t, int op) {
  const std::int64_t tbytes = t.type->size * t.count;
  std::vector<char> packed_in, packed_out;
  const char* in = nullptr;
  if (ot && tbytes > 0) {
    if (ot->IsContiguous()) {
      in = static_cast<const char*>(origin);
    } else {
      packed_in.resize(std::size_t(tbytes));
      dtype::Pack(*ot, origin, oc, packed_in.data());
      in = packed_in.data();
    }
  }
  char* out = nullptr;
  const bool unpack = rtype && !rtype->IsContiguous();
  if (rtype) {
    if (unpack) packed_out.resize(std::size_t(tbytes));
    out = unpack ? packed_out.data() : static_cast<char*>(result);
  }
  if (tbytes == 0) return Status::Ok();
  Status st;
  if (kind != kPut) NICQ_RETURN_IF_ERROR(direct::FinishLockStage(w, t.rank));
  switch (kind) {
    case kPut:
      if (StagesPut(w, t.rank)) return direct::StagePut(w, t, in);
      if (w->lock_all || w->lock_kind[std::size_t(t.rank)] != 0) {
        bool staged = false;
        NICQ_RETURN_IF_ERROR(direct::StageLockPut(w, t, in, &staged));
        if (staged) return Status::Ok();
      }
      // Anything staged to this target lands first: operations to one
      // target apply in program order on this path too.
      NICQ_RETURN_IF_ERROR(direct::FinishLockStage(w, t.rank));
      return direct::Write(w, t, in);
    case kGet:
      st = direct::Read(w, t, out);
      break;
    case kAcc:
    case kGetAcc:
    case kCas:
      st = direct::Accumulate(w, t, op, in, out,
                              kind == kCas ? static_cast<const char*>(extra) : nullptr);
      if (!st.ok() && (st.code() == Code::kOp || st.code() == Code::kType)) {
        if (w->deferred.ok()) w->deferred = st;
        st = Status::Ok();
      }
      break;
    default:
      break;
  }
  if (st.ok() && unpack) dtype::Unpack(*rtype, packed_out.data(), tbytes, rc, result);
  return st;
}

Status Issue(Window* w, MsgKind kind, const void* origin, const dtype::Type* ot, std::int64_t oc,
             std::int64_t extra_bytes, const void* extra, void* result, const dtype::Type* rtype,
             std::int64_t rc, const Target& t, int op, Request* req, const char* call) {
  if (t.rank == rt::kProcNull) {
    BindRequest(req, nullptr);
    return Status::Ok();
  }
  OriginLock lock(w);
  NICQ_RETURN_IF_ERROR(CheckAccess(w, t.rank, call));
  const std::int64_t obytes = ot ? ot->size * oc : 0;
  const std::int64_t tbytes = t.type->size * t.count;
  if (ot) NICQ_RETURN_IF_ERROR(CheckSizes(obytes, t, call));
  if (rtype) NICQ_RETURN_IF_ERROR(CheckSizes(rtype->size * rc, t, call));
  NICQ_RETURN_IF_ERROR(CheckRange(w, t, call));
  if (w->direct && (kind == kPut || kind == kGet)) {
    // The common case first: a contiguous put or get into memory mapped
    // here is one copy. Nothing is staged for a mapped target (staging is
    // for other processes' MPI_Win_create memory), so nothing lands first.
    char* mapped = w->direct->local_base[std::size_t(t.rank)];
    const dtype::Type* local = kind == kPut ? ot : rtype;
    if (mapped && local->IsContiguous() && t.type->IsContiguous()) {
      char* at = mapped + direct::PartOffset(w, t);
      if (kind == kPut)
        std::memcpy(at, origin, std::size_t(tbytes));
      else
        std::memcpy(result, at, std::size_t(tbytes));
      BindRequest(req, nullptr);
      return Status::Ok();
    }
  }
  if (w->direct) {
    // Complete at return: nothing waits for a reply, so the R* request is done.
    Status st = IssueDirect(w, kind, origin, ot, oc, extra, result, rtype, rc, t, op);
    if (!st.ok()) return st;
    BindRequest(req, nullptr);
    return Status::Ok();
  }
  // The counter path takes a contiguous put (both sides) of a PSCW epoch;
  // anything else, or a put it has no room for now, goes as a message.
  if (w->offload && kind == kPut && !req && ot->IsContiguous() && t.type->IsContiguous()) {
    bool taken = false;
    NICQ_RETURN_IF_ERROR(offload_path::TryPut(w, origin, obytes, t, &taken));
    if (taken) return Status::Ok();
  }
  char* data = nullptr;
  std::vector<char> msg = BuildRequest(kind, t, op, obytes + extra_bytes, &data);
  if (ot && obytes > 0) Pack(origin, ot, oc, data);
  if (extra_bytes > 0) std::memcpy(data + obytes, extra, std::size_t(extra_bytes));
  std::shared_ptr<Pending> p;
  if (rtype) {
    Status st;
    p = ExpectReply(w, t.rank, tbytes, result, rtype, rc, &st);
    NICQ_RETURN_IF_ERROR(st);
  }
  ReapSends(w->out);
  Prune(w);
  NICQ_RETURN_IF_ERROR(SendOwned(w->comm, t.rank, kRequestTag, std::move(msg), w->out));
  w->touched[std::size_t(t.rank)] = 1;
  BindRequest(req, p);
  return Status::Ok();
}

}  // namespace

namespace detail {

void ReapSends(std::vector<std::unique_ptr<OutMsg>>& list) {
  std::size_t keep = 0;
  for (std::size_t i = 0; i < list.size(); ++i)
    if (!list[i]->req.IsDone()) list[keep++] = std::move(list[i]);
  list.resize(keep);
}

Status SendOwned(Comm* comm, int dest, int tag, std::vector<char> data,
                 std::vector<std::unique_ptr<OutMsg>>& list) {
  auto m = std::make_unique<OutMsg>();
  m->data = std::move(data);
  NICQ_RETURN_IF_ERROR(
      rt::Isend(m->data.data(), m->data.size(), dest, tag, comm, SendMode::kStandard, &m->req));
  list.push_back(std::move(m));
  return Status::Ok();
}

Status DrainReplies(Window* w, int rank) {
  Status first;
  for (auto it = w->pending.begin(); it != w->pending.end();) {
    Pending& p = **it;
    if (rank >= 0 && p.target != rank) {
      ++it;
      continue;
    }
    rt::Backoff b;
    while (!p.recv.IsDone()) NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
    Status st = Finish(w, p);
    if (first.ok() && !st.ok()) first = st;
    it = w->pending.erase(it);
  }
  ReapSends(w->out);
  return first;
}

std::shared_ptr<Pending> SendControl(Window* w, int rank, int kind, Status* st) {
  auto p = ExpectReply(w, rank, 0, nullptr, nullptr, 0, st);
  if (!st->ok()) return p;
  ReqHeader h;
  h.kind = std::uint8_t(kind);
  std::vector<char> msg(sizeof h);
  std::memcpy(msg.data(), &h, sizeof h);
  *st = SendOwned(w->comm, rank, kRequestTag, std::move(msg), w->out);
  return p;
}

}  // namespace detail

Status Put(Window* w, const void* origin, const dtype::Type* ot, std::int64_t oc, const Target& t,
           Request* req) {
  return Issue(w, kPut, origin, ot, oc, 0, nullptr, nullptr, nullptr, 0, t, 0, req, "MPI_Put");
}

Status Get(Window* w, void* origin, const dtype::Type* ot, std::int64_t oc, const Target& t,
           Request* req) {
  return Issue(w, kGet, nullptr, nullptr, 0, 0, nullptr, origin, ot, oc, t, 0, req, "MPI_Get");
}

Status Accumulate(Window* w, const void* origin, const dtype::Type* ot, std::int64_t oc,
                  const Target& t, int op, Request* req) {
  return Issue(w, kAcc, origin, ot, oc, 0, nullptr, nullptr, nullptr, 0, t, op, req,
               "MPI_Accumulate");
}

Status GetAccumulate(Window* w, const void* origin, const dtype::Type* ot, std::int64_t oc,
                     void* result, const dtype::Type* rtype, std::int64_t rc, const Target& t,
                     int op, Request* req) {
  // MPI_NO_OP ignores the origin buffer: nothing is sent.
  if (op == MPI_NO_OP) ot = nullptr;
  return Issue(w, kGetAcc, origin, ot, oc, 0, nullptr, result, rtype, rc, t, op, req,
               "MPI_Get_accumulate");
}

Status CompareAndSwap(Window* w, const void* origin, const void* compare, void* result,
                      const dtype::Type* type, int rank, std::int64_t disp) {
  Target t{rank, disp, type, 1};
  return Issue(w, kCas, origin, type, 1, type->size, compare, result, type, 1, t, 0, nullptr,
               "MPI_Compare_and_swap");
}

bool ResultArrived(Request* req) {
  auto* p = static_cast<std::shared_ptr<Pending>*>(req->engine);
  return !p || (*p)->recv.IsDone();
}

Status ResultComplete(Request* req) {
  auto* p = static_cast<std::shared_ptr<Pending>*>(req->engine);
  if (!p) return Status::Ok();
  Status st = Finish(nullptr, **p);
  if (!st.ok()) req->status.error = int(st.code());
  return st;
}

Status ResultRelease(Request* req) {
  delete static_cast<std::shared_ptr<Pending>*>(req->engine);
  req->engine = nullptr;
  return Status::Ok();
}

}  // namespace nicq::rma
