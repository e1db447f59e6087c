#include <rdma/fabric.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/config.h"
#include "nicq_info.h"
#include "runtime/offload_select.h"

namespace nicq::info {
namespace {

struct ProviderSummary {
  bool trigger = false, rma = false, atomic = false, tagged = false, rma_event = false;
  std::string ep_types, fabrics;
};

void AddWord(std::string& list, const std::string& w) {
  if (w.empty() || list.find(w) != std::string::npos) return;
  list += list.empty() ? w : "," + w;
}

const char* EpTypeName(fi_ep_type t) {
  switch (t) {
    case FI_EP_RDM:
      return "rdm";
    case FI_EP_MSG:
      return "msg";
    case FI_EP_DGRAM:
      return "dgram";
    default:
      return "other";
  }
}

}  // namespace

int PrintProviders() {
  fi_info* all = nullptr;
  // No hints: every provider answers with its full capability set.
  int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr, &all);
  if (rc != 0) {
    std::printf("libfabric: fi_getinfo failed: %s (%d)\n", fi_strerror(-rc), rc);
    return 1;
  }
  std::map<std::string, ProviderSummary> provs;
  for (fi_info* i = all; i; i = i->next) {
    ProviderSummary& p = provs[i->fabric_attr->prov_name];
    p.trigger |= (i->caps & FI_TRIGGER) != 0;
    p.rma |= (i->caps & FI_RMA) != 0;
    p.atomic |= (i->caps & FI_ATOMIC) != 0;
    p.tagged |= (i->caps & FI_TAGGED) != 0;
    p.rma_event |= (i->caps & FI_RMA_EVENT) != 0;
    AddWord(p.ep_types, EpTypeName(i->ep_attr->type));
    if (i->fabric_attr->name) AddWord(p.fabrics, i->fabric_attr->name);
  }
  fi_freeinfo(all);

  const unsigned v = fi_version();
  std::printf("libfabric %u.%u: %zu providers (NICQ_PROVIDER takes the name in the first column)\n",
              FI_MAJOR(v), FI_MINOR(v), provs.size());
  // The backend each provider would get, and why the ones before it in the
  // chain were refused: the decision MPI_Init takes (runtime/offload_select.h),
  // here as one process, opening each backend and closing it again.
  const std::string want = config::GetString("NICQ_OFFLOAD");
  std::printf("  %-16s %-9s %-5s %-6s %-6s %-9s %-14s %s\n", "provider", "backend", "tag", "rma",
              "atomic", "rma_event", "endpoints", "fabrics");
  std::vector<std::string> notes;
  for (const auto& [name, p] : provs) {
    std::string chosen;
    std::vector<rt::Refusal> refused, later;
    rt::ProbeProvider(name, want, &chosen, &refused, &later);
    std::printf("  %-16s %-9s %-5s %-6s %-6s %-9s %-14s %s\n", name.c_str(),
                chosen.empty() ? "none" : chosen.c_str(), p.tagged ? "yes" : "no",
                p.rma ? "yes" : "no", p.atomic ? "yes" : "no", p.rma_event ? "yes" : "no",
                p.ep_types.c_str(), p.fabrics.c_str());
    if (!refused.empty()) notes.push_back("offload: " + rt::FallbackMessage(name, refused, chosen));
    for (const rt::Refusal& r : later)
      notes.push_back(name + ": " + r.backend + " would not open either: " + r.reason);
  }
  std::printf(
      "  backend (NICQ_OFFLOAD=%s): native = FI_TRIGGER ops run on the NIC/provider; emulated =\n"
      "  nicq's software counters fire the ops; none = queues and matching unavailable, all else\n"
      "  runs on the host\n",
      want.empty() ? "auto" : want.c_str());
  if (!notes.empty())
    std::printf(
        "offload fallbacks (\"offload:\" is the line MPI_Init logs at NICQ_LOG=info), and\n"
        "backends that would not open on a provider:\n");
  for (const std::string& n : notes) std::printf("  %s\n", n.c_str());
  return 0;
}

}  // namespace nicq::info
