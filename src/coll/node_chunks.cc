// NodeSlotCollective's chunk work (node_persistent.h): whichever rank of
// the node takes a chunk reads the inputs it needs from the other ranks,
// folds them (reductions) and writes the result to every rank that wants
// it, so the work of a large operation is shared by the ranks inside MPI.
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "coll/node_persistent.h"
#include "coll/node_words.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

using node_words::kCountBits;
using node_words::kCountMask;
using node_words::kFoldChunkBytes;
using node_words::TakeNext;

int WriteToPid(int pid, std::uint64_t addr, const std::uint8_t* src, std::size_t len) {
  while (len > 0) {
    const std::size_t part = std::min<std::size_t>(len, std::size_t(1) << 30);
    iovec local{const_cast<std::uint8_t*>(src), part};
    iovec remote{reinterpret_cast<void*>(addr), part};
    const ssize_t put = process_vm_writev(pid, &local, 1, &remote, 1, 0);
    if (put < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (put == 0) return EFAULT;
    src += put;
    addr += std::uint64_t(put);
    len -= std::size_t(put);
  }
  return 0;
}

Status CopyFailed(const char* what, int err, int r, std::size_t len) {
  return Error(err == ESRCH ? Code::kProcFailed : Code::kIntern,
               std::string(what) + " " + std::to_string(len) + " bytes of rank " +
                   std::to_string(r) + " of the communicator: " + std::strerror(err));
}

}  // namespace

bool NodeSlotCollective::ChunksDone() const {
  const std::uint64_t w = shared_->done.load(std::memory_order_acquire);
  return (w >> kCountBits) == starts_ && (w & kCountMask) >= call_.chunks;
}

bool NodeSlotCollective::ChunksLeft() const {
  const std::uint64_t w = shared_->claimed.load(std::memory_order_acquire);
  return (w >> kCountBits) < starts_ ||
         ((w >> kCountBits) == starts_ && (w & kCountMask) < call_.chunks);
}

bool NodeSlotCollective::Ready() const {
  if (!call_.large) return AllStarted();
  return ChunksDone() || (AllStarted() && ChunksLeft());
}

const std::uint8_t* NodeSlotCollective::FoldChunk(std::size_t off, std::size_t len,
                                                  std::int64_t items, Status* st) {
  const Call& c = call_;
  const int n = area_->ranks(), me = area_->rank();
  acc_.resize(kFoldChunkBytes);
  operand_.resize(kFoldChunkBytes);
  const std::uint8_t* const mine = c.in + off;
  // The fold accumulates in this rank's own output, where the result is
  // wanted and from where it goes to the others, so the chunk is not
  // copied once more at the end; the others' inputs are read into the
  // output or into a chunk of scratch, which stays in cache. Scratch holds
  // the fold instead when the rank has no output (a reduce's non-root) or
  // when its output is its input (in place) and a write would destroy the
  // input before its turn in the order (any rank but the last).
  const bool in_place = c.out == c.in;
  std::uint8_t* acc = c.out != nullptr && (!in_place || me == n - 1) ? c.out + off : acc_.data();
  // acc = input_{n-1}, then acc = input_r op acc down to rank 0 (the order
  // of every other path, so every element has the same bits); the first
  // step folds the two rightmost inputs in one pass (no copy of the
  // rightmost into acc first).
  const std::uint8_t* right = mine;
  if (me != n - 1) {
    const int err = rt::ReadFromRank(area_->world(n - 1), acc, lines_[n - 1]->src + off, len);
    if (err != 0) {
      *st = CopyFailed("reading", err, n - 1, len);
      return nullptr;
    }
    right = acc;
  }
  for (int r = n - 2; r >= 0; --r) {
    const std::uint8_t* left = mine;
    if (r != me) {
      const int err = rt::ReadFromRank(area_->world(r), operand_.data(), lines_[r]->src + off, len);
      if (err != 0) {
        *st = CopyFailed("reading", err, r, len);
        return nullptr;
      }
      left = operand_.data();
    }
    if (Status s = c.red.Apply(left, right, acc, items, len); !s.ok()) {
      *st = s;
      return nullptr;
    }
    right = acc;
  }
  if (c.out != nullptr && acc != c.out + off) std::memcpy(c.out + off, acc, len);
  return acc;
}

bool NodeSlotCollective::WorkOneChunk(Status* st) {
  const Call& c = call_;
  std::uint64_t chunk = 0;
  if (!TakeNext(shared_->claimed, starts_, c.chunks, &chunk)) return false;
  const int n = area_->ranks(), me = area_->rank();
  const std::int64_t first = std::int64_t(chunk) * c.chunk_items;
  const std::int64_t items = std::min(c.chunk_items, c.count - first);
  const std::size_t off = std::size_t(first) * c.item, len = std::size_t(items) * c.item;
  // The chunk's result: a bcast's is the root's data, which the root has
  // and a receiver reads straight into its own buffer; a reduction's is
  // FoldChunk's.
  const std::uint8_t* result = nullptr;
  if (c.kind == Kind::kBcast) {
    result = c.in + off;  // the root's buffer, or this receiver's output
    if (me != c.root) {
      const int err =
          rt::ReadFromRank(area_->world(c.root), c.out + off, lines_[c.root]->src + off, len);
      if (err != 0) {
        *st = CopyFailed("reading", err, c.root, len);
        return true;
      }
    }
  } else {
    result = FoldChunk(off, len, items, st);
    if (result == nullptr) return true;
  }
  for (int r = 0; r < n; ++r) {
    if (r == me || (c.kind == Kind::kBcast && r == c.root)) continue;
    if (c.kind == Kind::kReduce && r != c.root) continue;
    const int err = WriteToPid(area_->pid(r), lines_[r]->dst + off, result, len);
    if (err != 0) {
      *st = CopyFailed("writing", err, r, len);
      return true;
    }
  }
  std::uint64_t finished = 0;
  if (TakeNext(shared_->done, starts_, c.chunks, &finished) && finished + 1 == c.chunks)
    area_->WakeSleepers();  // the ranks waiting for their result
  return true;
}

}  // namespace nicq::coll
