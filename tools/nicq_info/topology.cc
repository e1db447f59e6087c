#include <hwloc.h>

#include <cstdio>
#include <string>

#include "nicq_info.h"

namespace nicq::info {
namespace {

const char* OsDevKind(hwloc_obj_osdev_type_e t) {
  switch (t) {
    case HWLOC_OBJ_OSDEV_NETWORK:
      return "network";
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
      return "openfabrics";
    default:
      return nullptr;
  }
}

}  // namespace

int PrintTopology() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) {
    std::printf("hwloc: hwloc_topology_init failed\n");
    return 1;
  }
  // NICs are I/O objects, hidden unless asked for.
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0) {
    std::printf("hwloc: hwloc_topology_load failed\n");
    hwloc_topology_destroy(topo);
    return 1;
  }
  auto count = [&](hwloc_obj_type_t t) { return hwloc_get_nbobjs_by_type(topo, t); };
  std::printf("topology (hwloc %s): %d package(s), %d NUMA node(s), %d core(s), %d PU(s)\n",
              HWLOC_VERSION, count(HWLOC_OBJ_PACKAGE), count(HWLOC_OBJ_NUMANODE),
              count(HWLOC_OBJ_CORE), count(HWLOC_OBJ_PU));
  int nics = 0;
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(topo, o)) != nullptr;) {
    const char* kind = OsDevKind(o->attr->osdev.type);
    if (!kind) continue;
    // A NIC's locality: the NUMA node(s) of the first non-I/O ancestor.
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, o);
    std::string where = "unknown locality";
    if (anc && anc->nodeset) {
      char* s = nullptr;
      hwloc_bitmap_list_asprintf(&s, anc->nodeset);
      where = std::string("NUMA ") + (s ? s : "?");
      free(s);
    }
    const char* addr = hwloc_obj_get_info_by_name(o, "Address");
    std::printf("  NIC %-12s %-11s %s%s%s\n", o->name ? o->name : "?", kind, where.c_str(),
                addr ? "  " : "", addr ? addr : "");
    ++nics;
  }
  if (nics == 0) std::printf("  no NICs reported by hwloc\n");
  hwloc_topology_destroy(topo);
  return 0;
}

}  // namespace nicq::info
