#include "providers/ofi_common/register_ofi.h"

#include "providers/common/backend_registry.h"
#include "providers/ofi_emulated/emulated_backend.h"
#include "providers/ofi_native/native_backend.h"

namespace nicq::ofi {

namespace {
constexpr const char* kNativeHelp =
    "libfabric triggered ops (FI_QUEUE_WORK deferred work, FI_RMA_EVENT counters): cxi, sockets";
constexpr const char* kEmulatedHelp =
    "software counter emulator over any libfabric RDM provider (tcp;ofi_rxm, shm, verbs;ofi_rxm)";
}  // namespace

void RegisterOfiBackends() {
  offload::RegisterBackend("native", 20, &CreateNativeBackend, kNativeHelp);
  offload::RegisterBackend("emulated", 10, &CreateEmulatedBackend, kEmulatedHelp);
}

NICQ_REGISTER_BACKEND(ofi_native, "native", 20, &CreateNativeBackend, kNativeHelp);
NICQ_REGISTER_BACKEND(ofi_emulated, "emulated", 10, &CreateEmulatedBackend, kEmulatedHelp);

}  // namespace nicq::ofi
