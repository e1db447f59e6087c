// The MPI_Buffer_attach'ed area: first-fit blocks carved from the user's
// buffer. Each message costs its size plus kBsendOverhead, as MPI's buffer
// accounting promises; the block header lives inside that overhead.
// Attached in automatic mode (MPI_BUFFER_AUTOMATIC), each message gets its
// own allocation instead, so a buffered send never runs out of room.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nicq::p2p {

class BsendBuffer {
 public:
  static constexpr std::size_t kOverhead = 96;  // == rt::kBsendOverhead

  bool attached() const { return base_ != nullptr || automatic_; }
  bool automatic() const { return automatic_; }
  void Attach(void* buf, std::size_t size);
  void AttachAutomatic(void* marker);
  void Detach(void** buf, std::size_t* size);
  // nullptr when the message (plus overhead) does not fit in any free block.
  void* Alloc(std::size_t bytes);
  void Free(void* payload);
  std::size_t blocks_in_use() const { return in_use_; }

  // Header in front of each block (whole block size including the header).
  struct Block {
    std::size_t size;
    bool used;
  };

 private:
  static constexpr std::size_t kHeader = 32;  // <= kOverhead
  bool automatic_ = false;
  void* marker_ = nullptr;  // what Detach hands back in automatic mode
  std::uint8_t* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t in_use_ = 0;
};

}  // namespace nicq::p2p
