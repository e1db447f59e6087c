// nicqrun: start an N-rank nicq job on this node (see options.cc for usage
// and job.h for how the job is supervised).
#include <cstdio>

#include "job.h"
#include "options.h"

int main(int argc, char** argv) {
  nicq::run::Options opts;
  std::string error;
  bool exit_now = false;
  if (!nicq::run::ParseOptions(argc, argv, opts, error, exit_now)) {
    std::fprintf(stderr, "nicqrun: %s\n", error.c_str());
    return 2;
  }
  if (exit_now) return 0;
  nicq::run::Job job(opts);
  return job.Run();
}
