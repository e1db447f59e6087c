// nicq_info's offload resources: what each backend would preallocate under
// the current environment (trigger slots, counters, pending ops), the
// progress thread, and the cxi trigger-list guard. These are the budgets a
// job runs within; exhausting one makes a post answer kAgain, never an
// undefined NIC state.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/config.h"
#include "nicq_info.h"

namespace nicq::info {
namespace {

// The native backend's slot budget when NICQ_NATIVE_SLOTS is 0
// (providers/ofi_native/native_backend.cc).
constexpr long long kNativeDefaultSlots = 1024;

const char* Origin(const char* var) {
  return config::IsSet(var) ? "set" : "default";
}

}  // namespace

int PrintResources() {
  const long long slots = config::GetInt("NICQ_NATIVE_SLOTS");
  const long long counters = config::GetInt("NICQ_OFFLOAD_COUNTERS");
  const long long emu_ops = config::GetInt("NICQ_EMU_OPS");
  const long long limit = config::GetInt("NICQ_NATIVE_COUNTER_LIMIT");
  const long long thread = config::GetInt("NICQ_PROGRESS_THREAD");
  std::printf("offload resources per process (NICQ_OFFLOAD=%s):\n",
              config::GetString("NICQ_OFFLOAD").c_str());
  if (slots)
    std::printf("  native   trigger slots  %-8lld (NICQ_NATIVE_SLOTS, %s)\n", slots,
                Origin("NICQ_NATIVE_SLOTS"));
  else
    std::printf("  native   trigger slots  %-8lld (NICQ_NATIVE_SLOTS=0: provider default)\n",
                kNativeDefaultSlots);
  std::printf("  native   counters       %-8lld (NICQ_OFFLOAD_COUNTERS, %s; opened on demand)\n",
              counters, Origin("NICQ_OFFLOAD_COUNTERS"));
  if (limit)
    std::printf("  native   counter limit  %-8lld (NICQ_NATIVE_COUNTER_LIMIT, set)\n", limit);
  else
    std::printf("  native   counter limit  provider default (sockets: 2^31-1)\n");
  std::printf("  emulated pending ops    %-8lld (NICQ_EMU_OPS, %s)\n", emu_ops,
              Origin("NICQ_EMU_OPS"));
  std::printf("  emulated counters       %-8lld (NICQ_OFFLOAD_COUNTERS, %s)\n", counters,
              Origin("NICQ_OFFLOAD_COUNTERS"));
  std::printf(
      "  progress thread         %s (NICQ_PROGRESS_THREAD=%lld), spins %lld us before blocking\n",
      thread == 1   ? "on"
      : thread == 0 ? "off"
                    : "auto: on when a spare core exists",
      thread, static_cast<long long>(config::GetInt("NICQ_PROGRESS_SPIN_US")));
  // cxi shares its trigger list among the processes of a service; only with
  // this guard does exhausting it fail cleanly (see docs/cluster.md).
  const char* guard = std::getenv("FI_CXI_ENABLE_TRIG_OP_LIMIT");
  std::printf("  cxi trigger-op guard    FI_CXI_ENABLE_TRIG_OP_LIMIT=%s\n",
              guard ? guard : "(unset: set it to 1 on Slingshot)");
  return 0;
}

}  // namespace nicq::info
