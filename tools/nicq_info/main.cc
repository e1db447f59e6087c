// nicq_info: what nicq would find on this machine.
//   nicq_info      libfabric providers and the offload backend each would get,
//                  the offload resources (trigger slots, counters) and the
//                  hwloc topology summary (cores, NICs)
//   nicq_info -e   every NICQ_* environment variable with type, default, help
// The runtime adds its own choice of NIC per provider (rt::DescribeFabric).
// The backend column is the offload context's own decision under the
// current NICQ_OFFLOAD (runtime/offload_select.h), taken per provider without
// MPI, with the reason wherever a backend of the chain cannot open.
#include <cstdio>
#include <cstring>
#include <string>

#include "core/config.h"
#include "core/fabric_env.h"
#include "nicq_info.h"
#include "runtime/runtime.h"

static int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [-e | --env] [-p | --providers] [-r | --resources] [-t | --topology]\n"
               "  (no option: providers, resources and topology)\n",
               argv0);
  return 2;
}

static void PrintEnv() {
  std::printf("# nicq environment variables (set them in the job's environment)\n");
  for (const auto& v : nicq::config::AllVars()) {
    std::printf("%s (%s, default %s)%s\n", v.name, v.type, v.default_value,
                nicq::config::IsSet(v.name) ? "  [set]" : "");
    std::printf("    %s\n", v.help);
  }
}

int main(int argc, char** argv) {
  // Before libfabric loads its providers: NICQ_PROVIDER=cxi_persona lists
  // the build's test providers too.
  nicq::PrepareFabricEnvironment();
  bool env = false, prov = false, topo = false, res = false;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (!std::strcmp(a, "-e") || !std::strcmp(a, "--env"))
      env = true;
    else if (!std::strcmp(a, "-p") || !std::strcmp(a, "--providers"))
      prov = true;
    else if (!std::strcmp(a, "-r") || !std::strcmp(a, "--resources"))
      res = true;
    else if (!std::strcmp(a, "-t") || !std::strcmp(a, "--topology"))
      topo = true;
    else if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help"))
      return Usage(argv[0]), 0;
    else
      return Usage(argv[0]);
  }
  if (env) {
    PrintEnv();
    if (!prov && !topo && !res) return 0;
  }
  if (!env && !prov && !topo && !res) prov = topo = res = true;
  int rc = 0;
  if (prov) {
    rc |= nicq::info::PrintProviders();
    // The runtime's own view: which domain (NIC) it would open per provider.
    std::printf("nicq point-to-point fabric choice (NICQ_PROVIDER candidates):\n%s",
                nicq::rt::DescribeFabric().c_str());
  }
  if (res) rc |= nicq::info::PrintResources();
  if (topo) rc |= nicq::info::PrintTopology();
  return rc;
}
