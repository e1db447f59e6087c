// ShmRing: the single-producer / single-consumer ring that carries messages
// from one rank to another on the same node (see shm_transport.h).
//
// The ring is an array of 64-byte cells (one cache line each) plus two
// monotonic cell counters on cache lines of their own: `head` (cells the
// producer has published) and `tail` (cells the consumer has released). A
// frame is a 16-byte ShmFrame header followed by its bytes, occupying
// ceil((16 + bytes) / 64) consecutive cells; a frame never wraps: when it
// does not fit before the end of the array the producer fills the rest
// with a padding frame and starts at cell 0. So a consumer always sees a
// frame's bytes contiguous and can hand them on in place.
//
// Publication is a release store of `head` after the frame is written; the
// consumer's acquire load of `head` makes the frame visible. Release of the
// cells is a release store of `tail` after the consumer is done reading, so
// the producer never overwrites bytes still being read. Each side caches
// the other's counter and reloads it only when the cached value says the
// ring is empty (consumer) or full (producer), so an uncontended message
// costs one shared-line transfer each way.
//
// The ring knows nothing of processes: the same code runs on a buffer in
// one process (the unit test) or in a shared mapping.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nicq::transport {

inline constexpr std::size_t kShmCell = 64;

struct ShmFrame {
  std::uint32_t bytes = 0;  // bytes after this header
  std::uint32_t flags = 0;  // kFramePad / kFrameFirst / kFrameLast
  std::uint64_t total = 0;  // whole message length (every fragment carries it)
};
static_assert(sizeof(ShmFrame) == 16);

inline constexpr std::uint32_t kFramePad = 1;    // filler up to the end of the array
inline constexpr std::uint32_t kFrameFirst = 2;  // first fragment of a message
inline constexpr std::uint32_t kFrameLast = 4;   // last fragment (a whole message: First|Last)

struct alignas(kShmCell) ShmRingControl {
  alignas(kShmCell) std::atomic<std::uint64_t> head;  // written by the producer only
  alignas(kShmCell) std::atomic<std::uint64_t> tail;  // written by the consumer only
};
static_assert(sizeof(ShmRingControl) == 2 * kShmCell);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free,
              "the ring's counters are shared between processes: they must be lock-free");

// Bytes a ring of `cells` cells occupies (cells: a power of two).
constexpr std::size_t ShmRingBytes(std::size_t cells) {
  return sizeof(ShmRingControl) + cells * kShmCell;
}

constexpr std::size_t FrameCells(std::size_t bytes) {
  return (sizeof(ShmFrame) + bytes + kShmCell - 1) / kShmCell;
}

// Copies bytes [off, off + len) of the concatenation of `iov` to `dst`.
inline void GatherCopy(std::uint8_t* dst, const iovec* iov, int n, std::size_t off,
                       std::size_t len) {
  for (int i = 0; i < n && len > 0; ++i) {
    if (off >= iov[i].iov_len) {
      off -= iov[i].iov_len;
      continue;
    }
    const std::size_t k = std::min(len, iov[i].iov_len - off);
    std::memcpy(dst, static_cast<const std::uint8_t*>(iov[i].iov_base) + off, k);
    dst += k;
    len -= k;
    off = 0;
  }
}

// The producer's end. Not thread-safe (one producer by construction: the
// sending rank, under the engine's serialization).
class ShmRingWriter {
 public:
  ShmRingWriter() = default;
  // `mem` holds ShmRingBytes(cells) bytes, already formatted (Format).
  void Attach(void* mem, std::size_t cells) {
    ctl_ = static_cast<ShmRingControl*>(mem);
    cells_ = static_cast<std::uint8_t*>(mem) + sizeof(ShmRingControl);
    ncells_ = cells;
    head_ = ctl_->head.load(std::memory_order_relaxed);
    tail_seen_ = ctl_->tail.load(std::memory_order_acquire);
  }
  static void Format(void* mem) {
    auto* c = static_cast<ShmRingControl*>(mem);
    c->head.store(0, std::memory_order_relaxed);
    c->tail.store(0, std::memory_order_relaxed);
  }
  bool attached() const { return ctl_ != nullptr; }
  // The largest frame payload: a quarter of the ring, so several frames
  // (and the padding a wrap costs) always fit at once.
  std::size_t max_frame() const { return ncells_ * kShmCell / 4 - sizeof(ShmFrame); }

  // Writes bytes [off, off + len) of the message `iov` (total `total`
  // bytes) as one frame and publishes it. False: no room now (nothing
  // written). len <= max_frame().
  bool WriteFrame(const iovec* iov, int n, std::size_t off, std::size_t len, std::size_t total,
                  std::uint32_t flags) {
    std::uint8_t* p = Reserve(len, total, flags);
    if (!p) return false;
    GatherCopy(p, iov, n, off, len);
    Publish(len);
    return true;
  }

  // A whole message of two parts (a header and a payload) as one frame:
  // what a small send writes. Unlike WriteFrame it has no gather loop, and
  // the header's length is a constant at the inlined call, so its copy is a
  // few stores. False: no room now. head_len + body_len <= max_frame().
  [[gnu::always_inline]] bool WriteWhole(const void* head, std::size_t head_len, const void* body,
                                         std::size_t body_len) {
    const std::size_t len = head_len + body_len;
    std::uint8_t* p = Reserve(len, len, kFrameFirst | kFrameLast);
    if (!p) return false;
    std::memcpy(p, head, head_len);
    if (body_len) std::memcpy(p + head_len, body, body_len);
    Publish(len);
    return true;
  }

 private:
  // Room for a frame of `len` bytes (padding to the end of the array first
  // when it would wrap), its header written: where its bytes go, or nullptr
  // when the ring is full (nothing written).
  std::uint8_t* Reserve(std::size_t len, std::size_t total, std::uint32_t flags) {
    const std::size_t need = FrameCells(len);
    const std::size_t pos = head_ & (ncells_ - 1);
    const std::size_t pad = pos + need > ncells_ ? ncells_ - pos : 0;
    if (!HasRoom(pad + need)) return nullptr;
    if (pad) {
      auto* f = reinterpret_cast<ShmFrame*>(cells_ + pos * kShmCell);
      f->bytes = std::uint32_t(pad * kShmCell - sizeof(ShmFrame));
      f->flags = kFramePad;
      f->total = 0;
      head_ += pad;
    }
    std::uint8_t* p = cells_ + (head_ & (ncells_ - 1)) * kShmCell;
    auto* f = reinterpret_cast<ShmFrame*>(p);
    f->bytes = std::uint32_t(len);
    f->flags = flags;
    f->total = total;
    return p + sizeof(ShmFrame);
  }
  // Makes the frame Reserve began visible to the consumer.
  void Publish(std::size_t len) {
    head_ += FrameCells(len);
    ctl_->head.store(head_, std::memory_order_release);
  }
  bool HasRoom(std::size_t cells) {
    if (ncells_ - (head_ - tail_seen_) >= cells) return true;
    tail_seen_ = ctl_->tail.load(std::memory_order_acquire);
    return ncells_ - (head_ - tail_seen_) >= cells;
  }
  ShmRingControl* ctl_ = nullptr;
  std::uint8_t* cells_ = nullptr;
  std::size_t ncells_ = 0;
  std::uint64_t head_ = 0;       // our own counter (the shared one mirrors it)
  std::uint64_t tail_seen_ = 0;  // the consumer's counter when we last looked
};

// The consumer's end.
class ShmRingReader {
 public:
  ShmRingReader() = default;
  void Attach(void* mem, std::size_t cells) {
    ctl_ = static_cast<ShmRingControl*>(mem);
    cells_ = static_cast<std::uint8_t*>(mem) + sizeof(ShmRingControl);
    ncells_ = cells;
    tail_ = ctl_->tail.load(std::memory_order_relaxed);
    head_seen_ = ctl_->head.load(std::memory_order_acquire);
  }
  bool attached() const { return ctl_ != nullptr; }

  // The next frame (padding skipped), or nullptr when the ring is empty.
  // The frame stays valid until Pop.
  const ShmFrame* Peek() {
    for (;;) {
      if (tail_ == head_seen_) {
        head_seen_ = ctl_->head.load(std::memory_order_acquire);
        if (tail_ == head_seen_) return nullptr;
      }
      const auto* f =
          reinterpret_cast<const ShmFrame*>(cells_ + (tail_ & (ncells_ - 1)) * kShmCell);
      if (!(f->flags & kFramePad)) return f;
      tail_ += FrameCells(f->bytes);
      ctl_->tail.store(tail_, std::memory_order_release);
    }
  }
  // Whether a frame is published and not yet taken (no side effects).
  bool Pending() const { return ctl_->head.load(std::memory_order_acquire) != tail_; }
  // Releases the frame Peek returned; the producer may reuse its cells.
  void Pop(const ShmFrame* f) {
    tail_ += FrameCells(f->bytes);
    ctl_->tail.store(tail_, std::memory_order_release);
  }
  static const std::uint8_t* Bytes(const ShmFrame* f) {
    return reinterpret_cast<const std::uint8_t*>(f) + sizeof(ShmFrame);
  }

 private:
  ShmRingControl* ctl_ = nullptr;
  std::uint8_t* cells_ = nullptr;
  std::size_t ncells_ = 0;
  std::uint64_t tail_ = 0;
  std::uint64_t head_seen_ = 0;
};

// Writes bytes [*off, total) of the message `iov` into `w` as frames of at
// most `max_frame` bytes (First on the first, Last on the last), advancing
// *off; stops when the ring is full. Returns true once the message is all
// in; *wrote says whether any frame was published by this call.
inline bool WriteMessage(ShmRingWriter& w, std::size_t max_frame, const iovec* iov, int n,
                         std::size_t total, std::size_t* off, bool* wrote) {
  *wrote = false;
  while (*off < total) {
    const std::size_t len = std::min(max_frame, total - *off);
    const std::uint32_t flags =
        (*off == 0 ? kFrameFirst : 0) | (*off + len == total ? kFrameLast : 0);
    if (!w.WriteFrame(iov, n, *off, len, total, flags)) break;
    *off += len;
    *wrote = true;
  }
  return *off == total;
}

// The consumer's end with reassembly: whole messages out of frames.
class ShmMessageReader {
 public:
  void Attach(void* mem, std::size_t cells) { reader_.Attach(mem, cells); }
  bool Pending() const { return reader_.Pending(); }

  // Hands each complete message to deliver(bytes, len), taking at most
  // `max_frames` frames. A single-frame message is delivered in place (the
  // bytes are valid during the call only); fragments are collected in order
  // (a producer writes one message at a time) into a buffer that grows to
  // the largest message once and then keeps its capacity.
  template <class Deliver>
  int Drain(Deliver&& deliver, int max_frames) {
    int taken = 0;
    while (taken < max_frames) {
      const ShmFrame* f = reader_.Peek();
      if (!f) break;
      const std::uint8_t* b = ShmRingReader::Bytes(f);
      constexpr std::uint32_t kWhole = kFrameFirst | kFrameLast;
      if ((f->flags & kWhole) == kWhole) {
        deliver(b, std::size_t(f->bytes));
      } else {
        if (f->flags & kFrameFirst) {
          got_ = 0;
          if (buf_.size() < f->total) buf_.resize(f->total);
        }
        if (got_ + f->bytes <= buf_.size()) std::memcpy(buf_.data() + got_, b, f->bytes);
        got_ += f->bytes;
        if (f->flags & kFrameLast) deliver(static_cast<const std::uint8_t*>(buf_.data()), got_);
      }
      reader_.Pop(f);
      ++taken;
    }
    return taken;
  }

 private:
  ShmRingReader reader_;
  std::vector<std::uint8_t> buf_;
  std::size_t got_ = 0;
};

}  // namespace nicq::transport
