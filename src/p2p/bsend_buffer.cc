#include "p2p/bsend_buffer.h"

#include <cstdlib>
#include <cstring>

namespace nicq::p2p {
namespace {
// Block headers sit at whatever offset the previous message's size leaves
// (MPI's buffer formula allows no rounding), so they are copied in and out
// rather than accessed in place: no misaligned member access.
BsendBuffer::Block Load(const std::uint8_t* at) {
  BsendBuffer::Block b;
  std::memcpy(&b, at, sizeof b);
  return b;
}
void Store(std::uint8_t* at, const BsendBuffer::Block& b) {
  std::memcpy(at, &b, sizeof b);
}
}  // namespace

void BsendBuffer::Attach(void* buf, std::size_t size) {
  base_ = static_cast<std::uint8_t*>(buf);
  size_ = size;
  in_use_ = 0;
  if (size_ >= kHeader) Store(base_, Block{size_, false});
}

void BsendBuffer::AttachAutomatic(void* marker) {
  automatic_ = true;
  marker_ = marker;
  base_ = nullptr;
  size_ = 0;
  in_use_ = 0;
}

void BsendBuffer::Detach(void** buf, std::size_t* size) {
  *buf = automatic_ ? marker_ : base_;
  *size = size_;
  automatic_ = false;
  marker_ = nullptr;
  base_ = nullptr;
  size_ = 0;
}

void* BsendBuffer::Alloc(std::size_t bytes) {
  if (automatic_) {
    void* p = std::malloc(bytes ? bytes : 1);
    if (p) ++in_use_;
    return p;
  }
  if (!base_ || size_ < kHeader) return nullptr;
  // Each message is charged exactly bytes + kOverhead (no rounding), so a
  // buffer sized by MPI's formula holds exactly the messages it promises.
  const std::size_t need = bytes + kOverhead;
  std::size_t off = 0;
  while (off + kHeader <= size_) {
    Block b = Load(base_ + off);
    if (!b.used) {
      // Coalesce following free blocks first (frees only mark blocks).
      std::size_t nx = off + b.size;
      while (nx + kHeader <= size_) {
        Block n = Load(base_ + nx);
        if (n.used) break;
        b.size += n.size;
        nx = off + b.size;
      }
      if (b.size >= need) {
        std::size_t take = need;
        if (b.size - take >= kHeader) {
          Store(base_ + off + take, Block{b.size - take, false});
          b.size = take;
        }
        b.used = true;
        Store(base_ + off, b);
        ++in_use_;
        return base_ + off + kHeader;
      }
      Store(base_ + off, b);  // keep the coalesced size
    }
    off += b.size;
  }
  return nullptr;
}

void BsendBuffer::Free(void* payload) {
  if (automatic_) {
    std::free(payload);
    --in_use_;
    return;
  }
  std::uint8_t* at = static_cast<std::uint8_t*>(payload) - kHeader;
  Block b = Load(at);
  b.used = false;
  Store(at, b);
  --in_use_;
}

}  // namespace nicq::p2p
