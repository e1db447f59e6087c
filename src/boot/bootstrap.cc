// CreateBootstrap: choose how this job's ranks find each other. nicqrun's
// variables win over PMIx ones, so a nicqrun started under a PMIx launcher
// still gives its ranks the local rendezvous; NICQ_BOOTSTRAP forces a choice.
#include "boot/bootstrap.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "boot/local_bootstrap.h"
#include "boot/pmix_bootstrap.h"
#include "boot/singleton_bootstrap.h"
#include "core/config.h"
#include "core/log.h"

namespace nicq {

void SingletonBootstrap::Abort(int code, const std::string& why) {
  std::fprintf(stderr, "nicq[0]: abort (code %d): %s\n", code, why.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code != 0 ? code : 1);
}

static Status CreatePmixOrSingleton(std::unique_ptr<Bootstrap>& out, bool allow_fallback) {
  bool unreachable = false;
  Status st = PmixBootstrap::Create(out, unreachable);
  if (st.ok() || !unreachable || !allow_fallback) return st;
  NICQ_LOG(kWarn, kBoot, "%s; running as a singleton", st.message().c_str());
  out = std::make_unique<SingletonBootstrap>();
  return Status::Ok();
}

Status CreateBootstrap(std::unique_ptr<Bootstrap>& out) {
  const std::string want = config::GetString("NICQ_BOOTSTRAP");
  if (want == "local") return LocalBootstrap::Create(out);
  if (want == "pmix") return CreatePmixOrSingleton(out, false);
  if (want == "singleton") {
    out = std::make_unique<SingletonBootstrap>();
    return Status::Ok();
  }
  if (want != "auto")
    return Error(Code::kArg, "CreateBootstrap: NICQ_BOOTSTRAP=" + want +
                                 " is not one of auto, local, pmix, singleton");
  if (std::getenv("NICQ_RANK")) return LocalBootstrap::Create(out);
  if (PmixEnvironmentPresent()) return CreatePmixOrSingleton(out, true);
  out = std::make_unique<SingletonBootstrap>();
  return Status::Ok();
}

}  // namespace nicq
