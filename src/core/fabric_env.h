// Libfabric environment that must be in place before the process's first
// libfabric call (libfabric reads it once, when it loads its providers).
#pragma once

#include <cstddef>
#include <string>

namespace nicq {

// True when `provider` names one of the build's contract-faithful test
// providers ("cxi_persona", "verbs_persona", or a stack naming one).
bool NamesPersona(const std::string& provider);

// When NICQ_PROVIDER (or `provider`, if given) names a persona and
// FI_PROVIDER_PATH is unset, points libfabric at the build's persona folder
// so that `NICQ_PROVIDER=cxi_persona nicqrun ...` needs no other setup.
// Idempotent; call before the first fi_getinfo.
void PrepareFabricEnvironment(const std::string& provider = "");

// The folder the personas were built into.
const char* PersonaDir();

// verbs registers whole pages (fi_verbs(7); ibv_reg_mr granularity), and so
// does its persona: registrations there cover the pages around a buffer.
bool RegistersWholePages(const std::string& provider);

// sockets (1.17): a long run of fi_inject sends mixed with posted sends to
// one peer can stall its progress thread for good (the receiver stops
// getting data while both threads spin; p2p_many5k hung in 4 to 8 runs of
// 60, posted sends alone in none of 140). Its callers send everything the
// posted way: the usable inject size is 0.
std::size_t UsableInjectSize(const std::string& provider, std::size_t advertised);

// libfabric's shm provider names each endpoint's region
// /dev/shm/<pid>:<n>:<m> and refuses to open one (fi_enable: EBUSY) whose
// name exists; a process killed by a signal leaves its regions behind.
// Removes those named after this process's pid (leftovers of an earlier
// process with the same pid), once per process: call before the process's
// first shm endpoint, wherever one is opened (the transport's fabric, the
// offload backends' endpoints).
void RemoveStaleShmRegions();

// The page-aligned range that covers [addr, addr + len).
struct PageSpan {
  void* base = nullptr;
  std::size_t len = 0;
};
PageSpan PagesAround(const void* addr, std::size_t len);

}  // namespace nicq
