// Endpoint of a persona: binds (receive counters through shadows on cxi),
// and every data op: contract checks on flags, descriptors and atomic
// counts, descriptor translation persona MR -> core MR, then the core op.
#include <cstring>

#include "providers/persona/persona.h"

namespace nicq::persona {
namespace {

constexpr size_t kMaxIov = 16;

template <class M>
Ep* ep_from(const M* table, const M Ep::*field) {
  Ep* e = owner_of(table, field);
  e->dom->progress();
  return e;
}
#define EP(table) ep_from(ep->table, &Ep::table)

size_t datatype_size(fi_datatype dt) {
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
int check_flags(Ep* e, uint64_t flags) {
  if (flags & FI_TRIGGER) {
    note(*e->dom->spec, "data op with FI_TRIGGER refused: use fi_control(FI_QUEUE_WORK)");
    return -FI_EINVAL;
  }
  return 0;
}

int xlat_iov(Ep* e, void* const* desc, const iovec* iov, size_t count, void** out) {
  if (count > kMaxIov) return -FI_EINVAL;
  for (size_t i = 0; i < count; i++) {
    int ret = translate_desc(e, desc ? desc[i] : nullptr, iov[i].iov_base, iov[i].iov_len, &out[i]);
    if (ret) return ret;
  }
  return 0;
}

int xlat_ioc(Ep* e, void* const* desc, const fi_ioc* ioc, size_t count, fi_datatype dt, void** out,
             size_t* elements) {
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
int check_amo(Ep* e, size_t elements) {
  const size_t max = e->dom->spec->amo_max_count;
  if (max && elements > max) {
    note(*e->dom->spec, "atomic of %zu elements refused (limit %zu)", elements, max);
    return -FI_EINVAL;
  }
  return 0;
}

int xlat_one(Ep* e, void* desc, const void* buf, size_t len, void** out) {
  return translate_desc(e, desc, buf, len, out);
}

// fi_cxi(7) "Counters": sends at or past the rendezvous threshold complete
// and count only under software progress (persona_rdzv.cc).
bool is_slow(Ep* e, const iovec* iov, size_t count) {
  if (!e->dom->spec->cxi) return false;
  size_t n = 0;
  for (size_t i = 0; i < count; i++) n += iov[i].iov_len;
  return n >= rdzv_threshold();
}
bool wants_cq_entry(Ep* e, uint64_t flags) {
  return !e->tx_selective || (flags & FI_COMPLETION);
}

// ---- msg ----
ssize_t m_recv(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, void* ctx) {
  Ep* e = EP(msg);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_msg->recv(ep, buf, len, cd, src, ctx);
}
ssize_t m_recvv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t src, void* ctx) {
  Ep* e = EP(msg);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  return e->core_msg->recvv(ep, iov, cd, count, src, ctx);
}
ssize_t m_recvmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  Ep* e = EP(msg);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  fi_msg m = *msg;
  m.desc = cd;
  return e->core_msg->recvmsg(ep, &m, flags);
}
ssize_t m_send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, void* ctx) {
  Ep* e = EP(msg);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  const iovec v{const_cast<void*>(buf), len};
  if (is_slow(e, &v, 1))
    return post_slow_send(e, &v, &cd, 1, dest, 0, 0, 0, ctx, false, wants_cq_entry(e, 0), nullptr);
  return e->core_msg->send(ep, buf, len, cd, dest, ctx);
}
ssize_t m_sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest,
                void* ctx) {
  Ep* e = EP(msg);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  if (is_slow(e, iov, count))
    return post_slow_send(e, iov, cd, count, dest, 0, 0, 0, ctx, false, wants_cq_entry(e, 0),
                          nullptr);
  return e->core_msg->sendv(ep, iov, cd, count, dest, ctx);
}
ssize_t m_sendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  Ep* e = EP(msg);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  if (is_slow(e, msg->msg_iov, msg->iov_count))
    return post_slow_send(e, msg->msg_iov, cd, msg->iov_count, msg->addr, 0, msg->data, flags,
                          msg->context, false, wants_cq_entry(e, flags), nullptr);
  fi_msg m = *msg;
  m.desc = cd;
  return e->core_msg->sendmsg(ep, &m, flags);
}
ssize_t m_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest) {
  Ep* e = EP(msg);
  return e->core_msg->inject(ep, buf, len, dest);
}
ssize_t m_senddata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                   fi_addr_t dest, void* ctx) {
  Ep* e = EP(msg);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  const iovec v{const_cast<void*>(buf), len};
  if (is_slow(e, &v, 1))
    return post_slow_send(e, &v, &cd, 1, dest, 0, data, FI_REMOTE_CQ_DATA, ctx, false,
                          wants_cq_entry(e, 0), nullptr);
  return e->core_msg->senddata(ep, buf, len, cd, data, dest, ctx);
}
ssize_t m_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest) {
  Ep* e = EP(msg);
  return e->core_msg->injectdata(ep, buf, len, data, dest);
}

// ---- tagged ----
ssize_t t_recv(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, uint64_t tag,
               uint64_t ignore, void* ctx) {
  Ep* e = EP(tagged);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_tagged->recv(ep, buf, len, cd, src, tag, ignore, ctx);
}
ssize_t t_recvv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t src,
                uint64_t tag, uint64_t ignore, void* ctx) {
  Ep* e = EP(tagged);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  return e->core_tagged->recvv(ep, iov, cd, count, src, tag, ignore, ctx);
}
ssize_t t_recvmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  Ep* e = EP(tagged);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  fi_msg_tagged m = *msg;
  m.desc = cd;
  return e->core_tagged->recvmsg(ep, &m, flags);
}
ssize_t t_send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t tag,
               void* ctx) {
  Ep* e = EP(tagged);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  const iovec v{const_cast<void*>(buf), len};
  if (is_slow(e, &v, 1))
    return post_slow_send(e, &v, &cd, 1, dest, tag, 0, 0, ctx, true, wants_cq_entry(e, 0), nullptr);
  return e->core_tagged->send(ep, buf, len, cd, dest, tag, ctx);
}
ssize_t t_sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest,
                uint64_t tag, void* ctx) {
  Ep* e = EP(tagged);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  if (is_slow(e, iov, count))
    return post_slow_send(e, iov, cd, count, dest, tag, 0, 0, ctx, true, wants_cq_entry(e, 0),
                          nullptr);
  return e->core_tagged->sendv(ep, iov, cd, count, dest, tag, ctx);
}
ssize_t t_sendmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  Ep* e = EP(tagged);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  if (is_slow(e, msg->msg_iov, msg->iov_count))
    return post_slow_send(e, msg->msg_iov, cd, msg->iov_count, msg->addr, msg->tag, msg->data,
                          flags, msg->context, true, wants_cq_entry(e, flags), nullptr);
  fi_msg_tagged m = *msg;
  m.desc = cd;
  return e->core_tagged->sendmsg(ep, &m, flags);
}
ssize_t t_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t tag) {
  Ep* e = EP(tagged);
  return e->core_tagged->inject(ep, buf, len, dest, tag);
}
ssize_t t_senddata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                   fi_addr_t dest, uint64_t tag, void* ctx) {
  Ep* e = EP(tagged);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  const iovec v{const_cast<void*>(buf), len};
  if (is_slow(e, &v, 1))
    return post_slow_send(e, &v, &cd, 1, dest, tag, data, FI_REMOTE_CQ_DATA, ctx, true,
                          wants_cq_entry(e, 0), nullptr);
  return e->core_tagged->senddata(ep, buf, len, cd, data, dest, tag, ctx);
}
ssize_t t_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest,
                     uint64_t tag) {
  Ep* e = EP(tagged);
  return e->core_tagged->injectdata(ep, buf, len, data, dest, tag);
}

// ---- rma ----
// The core's remote address for the app's (see Spec::key_encodes_base).
uint64_t raddr(Ep* e, uint64_t addr, uint64_t key) {
  return e->dom->spec->key_encodes_base ? addr - key_base(key) : addr;
}
template <class Iov>
int xlat_rma_iov(Ep* e, const Iov* in, size_t count, Iov* out) {
  if (count > kMaxIov) return -FI_EINVAL;
  for (size_t i = 0; i < count; i++) {
    out[i] = in[i];
    out[i].addr = raddr(e, in[i].addr, in[i].key);
  }
  return 0;
}
int check_rma_iov(Ep* e, size_t rma_iov_count) {
  // cxi: one remote iov per RMA (rma_iov_limit 1 in the persona's info).
  if (e->dom->spec->cxi && rma_iov_count > 1) return -FI_EINVAL;
  return 0;
}
ssize_t r_read(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, uint64_t addr,
               uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_rma->read(ep, buf, len, cd, src, raddr(e, raddr(e, addr, key), key), key, ctx);
}
ssize_t r_readv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t src,
                uint64_t addr, uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  return e->core_rma->readv(ep, iov, cd, count, src, raddr(e, raddr(e, addr, key), key), key, ctx);
}
ssize_t r_readmsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  Ep* e = EP(rma);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = check_rma_iov(e, msg->rma_iov_count)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  fi_rma_iov riov[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, riov)) return r;
  fi_msg_rma m = *msg;
  m.desc = cd;
  m.rma_iov = riov;
  return e->core_rma->readmsg(ep, &m, flags);
}
ssize_t r_write(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t addr,
                uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_rma->write(ep, buf, len, cd, dest, raddr(e, raddr(e, addr, key), key), key, ctx);
}
ssize_t r_writev(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest,
                 uint64_t addr, uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  return e->core_rma->writev(ep, iov, cd, count, dest, raddr(e, raddr(e, addr, key), key), key,
                             ctx);
}
ssize_t r_writemsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  Ep* e = EP(rma);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = check_rma_iov(e, msg->rma_iov_count)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  fi_rma_iov riov[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, riov)) return r;
  fi_msg_rma m = *msg;
  m.desc = cd;
  m.rma_iov = riov;
  return e->core_rma->writemsg(ep, &m, flags);
}
ssize_t r_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t addr,
                 uint64_t key) {
  Ep* e = EP(rma);
  return e->core_rma->inject(ep, buf, len, dest, raddr(e, addr, key), key);
}
ssize_t r_writedata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                    fi_addr_t dest, uint64_t addr, uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_rma->writedata(ep, buf, len, cd, data, dest, raddr(e, raddr(e, addr, key), key),
                                key, ctx);
}
ssize_t r_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest,
                     uint64_t addr, uint64_t key) {
  Ep* e = EP(rma);
  return e->core_rma->injectdata(ep, buf, len, data, dest, raddr(e, addr, key), key);
}

// ---- atomic ----
ssize_t a_write(fid_ep* ep, const void* buf, size_t count, void* desc, fi_addr_t dest,
                uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void* cd;
  if (int r = check_amo(e, count)) return r;
  if (int r = xlat_one(e, desc, buf, count * datatype_size(dt), &cd)) return r;
  return e->core_atomic->write(ep, buf, count, cd, dest, raddr(e, raddr(e, addr, key), key), key,
                               dt, op, ctx);
}
ssize_t a_writev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count, fi_addr_t dest,
                 uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void* cd[kMaxIov];
  size_t n;
  if (int r = xlat_ioc(e, desc, iov, count, dt, cd, &n)) return r;
  if (int r = check_amo(e, n)) return r;
  return e->core_atomic->writev(ep, iov, cd, count, dest, raddr(e, raddr(e, addr, key), key), key,
                                dt, op, ctx);
}
ssize_t a_writemsg(fid_ep* ep, const fi_msg_atomic* msg, uint64_t flags) {
  Ep* e = EP(atomic);
  void* cd[kMaxIov];
  size_t n;
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_ioc(e, msg->desc, msg->msg_iov, msg->iov_count, msg->datatype, cd, &n)) return r;
  if (int r = check_amo(e, n)) return r;
  fi_rma_ioc rioc[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, rioc)) return r;
  fi_msg_atomic m = *msg;
  m.desc = cd;
  m.rma_iov = rioc;
  return e->core_atomic->writemsg(ep, &m, flags);
}
ssize_t a_inject(fid_ep* ep, const void* buf, size_t count, fi_addr_t dest, uint64_t addr,
                 uint64_t key, fi_datatype dt, fi_op op) {
  Ep* e = EP(atomic);
  if (int r = check_amo(e, count)) return r;
  return e->core_atomic->inject(ep, buf, count, dest, raddr(e, raddr(e, addr, key), key), key, dt,
                                op);
}
ssize_t a_readwrite(fid_ep* ep, const void* buf, size_t count, void* desc, void* result,
                    void* result_desc, fi_addr_t dest, uint64_t addr, uint64_t key, fi_datatype dt,
                    fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void *cd = nullptr, *rd;
  if (int r = check_amo(e, count)) return r;
  if (buf || desc)
    if (int r = xlat_one(e, desc, buf, count * datatype_size(dt), &cd)) return r;
  if (int r = xlat_one(e, result_desc, result, count * datatype_size(dt), &rd)) return r;
  return e->core_atomic->readwrite(ep, buf, count, cd, result, rd, dest,
                                   raddr(e, raddr(e, addr, key), key), key, dt, op, ctx);
}
ssize_t a_readwritev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count, fi_ioc* resultv,
                     void** result_desc, size_t result_count, fi_addr_t dest, uint64_t addr,
                     uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void *cd[kMaxIov], *rd[kMaxIov];
  size_t n, rn;
  if (int r = xlat_ioc(e, desc, iov, count, dt, cd, &n)) return r;
  if (int r = xlat_ioc(e, result_desc, resultv, result_count, dt, rd, &rn)) return r;
  if (int r = check_amo(e, n > rn ? n : rn)) return r;
  return e->core_atomic->readwritev(ep, iov, cd, count, resultv, rd, result_count, dest,
                                    raddr(e, raddr(e, addr, key), key), key, dt, op, ctx);
}
ssize_t a_readwritemsg(fid_ep* ep, const fi_msg_atomic* msg, fi_ioc* resultv, void** result_desc,
                       size_t result_count, uint64_t flags) {
  Ep* e = EP(atomic);
  void *cd[kMaxIov], *rd[kMaxIov];
  size_t n, rn;
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_ioc(e, msg->desc, msg->msg_iov, msg->iov_count, msg->datatype, cd, &n)) return r;
  if (int r = xlat_ioc(e, result_desc, resultv, result_count, msg->datatype, rd, &rn)) return r;
  if (int r = check_amo(e, n > rn ? n : rn)) return r;
  fi_rma_ioc rioc[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, rioc)) return r;
  fi_msg_atomic m = *msg;
  m.desc = cd;
  m.rma_iov = rioc;
  return e->core_atomic->readwritemsg(ep, &m, resultv, rd, result_count, flags);
}
ssize_t a_compwrite(fid_ep* ep, const void* buf, size_t count, void* desc, const void* compare,
                    void* compare_desc, void* result, void* result_desc, fi_addr_t dest,
                    uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void *cd, *kd, *rd;
  const size_t len = count * datatype_size(dt);
  if (int r = check_amo(e, count)) return r;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  if (int r = xlat_one(e, compare_desc, compare, len, &kd)) return r;
  if (int r = xlat_one(e, result_desc, result, len, &rd)) return r;
  return e->core_atomic->compwrite(ep, buf, count, cd, compare, kd, result, rd, dest,
                                   raddr(e, raddr(e, addr, key), key), key, dt, op, ctx);
}
ssize_t a_compwritev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count,
                     const fi_ioc* comparev, void** compare_desc, size_t compare_count,
                     fi_ioc* resultv, void** result_desc, size_t result_count, fi_addr_t dest,
                     uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void *cd[kMaxIov], *kd[kMaxIov], *rd[kMaxIov];
  size_t n, kn, rn;
  if (int r = xlat_ioc(e, desc, iov, count, dt, cd, &n)) return r;
  if (int r = xlat_ioc(e, compare_desc, comparev, compare_count, dt, kd, &kn)) return r;
  if (int r = xlat_ioc(e, result_desc, resultv, result_count, dt, rd, &rn)) return r;
  if (int r = check_amo(e, n)) return r;
  return e->core_atomic->compwritev(ep, iov, cd, count, comparev, kd, compare_count, resultv, rd,
                                    result_count, dest, raddr(e, addr, key), key, dt, op, ctx);
}
ssize_t a_compwritemsg(fid_ep* ep, const fi_msg_atomic* msg, const fi_ioc* comparev,
                       void** compare_desc, size_t compare_count, fi_ioc* resultv,
                       void** result_desc, size_t result_count, uint64_t flags) {
  Ep* e = EP(atomic);
  void *cd[kMaxIov], *kd[kMaxIov], *rd[kMaxIov];
  size_t n, kn, rn;
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_ioc(e, msg->desc, msg->msg_iov, msg->iov_count, msg->datatype, cd, &n)) return r;
  if (int r = xlat_ioc(e, compare_desc, comparev, compare_count, msg->datatype, kd, &kn)) return r;
  if (int r = xlat_ioc(e, result_desc, resultv, result_count, msg->datatype, rd, &rn)) return r;
  if (int r = check_amo(e, n)) return r;
  fi_rma_ioc rioc[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, rioc)) return r;
  fi_msg_atomic m = *msg;
  m.desc = cd;
  m.rma_iov = rioc;
  return e->core_atomic->compwritemsg(ep, &m, comparev, kd, compare_count, resultv, rd,
                                      result_count, flags);
}
int clamp_valid(Ep* e, int ret, size_t* count) {
  const size_t max = e->dom->spec->amo_max_count;
  if (!ret && count && max && *count > max) *count = max;
  return ret;
}
int a_writevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) {
  Ep* e = EP(atomic);
  return clamp_valid(e, e->core_atomic->writevalid(ep, dt, op, count), count);
}
int a_readwritevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) {
  Ep* e = EP(atomic);
  return clamp_valid(e, e->core_atomic->readwritevalid(ep, dt, op, count), count);
}
int a_compwritevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) {
  Ep* e = EP(atomic);
  return clamp_valid(e, e->core_atomic->compwritevalid(ep, dt, op, count), count);
}

// ---- fid ----
int ep_close(fid* f) {
  Ep* e = owner_of(f->ops, &Ep::fid_ops);
  Domain* d = e->dom;
  int ret = e->core_fid_ops->close(f);
  if (ret) return ret;
  {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    d->eps.erase(e);
    for (Mr* m : d->mrs)
      if (m->ep == e) m->ep = nullptr;
  }
  delete e;
  return 0;
}

int ensure_shadow(Cntr* c) {
  if (c->shadow) return 0;
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  attr.wait_obj = FI_WAIT_UNSPEC;
  Domain* d = c->dom;
  return d->core_ops->cntr_open(d->self, &attr, &c->shadow, nullptr);
}

int ep_bind(fid* f, fid* bfid, uint64_t flags) {
  Ep* e = owner_of(f->ops, &Ep::fid_ops);
  Domain* d = e->dom;
  d->progress();
  if (bfid->fclass == FI_CLASS_CQ && (flags & FI_TRANSMIT)) {
    e->tx_cq = true;
    e->tx_selective = flags & FI_SELECTIVE_COMPLETION;
    e->tx_cq_obj = owner_of(reinterpret_cast<fid_cq*>(bfid)->ops, &Cq::ops);
  }
  if (bfid->fclass != FI_CLASS_CNTR) return e->core_fid_ops->bind(f, bfid, flags);
  Cntr* c = d->cntr_of(bfid);
  if (!c) return -FI_EINVAL;
  if (flags & FI_SEND) e->send_cntr = c;
  // fi_cxi(7) "Counters": receive counting events are not offloaded; they
  // reach the app's counter only during its calls (Domain::progress).
  if (d->spec->cxi && (flags & FI_RECV)) {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    if (int ret = ensure_shadow(c)) return ret;
    if (int ret = e->core_fid_ops->bind(f, &c->shadow->fid, FI_RECV)) return ret;
    flags &= ~static_cast<uint64_t>(FI_RECV);
    if (!flags) return 0;
  }
  return e->core_fid_ops->bind(f, bfid, flags);
}

int ep_control(fid* f, int command, void* arg) {
  Ep* e = owner_of(f->ops, &Ep::fid_ops);
  e->dom->progress();
  return e->core_fid_ops->control(f, command, arg);
}

template <class T>
void copy_table(T* dst, const T* src) {
  std::memset(dst, 0, sizeof(T));
  std::memcpy(dst, src, src->size < sizeof(T) ? src->size : sizeof(T));
}

}  // namespace

int ensure_cntr_shadow(Cntr* c) {
  return ensure_shadow(c);
}

int wrap_ep(Domain* dom, fid_ep* core) {
  Ep* e = new Ep();
  e->self = core;
  e->dom = dom;
  e->core_fid_ops = core->fid.ops;
  copy_table(&e->fid_ops, core->fid.ops);
  e->fid_ops.close = ep_close;
  e->fid_ops.bind = ep_bind;
  e->fid_ops.control = ep_control;
  core->fid.ops = &e->fid_ops;
  if (core->msg) {
    e->core_msg = core->msg;
    copy_table(&e->msg, core->msg);
    e->msg = {sizeof(fi_ops_msg), m_recv,   m_recvv,    m_recvmsg,   m_send, m_sendv,
              m_sendmsg,          m_inject, m_senddata, m_injectdata};
    core->msg = &e->msg;
  }
  if (core->tagged) {
    e->core_tagged = core->tagged;
    e->tagged = {sizeof(fi_ops_tagged),
                 t_recv,
                 t_recvv,
                 t_recvmsg,
                 t_send,
                 t_sendv,
                 t_sendmsg,
                 t_inject,
                 t_senddata,
                 t_injectdata};
    core->tagged = &e->tagged;
  }
  if (core->rma) {
    e->core_rma = core->rma;
    e->rma = {sizeof(fi_ops_rma), r_read,     r_readv,  r_readmsg,   r_write,
              r_writev,           r_writemsg, r_inject, r_writedata, r_injectdata};
    core->rma = &e->rma;
  }
  if (core->atomic) {
    e->core_atomic = core->atomic;
    e->atomic = {
        sizeof(fi_ops_atomic), a_write,      a_writev,         a_writemsg,      a_inject,
        a_readwrite,           a_readwritev, a_readwritemsg,   a_compwrite,     a_compwritev,
        a_compwritemsg,        a_writevalid, a_readwritevalid, a_compwritevalid};
    core->atomic = &e->atomic;
  }
  std::lock_guard<std::recursive_mutex> g(dom->lock);
  dom->eps.insert(e);
  return 0;
}

}  // namespace nicq::persona
