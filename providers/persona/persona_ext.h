// Extension interface of the contract-faithful test providers ("personas",
// providers/persona/). Shared by the personas and by nicq's ofi backends, so
// it is plain C and includes only libfabric.
//
// The cxi persona reports its deferred-work queue depth the way cxi's
// "CXI Domain get_dwq_depth Extension" (fi_cxi(7)) does: through domain ops
// opened with fi_open_ops on the domain fid. The depth is per service and
// shared by every process of the node that uses the service; the caller
// divides it among them.
#ifndef NICQ_PERSONA_EXT_H
#define NICQ_PERSONA_EXT_H

#include <rdma/fabric.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NICQ_PERSONA_DOM_OPS "nicq_persona_dom_ops_v1"

struct nicq_persona_dom_ops {
  size_t size; /* sizeof(struct nicq_persona_dom_ops) */
  /* Usable deferred-work entries of the service (all processes together). */
  int (*get_dwq_depth)(struct fid* domain, size_t* depth);
  /* The core provider the persona runs on ("sockets"). Not part of the
   * target's contract: it lets the caller keep working around the core's
   * own flaws (sockets deadlocks on cycles of triggered counter ops and
   * keeps 32-bit counters), which the persona inherits. */
  int (*get_core_provider)(struct fid* domain, const char** name);
};

#ifdef __cplusplus
}
#endif

#endif
