// Sections of nicq_info's report; each returns 0, or 1 when it could not
// query its source (the message is printed).
#pragma once

namespace nicq::info {

int PrintProviders();  // libfabric providers and their offload backend
int PrintTopology();   // hwloc: packages, cores, PUs, NUMA nodes, NICs
int PrintResources();  // offload budgets: trigger slots, counters, pending ops

}  // namespace nicq::info
