// Bootstrap: how ranks of a job find each other before the fabric is up.
//
// Implementations (chosen once in MPI_Init, see CreateBootstrap):
//   LocalBootstrap    started by nicqrun (NICQ_RANK/NICQ_SIZE/NICQ_BOOT_DIR set)
//   PmixBootstrap     a PMIx server launched the job (prterun, srun --mpi=pmix,
//                     Open MPI's mpirun)
//   SingletonBootstrap no launcher: size 1 (PMIx_Init answered PMIX_ERR_UNREACH)
//
// All calls except Rank/Size/Abort are collective over the whole job and
// blocking; they are used at init, comm creation and match time only, never
// on the data path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace nicq {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual const char* Name() const = 0;  // "local", "pmix", "singleton"
  virtual int Rank() const = 0;
  virtual int Size() const = 0;
  // Ranks on this node and this rank's index among them (for core/NIC placement).
  virtual int LocalRank() const = 0;
  virtual int LocalSize() const = 0;

  // Every rank contributes `mine` (same length on all ranks); on return
  // `all` holds Size() blobs, rank-ordered, concatenated.
  virtual Status Allgather(const void* mine, std::size_t len, std::vector<std::uint8_t>& all) = 0;
  virtual Status Barrier() = 0;
  // Terminate the whole job (best effort) with this exit code; does not return.
  [[noreturn]] virtual void Abort(int code, const std::string& why) = 0;
  virtual Status Finalize() = 0;
};

// Picks the implementation from the environment.
Status CreateBootstrap(std::unique_ptr<Bootstrap>& out);

}  // namespace nicq
