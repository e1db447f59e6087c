#include "core/fabric_env.h"

#include <cstdlib>

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

}  // namespace nicq
