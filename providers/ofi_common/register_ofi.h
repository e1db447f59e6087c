// Registration of the libfabric offload backends in the backend registry
// (providers/common): "native" (priority 20) and "emulated" (priority 10).
// libnicq.so registers them by static initializer; programs that link the
// layer archives directly call RegisterOfiBackends() (idempotent).
#pragma once

namespace nicq::ofi {

void RegisterOfiBackends();

}  // namespace nicq::ofi
