// Provider and NIC choice for the p2p endpoint.
#include <hwloc.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "core/fabric_env.h"
#include "transport/fabric.h"

namespace nicq::transport {

fi_info* MakeHints(bool with_rma) {
  fi_info* h = fi_allocinfo();
  h->ep_attr->type = FI_EP_RDM;
  // Untagged messages: the header travels in front of the payload and
  // matching is ours. (shm 1.17 loses tagged messages that arrive while no
  // wildcard tagged receive is posted; its untagged path is sound.)
  h->caps = FI_MSG | FI_SEND | FI_RECV;
  if (with_rma) h->caps |= FI_RMA | FI_READ | FI_REMOTE_READ;
  // We keep no fi_context in our ops and never register local buffers, so no
  // FI_CONTEXT / FI_MR_LOCAL; the remote-key modes we handle ourselves.
  h->mode = 0;
  h->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  // The engine serializes all calls itself (a lock under MPI_THREAD_MULTIPLE).
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->tx_attr->msg_order = FI_ORDER_SAS;
  h->rx_attr->msg_order = FI_ORDER_SAS;
  return h;
}

std::vector<std::string> ProviderCandidates(const std::string& value, bool single_node) {
  if (value.empty() || value == "auto") {
    std::vector<std::string> v;
    if (single_node) v.push_back("shm");
    for (const char* p : {"cxi", "verbs;ofi_rxm", "tcp;ofi_rxm", "sockets"}) v.push_back(p);
    return v;
  }
  std::vector<std::string> v{value};
  // "ofi_rxm;tcp" and "tcp;ofi_rxm" name the same stack: accept both orders.
  auto semi = value.find(';');
  if (semi != std::string::npos) v.push_back(value.substr(semi + 1) + ";" + value.substr(0, semi));
  return v;
}

namespace {

bool IsLoopback(const fi_info* fi) {
  const char* d = fi->domain_attr && fi->domain_attr->name ? fi->domain_attr->name : "";
  return std::strcmp(d, "lo") == 0 || std::strncmp(d, "127.", 4) == 0 ||
         std::strncmp(d, "::1", 3) == 0;
}

// hwloc topology with PCI devices, built once per process.
hwloc_topology_t Topology() {
  static hwloc_topology_t topo = [] {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) return hwloc_topology_t(nullptr);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    // Without the x86 backend: to read cpuid it binds the thread to every
    // PU in turn, and the process stays on the last one. Two ranks on two
    // cores ended MPI_Init on the same core in 5 of 12 launches, and
    // ping-ponged through sched_yield (8-16 us round trips) until the
    // scheduler split them. The Linux backend gives all we need (PUs,
    // cores, NUMA nodes, PCI locality).
    hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
    if (hwloc_topology_load(t) != 0) {
      hwloc_topology_destroy(t);
      return hwloc_topology_t(nullptr);
    }
    return t;
  }();
  return topo;
}

// 2: the NIC's PCI device is local to the cores we run on; 0: it is remote;
// 1: unknown (no bus id, virtual NIC, hwloc could not tell).
int Locality(const fi_info* fi, std::string* where) {
  if (!fi->nic || !fi->nic->bus_attr || fi->nic->bus_attr->bus_type != FI_BUS_PCI) return 1;
  hwloc_topology_t topo = Topology();
  if (!topo) return 1;
  const fi_pci_attr& pci = fi->nic->bus_attr->attr.pci;
  hwloc_obj_t dev =
      hwloc_get_pcidev_by_busid(topo, pci.domain_id, pci.bus_id, pci.device_id, pci.function_id);
  if (!dev) return 1;
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, dev);
  hwloc_bitmap_t mine = hwloc_bitmap_alloc();
  int score = 1;
  if (anc && anc->cpuset && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_THREAD) == 0) {
    score = hwloc_bitmap_intersects(mine, anc->cpuset) ? 2 : 0;
    char buf[64];
    std::snprintf(buf, sizeof buf, "pci %04x:%02x:%02x.%x", pci.domain_id, pci.bus_id,
                  pci.device_id, pci.function_id);
    *where = buf;
  }
  hwloc_bitmap_free(mine);
  return score;
}

}  // namespace

fi_info* PickClosestNic(fi_info* list, bool multi_node, std::string* why) {
  fi_info* best = nullptr;
  int best_score = -1;
  int n = 0;
  std::string best_where;
  for (fi_info* fi = list; fi; fi = fi->next) {
    ++n;
    if (multi_node && IsLoopback(fi)) continue;  // cannot reach other nodes
    std::string where;
    int score = Locality(fi, &where);
    // Ties keep fi_getinfo's order, which is the provider's own preference.
    if (score > best_score) {
      best = fi;
      best_score = score;
      best_where = where;
    }
  }
  if (!best) best = list;
  std::ostringstream os;
  os << "domain " << (best->domain_attr->name ? best->domain_attr->name : "?") << " of " << n
     << " offered";
  if (best_score == 2)
    os << " (" << best_where << ", local to this core)";
  else if (best_score == 0)
    os << " (" << best_where << ", no NIC local to this core)";
  else
    os << " (locality unknown: first offered)";
  *why = os.str();
  return best;
}

std::string DescribeFabric() {
  std::ostringstream os;
  PrepareFabricEnvironment();
  std::vector<std::string> names = {"shm", "tcp;ofi_rxm", "sockets", "verbs;ofi_rxm", "cxi"};
  // The test providers, where the environment points libfabric at them.
  if (std::getenv("FI_PROVIDER_PATH") != nullptr)
    for (const char* p : {"cxi_persona", "verbs_persona"}) names.push_back(p);
  for (const std::string& name : names) {
    const char* prov = name.c_str();
    fi_info* hints = MakeHints(true);
    hints->fabric_attr->prov_name = strdup(prov);
    fi_info* list = nullptr;
    int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &list);
    if (rc != 0) {
      fi_freeinfo(hints);
      hints = MakeHints(false);
      hints->fabric_attr->prov_name = strdup(prov);
      rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &list);
    }
    fi_freeinfo(hints);
    if (rc != 0 || !list) {
      os << prov << ": not available (" << fi_strerror(-rc) << ")\n";
      continue;
    }
    os << prov << ": rma_read=" << ((list->caps & FI_READ) ? "yes" : "no")
       << " progress=" << (list->domain_attr->data_progress == FI_PROGRESS_AUTO ? "auto" : "manual")
       << "\n  domains:";
    for (fi_info* fi = list; fi; fi = fi->next) os << " " << fi->domain_attr->name;
    std::string why;
    PickClosestNic(list, false, &why);
    os << "\n  chosen: " << why << "\n";
    fi_freeinfo(list);
  }
  return os.str();
}

}  // namespace nicq::transport
