// Test helpers: build an ofi backend on a provider and wire it to itself
// (one process, loopback), so the same triggered-op tests run on every
// (backend, provider) pair.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "providers/backend.h"
#include "providers/ofi_emulated/emulated_backend.h"

namespace nicq::ofi::test {

struct BackendParam {
  std::string backend;   // "native" or "emulated"
  std::string provider;  // libfabric provider
  int progress_thread = 0;
};

inline std::string ParamName(const BackendParam& p) {
  std::string s = p.backend + "_" + p.provider + (p.progress_thread ? "_thread" : "");
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// Creates the backend and wires it to itself (peer 0 is this process).
// slots: native slot budget / emulated op pool (0: default).
Status MakeSelfWired(const BackendParam& p, std::size_t slots,
                     std::unique_ptr<offload::OffloadBackend>* out);

// An emulated backend made from `c` and wired to itself, for tests that
// reach its test hooks; nullptr (the failure recorded) when it cannot.
inline std::unique_ptr<EmulatedBackend> MakeEmulatedSelfWired(const EmulatedConfig& c) {
  std::unique_ptr<EmulatedBackend> b;
  Status s = EmulatedBackend::Create(c, &b);
  EXPECT_TRUE(s.ok()) << s.message();
  if (!b) return nullptr;
  std::vector<std::uint8_t> a;
  EXPECT_TRUE(b->LocalAddress(a).ok());
  const std::vector<std::vector<std::uint8_t>> peers{a};
  EXPECT_TRUE(b->SetPeers(peers).ok());
  return b;
}

}  // namespace nicq::ofi::test
