// PmixBootstrap: a PMIx server (prterun, srun --mpi=pmix, Open MPI's mpirun)
// launched the job. Allgather is put + commit + fence(collect) + get, each
// call under its own key "nicq.ag.<seq>" so that successive collectives
// never read each other's data. The fence blocks inside the PMIx library
// (it waits on a condition, not a spin).
#pragma once

#include <memory>
#include <mutex>

#include "boot/bootstrap.h"

namespace nicq {

class PmixBootstrap final : public Bootstrap {
 public:
  // PMIx_Init and job queries. Sets `unreachable` (and fails) when the
  // server advertised in the environment does not answer, so that the caller
  // can fall back to a singleton.
  static Status Create(std::unique_ptr<Bootstrap>& out, bool& unreachable);
  ~PmixBootstrap() override;

  const char* Name() const override { return "pmix"; }
  int Rank() const override { return rank_; }
  int Size() const override { return size_; }
  int LocalRank() const override { return local_rank_; }
  int LocalSize() const override { return local_size_; }

  Status Allgather(const void* mine, std::size_t len, std::vector<std::uint8_t>& all) override;
  Status Barrier() override;
  [[noreturn]] void Abort(int code, const std::string& why) override;
  Status Finalize() override;

 private:
  struct State;  // holds pmix_proc_t so pmix.h stays out of this header
  explicit PmixBootstrap(std::unique_ptr<State> state);

  std::unique_ptr<State> st_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::uint64_t seq_ = 0;
  bool finalized_ = false;
  std::mutex mu_;
};

// True when the environment shows a PMIx server launched this process.
bool PmixEnvironmentPresent();

}  // namespace nicq
