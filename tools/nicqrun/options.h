// Command line of nicqrun (and of its mpiexec/mpirun aliases).
#pragma once

#include <string>
#include <vector>

namespace nicq::run {

struct Options {
  int ranks = 1;
  double timeout_s = 0;  // 0: none
  bool tag_output = false;
  // --bind-to core: each rank gets its own block of the CPUs nicqrun may
  // use (as mpirun --bind-to core); otherwise ranks share them all.
  bool bind_core = false;
  // --enable-recovery: a failed rank does not end the job (as PRRTE's
  // option of that name); its peers see MPI_ERR_PROC_FAILED instead.
  bool recovery = false;
  std::vector<std::string> argv;  // program and its arguments
};

// Parses argv; on a usage error returns false and fills `error`. Sets
// `exit_now` (with `error` empty) for --help/--version, already printed.
bool ParseOptions(int argc, char** argv, Options& opts, std::string& error, bool& exit_now);

}  // namespace nicq::run
