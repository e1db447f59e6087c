#include "tests/providers/backend_factory.h"

#if __has_include("providers/ofi_native/native_backend.h")
#include "providers/ofi_native/native_backend.h"
#define NICQ_TEST_HAVE_NATIVE 1
#endif

namespace nicq::ofi::test {

Status MakeSelfWired(const BackendParam& p, std::size_t slots,
                     std::unique_ptr<offload::OffloadBackend>* out) {
  std::unique_ptr<offload::OffloadBackend> b;
  if (p.backend == "emulated") {
    EmulatedConfig c;
    c.provider = p.provider;
    c.progress_thread = p.progress_thread;
    c.num_counters = 256;
    c.num_ops = slots ? slots : 4096;
    std::unique_ptr<EmulatedBackend> e;
    NICQ_RETURN_IF_ERROR(EmulatedBackend::Create(c, &e));
    b = std::move(e);
  } else {
#ifdef NICQ_TEST_HAVE_NATIVE
    NativeConfig c;
    c.provider = p.provider;
    c.slot_budget = slots ? slots : 1024;
    std::unique_ptr<NativeBackend> n;
    NICQ_RETURN_IF_ERROR(NativeBackend::Create(c, &n));
    b = std::move(n);
#else
    return Error(Code::kUnsupportedOperation, "native backend not built");
#endif
  }
  std::vector<std::uint8_t> addr;
  NICQ_RETURN_IF_ERROR(b->LocalAddress(addr));
  std::vector<std::vector<std::uint8_t>> peers{addr};
  NICQ_RETURN_IF_ERROR(b->SetPeers(peers));
  *out = std::move(b);
  return Status::Ok();
}

}  // namespace nicq::ofi::test
