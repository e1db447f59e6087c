// Misbehaving ranks for nicqrun's tests. usage: boot_behave <mode> [arg]
//   exit <code>         rank 1 exits with <code> after a barrier; others wait in a
//                       second barrier (they must be killed, job status = code)
//   segv                rank 1 raises SIGSEGV after a barrier; others wait
//   abort <code>        rank 1 calls Bootstrap::Abort(code, "test abort")
//   hang                every rank sleeps forever (for --timeout)
//   early-exit          rank 1 exits 0 without joining a barrier the others enter
//                       (and without its goodbye: an exit before MPI_Finalize)
//   early-exit-data     the same, with an Allgather of 4 bytes each instead
//   finalize-early      rank 1 says goodbye (Finalize) and exits 0; the others
//                       enter a barrier it never joins
//   mismatch            rank 1 contributes 8 bytes to an Allgather, the others 4
//   print <lines>       every rank prints <lines> numbered lines on stdout and one
//                       on stderr, then exits 0
//   status <code>       the last rank exits with <code> (no bootstrap use)
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "boot/bootstrap.h"

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string mode = argv[1];
  const int arg = argc > 2 ? std::atoi(argv[2]) : 0;
  int rank = std::atoi(std::getenv("NICQ_RANK") ? std::getenv("NICQ_RANK") : "0");
  const int size = std::atoi(std::getenv("NICQ_SIZE") ? std::getenv("NICQ_SIZE") : "1");

  if (mode == "hang") {
    for (;;) pause();
  }
  if (mode == "print") {
    for (int i = 0; i < arg; ++i) std::printf("rank %d line %d\n", rank, i);
    std::fprintf(stderr, "rank %d stderr\n", rank);
    return 0;
  }
  if (mode == "status") return rank == size - 1 ? arg : 0;

  std::unique_ptr<nicq::Bootstrap> boot;
  if (!nicq::CreateBootstrap(boot).ok()) return 3;
  rank = boot->Rank();  // also right under a PMIx launcher
  if (!boot->Barrier().ok()) return 4;
  if (rank == 1) {
    if (mode == "exit") return arg;
    if (mode == "segv") {
      // Default action, so that a sanitizer's SEGV handler does not turn the
      // crash into an ordinary nonzero exit.
      struct sigaction dfl = {};
      dfl.sa_handler = SIG_DFL;
      sigaction(SIGSEGV, &dfl, nullptr);
      raise(SIGSEGV);
    }
    if (mode == "abort") boot->Abort(arg, "test abort");
    if (mode == "early-exit" || mode == "early-exit-data") return 0;
    if (mode == "finalize-early") return boot->Finalize().ok() ? 0 : 8;
  }
  if (mode == "mismatch") {
    std::vector<std::uint8_t> all;
    char mine[8] = {};
    // nicqrun kills the job; a successful return would be the bug.
    return boot->Allgather(mine, rank == 1 ? 8 : 4, all).ok() ? 6 : 7;
  }
  if (mode == "early-exit-data") {
    // A collective that carries data cannot complete without rank 1's.
    std::vector<std::uint8_t> all;
    char mine[4] = {};
    return boot->Allgather(mine, sizeof mine, all).ok() ? 9 : 10;
  }
  // The others block here until nicqrun kills them or reports the job
  // (under --enable-recovery a barrier completes without a departed rank).
  if (!boot->Barrier().ok()) return 5;
  std::printf("rank %d passed the barrier\n", rank);
  return 0;
}
