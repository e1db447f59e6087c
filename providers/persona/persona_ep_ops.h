// Helpers shared by the endpoint's data ops (persona_ep.cc: messages and
// tagged; persona_ep_rma.cc: RMA and atomics). Internal to the personas.
#ifndef NICQ_PROVIDERS_PERSONA_PERSONA_EP_OPS_H
#define NICQ_PROVIDERS_PERSONA_PERSONA_EP_OPS_H

#include "providers/persona/persona.h"

namespace nicq::persona::ep_ops {

inline constexpr size_t kMaxIov = 16;

template <class M>
Ep* ep_from(const M* table, const M Ep::*field) {
  Ep* e = owner_of(table, field);
  e->dom->progress();
  return e;
}
#define EP(table) ep_from(ep->table, &Ep::table)

inline size_t datatype_size(fi_datatype dt) {
  switch (dt) {
    case FI_INT8:
    case FI_UINT8:
      return 1;
    case FI_INT16:
    case FI_UINT16:
      return 2;
    case FI_INT32:
    case FI_UINT32:
    case FI_FLOAT:
      return 4;
    case FI_INT64:
    case FI_UINT64:
    case FI_DOUBLE:
    case FI_FLOAT_COMPLEX:
      return 8;
    case FI_DOUBLE_COMPLEX:
    case FI_LONG_DOUBLE:
      return 16;
    case FI_LONG_DOUBLE_COMPLEX:
      return 32;
    default:
      return 1;
  }
}

// Data ops flagged FI_TRIGGER: the targets take triggered work only through
// deferred work (cxi), or have no FI_TRIGGER at all (verbs).
inline int check_flags(Ep* e, uint64_t flags) {
  if (flags & FI_TRIGGER) {
    note(*e->dom->spec, "data op with FI_TRIGGER refused: use fi_control(FI_QUEUE_WORK)");
    return -FI_EINVAL;
  }
  return 0;
}

inline int xlat_iov(Ep* e, void* const* desc, const iovec* iov, size_t count, void** out) {
  if (count > kMaxIov) return -FI_EINVAL;
  for (size_t i = 0; i < count; i++) {
    int ret = translate_desc(e, desc ? desc[i] : nullptr, iov[i].iov_base, iov[i].iov_len, &out[i]);
    if (ret) return ret;
  }
  return 0;
}

inline int xlat_ioc(Ep* e, void* const* desc, const fi_ioc* ioc, size_t count, fi_datatype dt,
                    void** out, size_t* elements) {
  if (count > kMaxIov) return -FI_EINVAL;
  *elements = 0;
  for (size_t i = 0; i < count; i++) {
    int ret = translate_desc(e, desc ? desc[i] : nullptr, ioc[i].addr,
                             ioc[i].count * datatype_size(dt), &out[i]);
    if (ret) return ret;
    *elements += ioc[i].count;
  }
  return 0;
}

// cxi: one element per atomic operation (CXIP_AMO_MAX_IOV == 1).
inline int check_amo(Ep* e, size_t elements) {
  const size_t max = e->dom->spec->amo_max_count;
  if (max && elements > max) {
    note(*e->dom->spec, "atomic of %zu elements refused (limit %zu)", elements, max);
    return -FI_EINVAL;
  }
  return 0;
}

inline int xlat_one(Ep* e, void* desc, const void* buf, size_t len, void** out) {
  return translate_desc(e, desc, buf, len, out);
}

// fi_cxi(7) "Counters": sends at or past the rendezvous threshold complete
// and count only under software progress (persona_rdzv.cc).
inline bool is_slow(Ep* e, const iovec* iov, size_t count) {
  if (!e->dom->spec->cxi) return false;
  size_t n = 0;
  for (size_t i = 0; i < count; i++) n += iov[i].iov_len;
  return n >= rdzv_threshold();
}
inline bool wants_cq_entry(Ep* e, uint64_t flags) {
  return !e->tx_selective || (flags & FI_COMPLETION);
}

}  // namespace nicq::persona::ep_ops

namespace nicq::persona {
// Replaces the endpoint's RMA and atomic tables (persona_ep_rma.cc).
void install_rma_atomic(Ep* e, fid_ep* core);
}  // namespace nicq::persona

#endif
