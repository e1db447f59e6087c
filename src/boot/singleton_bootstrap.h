// SingletonBootstrap: no launcher started this process (or a PMIx server was
// advertised but is unreachable), so the job is this one process.
#pragma once

#include <cstring>

#include "boot/bootstrap.h"

namespace nicq {

class SingletonBootstrap final : public Bootstrap {
 public:
  const char* Name() const override { return "singleton"; }
  int Rank() const override { return 0; }
  int Size() const override { return 1; }
  int LocalRank() const override { return 0; }
  int LocalSize() const override { return 1; }

  Status Allgather(const void* mine, std::size_t len, std::vector<std::uint8_t>& all) override {
    all.resize(len);
    if (len > 0) std::memcpy(all.data(), mine, len);
    return Status::Ok();
  }
  Status Barrier() override { return Status::Ok(); }
  [[noreturn]] void Abort(int code, const std::string& why) override;
  Status Finalize() override { return Status::Ok(); }
};

}  // namespace nicq
