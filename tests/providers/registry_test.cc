// The ofi backends are reachable through the backend registry by name.
#include <gtest/gtest.h>

#include "providers/common/backend_registry.h"
#include "providers/ofi_common/register_ofi.h"

namespace nicq::ofi {
namespace {

TEST(OfiRegistry, NativeAndEmulatedAreRegisteredAndCreatable) {
  RegisterOfiBackends();
  bool native = false, emulated = false;
  for (const auto& b : offload::RegisteredBackends()) {
    native |= b.name == "native";
    emulated |= b.name == "emulated";
  }
  EXPECT_TRUE(native);
  EXPECT_TRUE(emulated);
  offload::BackendOptions o;
  o.provider = "tcp;ofi_rxm";
  std::unique_ptr<offload::OffloadBackend> b;
  Status s = offload::CreateBackend("emulated", o, &b);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_STREQ(b->Name(), "emulated");
  // A provider without FI_TRIGGER: native refuses with kUnsupportedOperation
  // so that selection moves on to the next backend.
  s = offload::CreateBackend("native", o, &b);
  EXPECT_EQ(s.code(), Code::kUnsupportedOperation) << s.message();
}

}  // namespace
}  // namespace nicq::ofi
