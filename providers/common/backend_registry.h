// Registry of offload backends: CreateBackend(name, options) builds one.
//
// Each backend registers itself from its own folder, so this file never
// lists them: either call RegisterBackend() from a registration function the
// runtime calls at init (RegisterSimBackend() below), or put
// NICQ_REGISTER_BACKEND(...) in one of the backend's .cc files. The macro
// relies on a static initializer, which survives linking only when the
// object file is kept (libnicq.so links its layers whole-archive, so it is);
// tests that link layer archives directly should call the explicit
// registration function instead.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "providers/backend.h"

namespace nicq::offload {

struct BackendOptions {
  std::string provider;  // libfabric provider name (ofi backends); "" for sim
  int rank = 0;          // world rank of this process
  int world_size = 1;
  // Opaque handle the runtime passes to the backend it creates: for the ofi
  // backends whatever their registration documents (e.g. the runtime's
  // fabric/domain holder); for "sim" a std::shared_ptr<nicq::sim::SimWorld>* (nullptr: a
  // private one-NIC world).
  void* context = nullptr;
  std::size_t slot_budget = 0;  // trigger slots this process may use (0: backend default)
  int local_ranks = 1;          // ranks on our CPUs (a progress thread wants a core per rank)
  int node_ranks = 1;           // ranks on this node (they share the NIC's trigger resources)
  int nodes = 1;                // nodes the job spans (virtual nodes, NICQ_NODE_RANKS, count)
  // Whether this node's ranks may read each other's memory with
  // process_vm_readv (the runtime probed it): 1 yes, 0 refused, -1 unknown.
  int cross_memory = -1;
};

// Builds a backend; returns kUnsupportedOperation when the backend cannot
// run here (e.g. provider lacks FI_TRIGGER) so that the caller tries the next.
using BackendFactory = Status (*)(const BackendOptions& options,
                                  std::unique_ptr<OffloadBackend>* out);

struct BackendInfo {
  std::string name;  // "native", "emulated", "sim", ...
  int priority = 0;  // higher is preferred by NICQ_OFFLOAD=auto
  BackendFactory factory = nullptr;
  std::string help;  // one line for nicq_info
};

// Registers (or replaces) a backend under `name`. Thread-safe; init time.
void RegisterBackend(std::string_view name, int priority, BackendFactory factory,
                     std::string_view help);
// Creates the backend registered as `name`; kArg with the registered names
// listed when there is none.
Status CreateBackend(std::string_view name, const BackendOptions& options,
                     std::unique_ptr<OffloadBackend>* out);
// All registered backends, highest priority first (for auto selection and nicq_info).
std::vector<BackendInfo> RegisteredBackends();

// Registers "sim" (providers/sim). Idempotent.
void RegisterSimBackend();

namespace detail {
struct BackendRegistrar {
  BackendRegistrar(const char* name, int priority, BackendFactory f, const char* help) {
    RegisterBackend(name, priority, f, help);
  }
};
}  // namespace detail

}  // namespace nicq::offload

#define NICQ_REGISTER_BACKEND(ident, name, priority, factory, help)                               \
  static ::nicq::offload::detail::BackendRegistrar nicq_backend_registrar_##ident(name, priority, \
                                                                                  factory, help)
