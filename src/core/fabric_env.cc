#include "core/fabric_env.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/config.h"
#include "core/log.h"

#ifndef NICQ_PERSONA_DIR
#define NICQ_PERSONA_DIR ""
#endif

namespace nicq {

bool NamesPersona(const std::string& provider) {
  return provider.find("_persona") != std::string::npos;
}

const char* PersonaDir() {
  return NICQ_PERSONA_DIR;
}

void PrepareFabricEnvironment(const std::string& provider) {
  const std::string name = provider.empty() ? config::GetString("NICQ_PROVIDER") : provider;
  if (!NamesPersona(name) || std::getenv("FI_PROVIDER_PATH") != nullptr) return;
  if (PersonaDir()[0] == '\0') return;
  // Only the personas live there: the core providers are built into
  // libfabric itself, so they stay available.
  setenv("FI_PROVIDER_PATH", PersonaDir(), 0);
  NICQ_LOG(kDebug, kProvider, "FI_PROVIDER_PATH=%s (NICQ_PROVIDER=%s)", PersonaDir(), name.c_str());
}

bool RegistersWholePages(const std::string& provider) {
  return provider.find("verbs") != std::string::npos;
}

std::size_t UsableInjectSize(const std::string& provider, std::size_t advertised) {
  return provider == "sockets" ? 0 : advertised;
}

PageSpan PagesAround(const void* addr, std::size_t len) {
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::uintptr_t>(addr) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(addr) + len + page - 1) & ~(page - 1);
  return {reinterpret_cast<void*>(start), end - start};
}

// A region named after our own pid can only be a leftover (pids are unique
// among live processes); on machines with a small pid_max a later process
// inherits the pid of a killed one soon.
void RemoveStaleShmRegions() {
  // Once, before this process opens any shm endpoint (the transport's and
  // the offload backends' may open on different threads): a second caller
  // waits in the static's initialisation until the first has removed them.
  static const bool removed = [] {
    DIR* d = opendir("/dev/shm");
    if (!d) return false;
    char prefix[32];
    const int plen = std::snprintf(prefix, sizeof prefix, "%d:", int(getpid()));
    while (dirent* e = readdir(d)) {
      if (std::strncmp(e->d_name, prefix, std::size_t(plen)) != 0) continue;
      std::string path = std::string("/dev/shm/") + e->d_name;
      if (unlink(path.c_str()) == 0)
        NICQ_LOG(kDebug, kCore, "removed stale shm region %s left by an earlier process",
                 path.c_str());
    }
    closedir(d);
    return true;
  }();
  (void)removed;
}

}  // namespace nicq
