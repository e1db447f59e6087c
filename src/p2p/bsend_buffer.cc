#include "p2p/bsend_buffer.h"

#include <cstring>

namespace nicq::p2p {

void BsendBuffer::Attach(void* buf, std::size_t size) {
  base_ = static_cast<std::uint8_t*>(buf);
  size_ = size;
  in_use_ = 0;
  if (size_ >= kHeader) {
    auto* b = reinterpret_cast<Block*>(base_);
    b->size = size_;
    b->used = false;
  }
}

void BsendBuffer::Detach(void** buf, std::size_t* size) {
  *buf = base_;
  *size = size_;
  base_ = nullptr;
  size_ = 0;
}

void* BsendBuffer::Alloc(std::size_t bytes) {
  if (!base_ || size_ < kHeader) return nullptr;
  // Each message is charged exactly bytes + kOverhead (no rounding), so a
  // buffer sized by MPI's formula holds exactly the messages it promises.
  const std::size_t need = bytes + kOverhead;
  std::size_t off = 0;
  while (off + kHeader <= size_) {
    auto* b = reinterpret_cast<Block*>(base_ + off);
    if (!b->used) {
      // Coalesce following free blocks first (frees only mark blocks).
      std::size_t nx = off + b->size;
      while (nx + kHeader <= size_) {
        auto* n = reinterpret_cast<Block*>(base_ + nx);
        if (n->used) break;
        b->size += n->size;
        nx = off + b->size;
      }
      if (b->size >= need) {
        std::size_t take = need;
        if (b->size - take >= kHeader) {
          auto* rest = reinterpret_cast<Block*>(base_ + off + take);
          rest->size = b->size - take;
          rest->used = false;
          b->size = take;
        } else {
          take = b->size;
        }
        b->used = true;
        ++in_use_;
        return base_ + off + kHeader;
      }
    }
    off += b->size;
  }
  return nullptr;
}

void BsendBuffer::Free(void* payload) {
  auto* b = reinterpret_cast<Block*>(static_cast<std::uint8_t*>(payload) - kHeader);
  b->used = false;
  --in_use_;
}

}  // namespace nicq::p2p
