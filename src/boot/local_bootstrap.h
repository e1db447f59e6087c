// LocalBootstrap: the job was started by nicqrun on this node. nicqrun sets
// NICQ_RANK, NICQ_SIZE, NICQ_LOCAL_RANK, NICQ_LOCAL_SIZE and NICQ_BOOT_DIR
// and serves collectives on $NICQ_BOOT_DIR/boot.sock (see local_wire.h).
// Every call blocks in recv() on that socket, so a rank waiting for slower
// peers costs no CPU.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "boot/bootstrap.h"

namespace nicq {

class LocalBootstrap final : public Bootstrap {
 public:
  // Reads the environment and connects; fails with a message naming the
  // variable or the socket when the environment is not nicqrun's.
  static Status Create(std::unique_ptr<Bootstrap>& out);
  ~LocalBootstrap() override;

  const char* Name() const override { return "local"; }
  int Rank() const override { return rank_; }
  int Size() const override { return size_; }
  int LocalRank() const override { return local_rank_; }
  int LocalSize() const override { return local_size_; }

  Status Allgather(const void* mine, std::size_t len, std::vector<std::uint8_t>& all) override;
  Status Barrier() override;
  [[noreturn]] void Abort(int code, const std::string& why) override;
  Status Finalize() override;

 private:
  LocalBootstrap(int rank, int size, int local_rank, int local_size, int fd);

  int rank_, size_, local_rank_, local_size_;
  int fd_;
  std::uint64_t seq_ = 0;
  // Collectives are called from one thread at a time by contract; the lock
  // only keeps a misbehaving caller from interleaving two messages.
  std::mutex mu_;
};

}  // namespace nicq
