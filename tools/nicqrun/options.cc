#include "options.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nicq::run {

static const char* kUsage =
    "usage: nicqrun -n N [--timeout S] [--tag-output] [--] program [args...]\n"
    "  -n, -np, --np N   start N ranks on this node (default 1)\n"
    "  --timeout S       kill the job after S seconds, naming the ranks still running\n"
    "                    (exit status 124)\n"
    "  --tag-output      prefix every output line with [rank]\n"
    "  --bind-to core    give each rank its own block of the CPUs nicqrun may use\n"
    "                    (N ranks on C CPUs: C/N each, or one shared round robin\n"
    "                    when N > C); --bind-to none (the default) shares them all\n"
    "  --enable-recovery a failed rank (nonzero exit, signal, exit without\n"
    "                    MPI_Finalize) is reported but does not kill the others, whose\n"
    "                    MPI calls that need it return MPI_ERR_PROC_FAILED\n"
    "  -h, --help        this text;  --version  print the version\n"
    "Open MPI flags with no meaning here (--oversubscribe, --allow-run-as-root,\n"
    "--bind-to other than core/none, --map-by X, -x VAR) are accepted and ignored, so\n"
    "scripts written for mpirun work unchanged.\n"
    "Exit status: 0 when every rank exits 0 (after MPI_Finalize, if it called\n"
    "MPI_Init); otherwise the first failing rank's exit status (128+signal when killed\n"
    "by a signal, 1 for an exit with status 0 between MPI_Init and MPI_Finalize), the\n"
    "code given to abort, or 124 on timeout.\n";

static bool ParseInt(const char* s, int& out) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < 1 || v > 4096) return false;
  out = static_cast<int>(v);
  return true;
}

static bool ParseSeconds(const char* s, double& out) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (!*s || *end || v < 0) return false;
  out = v;
  return true;
}

bool ParseOptions(int argc, char** argv, Options& opts, std::string& error, bool& exit_now) {
  exit_now = false;
  int i = 1;
  auto value = [&](const char* flag) -> const char* {
    if (i + 1 >= argc) {
      error = std::string(flag) + " needs a value";
      return nullptr;
    }
    return argv[++i];
  };
  for (; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--") == 0) {
      ++i;
      break;
    }
    if (a[0] != '-') break;  // the program
    if (!std::strcmp(a, "-n") || !std::strcmp(a, "-np") || !std::strcmp(a, "--np") ||
        !std::strcmp(a, "-c")) {
      const char* v = value(a);
      if (!v) return false;
      if (!ParseInt(v, opts.ranks)) {
        error = std::string(a) + " " + v + ": not a rank count in 1..4096";
        return false;
      }
    } else if (!std::strcmp(a, "--timeout")) {
      const char* v = value(a);
      if (!v) return false;
      if (!ParseSeconds(v, opts.timeout_s)) {
        error = std::string("--timeout ") + v + ": not a number of seconds";
        return false;
      }
    } else if (!std::strcmp(a, "--tag-output")) {
      opts.tag_output = true;
    } else if (!std::strcmp(a, "--enable-recovery")) {
      opts.recovery = true;
    } else if (!std::strcmp(a, "--oversubscribe") || !std::strcmp(a, "--allow-run-as-root")) {
      // nicqrun never refuses these; nothing to do.
    } else if (!std::strcmp(a, "--bind-to")) {
      const char* v = value(a);
      if (!v) return false;
      if (!std::strcmp(v, "core"))
        opts.bind_core = true;
      else if (!std::strcmp(v, "none"))
        opts.bind_core = false;
      // Other Open MPI values (socket, numa, ...): accepted, no binding.
    } else if (!std::strcmp(a, "--map-by") || !std::strcmp(a, "-x")) {
      if (!value(a)) return false;  // the environment is inherited anyway
    } else if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) {
      std::fputs(kUsage, stdout);
      exit_now = true;
      return true;
    } else if (!std::strcmp(a, "--version")) {
      std::printf("nicqrun (nicq) %s\n", NICQ_VERSION_STRING);
      exit_now = true;
      return true;
    } else {
      error = std::string("unknown option ") + a + "\n" + kUsage;
      return false;
    }
  }
  for (; i < argc; ++i) opts.argv.emplace_back(argv[i]);
  if (opts.argv.empty()) {
    error = std::string("no program given\n") + kUsage;
    return false;
  }
  return true;
}

}  // namespace nicq::run
